"""One run of a sweep, in whatever process runs it: a new run, or the continuation of one.

Both go through the same session code as `evo train` and `evo resume` (`running/session.py`), so
each point's folder is an ordinary run folder (replay, plot and resume work on it) and a
continued run equals an uninterrupted one. The outcome comes back as plain data, never as an
exception: a process-pool child sends it through a pipe, a Dask task returns it.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from evo_core.api import Run
from evo_core.errors import EvaluationError, UserError
from evo_core.hooks.discovery import get_registry
from evo_core.hooks.events import EventRelay
from evo_core.interrupts import Interrupted, wrapped_interrupt
from evo_core.running.session import Session, new_session, resume_session

__all__ = ["RunJob", "Outcome", "run_job"]


@dataclass(frozen=True)
class RunJob:
    name: str
    run_dir: Path
    #: the point's config for a new run; None continues the run in `run_dir`
    config: dict[str, Any] | None
    source: str
    config_file: Path
    #: a continued run's [processing] table as the sweep file gives it; never the run folder's
    #: own, which may name a scheduler the sweep file does not (None: the folder's is kept)
    processing: dict[str, Any] | None = None


@dataclass(frozen=True)
class Outcome:
    name: str
    status: Literal["finished", "stopped", "failed"]
    #: a failure's one-line message (or the stopped run's checkpointed generations)
    message: str = ""
    #: a failure's traceback, when it is a bug rather than a user's mistake
    details: str = ""
    #: the failure is a user's mistake (a config, a missing extra): the sweep cannot go on
    user_error: bool = False


class _StoppableEvents:
    """The plugins' event hooks, plus a look at `should_stop` after every generation: a run in a
    Dask worker's thread cannot be sent a signal, so it asks whether it has been cancelled."""

    def __init__(self, relay: EventRelay, should_stop: Callable[[], bool] | None) -> None:
        self.relay = relay
        self.should_stop = should_stop

    def started(self) -> None:
        self.relay.started()

    def generation_finished(self, row: dict[str, Any]) -> None:
        self.relay.generation_finished(row)
        if self.should_stop is not None and self.should_stop():
            raise Interrupted()  # training checkpoints this generation and stops

    def finished(self) -> None:
        self.relay.finished()


def _session(job: RunJob) -> Session:
    if job.config is None:
        overrides = [] if job.processing is None else [("processing", job.processing)]
        return resume_session(job.run_dir, overrides=overrides)
    return new_session(job.config, get_registry(), source=job.source,
                       config_file=job.config_file, out=job.run_dir)


def run_job(job: RunJob, should_stop: Callable[[], bool] | None = None) -> Outcome:
    """Run (or continue) the job's run to its last generation; what happened."""
    try:
        session = _session(job)
    except UserError as exc:
        return Outcome(job.name, "failed", str(exc), user_error=True)
    except KeyboardInterrupt:
        return Outcome(job.name, "stopped", "no generation was checkpointed")
    except Exception as exc:  # noqa: BLE001 - a bug; the sweep reports it with its traceback
        if wrapped_interrupt(exc) is not None:  # a library's error made of the Ctrl-C
            return Outcome(job.name, "stopped", "no generation was checkpointed")
        return Outcome(job.name, "failed", f"{type(exc).__name__}: {exc}",
                       traceback.format_exc())
    state = session.state
    run = Run(session.folder.path, session.config)
    try:
        session.run(_StoppableEvents(EventRelay(session.experiment.registry.manager, run),
                                     should_stop))
    except KeyboardInterrupt:
        done = (f"generations 1-{state.checkpointed} are checkpointed" if state.checkpointed
                else "no generation was checkpointed")
        return Outcome(job.name, "stopped", done)
    except EvaluationError as exc:
        return Outcome(job.name, "failed", str(exc), exc.details)
    except UserError as exc:
        return Outcome(job.name, "failed", str(exc), user_error=True)
    except Exception as exc:  # noqa: BLE001
        return Outcome(job.name, "failed", f"{type(exc).__name__}: {exc}",
                       traceback.format_exc())
    return Outcome(job.name, "finished")
