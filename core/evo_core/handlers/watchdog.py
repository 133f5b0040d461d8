"""`processing.task_timeout`: one evaluation that takes too long ends the run instead of hanging it.

Two ways to notice, because handlers run evaluations in two kinds of threads:

- In a process's main thread (the sequential handler, and every mp worker, whose tasks run in
  the worker's main thread) an interval timer's SIGALRM interrupts the evaluation where it is:
  Python code, and a blocking call such as `time.sleep` or a socket read, is left at once, and
  the process stays usable, so no child process per evaluation is needed. Code that spins in C
  without returning to the interpreter is not interrupted; a timer cannot help there.
- In a Dask worker's task thread no signal can be delivered, so each evaluation records when it
  started (`running`), and the handler asks the workers for overdue ones while it waits
  (`overdue`), which Dask runs on the worker's event loop even when the task thread is stuck.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from evo_core.contract.protocols import EvaluationResult, IBatchEvaluator, IEvaluator
from evo_core.errors import EvaluationTimeout, UserError
from evo_core.handlers.chunks import Chunk, evaluate_chunk

__all__ = ["evaluate_chunk_within", "evaluate_chunk_recorded", "overdue"]


class _Expired(BaseException):
    """Raised by the alarm; a BaseException so that an environment's `except Exception` does
    not swallow it."""


def _one(chunk: Chunk, position: int) -> Chunk:
    window = slice(position, position + 1)
    return Chunk(chunk.indices[window], chunk.genomes[window], chunk.seeds[window],
                 chunk.context)


def _units(runner: IEvaluator, chunk: Chunk, timeout: float) -> list[tuple[Chunk, float]]:
    """What runs under one deadline: each candidate alone, or a batched evaluator's whole chunk
    (its candidates run together) with `timeout` per candidate."""
    if isinstance(runner, IBatchEvaluator):
        return [(chunk, timeout * len(chunk.indices))]
    return [(_one(chunk, position), timeout) for position in range(len(chunk.indices))]


def evaluate_chunk_within(runner: IEvaluator, chunk: Chunk,
                          timeout: float | None) -> list[EvaluationResult]:
    """`evaluate_chunk`, each candidate under a SIGALRM deadline of `timeout` seconds; raises
    `EvaluationTimeout` naming the candidate. Main thread only (signals are delivered there)."""
    if timeout is None:
        return evaluate_chunk(runner, chunk)
    if not hasattr(signal, "setitimer") or threading.current_thread() is not \
            threading.main_thread():
        raise UserError("processing.task_timeout needs evaluation in a main thread on a POSIX "
                        "system; unset it or use processing.type = \"dask\"")
    fired = False

    def expire(signum: int, frame: FrameType | None) -> None:
        nonlocal fired
        fired = True
        raise _Expired()

    previous = signal.signal(signal.SIGALRM, expire)
    results: list[EvaluationResult] = []
    try:
        for unit, deadline in _units(runner, chunk, timeout):
            fired = False
            try:
                signal.setitimer(signal.ITIMER_REAL, deadline)
                try:
                    results.extend(evaluate_chunk(runner, unit))
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            except BaseException:
                if fired:  # whatever the alarm became on its way out (a brain's error, ...)
                    raise EvaluationTimeout(int(unit.indices[0]), timeout) from None
                raise
    finally:
        signal.signal(signal.SIGALRM, previous)
    return results


# ----------------------------------------------------------------- threads (Dask)

_lock = threading.Lock()
#: thread id -> (task key, candidate, monotonic start) of the evaluation running in that thread
running: dict[int, tuple[str, int, float]] = {}


@contextmanager
def _recorded(key: str, candidate: int, extra: float = 0.0) -> Iterator[None]:
    """`extra` seconds are granted beyond the timeout (a batch of n candidates gets n - 1
    timeouts more), recorded as a later start."""
    thread = threading.get_ident()
    with _lock:
        running[thread] = (key, candidate, time.monotonic() + extra)
    try:
        yield
    finally:
        with _lock:
            running.pop(thread, None)


def evaluate_chunk_recorded(runner: IEvaluator, chunk: Chunk, key: str,
                            timeout: float | None) -> list[EvaluationResult]:
    """`evaluate_chunk`, recording each candidate's start under `key` when a timeout is set."""
    if timeout is None:
        return evaluate_chunk(runner, chunk)
    results: list[EvaluationResult] = []
    if isinstance(runner, IBatchEvaluator):  # the batch counts as its first candidate
        with _recorded(key, int(chunk.indices[0]), timeout * (len(chunk.indices) - 1)):
            return evaluate_chunk(runner, chunk)
    for position in range(len(chunk.indices)):
        with _recorded(key, int(chunk.indices[position])):
            results.extend(evaluate_chunk(runner, _one(chunk, position)))
    return results


def overdue(key: str, timeout: float) -> list[tuple[int, float]]:
    """(candidate, seconds running) of this process's evaluations under `key` older than
    `timeout`; run on a Dask worker by the handler."""
    now = time.monotonic()
    with _lock:
        entries: list[Any] = list(running.values())
    return [(candidate, now - started) for task_key, candidate, started in entries
            if task_key == key and now - started > timeout]
