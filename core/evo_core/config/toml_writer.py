"""Writing evo configs as TOML: top-level values, then one table per section.

evo configs are a few levels deep with scalar, list or inline-table values (a sweep file's
`[sweep.sample]` table nests one level more, under keys with dots in them); a list of tables (a
chain's stages) is written one table per line. A TOML writer dependency would buy nothing more.

Strings are TOML basic strings: `"` and `\\` and the control characters escaped, every other
character written as itself (the file is UTF-8). JSON's escapes are not TOML's: JSON writes a
character outside the Basic Multilingual Plane as a pair of `\\uD8xx` surrogates, which TOML
rejects. A string holding a lone surrogate (which JSON can spell, `"\\ud83d"`, but which is no
character) has no TOML spelling at all and raises `ValueError` naming it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = ["to_toml"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
            "\r": "\\r"}
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\x7f]')
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    character = match.group()
    return _ESCAPES.get(character) or f"\\u{ord(character):04X}"


def _string(text: str) -> str:
    """`text` as a TOML basic string."""
    surrogate = _SURROGATE.search(text)
    if surrogate is not None:
        raise ValueError(f"the string {json.dumps(text[:40])} holds a lone surrogate "
                         f"U+{ord(surrogate.group()):04X}, which is no character and which "
                         "TOML cannot hold")
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def _key(key: str) -> str:
    """A bare key where TOML allows one, else a quoted one (`"brain.number_neurons"`)."""
    return key if _BARE_KEY.fullmatch(key) else _string(key)


def _value(value: Any, inline: bool = False) -> str:
    """`inline`: inside an inline table, where everything stays on one line."""
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
        return _string(value)
    if isinstance(value, (list, tuple)):
        if not inline and any(isinstance(v, dict) for v in value):
            return "[\n" + "".join(f"    {_value(v, True)},\n" for v in value) + "]"
        return "[" + ", ".join(_value(v, inline) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(str(k))} = {_value(v, True)}" for k, v in value.items()
                               if v is not None) + "}"
    raise TypeError(f"cannot write {type(value).__name__} as a TOML value")


def _table(lines: list[str], name: str, table: dict[str, Any], comments: dict[str, str]) -> None:
    """`[name]` with its values, then its sub-tables as `[name.sub]`."""
    lines.append("")
    if name in comments:
        lines.append(f"# {comments[name]}")
    lines.append(f"[{name}]")
    for key, value in table.items():
        if value is not None and not isinstance(value, dict):
            lines.append(f"{_key(key)} = {_value(value)}")
    for key, value in table.items():
        if isinstance(value, dict):
            _table(lines, f"{name}.{_key(key)}", value, comments)


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
        lines.append(f"{_key(key)} = {_value(value)}")
    for name, table in tables.items():
        _table(lines, _key(name), table, comments)
    return "\n".join(lines) + "\n"
