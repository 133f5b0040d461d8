"""`evo/ReacherMemoryDynamic-v0`: `evo/ReacherMemory-v0` whose remember phase grows as the agents
get better, a curriculum in the manner of gym's algorithmic tasks.

- Every reset draws the remember phase's length: `memory_frames_min` plus 0, 1 or 2, from the
  environment's own `np_random` (so `reset(seed=...)` makes the draw repeatable).
  `memory_frames_min` starts at the `memory_frames` keyword.
- Promotion: at every reset after an episode that reached its end, that episode's return joins a
  window of the last `last` returns (600). An episode is "bad" when its return is below
  `bad_return` (-7.5). Once the window is full and holds fewer than `max_bad` bad episodes (195),
  `memory_frames_min` grows by one, up to `memory_frames_max` (20), and the window empties.
  These are the predecessor's values; with its usual `memory_frames` of 20 the minimum is already
  at the ceiling, so start lower (or raise `memory_frames_max`) for the curriculum to act.

The curriculum is state of the environment object. evo keeps one environment per evaluating
process, so the curriculum advances over every episode that process runs, across candidates and
generations, and a seeded reset does not rewind it (as in the predecessor); with several worker
processes each has its own curriculum. Episodes cut short by `episodes.max_steps` do not count.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from evo_core.environments.reacher_memory import Observation, ReacherMemory, make_reacher

__all__ = ["ReacherMemoryDynamic", "REACHER_MEMORY_DYNAMIC", "make_reacher_memory_dynamic",
           "register"]

REACHER_MEMORY_DYNAMIC = "evo/ReacherMemoryDynamic-v0"


class ReacherMemoryDynamic(ReacherMemory):
    """ReacherMemory with the remember phase drawn per episode and promoted (module docstring)."""

    def __init__(self, env: gym.Env[Observation, Observation], observation_frames: int,
                 memory_frames: int, action_frames: int, last: int = 600, max_bad: int = 195,
                 bad_return: float = -7.5, memory_frames_max: int = 20) -> None:
        super().__init__(env, observation_frames, memory_frames, action_frames)
        if last < 1:
            raise ValueError(f"last must be at least 1, got {last}")
        self.memory_frames_min = memory_frames
        self.memory_frames_max = max(memory_frames_max, memory_frames)
        self.last = last
        self.max_bad = max_bad
        self.bad_return = bad_return
        self.returns: list[float] = []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[Observation, dict[str, Any]]:
        if self.t >= self.episode_length:  # the previous episode ran to its end
            self._check_promotion(self.episode_return)
        observation, info = super().reset(seed=seed, options=options)
        self.memory_frames = self.memory_frames_min + int(self.np_random.integers(3))
        info["memory_frames"] = self.memory_frames
        return observation, info

    def _check_promotion(self, episode_return: float) -> None:
        self.returns.append(episode_return)
        self.returns = self.returns[-self.last:]
        bad = sum(value < self.bad_return for value in self.returns)
        if (len(self.returns) == self.last and bad < self.max_bad
                and self.memory_frames_min < self.memory_frames_max):
            self.memory_frames_min += 1
            self.returns = []


def make_reacher_memory_dynamic(observation_frames: int = 20, memory_frames: int = 20,
                            action_frames: int = 50, last: int = 600, max_bad: int = 195,
                            bad_return: float = -7.5, memory_frames_max: int = 20,
                            **reacher: Any) -> gym.Env[Observation, Observation]:
    return ReacherMemoryDynamic(make_reacher(**reacher), observation_frames, memory_frames,
                                action_frames, last=last, max_bad=max_bad,
                                bad_return=bad_return, memory_frames_max=memory_frames_max)


def register() -> None:
    if REACHER_MEMORY_DYNAMIC not in gym.registry:
        gym.register(REACHER_MEMORY_DYNAMIC,
                     entry_point=f"{__name__}:make_reacher_memory_dynamic")
