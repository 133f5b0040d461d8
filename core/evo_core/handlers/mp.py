"""Evaluation on a pool of local worker processes, kept for the whole run.

Each worker gets the template once (in the pool's initializer) and builds its runner, environment
included, once; tasks carry chunks of genomes with their seeds. A template that changes between
generations travels, pickled, with the tasks of the next generation; a worker that got none of
them asks for it and the task is sent again with it. No file is written, so a killed run leaves
nothing behind. A worker that dies (killed, out of memory) breaks the pool: the handler starts a
new one and re-runs exactly the chunks that had no result, so the run's results are those of an
undisturbed run.

Workers start as `processing.start_method` says; unset, as Python's default for the platform
(`fork` on Linux before Python 3.14), except once this process has imported a library whose
threads a forked child inherits dead (`FORK_UNSAFE`: JAX, which `cma-es-jax` and `episodes.vectorize
= "jax"` start here before the pool): a forked worker that then used it deadlocked, and a
generation never ended. Then they are spawned, which gives the same results (a worker's results
depend on its template, genomes and seeds only). `fork` set explicitly is left to the user
(JAX warns at every fork); it is safe while the workers do not use JAX themselves.

Workers die with the main process (see parent_watch). Closing gives running evaluations a short
grace period and then kills the workers still busy: an interrupt must not wait for an
environment stuck in `step`, and a second Ctrl-C during the grace period kills them at once.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import sys
import threading
import time
import warnings
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import ClassVar, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from evo_core.contract.config_models import ProcessingConfig, WorkerCount
from evo_core.contract.observation_statistics import EvaluationContext
from evo_core.contract.protocols import EvaluationResult, IBrainTemplate, IEvaluatorFactory
from evo_core.errors import WorkersLost
from evo_core.handlers import worker_state
from evo_core.handlers.chunks import Chunk, split
from evo_core.interrupts import deferred_interrupts, marked_interrupts
from evo_core.processes.temp_guard import guard_forkserver_folder

__all__ = ["FORK_UNSAFE", "MPConfig", "MPHandler", "start_method"]

#: Pool restarts within one `evaluate` before giving up (a brain that kills its process).
MAX_RESTARTS = 3
#: Seconds `close` lets running evaluations finish before it kills their workers.
GRACE_SECONDS = 2.0
#: Libraries whose threads a forked child inherits dead: once one is imported in this process,
#: workers of an unset start method are spawned.
FORK_UNSAFE = ("jax",)


class MPConfig(ProcessingConfig):
    """A pool of worker processes on this machine, started once per run."""

    type: Literal["mp"] = "mp"
    workers: WorkerCount = Field(None, ge=1, description="Worker processes; unset: the number "
                                 "of CPUs.")
    start_method: Literal["spawn", "forkserver", "fork"] | None = Field(
        None, description="How workers start; unset: Python's default for this platform, "
        "but spawn once JAX is loaded in the main process (a forked worker using it deadlocks).")
    chunks_per_worker: int = Field(2, ge=1, description="Chunks per worker and generation: more "
                                   "balances uneven episode lengths, fewer saves overhead.")


def start_method(chosen: str | None) -> str | None:
    """`chosen`, or when unset "spawn" where the platform's default is fork and a library of
    `FORK_UNSAFE` is loaded here, else None (the default)."""
    if chosen is None and multiprocessing.get_start_method() == "fork" and \
            any(name in sys.modules for name in FORK_UNSAFE):
        return "spawn"
    return chosen


class MPHandler:
    """A `concurrent.futures` process pool: unlike `multiprocessing.Pool`, it notices a dead
    worker instead of waiting for its result forever."""

    config_model: ClassVar[type[ProcessingConfig]] = MPConfig

    def __init__(self, config: MPConfig, runner_spec: IEvaluatorFactory) -> None:
        self.config = config
        self.spec = runner_spec
        self.workers = config.workers or os.cpu_count() or 1
        self.context = multiprocessing.get_context(start_method(config.start_method))
        self.executor: ProcessPoolExecutor | None = None
        self.template: IBrainTemplate | None = None
        self.pickled: bytes = b""
        self.key = 0

    def _start(self) -> ProcessPoolExecutor:
        if self.context.get_start_method() == "forkserver":
            guard_forkserver_folder()
        return ProcessPoolExecutor(
            max_workers=self.workers, mp_context=self.context,
            initializer=worker_state.initialize,
            initargs=(self.spec, self.config.blas_threads, self._main(), self.key,
                      self.template))

    @staticmethod
    def _main() -> tuple[int, bool]:
        """This process, and whether its main thread is the one that starts the workers (the
        pool starts them from the thread that submits, which is the one calling `_start`)."""
        return os.getpid(), threading.current_thread() is threading.main_thread()

    def evaluate(self, template: IBrainTemplate, genomes: NDArray[np.float64],
                 seeds: NDArray[np.int64]) -> list[EvaluationResult]:
        return self.evaluate_in_context(template, genomes, seeds, EvaluationContext())

    def evaluate_in_context(self, template: IBrainTemplate, genomes: NDArray[np.float64],
                            seeds: NDArray[np.int64], context: EvaluationContext
                            ) -> list[EvaluationResult]:
        """`evaluate`, the context travelling with every chunk (an `IContextHandler`)."""
        changed = template is not self.template
        if changed:
            self.template = template
            self.key += 1
            self.pickled = pickle.dumps(template)
            if self.executor is None:
                self.executor = self._start()
                changed = False  # the initializer hands it to every worker
        pending = split(genomes, seeds, self.workers * self.config.chunks_per_worker, context)
        results: list[EvaluationResult | None] = [None] * len(genomes)
        for attempt in range(MAX_RESTARTS + 1):
            pending = self._run(pending, results, changed)
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
            changed = False
        return [r for r in results if r is not None]

    def _submit(self, chunk: Chunk, with_template: bool) -> Future[list[EvaluationResult]]:
        assert self.executor is not None
        return self.executor.submit(worker_state.run_chunk, self.key,
                                    self.pickled if with_template else None, chunk,
                                    self.config.task_timeout)

    def _run(self, chunks: list[Chunk], results: list[EvaluationResult | None],
             with_template: bool) -> list[Chunk]:
        """Run `chunks`; fill `results`; return the chunks lost to a broken pool."""
        futures: list[tuple[Chunk, Future[list[EvaluationResult]]]] = []
        lost: list[Chunk] = []
        try:
            for chunk in chunks:
                futures.append((chunk, self._submit(chunk, with_template)))
        except BrokenProcessPool:
            submitted = {id(chunk) for chunk, _ in futures}
            lost = [chunk for chunk in chunks if id(chunk) not in submitted]
        while futures:
            chunk, future = futures.pop(0)
            try:
                for index, result in zip(chunk.indices, future.result()):
                    results[int(index)] = result
            except BrokenProcessPool:
                lost.append(chunk)
            except worker_state.TemplateMissing:
                try:
                    futures.append((chunk, self._submit(chunk, True)))
                except BrokenProcessPool:
                    lost.append(chunk)
        return lost

    def close(self) -> None:
        """Stop the workers: idle ones at once, busy ones after `GRACE_SECONDS` (or at a
        second Ctrl-C, which is then raised again once they are gone).

        Only the grace period can be interrupted. A Ctrl-C anywhere else (before the pool's
        processes are known, amid the kills) would leave a worker alive and stuck in `step`,
        and interpreter exit waits for the pool's thread, which waits for that worker: there
        it is raised once the workers are gone."""
        interrupted: KeyboardInterrupt | None = None
        with deferred_interrupts():
            executor, self.executor = self.executor, None
            if executor is None:
                return
            # ProcessPoolExecutor offers no way to stop a running task: its processes are
            # killed, so they are taken before shutdown forgets them
            processes = list((executor._processes or {}).values())
            executor.shutdown(wait=False, cancel_futures=True)
            try:
                with marked_interrupts():
                    deadline = time.monotonic() + GRACE_SECONDS
                    for process in processes:
                        process.join(max(0.0, deadline - time.monotonic()))
            except KeyboardInterrupt as interrupt:
                interrupted = interrupt
            for process in processes:
                if process.exitcode is None:
                    process.kill()
            for process in processes:
                process.join()
            executor.shutdown(wait=True)
        if interrupted is not None:
            raise interrupted
