"""One TensorBoard writer per run, fed from evo's run events.

The step of every scalar is the generation, so a run and its resumed continuation draw one
curve. What the event files of a killed run hold is not what its log.csv holds: events are
buffered for up to `flush_secs`, so a `kill -9` loses the last generations' events though their
log rows and checkpoint were written, and the last record is often cut short. So a run that
finds event files already in its folder (a resume, or a run started again) cuts their torn ends
(`event_files`), writes a purge from step 1 (TensorBoard then drops every earlier event of the
run) and sends log.csv's rows again: the resumed curve is log.csv's, whatever the kill left.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from evo_tensorboard.config import TensorBoardConfig
from evo_tensorboard.event_files import PATTERN, check_folder, cut_torn_ends

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

    def __init__(self, config: TensorBoardConfig, run_path: Path, log: list[dict[str, Any]],
                 experiment: dict[str, Any]) -> None:
        """A writer for the run at `run_path`, which continues from the rows `log`."""
        from tensorboardX import SummaryWriter  # imported only when a run asks for TensorBoard

        folder = event_folder(config, run_path)
        check_folder(folder)
        earlier = folder.is_dir() and any(folder.glob(PATTERN))
        if earlier:
            cut_torn_ends(folder)
        # tensorboardX names files by the second and opens them with "wb": a resume within the
        # same second would overwrite the events before it; nanoseconds keep them apart, in order
        self.writer = SummaryWriter(str(folder), purge_step=1 if earlier else None,
                                    flush_secs=config.flush_secs,
                                    filename_suffix=f".{time.time_ns()}")
        if not log:
            self.writer.add_text("config", "```\n" + json.dumps(experiment, indent=2) + "\n```",
                                 global_step=0)
        for row in log:  # what the event files hold of them may be less (see the module)
            self.record(row)

    def record(self, row: dict[str, Any]) -> None:
        generation = int(row["generation"])
        for column, tag in TAGS.items():
            self.writer.add_scalar(tag, float(row[column]), global_step=generation)

    def close(self, status: str) -> None:
        """The writer closed, its events flushed (TensorBoard keeps no run status)."""
        self.writer.close()
