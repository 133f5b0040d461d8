"""The two roles every brain plays, as structural types.

A plugin need not inherit from anything: these protocols are what the experiment, the episode
runner and the handlers rely on. The split exists because the predecessor kept shared set-up
(sparse masks) in class variables that had to be re-created in every worker process; a template is
an ordinary immutable object that is built once and pickled to wherever brains are needed.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core.brain_config import BrainConfig

__all__ = ["IBrain", "IBrainTemplate", "IBrainTemplateClass"]


@runtime_checkable
class IBrain(Protocol):
    """One individual: per-individual state only, so making one from a template is cheap."""

    def reset(self) -> None:
        """Return to the initial state; the runner calls it before every episode."""

    def step(self, observation: Any) -> Any:
        """Map one observation to an action that the environment's action space contains."""


@runtime_checkable
class IBrainTemplate(Protocol):
    """Everything individuals share: built once per experiment, immutable, picklable."""

    @property
    def genome_size(self) -> int:
        """Number of float64 genes `make` expects."""

    def make(self, genome: NDArray[np.float64]) -> IBrain:
        """Build one brain from a genome of exactly `genome_size` genes."""


class IBrainTemplateClass(Protocol):
    """What a plugin's `evo_brain_templates` hook returns: template classes, not instances."""

    config_model: ClassVar[type[BrainConfig]]

    def __call__(
        self,
        config: Any,
        observation_space: gym.Space[Any],
        action_space: gym.Space[Any],
        rng: np.random.Generator,
    ) -> IBrainTemplate: ...
