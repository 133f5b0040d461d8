"""Evaluation in the calling process: the reference every other handler must match bit for bit."""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from evo_core.contract.config_models import ProcessingConfig
from evo_core.contract.observation_statistics import EvaluationContext
from evo_core.contract.protocols import (
    EvaluationResult,
    IBrainTemplate,
    IEvaluator,
    IEvaluatorFactory,
)
from evo_core.handlers.chunks import Chunk
from evo_core.handlers.watchdog import evaluate_chunk_within

__all__ = ["SequentialConfig", "SequentialHandler"]


class SequentialConfig(ProcessingConfig):
    """Evaluate in the main process, one genome after another."""

    type: Literal["sequential"] = "sequential"
    workers: int | None = Field(None, ge=1, description="Accepted so that switching `type` "
                                "keeps a config valid; sequential evaluation uses this process.")


class SequentialHandler:
    """One runner, rebuilt only when a different template arrives (an `IInProcessHandler`: the
    template never leaves this process; an `IContextHandler`)."""

    config_model: ClassVar[type[ProcessingConfig]] = SequentialConfig

    def __init__(self, config: SequentialConfig, runner_spec: IEvaluatorFactory) -> None:
        self.spec = runner_spec
        self.timeout = config.task_timeout
        self.runner: IEvaluator | None = None
        self.template: IBrainTemplate | None = None

    def evaluate(self, template: IBrainTemplate, genomes: NDArray[np.float64],
                 seeds: NDArray[np.int64]) -> list[EvaluationResult]:
        return self.evaluate_in_context(template, genomes, seeds, EvaluationContext())

    def evaluate_in_context(self, template: IBrainTemplate, genomes: NDArray[np.float64],
                            seeds: NDArray[np.int64], context: EvaluationContext
                            ) -> list[EvaluationResult]:
        """`evaluate`, the context travelling with every chunk (an `IContextHandler`)."""
        if self.runner is None or self.template is not template:
            self.close()
            self.runner, self.template = self.spec.build(template), template
        return evaluate_chunk_within(
            self.runner, Chunk(np.arange(len(genomes)), genomes, seeds, context), self.timeout)

    def evaluates_in_process(self) -> Literal[True]:
        return True

    def close(self) -> None:
        if self.runner is not None:
            self.runner.close()
            self.runner = self.template = None
