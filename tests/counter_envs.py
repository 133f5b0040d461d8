"""A counting environment whose episodes end, or turn NaN or infinite, at a given step,
registered as test/Counter-v0, test/Short-v0, test/NanObs-v0 and test/NanReward-v0: the episode
runner's tests and the training loop's read the same ones."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

__all__ = ["Counter"]


class Counter(gym.Env[np.ndarray, int]):
    """Reward 1 per step; never ends by itself unless `length` is reached; NaN at `nan_at`."""

    made = 0
    observation_space = gym.spaces.Box(-np.inf, np.inf, (1,), dtype=np.float64)
    action_space: gym.Space[Any] = gym.spaces.Discrete(2)

    def __init__(self, length: int = 10**9, nan_at: int | None = None,
                 nan_reward_at: int | None = None) -> None:
        Counter.made += 1
        self.length, self.nan_at, self.nan_reward_at = length, nan_at, nan_reward_at
        self.t = 0

    def reset(self, *, seed: int | None = None, options: Any = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return np.array([self.np_random.uniform()]), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.t += 1
        obs = np.array([np.nan if self.t == self.nan_at else self.np_random.uniform()])
        reward = np.inf if self.t == self.nan_reward_at else 1.0
        return obs, reward, self.t >= self.length, False, {}


for env_id, kwargs in {"test/Counter-v0": {}, "test/Short-v0": {"length": 5},
                       "test/NanObs-v0": {"nan_at": 3},
                       "test/NanReward-v0": {"nan_reward_at": 4}}.items():
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=Counter,  # type: ignore[arg-type]
                     kwargs=kwargs, disable_env_checker=True)
