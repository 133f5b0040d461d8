"""A sweep file: an experiment config plus a `[sweep]` table saying which values vary.

    [sweep]
    seeds = 4                      # or a list: [0, 7, 9]
    parallel = 2                   # runs at once on this machine (or address = "tcp://...")
    target = 475.0                 # optional: summary.csv reports generations to reach it

    [sweep.grid]                   # every combination
    "brain.number_neurons" = [5, 10]

    [sweep.sample]                 # `samples` combinations drawn with the sweep's own `seed`
    "optimizer.mu" = [5, 10, 20]

Keys under `grid` and `sample` are dotted config keys; TOML reads an unquoted dotted key as
nested tables, so both spellings are accepted and mean the same. Everything outside `[sweep]` is
the config every run starts from. The table is checked as strictly as a config (unknown keys
with a suggestion), and every rule a key list must obey is one line naming the key.

A sweep has at most `MAX_RUNS` runs (settings x seeds), counted from the table's numbers before a
point is made: every point is validated and held in memory and listed in sweep.json before the
first run starts, so a sweep of a billion seeds or a 300 x 300 x 300 grid would otherwise grow
memory for minutes and print nothing. A sweep larger than that is several sweeps.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, ValidationError

from evo_core.config.loading import read_config_file, set_values
from evo_core.config.messages import render_errors
from evo_core.contract.config_models import StrictModel
from evo_core.dotted import flatten, key_parts
from evo_core.errors import UserError
from evo_core.hooks.registry import Registry

__all__ = ["SweepTable", "SweepFile", "read_sweep_file", "sweep_from_data", "EXECUTION_KEYS",
           "MAX_RUNS", "run_count"]

#: most runs one sweep may have; validating and listing this many points takes seconds (about
#: 0.2 ms a point) and a few tens of MB, and each run is a folder of its own
MAX_RUNS = 10_000

#: [sweep] keys that say only where and how many runs execute: a sweep folder may be continued
#: with other values (more processes, or a cluster), unlike any key that changes a result
EXECUTION_KEYS = ("parallel", "address")

_Values = Annotated[list[Any], Field(min_length=1)]


class SweepTable(StrictModel):
    """The `[sweep]` table."""

    seeds: Annotated[int, Field(ge=1)] | list[Annotated[int, Field(ge=0)]] | None = Field(
        None, description="A list of seeds, or a count N: the config's seed and the N-1 after "
        "it. Unset: the config's seed only.")
    grid: dict[str, _Values] = Field(
        default_factory=dict, description="Dotted config key -> values; every combination runs.")
    sample: dict[str, _Values] = Field(
        default_factory=dict, description="Dotted config key -> values; `samples` distinct "
        "combinations are drawn (each value of a key equally likely) with `seed`.")
    samples: int | None = Field(None, ge=1, description="How many combinations of `sample` "
                                "to draw.")
    seed: int = Field(0, ge=0, description="Seeds the draw of `sample` (not the runs).")
    parallel: int | None = Field(None, ge=1, description="Runs at once on this machine, each "
                                 "in its own process; unset: one.")
    address: str | None = Field(None, min_length=1, description="A Dask scheduler "
                                "(tcp://HOST:PORT) to run the runs on instead; its workers "
                                "need this machine's files.")
    target: float | None = Field(None, description="A fitness: summary.csv reports the "
                                 "generations each setting took to reach it.")


class _SweepOnly(StrictModel):
    """The model the `[sweep]` table is checked against (so messages say `sweep.KEY`)."""

    sweep: SweepTable


@dataclass(frozen=True)
class SweepFile:
    path: Path
    #: the config every run starts from (the file without its [sweep] table, --set applied)
    base: dict[str, Any]
    table: SweepTable
    #: what identifies the sweep: its config and [sweep] table, execution keys left out
    identity: dict[str, Any]
    #: --set assignments by dotted key, as typed (messages name them)
    override_texts: dict[str, str]

    def seeds(self) -> list[int]:
        first = self.base.get("seed", 0)
        start = first if isinstance(first, int) and not isinstance(first, bool) else 0
        if self.table.seeds is None:
            return [start]
        if isinstance(self.table.seeds, int):
            return list(range(start, start + self.table.seeds))
        return list(self.table.seeds)


def read_sweep_file(path: Path, registry: Registry,
                    overrides: list[tuple[str, Any]] | None = None,
                    override_texts: dict[str, str] | None = None) -> SweepFile:
    """The sweep file at `path` with the `--set` `overrides` applied, its table checked."""
    data = set_values(read_config_file(path), list(overrides or []))
    return sweep_from_data(data, path, registry, override_texts)


def sweep_from_data(data: dict[str, Any], path: Path, registry: Registry,
                    override_texts: dict[str, str] | None = None) -> SweepFile:
    """The sweep of a sweep file's contents `data` (messages name `path`)."""
    data = dict(data)
    table = data.pop("sweep", None)
    if table is None:
        raise UserError(f"{path}: has no [sweep] table; add one (e.g. `[sweep]` with "
                        "`seeds = 4`), or run a single config with `evo train`")
    if not isinstance(table, dict):
        raise UserError(f"{path}: sweep must be a table, got {json.dumps(table)[:60]}")
    table = dict(table)
    for name in ("grid", "sample"):
        if isinstance(table.get(name), dict):
            table[name] = flatten(table[name])
    texts = dict(override_texts or {})
    try:
        checked = _SweepOnly.model_validate({"sweep": table}).sweep
    except ValidationError as exc:
        raise UserError(render_errors(exc, {"sweep": table}, registry, str(path), _SweepOnly,
                                      texts)) from None
    _check_keys(path, checked)
    _check_size(path, checked)
    identity = dict(data, sweep=checked.model_dump(mode="json", exclude_defaults=True,
                                                   exclude=set(EXECUTION_KEYS)))
    return SweepFile(path, data, checked, identity, texts)


def _check_keys(path: Path, table: SweepTable) -> None:
    """The rules pydantic cannot state: dotted keys, no key varied twice, distinct values; then
    the rules between the table's fields, and the seeds."""
    seen: list[str] = []
    for kind, varied in (("grid", table.grid), ("sample", table.sample)):
        for key, values in varied.items():
            where = f"{path}: sweep.{kind}.{key}"
            _check_key(where, key, seen)
            seen.append(key)
            _check_distinct(where, values)
    _check_fields(path, table)
    _check_seeds(path, table)


def _check_key(where: str, key: str, seen: list[str]) -> None:
    """A varied key names a config setting other than the seed and the sweep itself, and
    overlaps none of the keys `seen` before it."""
    if not key_parts(key):
        raise UserError(f"{where}: not a dotted config key such as brain.number_neurons")
    if key == "seed":
        raise UserError(f"{where}: vary seeds with `seeds` in [sweep] (a list or a "
                        "count), not in grid or sample")
    if key == "sweep" or key.startswith("sweep."):
        raise UserError(f"{where}: a sweep cannot vary its own [sweep] table")
    for other in seen:
        if key == other or key.startswith(other + ".") or other.startswith(key + "."):
            raise UserError(f"{where}: overlaps {other!r}, which is varied already; "
                            "vary each setting in one place")


def _check_distinct(where: str, values: list[Any]) -> None:
    """Each value of a varied key is listed once (compared as JSON)."""
    listed: set[str] = set()
    for value in values:
        text = json.dumps(value, sort_keys=True)
        if text in listed:
            raise UserError(f"{where}: the value {text} appears twice; list each "
                            "value once")
        listed.add(text)


def _check_fields(path: Path, table: SweepTable) -> None:
    """address excludes parallel; samples goes with sample, and asks for no more combinations
    than it has."""
    if table.address is not None and table.parallel is not None:
        raise UserError(f"{path}: sweep.parallel: not used with sweep.address (the cluster runs "
                        "one run per worker thread); remove one of them")
    if table.sample and table.samples is None:
        raise UserError(f"{path}: sweep.samples: required with sweep.sample (how many "
                        "combinations to draw), e.g. samples = 10")
    if table.samples is not None and not table.sample:
        raise UserError(f"{path}: sweep.samples: only means something with a [sweep.sample] "
                        "table of values to draw from")
    if table.samples is not None:
        combinations = math.prod(len(values) for values in table.sample.values())
        if table.samples > combinations:
            raise UserError(f"{path}: sweep.samples: {table.samples} distinct combinations "
                            f"asked for, but sweep.sample has only {combinations}; lower "
                            "samples or use [sweep.grid] for all of them")


def _check_seeds(path: Path, table: SweepTable) -> None:
    """A list of seeds is not empty and names each seed once."""
    if isinstance(table.seeds, list):
        if not table.seeds:
            raise UserError(f"{path}: sweep.seeds: an empty list; give seeds or a count")
        if len(set(table.seeds)) != len(table.seeds):
            raise UserError(f"{path}: sweep.seeds: a seed appears twice; each seed runs once "
                            "per setting")


def run_count(table: SweepTable) -> int:
    """How many runs `table` makes: grid combinations x drawn samples x seeds, computed from
    the lists' lengths (nothing is materialised)."""
    settings = math.prod(len(values) for values in table.grid.values()) * (table.samples or 1)
    seeds = len(table.seeds) if isinstance(table.seeds, list) else (table.seeds or 1)
    return settings * seeds


def _check_size(path: Path, table: SweepTable) -> None:
    count = run_count(table)
    if count > MAX_RUNS:
        grid = " x ".join(str(len(values)) for values in table.grid.values()) or "1"
        seeds = len(table.seeds) if isinstance(table.seeds, list) else (table.seeds or 1)
        raise UserError(f"{path}: sweep: {count} runs ({grid} grid x {table.samples or 1} "
                        f"samples x {seeds} seeds), more than the {MAX_RUNS} one sweep may "
                        "have; vary fewer values or seeds, or split it into several sweeps")
