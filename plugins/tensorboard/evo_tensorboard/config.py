"""The `[trackers.tensorboard]` table."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from evo_core import NamesPath, TrackerConfig

__all__ = ["TensorBoardConfig"]


class TensorBoardConfig(TrackerConfig):
    """TensorBoard event files: each generation's log.csv row as scalars."""

    type: Literal["tensorboard"] = "tensorboard"
    logdir: Annotated[str | None, NamesPath()] = Field(
        None, min_length=1, description="Folder for the event files of all runs that name it "
        "(each run writes to LOGDIR/<run folder name>, so `tensorboard --logdir LOGDIR` compares "
        "them); a relative path starts at the working directory. Unset: RUN/tensorboard.")
    flush_secs: int = Field(
        30, ge=1, description="Write buffered events to disk at least this often (seconds); "
        "the end of a run, an interrupt included, always writes them.")
