"""Nested tables as dotted keys: how `--set`, sweep files and refusal messages name a setting."""

from __future__ import annotations

from typing import Any

__all__ = ["flatten"]


def flatten(table: Any, prefix: str = "") -> dict[str, Any]:
    """`{"brain": {"number_neurons": 6}}` as `{"brain.number_neurons": 6}`; an empty table stays
    a value, so a setting that is an empty table is still named. What is not a table at all (a
    damaged record) is one value named `prefix`, so comparing it reports a difference instead of
    raising."""
    if not isinstance(table, dict):
        return {prefix: table}
    flat: dict[str, Any] = {}
    for key, value in table.items():
        dotted = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            flat.update(flatten(value, dotted))
        else:
            flat[dotted] = value
    return flat
