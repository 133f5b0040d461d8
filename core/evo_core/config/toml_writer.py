"""Writing evo configs as TOML: top-level values, then one table per section.

evo configs are two levels deep with scalar or list values, which is all this writes; a TOML
writer dependency would buy nothing more.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["to_toml"]


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as a TOML value")


def to_toml(data: dict[str, Any], comments: dict[str, str] | None = None) -> str:
    """TOML text for `data`; `comments` maps a top-level key or table to a comment line."""
    comments = comments or {}
    lines = []
    tables = {k: v for k, v in data.items() if isinstance(v, dict)}
    for key, value in data.items():
        if value is None or key in tables:
            continue
        if key in comments:
            lines.append(f"# {comments[key]}")
        lines.append(f"{key} = {_value(value)}")
    for name, table in tables.items():
        lines.append("")
        if name in comments:
            lines.append(f"# {comments[name]}")
        lines.append(f"[{name}]")
        for key, value in table.items():
            if value is not None:
                lines.append(f"{key} = {_value(value)}")
    return "\n".join(lines) + "\n"
