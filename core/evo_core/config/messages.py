"""pydantic's validation errors as lines a researcher can act on.

Each line names the file, the dotted key, the bad value and what is allowed, and suggests the
nearest valid name for a misspelt key or type, as gymnasium does for environment ids.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from evo_core.hooks.registry import KINDS, Kind, Registry
from evo_core.suggest import close_match, did_you_mean

__all__ = ["render_errors", "shown"]

#: Longest echo of a value, a key or a `--set` assignment in a message: a config may hold a
#: 50 MB string, and its error must still be one readable line.
SHOWN = 60

#: The key whose values are the installed vectorizers' names (config/schema.py `_episodes`).
_VECTORIZE = ("episodes", "vectorize")


def render_errors(exc: ValidationError, data: dict[str, Any], registry: Registry,
                  source: str, model: type[BaseModel],
                  overrides: Mapping[str, str] | None = None) -> str:
    """One line per problem of validating `data` against `model`, each starting with `source`,
    or with the `--set` assignment that put the bad value there (`overrides`: dotted key ->
    assignment as typed)."""
    errors = _merged_unions(exc.errors(include_url=False), data)
    said_once = _misspelt_required(errors, data, registry, model)
    lines: list[str] = []
    for error in errors:
        loc = _strip_tag(tuple(error["loc"]), data)
        if error["type"] == "missing" and loc in said_once:
            continue
        if error["type"] in ("union_tag_invalid", "union_tag_not_found"):
            loc = (*loc, "type")  # reported at the table; the value is its `type`
        line = f"{_source_of(loc, source, overrides or {})}: " \
               f"{_render_one(error, data, registry, model)}"
        if line not in lines:
            lines.append(line)
    return "\n".join(lines)


def _untagged(loc: tuple[Any, ...], data: Any) -> tuple[tuple[Any, ...], bool]:
    """`loc` without the names pydantic gives the members of a union of plain types
    (`sweep.seeds.constrained-int`, `sweep.seeds.list[constrained-int].0`): a name below a value
    that is no table is one of those. Also whether there was one."""
    kept: list[Any] = []
    tagged = False
    for part in loc:
        if isinstance(part, str) and data is not None and not isinstance(data, dict):
            tagged = True
            continue
        kept.append(part)
        data = _data_at(data, (part,))
    return tuple(kept), tagged


def _merged_unions(errors: list[ErrorDetails], data: dict[str, Any]) -> list[ErrorDetails]:
    """One error per value of a union of plain types, instead of pydantic's one per member with
    the member's internal name in the location. A member the value reached into (a list whose
    element is wrong) says what is wrong; otherwise the members' requirements are joined:
    `sweep.seeds: must be greater than or equal to 1 or a valid list, got 0`. A component's tag
    (`environment.wrappers.0.scale-observation.scale.float`) is taken out first: the value is
    found below the table, not below its type's name."""
    plain = [(error, *_untagged(_strip_tag(tuple(error["loc"]), data), data))
             for error in errors]
    deeper = {loc[:depth] for _, loc, tagged in plain if tagged for depth in range(len(loc))}
    merged: list[ErrorDetails] = []
    joined: dict[tuple[Any, ...], ErrorDetails] = {}
    for error, loc, tagged in plain:
        if not tagged:
            merged.append(error)
        elif loc in deeper:
            continue  # another member got further into the value: its error is the one
        elif loc in joined:
            first = joined[loc]
            first["msg"] = f"{first['msg']} or {_requirement(error)}"
        else:
            error = ErrorDetails(type="union_members", loc=loc, msg=str(error["msg"]),
                                 input=error.get("input"))
            joined[loc] = error
            merged.append(error)
    return merged


def _requirement(error: ErrorDetails) -> str:
    """`a valid list` of pydantic's `Input should be a valid list`."""
    return str(error["msg"]).removeprefix("Value error, ").removeprefix("Input should be ")


def _source_of(loc: tuple[Any, ...], source: str, overrides: Mapping[str, str]) -> str:
    """The `--set` that wrote the value at `loc` (or the table around it), else the file."""
    for depth in range(len(loc), 0, -1):
        assignment = overrides.get(_path(loc[:depth]))  # `brain.stages[0].output_size`
        if assignment is not None:
            return f"--set {_bounded(assignment)}"
    return source


def _misspelt_required(errors: list[ErrorDetails], data: dict[str, Any], registry: Registry,
                       model: type[BaseModel]) -> set[tuple[Any, ...]]:
    """Locations of missing required keys that an unknown key of the same table nearly spells:
    the "did you mean" of the unknown key says it all, so the missing key is not reported."""
    missing = {_strip_tag(tuple(e["loc"]), data) for e in errors if e["type"] == "missing"}
    covered: set[tuple[Any, ...]] = set()
    for error in errors:
        loc = _strip_tag(tuple(error["loc"]), data)
        if error["type"] != "extra_forbidden" or not loc:
            continue
        table = _model_at(loc[:-1], data, registry, model)
        names = [name for name in (table.model_fields if table else {})
                 if (*loc[:-1], name) in missing]
        hint = close_match(loc[-1], names)
        if hint is not None:
            covered.add((*loc[:-1], hint))
    return covered


def _path(loc: tuple[Any, ...]) -> str:
    text = ""
    for part in loc:
        name = _bounded(str(part))
        text += f"[{part}]" if isinstance(part, int) else (f".{name}" if text else name)
    return text or "(top level)"


def _bounded(text: str) -> str:
    """`text`, cut to SHOWN characters with an ellipsis when longer."""
    return text if len(text) <= SHOWN else text[:SHOWN - 3] + "..."


def _union_kind(loc: tuple[Any, ...]) -> Kind | None:
    """The kind of component whose table is at `loc` when that table is a union chosen by its
    `type` (`brain`, `optimizer`, `processing`, the wrappers of an environment table, a chain's
    `brain.stages[i]`), else None."""
    if len(loc) == 1 and loc[0] in KINDS:
        kind: Kind = loc[0]
        return kind
    if len(loc) >= 3 and loc[-2] == "wrappers" and isinstance(loc[-1], int) \
            and _is_environment(loc[:-2]):
        return "wrapper"
    if len(loc) == 3 and loc[:2] == ("brain", "stages") and isinstance(loc[2], int):
        return "brain"  # a chain's stage: its own brain's table
    return None


def _is_environment(loc: tuple[Any, ...]) -> bool:
    """Whether `loc` is an environment table: the training environment, or a champion test's
    (`stop.champion_tests[i].environment`), whose wrappers validate alike."""
    return loc == ("environment",) or (len(loc) == 4 and loc[:2] == ("stop", "champion_tests")
                                       and isinstance(loc[2], int) and loc[3] == "environment")


def _data_at(data: Any, loc: tuple[Any, ...]) -> Any:
    """What the config holds at `loc`, or None."""
    for part in loc:
        in_table = isinstance(data, dict) and part in data
        in_list = isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data)
        if not (in_table or in_list):
            return None
        data = data[part]
    return data


def _strip_tag(loc: tuple[Any, ...], data: dict[str, Any]) -> tuple[Any, ...]:
    """pydantic puts the union member's tag into the location (`brain.ctrnn.x`,
    `environment.wrappers.1.frame-stack.stack_size`); drop it."""
    for depth in range(1, len(loc)):
        if _union_kind(loc[:depth]) is None:
            continue
        section = _data_at(data, loc[:depth])
        if isinstance(section, dict) and section.get("type") == loc[depth]:
            return loc[:depth] + loc[depth + 1:]
    return loc


def _model_at(loc: tuple[Any, ...], data: dict[str, Any], registry: Registry,
              model: type[BaseModel]) -> type[BaseModel] | None:
    """The model whose keys are allowed at `loc` (a table path below `model`), where it can be
    known: plugin tables by their `type`, the core's own tables by their annotation."""
    if not loc:
        return model
    kind = _union_kind(loc)
    if kind is not None:
        section = _data_at(data, loc)
        name = section.get("type") if isinstance(section, dict) else None
        component = registry.components[kind].get(str(name))
        return component.config_model if component else None
    if len(loc) > 1 and loc[0] == "environment":  # the wrappers' tables are found above
        return None
    field = model.model_fields.get(str(loc[0]))
    table = _optional_of(field.annotation) if field is not None else None
    if isinstance(table, type) and issubclass(table, BaseModel):
        inner = data.get(str(loc[0]))
        return _model_at(loc[1:], inner if isinstance(inner, dict) else {}, registry, table)
    return None


def _optional_of(annotation: Any) -> Any:
    """`X` of an optional table `X | None` (a `[trackers.NAME]` table), else the annotation."""
    members = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(members) == 1:
        return members[0]
    return annotation


def _render_one(error: ErrorDetails, data: dict[str, Any], registry: Registry,
                model: type[BaseModel]) -> str:
    kind = error["type"]
    loc = _strip_tag(tuple(error["loc"]), data)
    path = _path(loc)
    value = error.get("input")
    if kind == "extra_forbidden":
        table = _model_at(loc[:-1], data, registry, model)
        allowed = sorted(table.model_fields) if table else []
        hint = did_you_mean(str(loc[-1]), allowed)
        listing = f"; allowed keys: {', '.join(allowed)}" if allowed else ""
        if len(loc) == 2 and loc[0] == "trackers":
            return (f"{path}: no tracker named {shown(loc[-1])} is installed{hint}; installed: "
                    f"{', '.join(allowed) or 'none'} (see `evo list-trackers`)")
        return f"{path}: unknown key{hint}{listing}"
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        section = _union_kind(loc)
        names = registry.names(section) if section is not None else []
        installed = ", ".join(names) or "none"
        where = _path((*loc, "type"))
        if kind == "union_tag_not_found":
            return f"{where}: missing; set it to one of: {installed}"
        tag = error.get("ctx", {}).get("tag", value)
        listing = f" (see `evo {KINDS[section].command}`)" if section == "wrapper" else ""
        return (f"{where}: unknown {section or 'component'} type {shown(tag)}"
                f"{did_you_mean(tag, names)}; installed: {installed}{listing}"
                f"{registry.broken_hint()}")
    if kind == "missing":
        table = _model_at(loc[:-1], data, registry, model)
        field = table.model_fields.get(str(loc[-1])) if table else None
        about = f" ({field.description})" if field is not None and field.description else ""
        return f"{path}: required key is missing{about}"
    if kind == "finite_number":
        return f"{path}: must be a finite number, not NaN or infinite, got {shown(value)}"
    if kind in ("model_attributes_type", "model_type", "dict_type"):
        return f"{path}: must be a table, got {shown(value)}"
    message = str(error.get("msg", kind))
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    message = message.replace("Input should be", "must be").replace("Input", "value")
    if kind == "literal_error" and isinstance(value, str):
        return _not_allowed(error, loc, value, message, registry)
    return f"{path}: {message}, got {shown(value)}"


def _not_allowed(error: ErrorDetails, loc: tuple[Any, ...], value: str, message: str,
                 registry: Registry) -> str:
    """A string that is none of a key's allowed values, with the nearest one; for
    `episodes.vectorize`, whose values are the installed vectorizers, as an unknown type is
    said (and the extra of evo-core that installs it, when one does)."""
    path = _path(loc)
    if loc == _VECTORIZE:
        return registry.unknown("vectorizer", _bounded(value), path)
    allowed = str(error.get("ctx", {}).get("expected", ""))
    hint = did_you_mean(value, [a.strip(" '") for a in allowed.replace(" or ", ",").split(",")])
    return f"{path}: {message}, got {shown(value)}{hint}"


def shown(value: Any) -> str:
    """`value`'s repr, cut to SHOWN characters with an ellipsis when longer."""
    return _bounded(repr(value))
