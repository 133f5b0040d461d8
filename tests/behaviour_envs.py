"""Tiny deterministic environments for behaviour-descriptor tests, made by id as
`behaviour_envs:Counting-v0` (gymnasium imports this module first, in workers too)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np


class CountingEnv(gym.Env[np.ndarray, np.ndarray]):
    """Observation [t, last action]; reward = the action; ends after `length` steps."""

    observation_space = gym.spaces.Box(-np.inf, np.inf, (2,), np.float64)
    action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float64)

    def __init__(self, length: int = 5) -> None:
        self.length = length
        self.t = 0

    def reset(self, *, seed: int | None = None, options: Any = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.t += 1
        value = float(np.asarray(action).reshape(-1)[0])
        return np.array([self.t, value]), value, self.t >= self.length, False, {}


class StatefulCountingEnv(CountingEnv):
    """Offers 10 t as its state (IBehaviourState)."""

    def behaviour_state(self) -> np.ndarray:
        return np.array([10.0 * self.t])


class MinusOneState(gym.Wrapper[np.ndarray, np.ndarray, np.ndarray, np.ndarray]):
    """A wrapper whose state hook overrides the environment's."""

    def behaviour_state(self) -> np.ndarray:
        return np.array([-1.0])


gym.register("Counting-v0", entry_point="behaviour_envs:CountingEnv")
gym.register("StatefulCounting-v0", entry_point="behaviour_envs:StatefulCountingEnv")


class ScriptedBrain:
    """Plays its genome: the action at step t of an episode is [genome[t % len(genome)]]."""

    def __init__(self, genome: np.ndarray) -> None:
        self.genome = genome
        self.t = 0

    def reset(self) -> None:
        self.t = 0

    def step(self, observation: Any) -> np.ndarray:
        action = np.array([self.genome[self.t % len(self.genome)]])
        self.t += 1
        return action


class ScriptedTemplate:
    """A template of scripted brains (picklable, for the handlers)."""

    def __init__(self, size: int) -> None:
        self.size = size

    @property
    def genome_size(self) -> int:
        return self.size

    def make(self, genome: np.ndarray) -> ScriptedBrain:
        return ScriptedBrain(genome)
