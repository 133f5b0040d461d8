"""`evo/Reverse-v0` and `evo/ReverseShaped-v0`: the algorithmic "Reverse" task that gym once
shipped (and removed), rebuilt as a gymnasium environment so that the predecessor's experiments on
it run again.

The rules, as gym's algorithmic environments documented them:

- An input tape holds `length` random symbols from `0 .. base-1`. The agent sees one symbol at a
  time, the one under its read head (observation `Discrete(base + 1)`; `base` is the blank seen
  when the head is off the tape). The read head starts on the first symbol.
- Every step the agent chooses `(move, write, symbol)`, the action space
  `Tuple(Discrete(2), Discrete(2), Discrete(base))`: move the read head left (0) or right (1)
  after this step, whether to write (1) or not (0), and the symbol to write. The target is the
  input reversed; the write head starts at the target's first place and advances on every write.
- Rewards: +1 for a correct symbol; a wrong symbol gives -0.5 and ends the episode (terminated);
  writing the whole target ends it too (terminated). A step beyond `2 * length + 4` steps gives -1
  instead and ends the episode (truncated). Every other step gives 0.
- Curriculum: `length` is `min_length` plus 0, 1 or 2 drawn from the environment's seeded
  `np_random`. At every reset after an episode, that episode's shortfall (its return minus the
  target's length) joins a window of the last `last` shortfalls; once the window is full and its
  worst shortfall is at least `promotion_shortfall`, `min_length` grows by one (up to
  `max_min_length`) and the window empties. gym's Reverse-v0 used `base=2`, `min_length=1`,
  `last=50`, `promotion_shortfall=-0.1`, 30 as the ceiling; those are the defaults here. The
  curriculum lives in the environment object, so it advances across the episodes one process runs
  (evo reuses one environment per evaluating process), and a seeded reset does not rewind it.
- `chars` only changes how symbols are shown (`render_mode="ansi"`, text, and
  `render_mode="rgb_array"`, frames: `tape_drawing.py`): letters A, B, ... instead of digits,
  as gym's Reverse-v0 showed them. A step has no duration: frames play at 2 a second.

gym's version kept `min_length` on the class (shared by every instance); here it belongs to the
instance, and the first reset does not count a phantom episode.

`evo/ReverseShaped-v0` is Reverse with `last=15`, `min_length=7` and the predecessor's shaping
(`ReverseShaping`): the predecessor's experiments named it ReverseShaped-v0.
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core.environments.drawing import checked_render_mode
from evo_core.environments.tape_drawing import tape_picture

__all__ = ["ReverseEnv", "ReverseShaping", "REVERSE", "REVERSE_SHAPED", "make_reverse_shaped",
           "register"]

REVERSE = "evo/Reverse-v0"
REVERSE_SHAPED = "evo/ReverseShaped-v0"

Action = tuple[int, int, int]

#: The read head's moves, indexed by the first part of the action.
MOVEMENTS = ("left", "right")


class ReverseEnv(gym.Env[np.int64, Any]):
    """Copy the input tape to the output tape in reverse order (rules in the module docstring)."""

    metadata = {"render_modes": ["ansi", "rgb_array"],  # noqa: RUF012 - gymnasium's Env declares metadata a plain class attribute
                "render_fps": 2}

    def __init__(self, base: int = 2, chars: bool = True, min_length: int = 1, last: int = 50,
                 promotion_shortfall: float = -0.1, max_min_length: int = 30,
                 render_mode: str | None = None) -> None:
        if base < 1 or min_length < 1 or last < 1:
            raise ValueError("base, min_length and last must be at least 1")
        self.base = base
        self.min_length = min_length
        self.last = last
        self.promotion_shortfall = promotion_shortfall
        self.max_min_length = max(max_min_length, min_length)
        self.render_mode = checked_render_mode(self.metadata, render_mode)
        self.charmap = [chr(ord("A") + i) if chars else str(i) for i in range(base)] + [" "]
        self.observation_space = gym.spaces.Discrete(base + 1)
        self.action_space = gym.spaces.Tuple(
            (gym.spaces.Discrete(len(MOVEMENTS)), gym.spaces.Discrete(2),
             gym.spaces.Discrete(base)))
        self.shortfalls: list[float] = []
        self.input_data: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.target: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.read_head_position = 0
        self.write_head_position = 0
        self.time = 0
        self.episode_total_reward = 0.0
        self.episode_started = False
        self.last_action: Action | None = None

    @property
    def time_limit(self) -> int:
        """Steps allowed before the -1 time-out: gym's "fairly conservative" limit."""
        return len(self.input_data) + len(self.target) + 4

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.int64, dict[str, Any]]:
        super().reset(seed=seed)
        if self.episode_started:
            self._check_level_up()
        length = self.min_length + int(self.np_random.integers(3))
        self.input_data = self.np_random.integers(self.base, size=length, dtype=np.int64)
        self.target = self.input_data[::-1].copy()
        self.read_head_position = 0
        self.write_head_position = 0
        self.time = 0
        self.episode_total_reward = 0.0
        self.episode_started = False
        self.last_action = None
        return self._observation(), {"length": length}

    def _check_level_up(self) -> None:
        self.shortfalls.append(self.episode_total_reward - len(self.target))
        self.shortfalls = self.shortfalls[-self.last:]
        if (len(self.shortfalls) == self.last
                and min(self.shortfalls) >= self.promotion_shortfall
                and self.min_length < self.max_min_length):
            self.min_length += 1
            self.shortfalls = []

    def step(self, action: Any) -> tuple[np.int64, SupportsFloat, bool, bool, dict[str, Any]]:
        move, write, symbol = (int(part) for part in action)
        if not (0 <= move < len(MOVEMENTS) and write in (0, 1) and 0 <= symbol < self.base):
            raise ValueError(f"action {action!r} is not in {self.action_space}")
        self.last_action = (move, write, symbol)
        self.episode_started = True
        self.time += 1
        reward, terminated, truncated = 0.0, False, False
        if write == 1:
            position = self.write_head_position
            if position < len(self.target) and symbol == self.target[position]:
                reward = 1.0
            else:
                reward, terminated = -0.5, True
            self.write_head_position += 1
            if self.write_head_position >= len(self.target):
                terminated = True
        self.read_head_position += 1 if MOVEMENTS[move] == "right" else -1
        if self.time > self.time_limit:
            reward, truncated = -1.0, True
        self.episode_total_reward += reward
        return self._observation(), reward, terminated, truncated, {}

    def _observation(self) -> np.int64:
        position = self.read_head_position
        if 0 <= position < len(self.input_data):
            return np.int64(self.input_data[position])
        return np.int64(self.base)

    def render(self) -> Any:
        """Text (`render_mode="ansi"`) or a frame (`"rgb_array"`, `tape_drawing.py`)."""
        if self.render_mode == "rgb_array":
            return self._picture()
        if self.render_mode != "ansi":
            return None
        tape = "".join(self.charmap[self.input_data[i]] if 0 <= i < len(self.input_data) else " "
                       for i in range(-2, len(self.input_data) + 2))
        head = " " * (self.read_head_position + 2) + "^"
        written = "".join(self.charmap[s] for s in self.target[:self.write_head_position])
        target = "".join(self.charmap[s] for s in self.target)
        return (f"step {self.time}, return {self.episode_total_reward:g}\n"
                f"input  : {tape}\n         {head}\n"
                f"target : {target}\nwritten: {written}\n")


    def _picture(self) -> NDArray[np.uint8]:
        written = self.target[:self.write_head_position].tolist()
        action = "none yet"
        if self.last_action is not None:
            move, write, symbol = self.last_action
            if write and written:  # every write before the last was right (a wrong one ends)
                written[-1] = symbol
            action = (f"move {MOVEMENTS[move]}, "
                      + (f"write {self.charmap[symbol]}" if write else "no write"))
        return tape_picture(self.charmap, self.input_data.tolist(), self.read_head_position,
                            self.target.tolist(), written, action)


class ReverseShaping(gym.Wrapper[np.int64, Any, np.int64, Any]):
    """The predecessor's shaping: the last step of a failed episode (a negative reward) costs
    the distance of the read head from where it should be, |len(target) - read head - write
    head| (after the step), and 1 more unless that step moved the read head left. Reversing
    means reading right to left, so this rewards agents for learning where to read before
    they learn what to write."""

    def step(self, action: Any) -> tuple[np.int64, SupportsFloat, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        reward = float(reward)
        if (terminated or truncated) and reward < 0:
            task = self.env.unwrapped
            assert isinstance(task, ReverseEnv)
            reward -= abs(len(task.target) - task.read_head_position - task.write_head_position)
            if MOVEMENTS[int(action[0])] != "left":
                reward -= 1.0
        return observation, reward, terminated, truncated, info


def make_reverse_shaped(**kwargs: Any) -> gym.Env[np.int64, Any]:
    options: dict[str, Any] = {"last": 15, "min_length": 7}
    options.update(kwargs)
    return ReverseShaping(ReverseEnv(**options))


def register() -> None:
    if REVERSE not in gym.registry:
        gym.register(REVERSE, entry_point=f"{__name__}:ReverseEnv")
    if REVERSE_SHAPED not in gym.registry:
        gym.register(REVERSE_SHAPED, entry_point=f"{__name__}:make_reverse_shaped")
