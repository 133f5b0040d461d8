"""`evo/Procgen-v0`: a procgen game (procgen-gym, the Gymnasium port of OpenAI's procgen) as
the predecessor played it: one level per episode, frames resized and scaled to [0, 1].

procgen-gym's own ids (`procgen_gym/procgen-heist-v0`) draw a level from `num_levels` at
construction and ignore `reset(seed=...)`; its `reset()` does not even restart an episode (the
C library restarts by itself when a game ends). An evaluation that must replay the same level
for the same seed therefore needs the environment made anew per episode, which is what the
predecessor did and what this class does:

- `reset(seed=s)` makes the game at level `s` (procgen's `num_levels=1, start_level=s`);
  `reset()` without a seed makes it at the next level. (The predecessor's `seed(s)` followed by
  `reset()` played level `s + 1`: the same levels, shifted by one.)
- The 64x64x3 uint8 frame is resized to `screen_size` (OpenCV's area interpolation, as the
  predecessor did; no resize at 64) and scaled to float32 in [0, 1] (the predecessor: float16).
- Every other keyword (`distribution_mode`, `use_backgrounds`, `restrict_themes`,
  `use_monochrome_assets`, `center_agent`, ...) is procgen-gym's, passed on unchanged.

Making a game costs milliseconds in the "easy" and "hard" modes and up to a second in the
"memory" mode (its large mazes) on a loaded machine, once per episode.

procgen-gym installs on Python >= 3.13 only: `pip install 'evo-core[procgen]'` there. Without
it, making the environment raises gymnasium's DependencyNotInstalled, which `make_environment`
turns into the one-line missing-extra error.
"""

from __future__ import annotations

import importlib
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

__all__ = ["GAMES", "PROCGEN", "ProcgenLevels", "register"]

PROCGEN = "evo/Procgen-v0"
#: procgen's 16 games (procgen-gym's ENV_NAMES), known here so that a config can be checked
#: and migrated without procgen-gym installed
GAMES = ("bigfish", "bossfight", "caveflyer", "chaser", "climber", "coinrun", "dodgeball",
         "fruitbot", "heist", "jumper", "leaper", "maze", "miner", "ninja", "plunder",
         "starpilot")
NATIVE = 64
#: seeds are levels; procgen takes a 31-bit start level
LEVELS = 2**31

Frame = NDArray[np.float32]


def _procgen_env_class() -> Any:
    try:
        module = importlib.import_module("procgen_gym")
    except ImportError as exc:
        raise gym.error.DependencyNotInstalled(f"cannot import procgen_gym: {exc}") from None
    return module.ProcgenEnv


class ProcgenLevels(gym.Env[Frame, np.int64]):
    """One procgen game, made anew at a level for every episode (module docstring)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 15}  # noqa: RUF012 - gymnasium's

    def __init__(self, game: str = "coinrun", screen_size: int = NATIVE,
                 render_mode: str | None = None, **procgen: Any) -> None:
        if game not in GAMES:
            raise ValueError(f"unknown procgen game {game!r}; one of {', '.join(GAMES)}")
        if not isinstance(screen_size, int) or screen_size < 1:
            raise ValueError(f"screen_size must be a whole number of pixels >= 1, "
                             f"got {screen_size!r}")
        self._make = _procgen_env_class()
        self.game = game
        self.screen_size = screen_size
        self.render_mode = render_mode
        self._procgen = procgen
        self.level = 0
        self._env = self._made(0)
        self.action_space = self._env.action_space
        self.observation_space = gym.spaces.Box(0.0, 1.0, (screen_size, screen_size, 3),
                                                np.float32)

    def _made(self, level: int) -> Any:
        self.level = level % LEVELS
        return self._make(env_name=self.game, num_levels=1, start_level=self.level,
                          render_mode=self.render_mode, **self._procgen)

    def _frame(self, observation: Any) -> Frame:
        frame = np.asarray(observation)
        if self.screen_size != NATIVE:
            import cv2  # procgen-gym depends on it (gymnasium[other])

            frame = cv2.resize(frame, (self.screen_size, self.screen_size),
                               interpolation=cv2.INTER_AREA)
        scaled: Frame = frame.astype(np.float32) / np.float32(255.0)
        return scaled

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[Frame, dict[str, Any]]:
        super().reset(seed=seed)
        level = seed if seed is not None else self.level + 1
        self._env.close()
        self._env = self._made(level)
        observation, info = self._env.reset()
        return self._frame(observation), dict(info, level=self.level)

    def step(self, action: np.int64) -> tuple[Frame, SupportsFloat, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self._env.step(int(action))
        return self._frame(observation), reward, terminated, truncated, info

    def render(self) -> Any:
        return self._env.render()

    def close(self) -> None:
        self._env.close()
        super().close()


def register() -> None:
    if PROCGEN not in gym.registry:
        gym.register(PROCGEN, entry_point=f"{__name__}:ProcgenLevels")
