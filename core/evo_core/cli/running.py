"""Running the generations for `evo train` and `evo resume`: interrupts and the last line.

Ctrl-C (SIGINT) and SIGTERM stop the run between or during generations: the generation in
flight is dropped, the last finished one is checkpointed (training does that on any exception),
workers and clusters are shut down, and the message says how to continue. Exit status 130 for
SIGINT and 143 for SIGTERM, as shells report them. Only the signals count: a KeyboardInterrupt
that a brain raises itself is the brain's error (see `evo_core.interrupts`). Shutting down waits
only briefly for workers stuck in an evaluation (see `Session.run`); a second Ctrl-C ends that
wait at once.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from evo_core.api import Run
from evo_core.hooks.events import EventRelay
from evo_core.interrupts import Interrupted
from evo_core.running.session import Session
from evo_core.running.stopping import outcome_line

__all__ = ["Terminated", "run_generations", "sigterm_as_interrupt"]


class Terminated(Interrupted):
    """SIGTERM, delivered like Ctrl-C so that every clean-up path handles both."""


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_generations(session: Session, quiet: bool) -> int:
    """Train to the config's `generations` (as the API does), print the folder last; the exit
    status."""
    folder, state = session.folder, session.state
    stopped_already = state.stop.done  # a resumed run that was solved or out of budget
    try:
        with sigterm_as_interrupt():
            run = Run(folder.path, session.config)
            session.run(EventRelay(session.experiment.registry.manager, run), not quiet)
    except KeyboardInterrupt as interrupt:
        terminated = isinstance(interrupt, Terminated)
        done = (f"generations 1-{state.checkpointed} are checkpointed in {folder.path}; "
                f"continue with: evo resume {folder.path}" if state.checkpointed else
                f"no generation had finished, so nothing was kept; `evo resume {folder.path}` "
                "starts the run again from generation 1")
        print(f"evo: {'terminated (SIGTERM)' if terminated else 'interrupted (SIGINT)'}; "
              f"{done}", file=sys.stderr)
        return 143 if terminated else 130
    stop = session.experiment.config.stop
    if stop is not None:
        line = outcome_line(stop, state.stop, state.generation, state.evaluations)
        print(f"{line}; it had stopped already, nothing was trained" if stopped_already
              else line)
    sys.stdout.flush()
    print(folder.path)
    return 0
