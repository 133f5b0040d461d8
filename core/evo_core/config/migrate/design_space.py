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
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable
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


def _at(tree: Any, dotted: str) -> Any:
    for key in dotted.split("."):
        if not isinstance(tree, dict) or key not in tree:
            return _ABSENT
        tree = tree[key]
    return tree


def _common_table(keys: set[str]) -> str:
    """The deepest key that all `keys` are, or lie under ("" for the top level)."""
    parts = [key.split(".") for key in keys]
    common: list[str] = []
    for level in zip(*parts):
        if len(set(level)) != 1:
            break
        common.append(level[0])
    return ".".join(common)


def _validated(config: dict[str, Any]) -> dict[str, Any] | str:
    """The config with evo's defaults filled in, or the first reason it is invalid."""
    try:
        model = experiment_model(get_registry())
        return model.model_validate(config).model_dump(mode="json")
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in error["loc"])
        return f"{where}: {error['msg']}"


def _add(lines: list[str], new: list[str]) -> None:
    lines.extend(line for line in new if line not in lines)


#: an alternative's value, its migrated config, and that config validated (defaults filled in)
_Outcome = tuple[Any, dict[str, Any], dict[str, Any]]


def _migrate_each(name: str, path: KeyPath, values: list[Any], base_old: dict[str, Any],
                  migrate: Callable[[dict[str, Any]], Migration],
                  result: Migration) -> tuple[list[_Outcome], list[str]]:
    """Each alternative migrated on its own (the other lists at their first value): the ones
    evo can run, and the notes their migrations made. The others are reported as dropped."""
    outcomes: list[_Outcome] = []
    notes: list[str] = []
    for value in values:
        variant_old = copy.deepcopy(base_old)
        _put(variant_old, path, value)
        variant = migrate(variant_old)
        validated = _validated(variant.config)
        if isinstance(validated, str):
            _add(result.dropped, [f"{name} = {json.dumps(value)}: not a setting evo can run "
                                  f"({validated}); left out of the sample"])
            continue
        _add(result.dropped, variant.dropped)
        notes.extend(variant.notes)
        outcomes.append((value, variant.config, validated))
    return outcomes, notes


def _changed(outcomes: list[_Outcome], reference: dict[str, Any]) -> set[str]:
    """The evo keys (dotted) whose values differ from `reference` in some alternative."""
    changed: set[str] = set()
    for _, config, _ in outcomes:
        flat = flatten(config)
        changed |= {key for key in flat.keys() | reference.keys()
                    if flat.get(key, _ABSENT) != reference.get(key, _ABSENT)}
    return changed


def _choices(key: str, outcomes: list[_Outcome]) -> tuple[list[Any], list[Any]]:
    """The distinct values of `key` the alternatives give (evo's default where a migration
    leaves it out), and the alternatives that leave it unset, which TOML cannot write."""
    choices: list[Any] = []
    unset: list[Any] = []
    for value, config, validated in outcomes:
        choice = _at(config, key)
        choice = _at(validated, key) if choice is _ABSENT else choice
        if choice is _ABSENT or choice is None:
            unset.append(value)
        elif choice not in choices:
            choices.append(choice)
    return choices, unset


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
    _add(result.dropped, dropped)
    base = result.config
    base_validated = _validated(base)
    reference = flatten(base)  # what each alternative's migration is compared with
    sample: dict[str, list[Any]] = {}
    defaults: dict[str, Any] = {}  # sampled keys the base config leaves to evo's default
    seeds: list[Any] | None = None
    for path, values in found:
        name = ".".join(path)
        if len(values) < 2:
            continue
        outcomes, notes = _migrate_each(name, path, values, base_old, migrate, result)
        changed = _changed(outcomes, reference)
        if not changed:
            _add(result.dropped, [f"{name}: the alternatives {json.dumps(values)}: no evo "
                                  "setting depends on them"])
            continue
        key = _common_table(changed)
        taken = [other for other in sample
                 if other == key or other.startswith(key + ".") or key.startswith(other + ".")]
        if not key or taken:
            _add(result.dropped, [f"{name}: its alternatives change {', '.join(sorted(changed))}"
                                  " together with other sampled keys; only the first is kept"])
            continue
        choices, unset = _choices(key, outcomes)
        if key == "seed":
            seeds = choices
        elif len(choices) > 1:
            sample[key] = choices
            _add(result.notes, notes)
            if not isinstance(base_validated, str) and _at(base, key) is _ABSENT:
                defaults[key] = _at(base_validated, key)
        if unset and (len(choices) > 1 or key == "seed"):
            _add(result.dropped, [f"{name} = {json.dumps(v)}: leaves {key} unset, which a "
                                  "sweep cannot sample; left out of the sample" for v in unset])
        elif unset and len(choices) <= 1:
            _add(result.dropped, [f"{name}: the alternatives {json.dumps(values)} leave {key} "
                                  "unset or set it, which a sweep cannot sample; "
                                  f"{json.dumps(values[0])} is kept"])
    for key, value in defaults.items():
        _put_dotted(base, key, value)
    if sample or seeds:
        base["sweep"] = _sweep_table(sample, seeds)
        result.notes.append(
            f"a design space: its lists became [sweep.sample] ({len(sample)} keys); the "
            f"predecessor drew up to 100 configs without a seed, `evo sweep` draws "
            f"samples = {base['sweep'].get('samples', 0)} distinct ones with seed = 0 (change "
            "samples for more)")
    return result


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
