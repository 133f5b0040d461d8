"""The handler interface: the only code that knows about processes."""

from __future__ import annotations

from typing import ClassVar, Protocol

import numpy as np
from numpy.typing import NDArray

from evo_core.brain_config import ProcessingConfig
from evo_core.protocols import IBrainTemplate
from evo_core.runner import EvaluationResult

__all__ = ["IHandler"]


class IHandler(Protocol):
    """Constructed as ``cls(config, runner_spec)``; `runner_spec.build(template)` makes a runner.

    `evaluate` receives the template with every call: a handler that keeps templates in workers
    ships a template only when it differs from the one they hold, which lets an optimizer swap
    templates between generations (a curriculum, a growing network).
    """

    config_model: ClassVar[type[ProcessingConfig]]

    def evaluate(self, template: IBrainTemplate, genomes: NDArray[np.float64],
                 seeds: NDArray[np.int64]) -> list[EvaluationResult]:
        """Score each genome with its seed; results in input order."""

    def close(self) -> None:
        """Release workers and clusters; safe to call twice."""
