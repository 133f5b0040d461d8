"""Every point's config, validated before anything runs.

A sweep of 40 runs that stops at run 23 because one grid value is out of range wastes the first
22 runs' worth of waiting for nothing; so every point is validated first, with the same
validation `evo train` does, and the first bad point is one error naming the point and the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evo_core.config.loading import set_values
from evo_core.config.schema import validate_config
from evo_core.hooks.registry import Registry
from evo_core.sweeps.points import Point, points_of
from evo_core.sweeps.sweep_file import SweepFile

__all__ = ["PlannedRun", "plan_runs"]


@dataclass(frozen=True)
class PlannedRun:
    point: Point
    #: the config of the point's run: the sweep's base config with the point's values set
    config: dict[str, Any]
    generations: int
    #: what messages about this run's config call it
    source: str
    #: the run's validated [processing] table, which a continued run is given again (its run
    #: folder's own is not trusted: it may name a scheduler the sweep file does not)
    processing: dict[str, Any] | None = None


def plan_runs(sweep: SweepFile, registry: Registry) -> list[PlannedRun]:
    """The runs of every point, each config validated (a UserError names the first bad one)."""
    planned: list[PlannedRun] = []
    for point in points_of(sweep):
        data = set_values(sweep.base, point.assignments(), what=f"{sweep.path}: sweep key")
        source = f"{sweep.path} (point {point.name})"
        config = validate_config(data, registry, source=source,
                                 overrides=sweep.override_texts)
        planned.append(PlannedRun(point, data, config.generations, source,
                                  config.processing.model_dump(mode="json")))
    return planned
