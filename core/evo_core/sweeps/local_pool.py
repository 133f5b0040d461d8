"""The runs of a sweep on this machine, `parallel` at a time, each in a process of its own.

A process per run, not a thread: runs are CPU-bound Python. Each run process evaluates as its
config says (sequentially by default, or with its own worker pool) with one BLAS thread, since
`parallel` processes already share the cores.

Stopping. A terminal's Ctrl-C reaches every process of the foreground group; the run processes
ignore SIGINT and leave the decision to the sweep, which sends each exactly one SIGTERM. A run
process turns that into the interrupt `evo train` handles: the generation in flight is dropped,
the last finished one checkpointed, its own workers shut down. A second Ctrl-C while the sweep
waits for that kills the run processes (their folders are then what `kill -9` leaves, which a
re-run continues as well). A run process also dies with the sweep (`die_with_parent`), so a
sweep killed with SIGKILL leaves no run process behind either.

Run processes are forked where the platform can (they start at once, with the plugins already
loaded); the sweep itself starts no threads, which is what makes forking it safe.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.context import ForkContext, SpawnContext
from multiprocessing.process import BaseProcess
from types import FrameType

from evo_core.interrupts import Interrupted
from evo_core.processes.blas_threads import limit_blas_threads
from evo_core.processes.parent_watch import die_with_parent
from evo_core.sweeps.run_one import Outcome, RunJob, run_job

__all__ = ["run_locally"]

_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _interrupted(signum: int, frame: FrameType | None) -> None:
    raise Interrupted()


def _child_main(job: RunJob, connection: Connection, parent: int) -> None:
    """A run process: SIGINT is its parent's business, SIGTERM stops the run resumably."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _interrupted)
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)  # blocked by the parent
        die_with_parent(parent, from_main_thread=True)
        limit_blas_threads(1)
        outcome = run_job(job)
    except KeyboardInterrupt:  # a SIGTERM before the run began, or after it had ended
        outcome = Outcome(job.name, "stopped", "its last checkpoint is kept")
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    connection.send(outcome)
    connection.close()


@dataclass
class _Child:
    job: RunJob
    process: BaseProcess
    connection: Connection
    outcome: Outcome | None = None
    reading: bool = field(default=True)

    def take_message(self) -> None:
        with contextlib.suppress(EOFError, OSError):
            self.outcome = self.connection.recv()
        self.reading = False

    def result(self, killed: bool) -> Outcome:
        if self.outcome is not None:
            return self.outcome
        if killed:
            return Outcome(self.job.name, "stopped", "killed; its last checkpoint is kept")
        return Outcome(self.job.name, "failed",
                       f"its process ended with exit status {self.process.exitcode} before it "
                       "reported; run the sweep again to continue it")


class _Pool:
    def __init__(self, parallel: int, on_outcome: Callable[[Outcome], None]) -> None:
        self.context = _context()
        if self.context.get_start_method() == "fork":
            # every run draws its fitness.png: forked children share one import of pyplot
            # (seconds on a busy machine) instead of each importing it again
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot
        self.parallel = parallel
        self.on_outcome = on_outcome
        self.children: list[_Child] = []
        self.outcomes: list[Outcome] = []
        self.killed = False

    def _start(self, job: RunJob) -> None:
        receiving, sending = self.context.Pipe(duplex=False)
        process = self.context.Process(target=_child_main, args=(job, sending, os.getpid()),
                                       name=f"evo-sweep {job.name}")
        sys.stdout.flush()  # a forked child would write the parent's unflushed text again
        sys.stderr.flush()
        # a Ctrl-C between fork and the child's own handlers must reach neither
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            process.start()
            self.children.append(_Child(job, process, receiving))
        finally:
            sending.close()
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)

    def _collect(self) -> None:
        """Wait until a child reports or ends; record the outcomes of the ended ones."""
        waiting: list[Connection | int] = [c.connection for c in self.children if c.reading]
        waiting += [c.process.sentinel for c in self.children]
        ready = wait(waiting)
        for child in list(self.children):
            if child.reading and child.connection in ready:
                child.take_message()
            if child.process.sentinel in ready:
                if child.reading and child.connection.poll():
                    child.take_message()
                child.process.join()
                child.connection.close()
                self.children.remove(child)
                outcome = child.result(self.killed)
                self.outcomes.append(outcome)
                self.on_outcome(outcome)

    def run(self, jobs: list[RunJob]) -> list[Outcome]:
        pending = deque(jobs)
        try:
            while pending or self.children:
                while pending and len(self.children) < self.parallel:
                    self._start(pending.popleft())
                self._collect()
                if any(outcome.user_error for outcome in self.outcomes):
                    pending.clear()  # the same mistake would stop every run after it
        except KeyboardInterrupt:
            self._stop()
            raise
        return self.outcomes

    def _stop(self) -> None:
        """Stop every running child resumably; a further Ctrl-C kills them."""
        for child in self.children:
            _signal(child.process, signal.SIGTERM)
        while self.children:
            try:
                self._collect()
            except KeyboardInterrupt:
                self.killed = True
                for child in self.children:
                    _signal(child.process, signal.SIGKILL)


def _context() -> ForkContext | SpawnContext:
    if "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def _signal(process: BaseProcess, signum: int) -> None:
    if process.pid is not None and process.exitcode is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signum)


def run_locally(jobs: list[RunJob], parallel: int,
                on_outcome: Callable[[Outcome], None]) -> list[Outcome]:
    """Run the jobs, `parallel` at a time; `on_outcome` hears of each as it ends. After a run
    fails with a user's mistake no further run starts. A KeyboardInterrupt (Ctrl-C, or SIGTERM
    delivered as one) stops the running ones resumably and propagates."""
    return _Pool(parallel, on_outcome).run(jobs)
