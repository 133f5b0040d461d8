"""Environments evo registers with gymnasium: memory variants of classic-control tasks.

A memory task hides part of the state, so only a brain with memory (CTRNN, LSTM) can infer it.
Registration happens on first use in every process that makes environments (workers included).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

__all__ = ["MaskObservation", "register_all", "CARTPOLE_NO_VELOCITY"]

CARTPOLE_NO_VELOCITY = "evo/CartPoleNoVelocity-v1"


class MaskObservation(gym.ObservationWrapper[Any, Any, Any]):
    """Keep only the given indices of a Box observation (`labels`: their names, which
    `observation_labels` gives, IObservationLabels)."""

    def __init__(self, env: gym.Env[Any, Any], keep: list[int],
                 labels: tuple[str, ...] = ()) -> None:
        super().__init__(env)
        self.labels = labels
        box = env.observation_space
        assert isinstance(box, gym.spaces.Box)
        self.keep = np.asarray(keep, dtype=np.intp)
        dtype: Any = box.dtype  # gymnasium 1.3 and 1.4 annotate Box's dtype differently
        self.observation_space = gym.spaces.Box(box.low[self.keep], box.high[self.keep],
                                                dtype=dtype)

    def observation(self, observation: Any) -> Any:
        return np.asarray(observation)[self.keep]

    def observation_labels(self) -> tuple[str, ...]:
        return self.labels


def _cartpole_no_velocity(**kwargs: Any) -> gym.Env[Any, Any]:
    """CartPole-v1 seeing cart position and pole angle only: velocities must be remembered."""
    return MaskObservation(gym.make("CartPole-v1", **kwargs), keep=[0, 2],
                           labels=("x m", "\u03b8 rad"))


def register_all() -> None:
    if CARTPOLE_NO_VELOCITY not in gym.registry:
        gym.register(CARTPOLE_NO_VELOCITY, entry_point=_cartpole_no_velocity,
                     disable_env_checker=True)
