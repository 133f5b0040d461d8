"""`stand-still-stop`: end an episode whose agent has stopped moving, with a penalty.

A BipedalWalker that learnt to stand still collects nothing for the rest of its 1600 (or 2000)
steps; ending its episode early saves most of the evaluation time of such genomes, and the
penalty (the walker's own penalty for falling, by default) keeps standing still from paying
better than trying to walk.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, SupportsFloat

import gymnasium as gym
import numpy as np
from pydantic import Field

from evo_core.contract.config_models import WrapperConfig

__all__ = ["StandStillStopConfig", "StandStillStop"]


class StandStillStopConfig(WrapperConfig):
    """End the episode, with a penalty, once one observation entry (a speed) stays near zero."""

    type: Literal["stand-still-stop"] = "stand-still-stop"
    index: int = Field(2, ge=0, description="The observation entry to watch (of the flattened "
                       "observation); BipedalWalker's 2 is the hull's horizontal speed.")
    min_speed: float = Field(1e-4, ge=0, description="An entry whose magnitude is below this "
                             "counts as standing still.")
    steps: int = Field(50, ge=0, description="The episode ends on the step that makes more than "
                       "this many consecutive standing-still steps (step steps + 1).")
    penalty: float = Field(-100.0, description="The reward of that last step (replacing the "
                           "environment's).")


class StandStillStop(gym.Wrapper[Any, Any, Any, Any], gym.utils.RecordConstructorArgs):
    """Terminates the episode when |observation[index]| < min_speed for more than `steps`
    consecutive steps; that step's reward becomes `penalty`. A step the environment ends itself
    keeps its own reward."""

    config_model: ClassVar[type[WrapperConfig]] = StandStillStopConfig

    def __init__(self, config: StandStillStopConfig, env: gym.Env[Any, Any]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, config=config)
        super().__init__(env)
        space = env.observation_space
        if not isinstance(space, gym.spaces.Box):
            raise TypeError(f"stand-still-stop watches an entry of a Box observation, not "
                            f"{type(space).__name__}")
        if config.index >= int(np.prod(space.shape)):
            raise ValueError(f"index {config.index} is outside the observation, which has "
                             f"{int(np.prod(space.shape))} entries")
        self.config = config
        self.still_steps = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[Any, dict[str, Any]]:
        self.still_steps = 0
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        speed = float(np.asarray(observation).flat[self.config.index])
        self.still_steps = self.still_steps + 1 if abs(speed) < self.config.min_speed else 0
        if self.still_steps > self.config.steps and not (terminated or truncated):
            return observation, self.config.penalty, True, truncated, info
        return observation, reward, terminated, truncated, info
