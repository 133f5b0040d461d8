"""The optimizer interface the experiment drives.

ask/tell, as in evosax and pycma: the experiment asks for a population, has it evaluated wherever
the handler decides, and tells the fitnesses back. Higher fitness is better. State for checkpoints
is a dict of numpy arrays and JSON values, so it can be stored without pickle where possible.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

import numpy as np
from numpy.typing import NDArray

from evo_core.brain_config import OptimizerConfig

__all__ = ["IOptimizer"]


class IOptimizer(Protocol):
    """Constructed as ``cls(config, genome_size, rng)`` with a seeded `numpy.random.Generator`."""

    config_model: ClassVar[type[OptimizerConfig]]

    def ask(self) -> NDArray[np.float64]:
        """The next genomes to evaluate, shape (n, genome_size), C-contiguous float64."""

    def tell(self, fitnesses: NDArray[np.float64]) -> None:
        """The fitness of each genome of the last `ask`, in the same order."""

    def state(self) -> dict[str, Any]:
        """Everything needed to continue exactly, for checkpoints."""

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore what `state` returned."""
