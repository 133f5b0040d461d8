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

Frames (`render_mode="rgb_array"`, 50 a second, Reacher-v5's own rate): MuJoCo's picture
always shows the target, so a banner above it says what the brain is told: the phase and its
step, whether the observation shows the target, whether the arm moves, and a time line of the
three phases with the episode's place on it.

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

from evo_core.environments.drawing import Colour, Sketch, View

__all__ = ["ReacherMemory", "TARGET_ENTRIES", "REACHER_MEMORY", "make_reacher",
           "make_reacher_memory", "register"]

REACHER_MEMORY = "evo/ReacherMemory-v0"

#: Reacher-v5 observation entries that tell where the target is.
TARGET_ENTRIES = (4, 5, 8, 9)

Observation = NDArray[np.float64]

#: the banner's height in pixels, and each phase's colour on its time line
BANNER = 46
PHASE_COLOURS: dict[str, Colour] = {"observe": (90, 170, 90), "remember": (230, 170, 50),
                                    "act": (80, 120, 210)}


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


    def observation_labels(self) -> tuple[str, ...]:
        """IObservationLabels: Reacher-v5's observation (the target's entries are 0 once
        hidden)."""
        return ("cos q\u2081", "cos q\u2082", "sin q\u2081", "sin q\u2082", "target x m",
                "target y m", "\u03c9\u2081 rad/s", "\u03c9\u2082 rad/s", "tip\u2212target x m",
                "tip\u2212target y m")

    def render(self) -> Any:
        """Reacher's frame with the banner of the module docstring above it (`rgb_array`);
        any other mode's as Reacher renders it."""
        frame = self.env.render()
        if self.env.render_mode != "rgb_array" or frame is None:
            return frame
        picture = np.asarray(frame, dtype=np.uint8)
        return np.concatenate([self._banner(picture.shape[1]), picture], axis=0)

    def _banner(self, width: int) -> NDArray[np.uint8]:
        """The phase of the step just taken (observe at the reset), and what this frame's
        observation shows."""
        taken = self.t
        phase = self.phase(max(0, taken - 1))
        lengths = {"observe": self.observation_frames, "remember": self.memory_frames,
                   "act": self.action_frames}
        before = {"observe": 0, "remember": self.observation_frames,
                  "act": self.observation_frames + self.memory_frames}
        shown = not self.hide_target or taken <= self.observation_frames
        arm = "the brain moves the arm" if phase == "act" else "arm held"
        text = (f"{phase}: step {taken - before[phase]} of {lengths[phase]}   target "
                f"{'shown' if shown else 'hidden'}, {arm}")
        view = View(0.0, 0.0, 1.0, width, BANNER, y_down=True)
        sketch = Sketch(view, Sketch.blank(view))
        sketch.text((8, 14), text, (20, 20, 20), 14, "lm")
        scale = (width - 16) / self.episode_length
        for name, start in before.items():
            left = 8 + start * scale
            right = left + lengths[name] * scale
            sketch.polygon([(left, 30), (right, 30), (right, 40), (left, 40)],
                           PHASE_COLOURS[name])
        mark = 8 + taken * scale
        sketch.polygon([(mark - 1, 26), (mark + 1, 26), (mark + 1, 44), (mark - 1, 44)],
                       (20, 20, 20))
        return sketch.picture()


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
