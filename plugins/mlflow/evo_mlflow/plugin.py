"""The entry point module: the `mlflow` tracker's config table and its run events (the hooks
are the core's `tracker_hooks`).

MLflow is imported only when a run enables the tracker (`evo_mlflow.tracker`): every evo command
loads this module to find the installed trackers, and importing MLflow takes seconds.
"""

from __future__ import annotations

from evo_core import IRun, ITracker, tracker_hooks
from evo_mlflow.config import MLflowConfig


def open_tracker(config: MLflowConfig, run: IRun) -> ITracker:
    """The MLflow run of `run`, made or continued."""
    from evo_mlflow.tracker import MLflowTracker

    return MLflowTracker(config, run)


evo_trackers, evo_run_started, evo_generation_finished, evo_run_finished = tracker_hooks(
    MLflowConfig, open_tracker)
