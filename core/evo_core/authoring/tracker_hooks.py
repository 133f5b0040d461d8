"""The event hooks of a tracker plugin, written once (`tracker_hooks`).

A tracker (evo-tensorboard, evo-mlflow, a student's own) is a table under `[trackers]` and an
object (`ITracker`) that opens when a run starts training in this process, records each
generation's row and is closed when training here ends, saying how it ended. What is the same
for every tracker, which hooks to implement, finding the run's table, holding one open tracker
per run folder (a process may train several runs one after another, as a sweep does) and the
ending's status, is here, so a tracker plugin's module is its config, its tracker and one line:

    evo_trackers, evo_run_started, evo_generation_finished, evo_run_finished = \\
        tracker_hooks(MyConfig, MyTracker)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from evo_core.contract.config_models import TrackerConfig
from evo_core.contract.hookspecs import hookimpl
from evo_core.contract.protocols import IRun, ITracker

__all__ = ["TrackerHooks", "ending_status", "tracker_hooks"]

ConfigT = TypeVar("ConfigT", bound=TrackerConfig)


class TrackerHooks(NamedTuple):
    """A tracker plugin's four hook implementations, in the order its module names them."""

    evo_trackers: Callable[[], list[type[TrackerConfig]]]
    evo_run_started: Callable[[IRun], None]
    evo_generation_finished: Callable[[IRun, dict[str, Any]], None]
    evo_run_finished: Callable[[IRun], None]


def ending_status() -> str:
    """How training in this process ended, in the words MLflow uses: "FINISHED" after its last
    generation, "KILLED" when an interrupt stopped it (Ctrl-C or SIGTERM, a
    KeyboardInterrupt), "FAILED" when an error did. Training calls `evo_run_finished` from
    the handler of the exception that stopped it, if one did, so that exception is the one
    being handled here."""
    stopped_by = sys.exc_info()[1]
    if stopped_by is None:
        return "FINISHED"
    return "KILLED" if isinstance(stopped_by, KeyboardInterrupt) else "FAILED"


def tracker_hooks(config_model: type[ConfigT],
                  open_tracker: Callable[[ConfigT, IRun], ITracker]) -> TrackerHooks:
    """The hooks of the tracker whose table is `config_model`: `evo_trackers` registers the
    table; when a run whose config has it starts training, `open_tracker(config, run)` makes
    its tracker (imports a heavy library there, not at module level: every evo command loads
    the plugin to list it), which records every finished generation's row and is closed with
    `ending_status()` when training in this process ends."""
    trackers: dict[Path, ITracker] = {}

    @hookimpl
    def evo_trackers() -> list[type[TrackerConfig]]:
        return [config_model]

    @hookimpl
    def evo_run_started(run: IRun) -> None:
        for config in run.config.trackers.enabled().values():
            if isinstance(config, config_model):
                trackers[run.path] = open_tracker(config, run)

    @hookimpl
    def evo_generation_finished(run: IRun, row: dict[str, Any]) -> None:
        tracker = trackers.get(run.path)
        if tracker is not None:
            tracker.record(row)

    @hookimpl
    def evo_run_finished(run: IRun) -> None:
        tracker = trackers.pop(run.path, None)
        if tracker is not None:
            tracker.close(ending_status())

    return TrackerHooks(evo_trackers, evo_run_started, evo_generation_finished,
                        evo_run_finished)
