"""Config files (TOML or JSON, one structure) to plain dicts, and `--set KEY=VALUE` overrides."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from evo_core.dotted import key_parts
from evo_core.errors import UserError, first_line

__all__ = ["read_config_file", "apply_overrides", "parse_assignments", "set_values",
           "override_sources", "parse_value"]

SUFFIXES = (".toml", ".json")


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The file's top-level table; every failure is a UserError naming the file and the place."""
    path = Path(path)
    if path.is_dir():
        raise UserError(_folder_given(path))
    if path.suffix.lower() not in SUFFIXES:
        raise UserError(f"{path}: unknown config format {path.suffix!r}; use a .toml or .json file")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file; give the path of a .toml or .json config") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a folder; give the path of a .toml or .json config") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read: {exc}") from None
    data = _parsed(path, text)
    if not isinstance(data, dict):
        raise UserError(f"{path}: the top level must be a table (a JSON object), "
                        f"got {type(data).__name__}")
    return data


def _parsed(path: Path, text: str) -> Any:
    """The TOML or JSON document `text` of `path`; a UserError naming what is wrong in it."""
    try:
        return (tomllib.loads(text) if path.suffix.lower() == ".toml"
                else json.loads(text, object_pairs_hook=_unique_keys))
    except _DuplicateKey as exc:
        raise UserError(f"{path}: the key {exc.key[:80]!r} is given twice in one table; keep "
                        "one of them (JSON readers disagree on which one counts)") from None
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"{path}: invalid TOML: {exc}") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: "
                        f"{exc.msg}") from None
    except ValueError as exc:  # an integer beyond Python's digit limit for conversion
        raise UserError(f"{path}: unreadable number ({first_line(exc)}); use a smaller "
                        "value") from None
    except RecursionError:
        raise UserError(f"{path}: nested too deeply to be a config; a config has at most a "
                        "few levels of tables") from None


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict, refusing a key given twice (as TOML does) rather than keeping
    the last silently."""
    table: dict[str, Any] = {}
    for key, value in pairs:
        if key in table:
            raise _DuplicateKey(key)
        table[key] = value
    return table


def _folder_given(path: Path) -> str:
    """What to do with a folder given where a config file belongs: evo's own folders are
    continued, not trained."""
    if (path / "config.json").is_file():
        return (f"{path}: is a run folder, not a config; continue it with `evo resume {path}` "
                "(add --generations N to run longer)")
    if (path / "sweep.json").is_file():
        return (f"{path}: is a sweep folder, not a config; continue it with `evo sweep "
                f"SWEEP_FILE --out {path}`")
    return f"{path}: is a folder; give the path of a .toml or .json config"


def parse_value(text: str) -> Any:
    """A TOML value (`20`, `0.5`, `true`, `[8, 8]`, `"x"`), else the text as a string."""
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text
    except (ValueError, RecursionError) as exc:  # huge integers, absurd nesting
        raise UserError(f"--set value {text[:40]!r}: unreadable ({first_line(exc)})") from None


def override_sources(assignments: list[str]) -> dict[str, str]:
    """Dotted key -> the `--set` assignment as typed, so that an error in a value given on the
    command line names the command line, not the config file."""
    sources: dict[str, str] = {}
    for assignment in assignments:
        key, _, text = assignment.partition("=")
        sources[key.strip()] = f"{key.strip()}={text.strip()}"
    return sources


def parse_assignments(assignments: list[str]) -> list[tuple[str, Any]]:
    """`--set` texts as (dotted key, value) pairs, values parsed as TOML."""
    pairs: list[tuple[str, Any]] = []
    for assignment in assignments:
        key, sep, text = assignment.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UserError(f"--set {assignment!r}: expected KEY=VALUE, e.g. --set generations=50")
        pairs.append((key, parse_value(text.strip())))
    return pairs


def set_values(data: dict[str, Any], pairs: list[tuple[str, Any]],
               what: str = "--set") -> dict[str, Any]:
    """A copy of `data` with each dotted key set to its value; tables on the way are created,
    and `name[i]` indexes a list that is there (`brain.stages[0].output_size`). `what` names
    where the keys come from in messages (`--set`, a sweep file's grid)."""
    try:
        result: dict[str, Any] = json.loads(json.dumps(data))  # deep copy of plain data
    except (TypeError, ValueError) as exc:
        raise UserError(f"config: {exc}; a config holds only strings, numbers, booleans, "
                        "lists and tables") from None
    for key, value in pairs:
        parts = key_parts(key)
        if not parts:
            raise UserError(f"{what} {key}: expected a dotted key such as brain.number_neurons "
                            "(or brain.stages[0].output_size)")
        container, last = _parent(result, parts, key, what)
        container[last] = value
    return result


def _parent(result: dict[str, Any], parts: list[str | int], key: str,
            what: str) -> tuple[Any, str | int]:
    """The table or list holding the last part of `parts`, made on the way where it is a
    missing table; a UserError naming the part that is not what the key says."""
    node: Any = result
    for depth, part in enumerate(parts[:-1]):
        here = _shown(parts[:depth + 1])
        following = parts[depth + 1]
        node = _step(node, part, following, here, key, what)
    last = parts[-1]
    if isinstance(last, int):
        _index(node, last, _shown(parts), key, what)
    return node, last


def _step(node: Any, part: str | int, following: str | int, here: str, key: str,
          what: str) -> Any:
    if isinstance(part, int):
        child = node[_index(node, part, here, key, what)]
    else:
        child = node.setdefault(part, {} if isinstance(following, str) else [])
        if here == "environment" and isinstance(child, str):
            child = node[part] = {"id": child}  # a bare id is the table with it alone
    if isinstance(following, int):
        if not isinstance(child, list):
            raise UserError(f"{what} {key}: {here} is not a list")
    elif not isinstance(child, dict):
        raise UserError(f"{what} {key}: {here} is a value, not a table")
    return child


def _index(node: Any, index: int, here: str, key: str, what: str) -> int:
    if not isinstance(node, list) or index >= len(node):
        size = len(node) if isinstance(node, list) else 0
        raise UserError(f"{what} {key}: {here} does not exist (the list has {size} "
                        f"item(s), numbered from 0)")
    return index


def _shown(parts: list[str | int]) -> str:
    """Parts as a key again: `brain.stages[0]`."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def apply_overrides(data: dict[str, Any], assignments: list[str]) -> dict[str, Any]:
    """A copy of `data` with each `dotted.key=value` set; tables on the way are created."""
    return set_values(data, parse_assignments(assignments))
