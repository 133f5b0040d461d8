"""Evaluation on a Dask cluster: a local one, or any scheduler given by address.

The template (with the runner spec) is scattered to every worker once per template, and each
worker caches its runner; tasks are chunks. Dask re-runs the tasks of a worker that dies on
another worker, so results do not change; the handler notices the loss and warns.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from evo_core.contract.config_models import ProcessingConfig
from evo_core.contract.protocols import EvaluationResult, IBrainTemplate, IEvaluatorFactory
from evo_core.errors import UserError, WorkersLost
from evo_core.handlers import worker_state
from evo_core.handlers.chunks import split

__all__ = ["DaskConfig", "DaskHandler"]


class DaskConfig(ProcessingConfig):
    """A Dask cluster: started locally, or reached at a scheduler address."""

    type: Literal["dask"] = "dask"
    address: str | None = Field(None, description="Scheduler address, e.g. "
                                "tcp://10.0.0.5:8786; unset: start a local cluster.")
    workers: int | None = Field(None, ge=1, description="Workers of a local cluster (one thread "
                                "each); unset: the number of CPUs. Ignored with address.")
    connect_timeout: float = Field(10.0, gt=0, description="Seconds to wait for the scheduler.")
    chunks_per_worker: int = Field(2, ge=1, description="Chunks per worker and generation.")


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
        if config.address:
            try:
                self.client = distributed.Client(config.address, timeout=config.connect_timeout)
            except ValueError as exc:  # not an address at all: "garbage!!", "http://..."
                raise UserError(f"processing.address: {config.address!r} is not a Dask scheduler "
                                f"address ({exc}); use tcp://HOST:PORT") from None
            except (OSError, TimeoutError) as exc:
                raise UserError(
                    f"processing.address: no Dask scheduler answered at {config.address} within "
                    f"{config.connect_timeout:g} s ({type(exc).__name__}); start one with "
                    "`dask scheduler` and `dask worker ADDRESS`, or fix the address") from None
        else:
            self.cluster = distributed.LocalCluster(
                n_workers=config.workers, threads_per_worker=1, processes=True,
                host="127.0.0.1", dashboard_address=None, silence_logs=logging.ERROR)
            self.client = distributed.Client(self.cluster)
        self.template: IBrainTemplate | None = None
        self.payload: Any = None

    def _workers(self) -> set[str]:
        return set(self.client.scheduler_info(n_workers=-1)["workers"])

    def evaluate(self, template: IBrainTemplate, genomes: NDArray[np.float64],
                 seeds: NDArray[np.int64]) -> list[EvaluationResult]:
        before = self._workers()
        if not before:
            self.client.wait_for_workers(1, timeout=self.config.connect_timeout)
            before = self._workers()
        if template is not self.template:
            self.template = template
            payload = worker_state.Payload(self.spec, self.config.blas_threads, template)
            self.payload = self.client.scatter(payload, broadcast=True, hash=False)
        chunks = split(genomes, seeds, max(1, len(before)) * self.config.chunks_per_worker)
        futures = self.client.map(worker_state.run_chunk_with_payload,
                                  [self.payload.key] * len(chunks), [self.payload] * len(chunks),
                                  chunks, pure=False)
        results: list[EvaluationResult | None] = [None] * len(genomes)
        try:
            gathered = self.client.gather(futures)
        except _distributed().KilledWorker as exc:
            raise WorkersLost(f"Dask workers died on the same task repeatedly ({exc}); is a "
                              "brain or the environment crashing them?") from None
        for chunk, chunk_results in zip(chunks, gathered):
            for index, result in zip(chunk.indices, chunk_results):
                results[int(index)] = result
        lost = before - self._workers()
        if lost:
            warnings.warn(f"{len(lost)} Dask worker(s) left during this generation; Dask re-ran "
                          "their tasks elsewhere (results are unaffected)", RuntimeWarning,
                          stacklevel=2)
        return [r for r in results if r is not None]

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None
