"""The predecessor's design spaces: configs whose lists are alternatives, as sweep files.

In a design space every list is a set of alternatives (a genuinely list-valued field such as
`hidden_layers` is written as a list of lists), and the predecessor's batch script drew one
config after another from it, each value uniformly and without a seed, up to 100 by default.
Migrated, the lists become a `[sweep.sample]` table of evo keys and values with `samples =
SAMPLES` distinct combinations drawn with `[sweep] seed = 0`, so the draw is the same every time;
change `samples` for more.

Which evo key a predecessor list becomes is not looked up in a second table of names: each
alternative is migrated on its own, with the other lists at their first value, and the evo
settings that change are the sampled key. So renames (`lambda_` -> `population_size`) and
conversions (`fix_seed_for_generation` -> `episodes.seed_per`) are those of the ordinary
migration, a value a migration leaves out takes evo's default, and sections migrated by other
modules join in by themselves. An alternative evo cannot run (its migration does not validate)
is dropped with the reason; a list that changes nothing in evo is reported as dropped.
A list of tables (whole sections as alternatives) with lists inside becomes one alternative per
combination of those inner lists.

The time and memory are linear in the number of alternatives (a list of 200,000 values is
fine): each alternative keeps only what its migration changed (its flattened config's and its
validated config's differences from the base's), distinct choices and repeated lines are found
through sets of their JSON text, never by comparing each with every other.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from evo_core.config.migrate.result import Migration
from evo_core.config.schema import experiment_model
from evo_core.dotted import flatten
from evo_core.hooks.discovery import get_registry

__all__ = ["is_design_space", "migrate_design_space", "SAMPLES", "LIST_FIELDS"]

#: how many combinations a migrated design space draws
SAMPLES = 10
#: predecessor fields whose value is a list in an ordinary config
LIST_FIELDS = frozenset({"hidden_layers", "cppn_hidden_layers"})
#: more alternatives than this from one list of tables are not expanded
MAX_EXPANDED = 1000

KeyPath = tuple[str, ...]
_ABSENT = object()


def _lists(value: Any, path: KeyPath = ()) -> list[tuple[KeyPath, list[Any]]]:
    """(path, list) of every list in the tree, outermost first, not looking inside a list."""
    if isinstance(value, dict):
        return [found for key, item in value.items() for found in _lists(item, (*path, key))]
    if isinstance(value, list):
        return [(path, value)]
    return []


def is_design_space(old: dict[str, Any]) -> bool:
    """Whether `old` holds a list where the predecessor expects a single value, or a list of
    lists: the marks of a design space."""
    for path, values in _lists(old):
        if path[-1] not in LIST_FIELDS or any(isinstance(v, (list, dict)) for v in values):
            return True
    return False


def _expanded(values: list[Any]) -> list[Any]:
    """The alternatives of a list: a table with lists inside is one alternative per combination
    of its own lists; an empty list means null (as the predecessor read it)."""
    if not values:
        return [None]
    result: list[Any] = []
    for value in values:
        inner = _lists(value) if isinstance(value, dict) else []
        if not inner:
            result.append(value)
            continue
        choices = [_expanded(list(options)) for _, options in inner]
        for combination in itertools.product(*choices):
            chosen = copy.deepcopy(value)
            for (path, _), choice in zip(inner, combination):
                _put(chosen, path, choice)
            result.append(chosen)
            if len(result) > MAX_EXPANDED:
                raise ValueError(f"more than {MAX_EXPANDED} alternatives")
    return result


def _put(tree: dict[str, Any], path: KeyPath, value: Any) -> None:
    for key in path[:-1]:
        tree = tree[key]
    tree[path[-1]] = value


def _common_table(keys: set[str]) -> str:
    """The deepest key that all `keys` are, or lie under ("" for the top level)."""
    parts = [key.split(".") for key in keys]
    common: list[str] = []
    for level in zip(*parts):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    return ".".join(common)


def _validated(config: dict[str, Any], model: Any) -> dict[str, Any] | str:
    """The config with evo's defaults filled in, or the first reason it is invalid."""
    try:
        validated: dict[str, Any] = model.model_validate(config).model_dump(mode="json")
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in error["loc"])
        return f"{where}: {error['msg']}"
    return validated


class _Lines:
    """Lines added to `lines` once each, in the order first seen (a set, so that adding the
    lines of 200,000 alternatives stays linear)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.seen = set(lines)

    def add(self, new: Iterable[str]) -> None:
        for line in new:
            if line not in self.seen:
                self.seen.add(line)
                self.lines.append(line)


def _diff(flat: dict[str, Any], reference: dict[str, Any]) -> dict[str, Any]:
    """The dotted keys whose values in `flat` differ from `reference`'s (`_ABSENT` where
    `flat` lacks a key), in a fixed order."""
    keys = [*flat, *(key for key in reference if key not in flat)]
    return {key: flat.get(key, _ABSENT) for key in keys
            if flat.get(key, _ABSENT) != reference.get(key, _ABSENT)}


@dataclass(frozen=True)
class _Outcome:
    """An alternative that evo can run: its value and what its migration changed, as
    differences from the base config (`config`) and from the base config validated
    (`validated`, evo's defaults filled in)."""

    value: Any
    config: dict[str, Any]
    validated: dict[str, Any]


@dataclass(frozen=True)
class _Base:
    """What each alternative is compared with: the base config flattened, and validated."""

    old: dict[str, Any]
    flat: dict[str, Any]
    validated: dict[str, Any]


def _migrate_each(path: KeyPath, values: list[Any], base: _Base,
                  migrate: Callable[[dict[str, Any]], Migration],
                  dropped: _Lines) -> tuple[list[_Outcome], list[str]]:
    """Each alternative migrated on its own (the other lists at their first value): the ones
    evo can run, and the notes their migrations made. The others are reported as dropped."""
    name = ".".join(path)
    model = experiment_model(get_registry())
    outcomes: list[_Outcome] = []
    notes = _Lines([])
    fresh = _copier(base.old)
    for value in values:
        variant_old = fresh()
        _put(variant_old, path, value)
        variant = migrate(variant_old)
        validated = _validated(variant.config, model)
        if isinstance(validated, str):
            dropped.add([f"{name} = {_cut(value)}: not a setting evo can run ({validated}); "
                         "left out of the sample"])
            continue
        dropped.add(variant.dropped)
        notes.add(variant.notes)
        outcomes.append(_Outcome(value, _diff(flatten(variant.config), base.flat),
                                 _diff(flatten(validated), base.validated)))
    return outcomes, notes.lines


def _copier(tree: dict[str, Any]) -> Callable[[], dict[str, Any]]:
    """A function returning fresh deep copies of `tree`: parsed from its JSON text, several
    times faster than `copy.deepcopy` for a config read from a file; deepcopy for anything
    JSON does not round-trip."""
    try:
        text = json.dumps(tree)
        if json.loads(text) != tree:
            raise ValueError("not a JSON tree")
    except (TypeError, ValueError):
        return lambda: copy.deepcopy(tree)

    def parsed() -> dict[str, Any]:
        copied: dict[str, Any] = json.loads(text)
        return copied

    return parsed


def _changed(outcomes: list[_Outcome]) -> set[str]:
    """The evo keys (dotted) whose values differ from the base config in some alternative."""
    changed: set[str] = set()
    for outcome in outcomes:
        changed.update(outcome.config)
    return changed


def _under(flat: dict[str, Any], key: str) -> dict[str, Any]:
    """The entries of `flat` at `key` or inside it."""
    prefix = key + "."
    return {k: v for k, v in flat.items() if k == key or k.startswith(prefix)}


def _subtree(reference: dict[str, Any], diff: dict[str, Any], key: str) -> Any:
    """The value at `key` of the config that is `reference` (its entries under `key`) changed
    by `diff`: a leaf, a table rebuilt from its dotted entries, or `_ABSENT`."""
    entries = dict(reference)
    for dotted, value in _under(diff, key).items():
        if value is _ABSENT:
            entries.pop(dotted, None)
        else:
            entries[dotted] = value
    if not entries:
        return _ABSENT
    if key in entries:
        return entries[key]
    tree: dict[str, Any] = {}
    for dotted, value in entries.items():
        _put_dotted(tree, dotted[len(key) + 1:], value)
    return tree


def _choices(key: str, outcomes: list[_Outcome], base: _Base) -> tuple[list[Any], list[Any]]:
    """The distinct values of `key` the alternatives give (evo's default where a migration
    leaves it out), and the alternatives that leave it unset, which TOML cannot write."""
    reference, validated_reference = _under(base.flat, key), _under(base.validated, key)
    choices: list[Any] = []
    seen: set[str] = set()
    unset: list[Any] = []
    for outcome in outcomes:
        choice = _subtree(reference, outcome.config, key)
        if choice is _ABSENT:
            choice = _subtree(validated_reference, outcome.validated, key)
        if choice is _ABSENT or choice is None:
            unset.append(outcome.value)
            continue
        text = json.dumps(choice, sort_keys=True)
        if text not in seen:
            seen.add(text)
            choices.append(choice)
    return choices, unset


def _cut(value: Any, limit: int = 80) -> str:
    """`value` as JSON, cut to one short line for a message."""
    text = json.dumps(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _found_lists(old: dict[str, Any], dropped: list[str]) -> list[tuple[KeyPath, list[Any]]]:
    """Every list of the design space with its alternatives."""
    found: list[tuple[KeyPath, list[Any]]] = []
    for path, values in _lists(old):
        if path[-1] in LIST_FIELDS and values and not any(isinstance(v, list) for v in values):
            values = [values]  # a list-valued field written as a single list: no alternatives
        try:
            found.append((path, _expanded(values)))
        except ValueError as exc:
            dropped.append(f"{'.'.join(path)}: {exc}; only its first value is kept")
            found.append((path, [values[0]]))
    return found


@dataclass
class _Space:
    """What the lists of a design space became so far."""

    result: Migration
    dropped: _Lines
    notes: _Lines
    sample: dict[str, list[Any]]
    #: sampled keys the base config leaves to evo's default, with that default
    defaults: dict[str, Any]
    seeds: list[Any] | None = None


def migrate_design_space(old: dict[str, Any],
                         migrate: Callable[[dict[str, Any]], Migration]) -> Migration:
    """The design space `old` as a sweep file's config (a `[sweep]` table with `sample`),
    `migrate` being the migration of one ordinary config."""
    dropped: list[str] = []
    found = _found_lists(old, dropped)
    base_old = copy.deepcopy(old)
    for path, values in found:
        _put(base_old, path, values[0])
    result = migrate(base_old)
    space = _Space(result, _Lines(result.dropped), _Lines(result.notes), {}, {})
    space.dropped.add(dropped)
    validated = _validated(result.config, experiment_model(get_registry()))
    base = _Base(base_old, flatten(result.config),
                 {} if isinstance(validated, str) else flatten(validated))
    for path, values in found:
        if len(values) >= 2:
            _sample_list(path, values, base, migrate, space)
    config = result.config
    for key, value in space.defaults.items():
        _put_dotted(config, key, value)
    if space.sample or space.seeds:
        config["sweep"] = _sweep_table(space.sample, space.seeds)
        result.notes.append(
            f"a design space: its lists became [sweep.sample] ({len(space.sample)} keys); the "
            f"predecessor drew up to 100 configs without a seed, `evo sweep` draws "
            f"samples = {config['sweep'].get('samples', 0)} distinct ones with seed = 0 "
            "(change samples for more)")
    return result


def _sample_list(path: KeyPath, values: list[Any], base: _Base,
                 migrate: Callable[[dict[str, Any]], Migration], space: _Space) -> None:
    """The list at `path` as a sampled key of `space` (or seeds), or the lines saying why not."""
    name = ".".join(path)
    outcomes, notes = _migrate_each(path, values, base, migrate, space.dropped)
    changed = _changed(outcomes)
    if not changed:
        space.dropped.add([f"{name}: the alternatives {_cut(values)}: no evo setting depends "
                           "on them"])
        return
    key = _common_table(changed)
    taken = [other for other in space.sample
             if other == key or other.startswith(key + ".") or key.startswith(other + ".")]
    if not key or taken:
        space.dropped.add([f"{name}: its alternatives change {', '.join(sorted(changed))} "
                           "together with other sampled keys; only the first is kept"])
        return
    choices, unset = _choices(key, outcomes, base)
    if key == "seed":
        space.seeds = choices
    elif len(choices) > 1:
        space.sample[key] = choices
        space.notes.add(notes)
        if _subtree(_under(base.flat, key), {}, key) is _ABSENT:
            default = _subtree(_under(base.validated, key), {}, key)
            if default is not _ABSENT:
                space.defaults[key] = default
    if unset and (len(choices) > 1 or key == "seed"):
        space.dropped.add(f"{name} = {_cut(v)}: leaves {key} unset, which a sweep cannot "
                          "sample; left out of the sample" for v in unset)
    elif unset:
        space.dropped.add([f"{name}: the alternatives {_cut(values)} leave {key} unset or set "
                           f"it, which a sweep cannot sample; {_cut(values[0])} is kept"])


def _sweep_table(sample: dict[str, list[Any]], seeds: list[Any] | None) -> dict[str, Any]:
    table: dict[str, Any] = {}
    if seeds:
        table["seeds"] = seeds
    if sample:
        count = 1
        for choices in sample.values():
            count *= len(choices)
        table.update(samples=min(SAMPLES, count), seed=0, sample=sample)
    return table


def _put_dotted(tree: dict[str, Any], dotted: str, value: Any) -> None:
    keys = dotted.split(".")
    for key in keys[:-1]:
        tree = tree.setdefault(key, {})
    tree[keys[-1]] = value
