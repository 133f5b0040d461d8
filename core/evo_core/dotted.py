"""Nested tables as dotted keys: how `--set`, sweep files and refusal messages name a setting."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["flatten", "key_parts"]

_PART = re.compile(r"([^.\[\]]+)((?:\[\d+\])*)")


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


def key_parts(key: str) -> list[str | int] | None:
    """`brain.stages[0].output_size` as `["brain", "stages", 0, "output_size"]`: names of
    tables, and indices into lists (a chain's stages), as messages name them; None if `key` is
    not such a key (an empty part, a bracket that is not `[N]`)."""
    parts: list[str | int] = []
    for piece in key.split("."):
        match = _PART.fullmatch(piece)
        if match is None:
            return None
        parts.append(match.group(1))
        parts.extend(int(index) for index in re.findall(r"\[(\d+)\]", match.group(2)))
    return parts
