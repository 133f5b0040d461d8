"""The points of a sweep: every setting (grid combination x drawn sample) times every seed.

A point's name is its run folder's name: the varied values and the seed (`mu=10_sigma=0.5_seed=3`),
with each key shortened to its last part unless two varied keys share it. The name must be the
same every time the sweep file is read, so that running the sweep again finds the folders of the
runs it has already done: sampled settings are drawn from the sweep's own seed, never from
global state, and a name too long for a folder (many sampled keys) becomes the setting's number
plus a digest of its values, which is just as stable.
"""

from __future__ import annotations

import collections
import hashlib
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evo_core.sweeps.sweep_file import SweepFile, SweepTable

__all__ = ["Point", "Setting", "settings_of", "points_of", "format_value", "MAX_LABEL"]

#: longest setting label used as is in a folder name (file systems allow 255 bytes)
MAX_LABEL = 100

_UNSAFE = re.compile(r"[^A-Za-z0-9.+-]+")


@dataclass(frozen=True)
class Setting:
    """One combination of varied values (all seeds of it share it)."""

    index: int
    #: (dotted key, value) in the order the sweep file lists the keys: grid first, then sample
    values: tuple[tuple[str, Any], ...]
    label: str


@dataclass(frozen=True)
class Point:
    setting: Setting
    seed: int

    @property
    def name(self) -> str:
        """The run folder's name."""
        return f"{self.setting.label}_seed={self.seed}" if self.setting.values else \
            f"seed={self.seed}"

    def assignments(self) -> list[tuple[str, Any]]:
        """What this point sets in the sweep's base config, the seed last."""
        return [*self.setting.values, ("seed", self.seed)]

    def describe(self) -> str:
        """`key=value` for every assignment, values as TOML writes them (one line)."""
        return " ".join(f"{key}={format_value(value)}" for key, value in self.assignments())


def format_value(value: Any) -> str:
    """A value as a config file writes it: `5`, `0.5`, `true`, `"tanh"`, `[8, 8]`."""
    return json.dumps(value, sort_keys=True)


def _draw(table: SweepTable) -> list[tuple[Any, ...]]:
    """`samples` distinct combinations of the `sample` values, drawn with the sweep's seed:
    each key's value uniformly, a combination already drawn drawn again."""
    if not table.sample or table.samples is None:
        return [()]
    lists = list(table.sample.values())
    rng = np.random.default_rng(table.seed)
    chosen: list[tuple[int, ...]] = []
    seen: set[tuple[int, ...]] = set()
    while len(chosen) < table.samples:  # the sweep file checks samples <= combinations
        combination = tuple(int(rng.integers(len(values))) for values in lists)
        if combination not in seen:
            seen.add(combination)
            chosen.append(combination)
    return [tuple(values[i] for values, i in zip(lists, combination))
            for combination in chosen]


def _short_keys(keys: Sequence[str]) -> dict[str, str]:
    """Each key's last part, or the whole key where two keys share their last part."""
    last = [key.rsplit(".", 1)[-1] for key in keys]
    return {key: short if last.count(short) == 1 else key for key, short in zip(keys, last)}


def _text(value: Any) -> str:
    if isinstance(value, str):
        text = value
    elif isinstance(value, bool) or value is None:
        text = json.dumps(value)
    elif isinstance(value, (int, float)):
        text = repr(value)
    else:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return _UNSAFE.sub("-", text) or "-"


def _digest(values: tuple[tuple[str, Any], ...]) -> str:
    return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()[:8]


def settings_of(sweep: SweepFile) -> list[Setting]:
    """Every setting in order: each grid combination with each drawn sample."""
    table = sweep.table
    grid_keys, sample_keys = list(table.grid), list(table.sample)
    keys = grid_keys + sample_keys
    short = _short_keys(keys)
    combinations = [grid + sample
                    for grid in itertools.product(*table.grid.values())
                    for sample in _draw(table)]
    width = len(str(len(combinations)))
    labels: list[str] = []
    settings: list[Setting] = []
    for index, combination in enumerate(combinations):
        values = tuple(zip(keys, combination))
        label = "_".join(f"{short[key]}={_text(value)}" for key, value in values)
        if len(label) > MAX_LABEL:
            label = f"setting-{index + 1:0{width}d}-{_digest(values)}"
        labels.append(label)
        settings.append(Setting(index, values, label))
    # different values can read alike once made safe for a file name ("a/b" and "a-b")
    counts = collections.Counter(labels)
    return [setting if counts[setting.label] == 1 else
            Setting(setting.index, setting.values, f"{setting.label}-{_digest(setting.values)}")
            for setting in settings]


def points_of(sweep: SweepFile) -> list[Point]:
    """Every point: each setting with each seed, setting by setting."""
    seeds = sweep.seeds()
    return [Point(setting, seed) for setting in settings_of(sweep) for seed in seeds]

