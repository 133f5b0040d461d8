"""`evo/ReacherMemory-v0`: gymnasium's MuJoCo `Reacher-v5` as a memory task.

An episode has three phases, counted in steps (`t` = steps taken before this one, from 0):

- observe, `t < observation_frames`: the target is visible; the arm does not move (the action is
  replaced by zeros) and the reward is 0;
- remember, the next `memory_frames` steps: the target is hidden, the arm still does not move,
  the reward is still 0;
- act, the last `action_frames` steps: the target stays hidden; the agent's action moves the arm
  and Reacher's own reward (minus distance, minus control cost) counts.

The episode ends (truncated) after exactly `observation_frames + memory_frames + action_frames`
steps. "Hidden" means that the observation entries about the target are 0 in every observation
produced by a step of the remember or act phase: in Reacher-v5's 10-entry observation these are
4, 5 (the target's position) and 8, 9 (fingertip minus target). The observation from `reset` and
those of the observe steps show them; so to score, a brain must remember where the target was.
With `hide_target = False` nothing is hidden: the same phases, fully observed, give the upper
bound a memory can at best reach (the task's score is measured between that bound and holding
the arm still).

Fixed with respect to the predecessor's version (on Reacher-v2): it zeroed the action also on the
first step of the act phase although that step was rewarded, and ended the episode one step late
(O + M + A + 1 steps). Its registration cut episodes at 90 steps, which, with its usual 20/20/50
phases, removed exactly that extra step. Here the phases alone decide the length (no other step
limit is registered), so every one of the `action_frames` rewarded steps applies the agent's
action and longer phases are not cut short; with 20/20/50 both versions have 90 steps and 50
rewarded ones. Reacher-v5 itself differs from v2: its observation drops v2's always-zero 11th
entry, and its distance reward is taken after the physics step instead of before it.
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

__all__ = ["ReacherMemory", "TARGET_ENTRIES", "REACHER_MEMORY", "make_reacher",
           "make_reacher_memory", "register"]

REACHER_MEMORY = "evo/ReacherMemory-v0"

#: Reacher-v5 observation entries that tell where the target is.
TARGET_ENTRIES = (4, 5, 8, 9)

Observation = NDArray[np.float64]


def make_reacher(**kwargs: Any) -> gym.Env[Observation, Observation]:
    """Reacher-v5 itself, without the 50-step limit `gym.make` would add (the phases decide the
    length); imported here so that a missing MuJoCo is gymnasium's DependencyNotInstalled."""
    from gymnasium.envs.mujoco.reacher_v5 import ReacherEnv

    env: gym.Env[Observation, Observation] = ReacherEnv(**kwargs)
    return env


class ReacherMemory(gym.Wrapper[Observation, Observation, Observation, Observation]):
    """The three phases around a Reacher-v5 (see the module docstring)."""

    def __init__(self, env: gym.Env[Observation, Observation], observation_frames: int,
                 memory_frames: int, action_frames: int, hide_target: bool = True) -> None:
        super().__init__(env)
        for name, value in (("observation_frames", observation_frames),
                            ("memory_frames", memory_frames), ("action_frames", action_frames)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        box = env.observation_space
        if not isinstance(box, gym.spaces.Box) or box.shape != (10,):
            raise ValueError("ReacherMemory needs Reacher-v5's 10-entry observation")
        if not isinstance(hide_target, bool):
            raise ValueError(f"hide_target must be true or false, got {hide_target!r}")
        self.hide_target = hide_target
        self.observation_frames = observation_frames
        self.memory_frames = memory_frames
        self.action_frames = action_frames
        self.t = 0
        self.episode_return = 0.0
        actions = env.action_space
        if not isinstance(actions, gym.spaces.Box):
            raise ValueError("ReacherMemory needs Reacher-v5's Box action space")
        self.zero_action: Observation = np.zeros(actions.shape, dtype=np.float64)

    @property
    def episode_length(self) -> int:
        return self.observation_frames + self.memory_frames + self.action_frames

    def phase(self, t: int) -> str:
        """"observe", "remember" or "act": the phase of step `t` (counted from 0)."""
        if t < self.observation_frames:
            return "observe"
        return "remember" if t < self.observation_frames + self.memory_frames else "act"

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[Observation, dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        self.t = 0
        self.episode_return = 0.0
        return observation, info

    def step(self, action: Observation
             ) -> tuple[Observation, SupportsFloat, bool, bool, dict[str, Any]]:
        phase = self.phase(self.t)
        acting = phase == "act"
        observation, reward, terminated, truncated, info = self.env.step(
            action if acting else self.zero_action)
        if self.hide_target and self.t >= self.observation_frames:
            observation = np.array(observation, dtype=np.float64)
            observation[list(TARGET_ENTRIES)] = 0.0
        reward = float(reward) if acting else 0.0
        self.t += 1
        self.episode_return += reward
        info["phase"] = phase
        return (observation, reward, terminated,
                truncated or self.t >= self.episode_length, info)


def make_reacher_memory(observation_frames: int = 20, memory_frames: int = 20,
                    action_frames: int = 50, hide_target: bool = True,
                    **reacher: Any) -> gym.Env[Observation, Observation]:
    """The entry point; the defaults are the predecessor's experiment's phases, and other
    keywords go to Reacher-v5 (`render_mode`, `frame_skip`, reward weights...)."""
    return ReacherMemory(make_reacher(**reacher), observation_frames, memory_frames,
                         action_frames, hide_target)


def register() -> None:
    if REACHER_MEMORY not in gym.registry:
        gym.register(REACHER_MEMORY, entry_point=f"{__name__}:make_reacher_memory")
