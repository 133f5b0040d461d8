"""`qbert-hard`: Qbert without the rewards that do not come from colouring the pyramid.

Luring an enemy off the pyramid (500 points, 525 with the cube it lands on) and catching a
fruit (300, 325) pay so much that evolved agents learn those tricks instead of the game. The
filter sees single frames: a frame's reward is one of these sums only when frames are not
skipped, so the environment must be made with `kwargs.frameskip = 1`, and frame skipping left to
`atari-preprocessing` listed after this wrapper.
"""

from __future__ import annotations

import importlib
from typing import Any, ClassVar, Literal, SupportsFloat

import gymnasium as gym
from gymnasium.wrappers import AtariPreprocessing

from evo_core.contract.config_models import WrapperConfig

__all__ = ["FILTERED_REWARDS", "QbertHardConfig", "QbertHard"]

#: a frame's reward that becomes 0: enemy lured off (500, 525) and fruit (300, 325)
FILTERED_REWARDS = frozenset({500.0, 525.0, 300.0, 325.0})


class QbertHardConfig(WrapperConfig):
    """Qbert's rewards for luring enemies off and for fruit set to 0 (needs frameskip = 1)."""

    type: Literal["qbert-hard"] = "qbert-hard"


class QbertHard(gym.RewardWrapper[Any, Any], gym.utils.RecordConstructorArgs):
    """A frame's reward of 500, 525, 300 or 325 becomes 0; every other reward is kept."""

    config_model: ClassVar[type[WrapperConfig]] = QbertHardConfig

    def __init__(self, config: QbertHardConfig, env: gym.Env[Any, Any]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, config=config)
        super().__init__(env)
        try:
            atari_env = importlib.import_module("ale_py").AtariEnv
        except ImportError as exc:
            raise gym.error.DependencyNotInstalled(
                f"qbert-hard needs ale-py ({exc}): pip install 'evo-core[atari]'") from None
        game = env.unwrapped
        if not isinstance(game, atari_env) or game._game != "qbert":
            raise ValueError("qbert-hard filters Qbert's rewards; use it with ALE/Qbert-v5")
        if game._frameskip != 1:
            raise ValueError("qbert-hard filters the rewards of single frames, but the "
                             f"environment skips {game._frameskip!r} frames per step; set "
                             "kwargs.frameskip = 1 and skip frames with atari-preprocessing "
                             "after this wrapper")
        inner: gym.Env[Any, Any] = env
        while isinstance(inner, gym.Wrapper):
            if isinstance(inner, AtariPreprocessing) and inner.frame_skip != 1:
                raise ValueError("qbert-hard filters the rewards of single frames, but "
                                 "atari-preprocessing before it in the list skips frames; "
                                 "list qbert-hard first")
            inner = inner.env

    def reward(self, reward: SupportsFloat) -> SupportsFloat:
        return 0.0 if float(reward) in FILTERED_REWARDS else reward
