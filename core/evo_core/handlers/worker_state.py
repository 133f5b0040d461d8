"""What a worker keeps between tasks: its runner, built once per template.

Module-level (thread-local) state is the one object a pool worker owns for its whole life. A runner
holds the environment, so building it once per worker and template, not per task, is most of what
makes parallel evaluation pay off. Thread-local because a Dask worker may run several threads, and
environments are not thread-safe.
"""

from __future__ import annotations

import pickle
import signal
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evo_core.contract.protocols import (
    EvaluationResult,
    IBrainTemplate,
    IEvaluator,
    IEvaluatorFactory,
)
from evo_core.engine.blas_threads import limit_blas_threads
from evo_core.handlers.chunks import Chunk, evaluate_chunk

__all__ = ["Payload", "initialize", "run_chunk_from_file", "run_chunk_with_payload"]


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


def initialize(spec: IEvaluatorFactory, blas_threads: int | None, key: Any = None,
               template: IBrainTemplate | None = None) -> None:
    """Pool initializer: the runner spec, and the current template if there is one. Workers
    ignore Ctrl-C (the main process stops them, after checkpointing) and die quietly on
    SIGTERM (a forked worker would otherwise inherit the main process's handler)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _local.spec, _local.blas_threads = spec, blas_threads
    _limit_blas_once(blas_threads)
    if template is not None:
        _use(key, Payload(spec, blas_threads, template))


def run_chunk_from_file(key: int, template_file: str, chunk: Chunk) -> list[EvaluationResult]:
    """An mp task: the template travels by file and is read only when this worker lacks it."""
    runner = _current(key)
    if runner is None:
        template: IBrainTemplate = pickle.loads(Path(template_file).read_bytes())
        runner = _use(key, Payload(_local.spec, _local.blas_threads, template))
    return evaluate_chunk(runner, chunk)


# ----------------------------------------------------------------- dask


def run_chunk_with_payload(key: str, payload: Payload, chunk: Chunk) -> list[EvaluationResult]:
    """A Dask task: `payload` is a scattered future that Dask keeps in the worker's memory."""
    runner = _current(key)
    if runner is None:
        runner = _use(key, payload)
    return evaluate_chunk(runner, chunk)
