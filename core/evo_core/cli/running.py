"""Running the generations for `evo train` and `evo resume`: progress, interrupts, clean-up.

Ctrl-C (SIGINT) and SIGTERM stop the run between or during generations: the generation in
flight is dropped, the last finished one is checkpointed (training does that on any exception),
workers and clusters are shut down, and the message says how to continue. Exit status 130 for
SIGINT and 143 for SIGTERM, as shells report them. Only the signals count: a KeyboardInterrupt
that a brain raises itself is the brain's error (see `evo_core.interrupts`). Shutting down waits
only briefly for workers
stuck in an evaluation (see the handlers' `close`); a second Ctrl-C ends that wait at once.

An evaluation that exceeds `processing.task_timeout` ends the run like a brain that raises: one
line naming the generation, the candidate and the environment.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from evo_core.cli.progress import make_progress
from evo_core.contract.protocols import IHandler
from evo_core.engine.experiment import Experiment
from evo_core.engine.training import TrainingState, train
from evo_core.errors import EvaluationError, EvaluationTimeout
from evo_core.interrupts import Interrupted, marked_interrupts
from evo_core.results.run_folder import RunFolder

__all__ = ["Terminated", "run_generations"]


class Terminated(Interrupted):
    """SIGTERM, delivered like Ctrl-C so that every clean-up path handles both."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_generations(experiment: Experiment, handler: IHandler, folder: RunFolder,
                    state: TrainingState, quiet: bool) -> int:
    """Train to `experiment.config.generations`, print the folder last; the exit status."""
    interrupted = False
    try:
        with marked_interrupts(), _sigterm_as_interrupt(), \
                make_progress(experiment.config.generations, state.generation, quiet) as progress:
            train(experiment, folder, handler, progress, state)
    except KeyboardInterrupt as interrupt:
        interrupted = True
        terminated = isinstance(interrupt, Terminated)
        done = (f"generations 1-{state.checkpointed} are checkpointed" if state.checkpointed
                else "no generation was checkpointed")
        print(f"evo: {'terminated (SIGTERM)' if terminated else 'interrupted (SIGINT)'}; "
              f"{done} in {folder.path}; continue with: evo resume {folder.path}",
              file=sys.stderr)
        return 143 if terminated else 130
    except EvaluationTimeout as timeout:
        generation = state.generation + 1
        kept = {1: "no generation finished", 2: "generation 1 is kept"}.get(
            generation, f"generations 1-{generation - 1} are kept")
        raise EvaluationError(
            f"generation {generation}, candidate {timeout.candidate}: one evaluation in "
            f"environment {experiment.config.environment!r} took longer than "
            f"processing.task_timeout = {timeout.seconds:g} s; {kept} in {folder.path}") from None
    finally:
        _close(handler, interrupted)
    sys.stdout.flush()
    print(folder.path)
    return 0


def _close(handler: IHandler, interrupted: bool) -> None:
    """Shut the handler down; a further Ctrl-C meanwhile only hurries that along when the run
    was interrupted already."""
    try:
        handler.close()
    except KeyboardInterrupt:
        if not interrupted:
            raise
