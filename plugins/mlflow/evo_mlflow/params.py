"""A config as MLflow parameters: nested tables as dotted keys, within MLflow's own rules.

MLflow takes a parameter as a string under a name of its allowed characters, at most
`MAX_ENTITY_KEY_LENGTH` long, that does not read as another path; a longer value is cut. The rules
are MLflow's own (`mlflow.utils.validation`, of the installed client), checked here so that a
config MLflow would refuse loses one parameter, said in one line, instead of the run's tracking.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from mlflow.utils.validation import (
    MAX_ENTITY_KEY_LENGTH,
    MAX_PARAM_VAL_LENGTH,
    path_not_unique,
    validate_param_and_metric_name,
)

__all__ = ["Parameters", "parameters", "key_problem", "CUT"]

#: the end of a value cut to MLflow's length
CUT = "..."
#: top-level tables that are no parameters of the experiment: what made the run (versions, its
#: id: a tag) and the trackers, which only observe it (and a tracking URI may hold a password)
LEFT_OUT = ("provenance", "trackers")


@dataclass(frozen=True)
class Parameters:
    """The parameters to log, and what MLflow's rules changed: the keys left out (with why) and
    those whose value was cut."""

    values: dict[str, str]
    skipped: dict[str, str]
    cut: tuple[str, ...]

    def problems(self) -> str:
        """One line saying what was left out or cut ("" when nothing was)."""
        said = [f"{key} ({why})" for key, why in self.skipped.items()]
        said += [f"{key} (cut to {MAX_PARAM_VAL_LENGTH} characters)" for key in self.cut]
        return "; ".join(said)


def parameters(config: Mapping[str, Any]) -> Parameters:
    """`config` (a config as plain data, `model_dump(mode="json")`) as MLflow parameters."""
    values: dict[str, str] = {}
    skipped: dict[str, str] = {}
    cut: list[str] = []
    for key, value in _flattened(config, ""):
        problem = key_problem(key)
        if problem:
            skipped[key] = problem
            continue
        text = value if isinstance(value, str) else json.dumps(value)
        if len(text) > MAX_PARAM_VAL_LENGTH:
            text = text[:MAX_PARAM_VAL_LENGTH - len(CUT)] + CUT
            cut.append(key)
        values[key] = text
    return Parameters(values, skipped, tuple(cut))


def key_problem(key: str) -> str:
    """Why MLflow would refuse `key` as a parameter's name ("" when it takes it)."""
    if len(key) > MAX_ENTITY_KEY_LENGTH:
        return f"a name longer than MLflow's {MAX_ENTITY_KEY_LENGTH} characters"
    if not validate_param_and_metric_name(key):
        return "MLflow's names hold only letters, digits, _ - . : / and spaces"
    if path_not_unique(key):
        return "MLflow reads the name as a path to another name"
    return ""


def _flattened(table: Mapping[str, Any], prefix: str) -> Iterator[tuple[str, Any]]:
    """(dotted key, value) of every value that is not a non-empty table; lists stay whole."""
    for name, value in table.items():
        if not prefix and name in LEFT_OUT:
            continue
        key = f"{prefix}{name}"
        if isinstance(value, Mapping) and value:
            yield from _flattened(value, key + ".")
        else:
            yield key, value
