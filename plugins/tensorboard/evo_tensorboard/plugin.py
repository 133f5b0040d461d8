"""The entry point module: the `tensorboard` tracker's config table and its run events (the
hooks are the core's `tracker_hooks`)."""

from __future__ import annotations

from evo_core import IRun, tracker_hooks
from evo_tensorboard.config import TensorBoardConfig
from evo_tensorboard.tracker import TensorBoardTracker


def open_tracker(config: TensorBoardConfig, run: IRun) -> TensorBoardTracker:
    """The writer of `run`, continuing from the rows it has, its config (without provenance)
    the text of a new run."""
    experiment = run.config.model_dump(mode="json", exclude={"provenance"})
    return TensorBoardTracker(config, run.path, list(run.log), experiment)


evo_trackers, evo_run_started, evo_generation_finished, evo_run_finished = tracker_hooks(
    TensorBoardConfig, open_tracker)
