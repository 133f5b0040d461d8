"""What a worker keeps between tasks: its runner, built once per template.

Module-level (thread-local) state is the one object a pool worker owns for its whole life. A runner
holds the environment, so building it once per worker and template, not per task, is most of what
makes parallel evaluation pay off. Thread-local because a Dask worker may run several threads, and
environments are not thread-safe. A Dask worker process also holds the payload its threads build
runners from (`hold_payload`), handed to it once per template.
"""

from __future__ import annotations

import contextlib
import pickle
import signal
import threading
from dataclasses import dataclass
from typing import Any

from evo_core.contract.protocols import (
    EvaluationResult,
    IBrainTemplate,
    IEvaluator,
    IEvaluatorFactory,
)
from evo_core.handlers.chunks import Chunk
from evo_core.handlers.watchdog import evaluate_chunk_recorded, evaluate_chunk_within
from evo_core.processes.blas_threads import limit_blas_threads
from evo_core.processes.parent_watch import die_with_parent

__all__ = ["Payload", "TemplateMissing", "initialize", "run_chunk", "hold_payload", "holds_payload",
           "run_chunk_held"]


class TemplateMissing(Exception):
    """This worker has not seen the task's template and the task did not carry it."""


@dataclass(frozen=True)
class Payload:
    """Everything a worker needs besides the chunk; shipped once per worker and template."""

    spec: IEvaluatorFactory
    blas_threads: int | None
    template: IBrainTemplate


_local = threading.local()
_blas_limited = False


def _limit_blas_once(limit: int | None) -> None:
    """threadpoolctl scans the loaded libraries: once per process is enough."""
    global _blas_limited
    if not _blas_limited:
        limit_blas_threads(limit)
        _blas_limited = True


def _use(key: Any, payload: Payload) -> IEvaluator:
    _limit_blas_once(payload.blas_threads)
    old: IEvaluator | None = getattr(_local, "runner", None)
    if old is not None:
        old.close()
    _local.runner = payload.spec.build(payload.template)
    _local.key = key
    runner: IEvaluator = _local.runner
    return runner


def _current(key: Any) -> IEvaluator | None:
    if getattr(_local, "key", None) != key:
        return None
    runner: IEvaluator = _local.runner
    return runner


# ----------------------------------------------------------------- multiprocessing


def initialize(spec: IEvaluatorFactory, blas_threads: int | None, main: tuple[int, bool],
               key: Any = None, template: IBrainTemplate | None = None) -> None:
    """Pool initializer: the runner spec, and the current template if there is one. Workers
    ignore Ctrl-C (the main process stops them, after checkpointing), die quietly on SIGTERM (a
    forked worker would otherwise inherit the main process's handler), and die with `main`
    (its pid, and whether its main thread starts the workers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent(*main)
    _local.spec, _local.blas_threads = spec, blas_threads
    _limit_blas_once(blas_threads)
    if template is not None:
        # an initializer that raises breaks the whole pool ("worker processes died"): the first
        # task builds the runner again instead, and its error reaches the run as what it is
        with contextlib.suppress(Exception):
            _use(key, Payload(spec, blas_threads, template))


def run_chunk(key: int, template: bytes | None, chunk: Chunk,
              timeout: float | None) -> list[EvaluationResult]:
    """An mp task. The pickled template comes along only while it is new; a worker that lacks it
    and did not get it says so, and the handler sends the task again with it."""
    runner = _current(key)
    if runner is None:
        if template is None:
            raise TemplateMissing()
        runner = _use(key, Payload(_local.spec, _local.blas_threads, pickle.loads(template)))  # noqa: S301 - from the parent
    return evaluate_chunk_within(runner, chunk, timeout)


# ----------------------------------------------------------------- dask

#: Payloads a Dask worker process holds: handler -> (key, payload), the latest handler last.
#: Not Dask data: Dask's active memory manager drops all but one copy of data no task waits
#: for (every 2 s), and a task that depended on a dropped copy would fetch and unpickle the
#: template again. A handler that never comes back (killed) leaves its payload until
#: `HELD_HANDLERS` newer ones push it out.
_held: dict[str, tuple[str, Payload]] = {}
HELD_HANDLERS = 4


def hold_payload(handler: str, key: str, payload: Payload) -> None:
    """Run on a Dask worker (`Client.run`): keep `handler`'s current payload in this process,
    replacing that handler's previous one."""
    _held.pop(handler, None)
    _held[handler] = (key, payload)
    while len(_held) > HELD_HANDLERS:
        del _held[next(iter(_held))]


def holds_payload(handler: str, key: str) -> bool:
    """Run on a Dask worker: whether this process holds `handler`'s payload `key`."""
    held = _held.get(handler)
    return held is not None and held[0] == key


def run_chunk_held(handler: str, key: str, chunk: Chunk,
                   timeout: float | None = None) -> list[EvaluationResult] | None:
    """A Dask task: the chunk's results, or None when this worker holds neither a runner nor
    the payload for `key` (it joined after the handler handed the payload over; the handler
    hands it over and sends the chunk again). Task threads get no signals: the handler watches
    `timeout` from outside (watchdog.overdue)."""
    runner = _current(key)
    if runner is None:
        held = _held.get(handler)
        if held is None or held[0] != key:
            return None
        runner = _use(key, held[1])
    return evaluate_chunk_recorded(runner, chunk, key, timeout)
