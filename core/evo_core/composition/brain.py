"""One chain individual: its stages' brains, stepped in order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.contract.protocols import IBrain, IRandomBrain, ITraceableBrain

__all__ = ["ChainBrain"]


class ChainBrain:
    """Each stage's action is the next stage's observation; the last stage's is the chain's.

    It is always an `IRandomBrain`: before every episode it spawns one child Generator per stage
    from the runner's and hands each stage that draws random numbers its own, so a stage's noise
    does not depend on which other stages draw.
    """

    def __init__(self, brains: Sequence[IBrain]) -> None:
        self.brains = tuple(brains)
        self.random = tuple(isinstance(brain, IRandomBrain) for brain in self.brains)
        self.steps = tuple(brain.step for brain in self.brains)
        self.traceable = tuple(isinstance(brain, ITraceableBrain) for brain in self.brains)

    def use_rng(self, rng: np.random.Generator) -> None:
        for brain, random, child in zip(self.brains, self.random, rng.spawn(len(self.brains))):
            if random:
                stage: Any = brain
                stage.use_rng(child)

    def reset(self) -> None:
        for brain in self.brains:
            brain.reset()

    def step(self, observation: Any) -> Any:
        for step in self.steps:
            observation = step(observation)
        return observation

    def trace_state(self) -> dict[str, NDArray[np.float64]]:
        """Each traceable stage's state, its keys prefixed `stage0.`, `stage1.`, ...
        (ITraceableBrain; a stage that is not traceable adds nothing)."""
        state: dict[str, NDArray[np.float64]] = {}
        for index, (brain, traceable) in enumerate(zip(self.brains, self.traceable)):
            if traceable:
                stage: Any = brain
                for key, value in stage.trace_state().items():
                    state[f"stage{index}.{key}"] = value
        return state
