"""One TensorBoard writer per run, fed from evo's run events.

The step of every scalar is the generation, so a run and its resumed continuation draw one
curve: a resume purges the events of generations after its checkpoint, which it runs again.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from evo_tensorboard.config import TensorBoardConfig

__all__ = ["TAGS", "TensorBoardTracker", "event_folder"]

#: log.csv column -> scalar tag; fitness curves share a section, bookkeeping has its own
TAGS = {"best": "fitness/best", "mean": "fitness/mean", "std": "fitness/std",
        "worst": "fitness/worst", "best_ever": "fitness/best_ever",
        "evaluations": "run/evaluations", "steps": "run/steps", "seconds": "run/seconds"}


def event_folder(config: TensorBoardConfig, run_path: Path) -> Path:
    """Where the run's event files go."""
    if config.logdir is None:
        return run_path / "tensorboard"
    return Path(config.logdir) / run_path.resolve().name


class TensorBoardTracker:
    """Scalars for every generation of one run."""

    def __init__(self, config: TensorBoardConfig, run_path: Path, finished: int,
                 experiment: dict[str, Any]) -> None:
        from tensorboardX import SummaryWriter  # imported only when a run asks for TensorBoard

        # events of generations after `finished` are from before a resume; it writes them anew
        # tensorboardX names files by the second and opens them with "wb": a resume within the
        # same second would overwrite the events before it; nanoseconds keep them apart, in order
        self.writer = SummaryWriter(str(event_folder(config, run_path)),
                                    purge_step=finished + 1 if finished else None,
                                    flush_secs=config.flush_secs,
                                    filename_suffix=f".{time.time_ns()}")
        if not finished:
            self.writer.add_text("config", "```\n" + json.dumps(experiment, indent=2) + "\n```",
                                 global_step=0)

    def record(self, row: dict[str, Any]) -> None:
        generation = int(row["generation"])
        for column, tag in TAGS.items():
            self.writer.add_scalar(tag, float(row[column]), global_step=generation)

    def close(self) -> None:
        self.writer.close()
