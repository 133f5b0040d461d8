"""The entry point module: the `tensorboard` tracker's config table and its run events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evo_core import IRun, TrackerConfig, hookimpl
from evo_tensorboard.config import TensorBoardConfig
from evo_tensorboard.tracker import TensorBoardTracker

#: the open trackers, by run folder (one process may train several runs, one after another)
_trackers: dict[Path, TensorBoardTracker] = {}


@hookimpl
def evo_trackers() -> list[type[TrackerConfig]]:
    return [TensorBoardConfig]


@hookimpl
def evo_run_started(run: IRun) -> None:
    config = run.config.trackers.enabled().get("tensorboard")
    if not isinstance(config, TensorBoardConfig):
        return
    experiment = run.config.model_dump(mode="json", exclude={"provenance"})
    _trackers[run.path] = TensorBoardTracker(config, run.path, list(run.log), experiment)


@hookimpl
def evo_generation_finished(run: IRun, row: dict[str, Any]) -> None:
    tracker = _trackers.get(run.path)
    if tracker is not None:
        tracker.record(row)


@hookimpl
def evo_run_finished(run: IRun) -> None:
    tracker = _trackers.pop(run.path, None)
    if tracker is not None:
        tracker.close()
