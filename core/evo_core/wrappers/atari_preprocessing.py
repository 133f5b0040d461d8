"""`atari-preprocessing`: gymnasium's own `AtariPreprocessing`, configured from a table.

Built on gymnasium's wrapper rather than a copy of it, so its behaviour (no-op starts, frame
skipping with max-pooling of the last two frames, resizing, grey scale) is gymnasium's, tested
there. The fields carry its parameter names and defaults.
"""

from __future__ import annotations

import importlib.util
from typing import Any, ClassVar, Literal

import gymnasium as gym
from gymnasium.wrappers import AtariPreprocessing
from pydantic import Field

from evo_core.contract.config_models import WrapperConfig

__all__ = ["AtariPreprocessingConfig", "AtariPreprocessingWrapper"]


class AtariPreprocessingConfig(WrapperConfig):
    """Atari preprocessing (gymnasium's AtariPreprocessing): no-op starts, frame skip, resize."""

    type: Literal["atari-preprocessing"] = "atari-preprocessing"
    noop_max: int = Field(30, ge=0, description="At most this many no-op actions after a reset "
                          "(a random number of them, from the environment's seed); 0: none.")
    frame_skip: int = Field(4, ge=1, description="Frames per step (the action repeats; the "
                            "observation is the maximum of the last two frames). Above 1 the "
                            "environment must not skip frames itself: kwargs.frameskip = 1.")
    screen_size: int = Field(84, ge=1, description="Side of the square observation in pixels.")
    terminal_on_life_loss: bool = Field(
        False, description="End the episode when a life is lost.")
    grayscale_obs: bool = Field(True, description="Grey-scale observations; false: RGB.")
    grayscale_newaxis: bool = Field(
        False, description="Give grey-scale observations a channel axis of size 1.")
    scale_obs: bool = Field(False, description="Observations as floats in [0, 1] instead of "
                            "uint8 in [0, 255].")


class AtariPreprocessingWrapper(AtariPreprocessing):
    """gymnasium's AtariPreprocessing with its parameters taken from the config table."""

    config_model: ClassVar[type[WrapperConfig]] = AtariPreprocessingConfig

    def __init__(self, config: AtariPreprocessingConfig, env: gym.Env[Any, Any]) -> None:
        if importlib.util.find_spec("cv2") is None:  # gymnasium's message names its own extra
            raise gym.error.DependencyNotInstalled(
                "atari-preprocessing resizes frames with OpenCV, which is not installed: "
                "pip install 'evo-core[atari]'")
        # recorded first, so that `env.spec` names this class with the arguments it takes
        gym.utils.RecordConstructorArgs.__init__(self, config=config)
        super().__init__(env, noop_max=config.noop_max, frame_skip=config.frame_skip,
                         screen_size=config.screen_size,
                         terminal_on_life_loss=config.terminal_on_life_loss,
                         grayscale_obs=config.grayscale_obs,
                         grayscale_newaxis=config.grayscale_newaxis, scale_obs=config.scale_obs)
