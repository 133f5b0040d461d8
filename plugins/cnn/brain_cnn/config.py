"""The `[brain]` table of a CNN: a list of conv -> activation -> max-pool layers and a readout.

The defaults are the predecessor's CNN_CTRNN front end (3x3 conv to 5 features, relu, 4/2
max-pool; 5x5 conv to 5 features, sigmoid, 4/2 max-pool), so a Qbert frame of 64x64x3 gives
12x12x5 = 720 features from 760 weights.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from evo_core import BrainConfig, StrictModel

__all__ = ["CNNConfig", "ConvLayerConfig", "ConvActivation"]

ConvActivation = Literal["relu", "sigmoid", "tanh", "linear"]


class ConvLayerConfig(StrictModel):
    """One stage: a square convolution without padding, its activation, a square max-pool."""

    features: int = Field(5, ge=1, le=4096, description="Output channels (feature maps).")
    kernel_size: int = Field(3, ge=1, description="Width and height of the convolution kernel.")
    stride: int = Field(1, ge=1, description="Step of the convolution.")
    activation: ConvActivation = Field("relu", description="Applied after the convolution.")
    pool_size: int = Field(
        1, ge=1, description="Width and height of the max-pool window; 1: no pooling.")
    pool_stride: int | None = Field(
        None, ge=1, description="Step of the max-pool; unset: pool_size (windows that do not "
        "overlap).")


def _predecessor_layers() -> list[ConvLayerConfig]:
    return [ConvLayerConfig(features=5, kernel_size=3, activation="relu", pool_size=4,
                            pool_stride=2),
            ConvLayerConfig(features=5, kernel_size=5, activation="sigmoid", pool_size=4,
                            pool_stride=2)]


class CNNConfig(BrainConfig):
    """Convolutional network for images: conv -> activation -> max-pool layers, then a readout."""

    type: Literal["cnn"] = "cnn"
    layers: list[ConvLayerConfig] = Field(
        default_factory=_predecessor_layers, min_length=1,
        description="The conv -> activation -> max-pool stages, input side first.")
    use_bias: bool = Field(
        True, description="A bias per feature map (and per readout output), in the genome. "
        "false: no biases (the predecessor's were random and not evolved; false reproduces "
        "its genome size).")
    readout: Literal["tanh", "none"] = Field(
        "tanh", description="tanh: a dense tanh layer from the flattened features to the "
        "outputs. none: the flattened features (channel-major) are the output, so the action "
        "space must be a Box with exactly that many entries (a chain stage's output_size).")
    scale_uint8: bool = Field(
        True, description="Divide uint8 images by 255 so pixels lie in [0, 1] (the predecessor "
        "fed raw 0..255 values); float images pass unchanged. Ignored with normalize_input.")
