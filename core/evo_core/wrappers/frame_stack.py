"""`frame-stack`: gymnasium's `FrameStackObservation`, configured from a table.

A feed-forward brain sees motion only in a stack of the last frames; gymnasium's wrapper pads
the stack with the first observation after a reset.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import gymnasium as gym
from gymnasium.wrappers import FrameStackObservation
from pydantic import Field

from evo_core.contract.config_models import WrapperConfig

__all__ = ["FrameStackConfig", "FrameStackWrapper"]


class FrameStackConfig(WrapperConfig):
    """Observations stacked over the last steps (gymnasium's FrameStackObservation)."""

    type: Literal["frame-stack"] = "frame-stack"
    stack_size: int = Field(..., ge=1, description="Observations in the stack: the newest last, "
                            "along a new first axis.")


class FrameStackWrapper(FrameStackObservation[Any, Any, Any]):
    """gymnasium's FrameStackObservation with its stack size taken from the config table."""

    config_model: ClassVar[type[WrapperConfig]] = FrameStackConfig

    def __init__(self, config: FrameStackConfig, env: gym.Env[Any, Any]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, config=config)
        super().__init__(env, config.stack_size, padding_type="reset")
