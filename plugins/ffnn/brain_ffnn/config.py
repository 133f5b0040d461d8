"""The `[brain]` table of a feed-forward network."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from evo_core import BrainConfig

__all__ = ["FFNNConfig"]


class FFNNConfig(BrainConfig):
    """Feed-forward network: hidden layers of relu or tanh units, optional biases."""

    type: Literal["ffnn"] = "ffnn"
    hidden_layers: list[Annotated[int, Field(ge=1)]] = Field(
        default_factory=lambda: [16], description="Sizes of the hidden layers; [] for a linear "
        "map from inputs to outputs.")
    non_linearity: Literal["relu", "tanh"] = Field("tanh", description="Hidden activation.")
    output_activation: Literal["relu", "tanh", "linear"] | None = Field(
        None, description="Activation of the output layer; unset: the same as non_linearity "
        "(the predecessor's behaviour).")
    use_bias: bool = Field(True, description="A bias vector per layer.")
