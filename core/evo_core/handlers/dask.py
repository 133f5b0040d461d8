"""Evaluation on a Dask cluster: a local one, or any scheduler given by address.

The template (with the runner spec) is handed to every worker process once per template
(`Client.run`, kept in the process by `worker_state`, not as Dask data, which Dask's memory
manager would drop from all workers but one and send again), and each worker caches its runner;
tasks are chunks. A worker that joined later (a restarted one) answers a chunk with None; the
handler hands it the template and sends the chunk again. Dask re-runs the tasks of a worker that
dies on another worker, so results do not change; the handler notices the loss and warns.

Before a client connects to an address, `scheduler_probe` checks within `connect_timeout` that a
Dask scheduler answers there at all: the client itself would wait forever for the handshake of a
listener that is not one. With `task_timeout` set, the handler asks the workers for overdue
evaluations while it waits (a task thread cannot be interrupted by a signal).
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import signal
import tempfile
import threading
import uuid
import warnings
from collections.abc import Iterator
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from evo_core.contract.config_models import ProcessingConfig, WorkerCount
from evo_core.contract.observation_statistics import EvaluationContext
from evo_core.contract.protocols import EvaluationResult, IBrainTemplate, IEvaluatorFactory
from evo_core.contract.trust import NamesCode
from evo_core.errors import EvaluationTimeout, UserError, WorkersLost
from evo_core.handlers import watchdog, worker_state
from evo_core.handlers.chunks import Chunk, split
from evo_core.processes.scheduler_probe import connect_client
from evo_core.processes.temp_guard import remove_at_exit

__all__ = ["DaskConfig", "DaskHandler"]

#: Hand-overs of the template within one `evaluate` to workers that joined after the first.
HAND_OVERS = 3


class DaskConfig(ProcessingConfig):
    """A Dask cluster: started locally, or reached at a scheduler address."""

    type: Literal["dask"] = "dask"
    address: Annotated[str | None, NamesCode("peer", "the Dask scheduler")] = Field(
        None, description="Scheduler address, e.g. tcp://10.0.0.5:8786; unset: start a local "
        "cluster.")
    workers: WorkerCount = Field(None, ge=1, description="Workers of a local cluster (one "
                                 "thread each); unset: the number of CPUs. Ignored with address.")
    connect_timeout: float = Field(10.0, gt=0, allow_inf_nan=False, description="Seconds to "
                                   "wait for the scheduler: connection and handshake.")
    chunks_per_worker: int = Field(2, ge=1, description="Chunks per worker and generation.")


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while the local cluster starts. An ignored signal stays ignored across
    fork and exec, and a Python started that way installs no KeyboardInterrupt handler, so the
    worker processes never print a traceback for the terminal's Ctrl-C, which reaches the whole
    process group: stopping them is this process's job, after checkpointing. (A blocked signal
    mask would not do: the workers are spawned from dask's own threads.) A Ctrl-C in these
    seconds of start-up is lost; outside the main thread there is no handler to swap."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise UserError("processing.type = \"dask\" needs Dask: pip install "
                        "\"evo-core[dask]\"") from None
    return distributed


class DaskHandler:
    config_model: ClassVar[type[ProcessingConfig]] = DaskConfig

    def __init__(self, config: DaskConfig, runner_spec: IEvaluatorFactory) -> None:
        distributed = _distributed()
        self.config = config
        self.spec = runner_spec
        self.cluster: Any = None
        self.scratch: str | None = None
        if config.address:
            self.client = connect_client(distributed, config.address, config.connect_timeout,
                                         "processing.address", "dask worker ADDRESS")
        else:
            # the workers' scratch space, in a folder removed even if this process is killed
            self.scratch = tempfile.mkdtemp(prefix="evo-dask-")
            remove_at_exit(self.scratch)
            import dask

            # the scheduler's scratch too; the workers start ignoring Ctrl-C
            with dask.config.set({"temporary-directory": self.scratch}), _sigint_ignored():
                self.cluster = distributed.LocalCluster(
                    n_workers=config.workers, threads_per_worker=1, processes=True,
                    # ":0": any free port for the scheduler's HTTP server, which starts even
                    # without a dashboard; None means 8787, and a second run on the machine
                    # then warned "Port 8787 is already in use"
                    host="127.0.0.1", dashboard_address=":0", silence_logs=logging.CRITICAL,
                    local_directory=self.scratch)
            self.client = distributed.Client(self.cluster)
        self.template: IBrainTemplate | None = None
        self.payload: worker_state.Payload | None = None
        #: this handler among others on the same workers, and its current template's key there
        self.name = f"evo-{uuid.uuid4().hex}"
        self.key = ""

    def _workers(self) -> set[str]:
        return set(self.client.scheduler_info(n_workers=-1)["workers"])

    def evaluate(self, template: IBrainTemplate, genomes: NDArray[np.float64],
                 seeds: NDArray[np.int64]) -> list[EvaluationResult]:
        return self.evaluate_in_context(template, genomes, seeds, EvaluationContext())

    def evaluate_in_context(self, template: IBrainTemplate, genomes: NDArray[np.float64],
                            seeds: NDArray[np.int64], context: EvaluationContext
                            ) -> list[EvaluationResult]:
        """`evaluate`, the context travelling with every chunk (an `IContextHandler`)."""
        before = self._workers()
        if not before:
            self.client.wait_for_workers(1, timeout=self.config.connect_timeout)
            before = self._workers()
        if template is not self.template:
            self.template = template
            self.key = f"{self.name}-{uuid.uuid4().hex}"
            self.payload = worker_state.Payload(self.spec, self.config.blas_threads, template)
            self._hand_over()
        pending = split(genomes, seeds, max(1, len(before)) * self.config.chunks_per_worker,
                        context)
        results: list[EvaluationResult | None] = [None] * len(genomes)
        for attempt in range(HAND_OVERS + 1):
            pending = self._run(pending, results)
            if not pending:
                break
            if attempt == HAND_OVERS:
                raise WorkersLost(f"Dask workers lacked the template {HAND_OVERS + 1} times in "
                                  "one generation after it was handed to them; are workers "
                                  "restarting?")
            self._hand_over()
        lost = before - self._workers()
        if lost:
            warnings.warn(f"{len(lost)} Dask worker(s) left during this generation; Dask re-ran "
                          "their tasks elsewhere (results are unaffected)", RuntimeWarning,
                          stacklevel=2)
        return [r for r in results if r is not None]

    def _hand_over(self) -> None:
        """The current payload to every worker process that does not hold it (all of them for
        a new template), once each."""
        held = self._on_workers(worker_state.holds_payload, self.name, self.key)
        lacking = [address for address, holds in held.items() if not holds]
        if lacking:
            self._on_workers(worker_state.hold_payload, self.name, self.key, self.payload,
                             workers=lacking)

    def _on_workers(self, function: Any, *args: Any, workers: list[str] | None = None
                    ) -> dict[str, Any]:
        """`function(*args)` on the workers, by address. A worker that is gone by then is left
        out (a chunk sent to its replacement comes back for the payload); anything else a
        worker raised (the template's module missing there) is raised."""
        answers: dict[str, Any] = self.client.run(function, *args, workers=workers,
                                                  on_error="return")
        for answer in answers.values():
            if isinstance(answer, Exception) and not isinstance(answer, OSError):
                raise answer
        return {address: answer for address, answer in answers.items()
                if not isinstance(answer, OSError)}

    def _run(self, chunks: list[Chunk], results: list[EvaluationResult | None]) -> list[Chunk]:
        """Run `chunks`; fill `results`; return the chunks whose worker lacked the template."""
        futures = self.client.map(worker_state.run_chunk_held, [self.name] * len(chunks),
                                  [self.key] * len(chunks), chunks,
                                  [self.config.task_timeout] * len(chunks), pure=False)
        try:
            self._wait(futures)
            gathered: list[list[EvaluationResult] | None] = self.client.gather(futures)
        except KeyboardInterrupt:
            self._quiet_shutdown()
            raise
        except _distributed().KilledWorker as exc:
            raise WorkersLost(f"Dask workers died on the same task repeatedly ({exc}); is a "
                              "brain or the environment crashing them?") from None
        missing = []
        for chunk, chunk_results in zip(chunks, gathered):
            if chunk_results is None:
                missing.append(chunk)
                continue
            for index, result in zip(chunk.indices, chunk_results):
                results[int(index)] = result
        return missing

    def _wait(self, futures: list[Any]) -> None:
        """Until every future is done; with a task timeout, look for overdue evaluations on
        the workers every so often and raise `EvaluationTimeout` for the first one."""
        timeout = self.config.task_timeout
        if timeout is None:
            return
        distributed = _distributed()
        poll = min(1.0, timeout / 4)
        while True:
            try:
                distributed.wait(futures, timeout=poll)
                return
            except TimeoutError:
                pass
            overdue = self.client.run(watchdog.overdue, self.key, timeout)
            late = [entry for entries in overdue.values() for entry in entries]
            if late:
                raise EvaluationTimeout(min(candidate for candidate, _ in late), timeout)

    @staticmethod
    def _quiet_shutdown() -> None:
        """After an interrupt the interrupted gather's tasks, and workers still busy while the
        cluster closes, log tracebacks about a shutdown that is intended."""
        for name in ("distributed", "asyncio"):
            logging.getLogger(name).setLevel(logging.CRITICAL)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None
