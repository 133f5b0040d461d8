"""What a config value can make evo do, declared on the field that holds it.

A run folder is data: someone may send one, and `evo resume`, `evo replay` and the API open it.
Most of a config's values only shape the experiment, but some reach further, and those are the
ones a hostile `config.json` would use:

- `NamesCode`: the value names code evo imports or runs (a gymnasium id written `module:Env`
  imports `module`), or a peer evo talks to whose replies it unpickles (a Dask scheduler);
- `NamesPath`: the value is a path evo writes to (or reads from), which can lie outside the run
  folder;
- `Resource`: the value is an amount of this machine's resources evo spends: worker processes,
  steps of an episode, rows stepped at once, cells of an archive.

Each is field metadata, written where the field is declared (`Annotated[int | None,
Resource(...)]`), so a field added later is covered by the same rule the day it is written:
`config/received.py` walks every model of a validated config, finds the declared values, and a
received folder's values that reach further than it may are refused in one line unless the user
gives them again (`--set KEY=VALUE` on resume, `--plugin MODULE` for code). Plugins mark their
own fields with the same classes (they are in the `evo_core` namespace). `evo schema` shows each
declaration as `x-evo-received` on the field, so an editor's user sees it too.

What is not declared here is not trusted either: a config is validated (types, ranges, the
registered plugins a `type` names) whatever its source; these declarations are about values
that are valid and still must not be taken from a stranger.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

__all__ = ["NamesCode", "NamesPath", "Resource", "TrustMarker", "machine_cores", "STEP_LIMIT"]

#: What a `NamesCode` value names: a gymnasium id (`module:Env` imports `module`), a module name,
#: or a peer evo connects to and unpickles replies from.
CodeKind = Literal["environment", "module", "peer"]


class _Declared:
    """Shows the declaration in the field's JSON Schema (`evo schema`)."""

    def describe(self) -> str:
        raise NotImplementedError

    def __get_pydantic_json_schema__(self, core_schema: CoreSchema,
                                     handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        schema = handler(core_schema)
        schema["x-evo-received"] = self.describe()
        return schema


@dataclass(frozen=True)
class NamesCode(_Declared):
    """The value names code evo runs: a received folder's value is used only when that code is
    loaded by the user (`--plugin`) or, for a peer, when the user gives the value again.
    `label` is what messages call it ("the Dask scheduler")."""

    what: CodeKind
    label: str = ""

    def describe(self) -> str:
        return f"names code ({self.what})"


@dataclass(frozen=True)
class NamesPath(_Declared):
    """The value is a path evo writes to: a received folder's value is used only when it lies
    inside that run folder, or when the user gives it again."""

    def describe(self) -> str:
        return "a path (kept inside a received run folder)"


@dataclass(frozen=True)
class Resource(_Declared):
    """The value is an amount of a resource evo spends (`what`, plural: "worker processes").

    A received folder's value above `limit` (a number, or a function of this machine such as
    `machine_cores`), or equal to `unlimited` (the value that means "no limit", if the field has
    one), is used only when the user gives it again. `key` declares an entry of a table field
    (`environment.kwargs`'s `max_episode_steps`) instead of the field's whole value; `counted`
    computes the amount from the table that holds the field, where the value alone does not say
    it (evo-qd's `bins`, 20 per descriptor value: the cells are 20 to the power of the ranges)."""

    what: str
    limit: int | Callable[[], int]
    key: str | None = None
    unlimited: Any = None
    counted: Callable[[Any], int] | None = None

    def most(self) -> int:
        """The most a received folder may ask for on this machine."""
        return self.limit() if callable(self.limit) else self.limit

    def describe(self) -> str:
        entry = f" (its entry {self.key})" if self.key else ""
        return f"{self.what}{entry}: at most {self.most()} from a received run folder"


TrustMarker = NamesCode | NamesPath | Resource


def machine_cores() -> int:
    """The cores this process may run on (its CPU affinity, which a container or `taskset`
    narrows), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


#: The most steps an episode of a received run may take: a million is ten times the double-pole
#: generalisation test, the longest episode of evo's examples (100,000 steps).
STEP_LIMIT = 1_000_000
