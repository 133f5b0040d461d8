"""Evaluation on a pool of local worker processes, kept for the whole run.

Each worker gets the template once (in the pool's initializer) and builds its runner, environment
included, once; tasks carry chunks of genomes with their seeds. A template that changes between
generations is written to a file in the handler's private folder, and each worker reads it once,
on its first task with the new key. A worker that dies (killed, out of memory) breaks the pool:
the handler starts a new one and re-runs exactly the chunks that had no result, so the run's
results are those of an undisturbed run.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import shutil
import tempfile
import warnings
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from evo_core.contract.config_models import ProcessingConfig
from evo_core.contract.protocols import EvaluationResult, IBrainTemplate, IEvaluatorFactory
from evo_core.errors import WorkersLost
from evo_core.handlers import worker_state
from evo_core.handlers.chunks import Chunk, split

__all__ = ["MPConfig", "MPHandler"]

#: Pool restarts within one `evaluate` before giving up (a brain that kills its process).
MAX_RESTARTS = 3


class MPConfig(ProcessingConfig):
    """A pool of worker processes on this machine, started once per run."""

    type: Literal["mp"] = "mp"
    workers: int | None = Field(None, ge=1, description="Worker processes; unset: the number "
                                "of CPUs.")
    start_method: Literal["spawn", "forkserver", "fork"] | None = Field(
        None, description="How workers start; unset: Python's default for this platform.")
    chunks_per_worker: int = Field(2, ge=1, description="Chunks per worker and generation: more "
                                   "balances uneven episode lengths, fewer saves overhead.")


class MPHandler:
    """A `concurrent.futures` process pool: unlike `multiprocessing.Pool`, it notices a dead
    worker instead of waiting for its result forever."""

    config_model: ClassVar[type[ProcessingConfig]] = MPConfig

    def __init__(self, config: MPConfig, runner_spec: IEvaluatorFactory) -> None:
        self.config = config
        self.spec = runner_spec
        self.workers = config.workers or os.cpu_count() or 1
        self.context = multiprocessing.get_context(config.start_method)
        self.folder = Path(tempfile.mkdtemp(prefix="evo-mp-"))
        self.executor: ProcessPoolExecutor | None = None
        self.template: IBrainTemplate | None = None
        self.key = 0

    def _start(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=self.workers, mp_context=self.context,
            initializer=worker_state.initialize,
            initargs=(self.spec, self.config.blas_threads, self.key, self.template))

    def _template_file(self) -> str:
        return str(self.folder / f"template-{self.key}.pkl")

    def evaluate(self, template: IBrainTemplate, genomes: NDArray[np.float64],
                 seeds: NDArray[np.int64]) -> list[EvaluationResult]:
        if template is not self.template:
            self.template = template
            self.key += 1
            Path(self._template_file()).write_bytes(pickle.dumps(template))
            if self.executor is None:
                self.executor = self._start()
        pending = split(genomes, seeds, self.workers * self.config.chunks_per_worker)
        results: list[EvaluationResult | None] = [None] * len(genomes)
        for attempt in range(MAX_RESTARTS + 1):
            pending = self._run(pending, results)
            if not pending:
                break
            warnings.warn(f"a worker process died; re-running {len(pending)} chunk(s) on a "
                          "fresh pool (results are unaffected)", RuntimeWarning, stacklevel=2)
            if attempt == MAX_RESTARTS:
                raise WorkersLost(f"worker processes died {MAX_RESTARTS + 1} times in one "
                                  "generation; is a brain or the environment crashing them?")
            assert self.executor is not None
            self.executor.shutdown(wait=True, cancel_futures=True)
            self.executor = self._start()
        return [r for r in results if r is not None]

    def _run(self, chunks: list[Chunk], results: list[EvaluationResult | None]) -> list[Chunk]:
        """Run `chunks`; fill `results`; return the chunks lost to a broken pool."""
        assert self.executor is not None
        futures: list[tuple[Chunk, Future[list[EvaluationResult]]]] = []
        try:
            for chunk in chunks:
                futures.append((chunk, self.executor.submit(
                    worker_state.run_chunk_from_file, self.key, self._template_file(), chunk)))
        except BrokenProcessPool:
            pass
        submitted = {id(chunk) for chunk, _ in futures}
        lost = [chunk for chunk in chunks if id(chunk) not in submitted]
        for chunk, future in futures:
            try:
                for index, result in zip(chunk.indices, future.result()):
                    results[int(index)] = result
            except BrokenProcessPool:
                lost.append(chunk)
        return lost

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)
            self.executor = None
        shutil.rmtree(self.folder, ignore_errors=True)
