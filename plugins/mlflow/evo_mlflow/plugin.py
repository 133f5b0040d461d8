"""The entry point module: the `mlflow` tracker's config table and its run events.

MLflow is imported only when a run enables the tracker (`evo_mlflow.tracker`): every evo command
loads this module to find the installed trackers, and importing MLflow takes seconds.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evo_core import IRun, TrackerConfig, hookimpl
from evo_mlflow.config import MLflowConfig

if TYPE_CHECKING:
    from evo_mlflow.tracker import MLflowTracker

#: the open trackers, by run folder (one process may train several runs, one after another)
_trackers: dict[Path, MLflowTracker] = {}


@hookimpl
def evo_trackers() -> list[type[TrackerConfig]]:
    return [MLflowConfig]


@hookimpl
def evo_run_started(run: IRun) -> None:
    config = run.config.trackers.enabled().get("mlflow")
    if not isinstance(config, MLflowConfig):
        return
    from evo_mlflow.tracker import MLflowTracker

    _trackers[run.path] = MLflowTracker(config, run)


@hookimpl
def evo_generation_finished(run: IRun, row: dict[str, Any]) -> None:
    tracker = _trackers.get(run.path)
    if tracker is not None:
        tracker.record(row)


@hookimpl
def evo_run_finished(run: IRun) -> None:
    tracker = _trackers.pop(run.path, None)
    if tracker is not None:
        tracker.close(_status())


def _status() -> str:
    """How the MLflow run ended, in MLflow's words: training calls `evo_run_finished` from the
    handler of the exception that stopped it, if one did (an interrupt, Ctrl-C or SIGTERM, is a
    KeyboardInterrupt), and after its last generation otherwise."""
    stopped_by = sys.exc_info()[1]
    if stopped_by is None:
        return "FINISHED"
    return "KILLED" if isinstance(stopped_by, KeyboardInterrupt) else "FAILED"
