"""What a worker keeps between tasks: its runner, built once per template.

Module-level (thread-local) state is the one object a pool worker owns for its whole life. A runner
holds the environment, so building it once per worker and template, not per task, is most of what
makes parallel evaluation pay off. Thread-local because a Dask worker may run several threads, and
environments are not thread-safe.
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

__all__ = ["Payload", "TemplateMissing", "initialize", "run_chunk", "run_chunk_with_payload"]


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


def run_chunk_with_payload(key: str, payload: Payload, chunk: Chunk,
                           timeout: float | None = None) -> list[EvaluationResult]:
    """A Dask task: `payload` is a scattered future that Dask keeps in the worker's memory.
    Task threads get no signals: the handler watches `timeout` from outside (watchdog.overdue)."""
    runner = _current(key)
    if runner is None:
        runner = _use(key, payload)
    return evaluate_chunk_recorded(runner, chunk, key, timeout)
