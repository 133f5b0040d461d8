"""The points of a sweep: every setting (grid combination x drawn sample) times every seed.

A point's name is its run folder's name: the varied values and the seed (`mu=10_sigma=0.5_seed=3`),
with each key shortened to its last part unless two varied keys share it. The name must be the
same every time the sweep file is read, so that running the sweep again finds the folders of the
runs it has already done: sampled settings are drawn from the sweep's own seed, never from
global state, and a name too long for a folder (many sampled keys) becomes the setting's number
plus a digest of its values, which is just as stable.

A name is always one ordinary folder name inside the sweep folder, whatever the sweep file's keys
and values hold: keys and values are written in a safe character set (letters, digits and
`.+-`, keys also `_`; anything else becomes `-`), so `/`, a newline or a NUL never reaches the
file system; a label longer than `MAX_LABEL` becomes `setting-NN-<digest>`, a seed of more than
`MAX_SEED_DIGITS` digits a digest too; and settings whose labels read alike once made safe
(`a/b` and `a-b`, or `X` and `x` on a case-insensitive file system) each get a digest of their
values appended. Ordinary keys (letters, digits, `_`) and values keep the names they always had.
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

__all__ = ["Point", "Setting", "settings_of", "points_of", "format_value", "MAX_LABEL",
           "MAX_SEED_DIGITS", "is_run_name"]

#: longest setting label used as is in a folder name (file systems allow 255 bytes)
MAX_LABEL = 100
#: longest seed written as is in a folder name (a longer one is written as its digest)
MAX_SEED_DIGITS = 40

_UNSAFE = re.compile(r"[^A-Za-z0-9.+-]+")
#: keys keep `_` (config keys such as `number_neurons` are spelled with it)
_UNSAFE_KEY = re.compile(r"[^A-Za-z0-9_.+-]+")
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_.\[\]-]+")  # a dotted key, list indexes (stages[0]) included
_RUN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+=-]{0,254}")


def is_run_name(name: str) -> bool:
    """Whether `name` could be a point's run folder name: one safe folder name, so that a sweep
    folder's `sweep.json` (which may have been edited) never leads outside the folder."""
    return _RUN_NAME.fullmatch(name) is not None


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
        seed = str(self.seed)
        if len(seed) > MAX_SEED_DIGITS:
            seed = hashlib.sha256(seed.encode()).hexdigest()[:8]
        return f"{self.setting.label}_seed={seed}" if self.setting.values else f"seed={seed}"

    def assignments(self) -> list[tuple[str, Any]]:
        """What this point sets in the sweep's base config, the seed last."""
        return [*self.setting.values, ("seed", self.seed)]

    def describe(self) -> str:
        """`key=value` for every assignment, values as TOML writes them (one line: a key with
        other characters than a dotted key's is quoted, its escapes written out)."""
        return " ".join(f"{_key_text(key)}={format_value(value)}"
                        for key, value in self.assignments())


def _key_text(key: str) -> str:
    return key if _PLAIN_KEY.fullmatch(key) else json.dumps(key)


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


def _safe_key(key: str) -> str:
    """`key` in the safe character set, never starting with `-`, `.` or `+` (a folder name
    that looks like a command-line option or a hidden file)."""
    return _UNSAFE_KEY.sub("-", key).lstrip("-.+") or "_"


def _short_keys(keys: Sequence[str]) -> dict[str, str]:
    """Each key's last part, or the whole key where two keys share their last part (both as
    they read once made safe)."""
    last = [_safe_key(key.rsplit(".", 1)[-1]) for key in keys]
    counts = collections.Counter(last)
    return {key: short if counts[short] == 1 else _safe_key(key)
            for key, short in zip(keys, last)}


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
    samples = _draw(table)
    combinations = [grid + sample
                    for grid in itertools.product(*table.grid.values())
                    for sample in samples]
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
    # different values can read alike once made safe for a file name ("a/b" and "a-b"), or
    # differ only in case, which a case-insensitive file system does not tell apart
    counts = collections.Counter(label.lower() for label in labels)
    return [setting if counts[setting.label.lower()] == 1 else
            Setting(setting.index, setting.values, f"{setting.label}-{_digest(setting.values)}")
            for setting in settings]


def points_of(sweep: SweepFile) -> list[Point]:
    """Every point: each setting with each seed, setting by setting."""
    seeds = sweep.seeds()
    return [Point(setting, seed) for setting in settings_of(sweep) for seed in seeds]

