"""The CNN template: image geometry layer by layer, and where each kernel sits in the genome.

Genome layout: every layer's kernels (features x channels x k x k, row-major: PyTorch's
`Conv2d.weight` layout) layer by layer, then every layer's biases (when `use_bias`), then the
readout's weights (outputs x features, row-major) and its biases (when `use_bias`). With the
predecessor's layers, no biases and no readout, a 64x64x3 frame needs 5*3*3*3 + 5*5*5*5 = 760
genes.
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from brain_cnn.brain import ACTIVATIONS, CNN, ConvLayer
from brain_cnn.config import CNNConfig
from evo_core import BrainConfig, BrainTemplateBase

__all__ = ["CNNTemplate", "image_shape", "feature_shape"]

FloatArray = NDArray[np.float64]


def image_shape(space: gym.Space[Any]) -> tuple[int, int, int]:
    """(H, W, C) of an image observation space; a TypeError for anything else."""
    if isinstance(space, gym.spaces.Box) and len(space.shape) in (2, 3):
        shape = tuple(int(n) for n in space.shape)
        return (shape[0], shape[1], shape[2] if len(shape) == 3 else 1)
    raise TypeError(f"brain cnn needs image observations, a Box of shape (H, W, C) or (H, W); "
                    f"got {space}")


def feature_shape(config: CNNConfig, image: tuple[int, int, int]) -> tuple[int, int, int]:
    """(H, W, F) after the last layer, or a ValueError naming the layer that does not fit."""
    height, width, channels = image
    trail = [f"{height}x{width}x{channels}"]
    for index, layer in enumerate(config.layers):
        for what, size, stride in (("kernel", layer.kernel_size, layer.stride),
                                   ("max-pool", layer.pool_size,
                                    layer.pool_stride or layer.pool_size)):
            if size > min(height, width):
                raise ValueError(
                    f"layers[{index}]: its {size}x{size} {what} does not fit the {height}x{width} "
                    f"maps it gets (sizes so far: {' -> '.join(trail)}); use smaller kernels, "
                    "pools or strides, or fewer layers")
            height, width = (height - size) // stride + 1, (width - size) // stride + 1
            trail.append(f"{height}x{width}")
        channels = layer.features
        trail[-1] += f"x{channels}"
    return height, width, channels


class CNNTemplate(BrainTemplateBase[CNNConfig]):
    """Image geometry and genome layout, computed once per experiment."""

    config_model: ClassVar[type[BrainConfig]] = CNNConfig

    def __init__(self, config: CNNConfig, observation_space: gym.Space[Any],
                 action_space: gym.Space[Any], rng: np.random.Generator) -> None:
        super().__init__(config, observation_space, action_space, rng)
        self.image_shape = image_shape(observation_space)
        height, width, features = feature_shape(config, self.image_shape)
        self.feature_count = height * width * features
        uint8 = isinstance(observation_space, gym.spaces.Box) and \
            observation_space.dtype == np.uint8
        self.input_scale = 1.0 / 255.0 if uint8 and config.scale_uint8 and \
            not config.normalize_input else 1.0
        if config.readout == "none" and not (
                isinstance(action_space, gym.spaces.Box)
                and self.output_size == self.feature_count):
            raise ValueError(
                f"readout = 'none' outputs the {self.feature_count} features themselves "
                f"({height}x{width}x{features} from {'x'.join(map(str, self.image_shape))} "
                f"images), but the action space is {action_space}; make it a Box of "
                f"{self.feature_count} (in a chain: output_size = {self.feature_count}) or use "
                "readout = 'tanh'")
        channels = self.image_shape[2]
        self.kernel_shapes: list[tuple[int, int, int, int]] = []
        for layer in config.layers:
            self.kernel_shapes.append((layer.features, channels, layer.kernel_size,
                                       layer.kernel_size))
            channels = layer.features
        self.readout_shape = (self.output_size, self.feature_count) \
            if config.readout == "tanh" else None
        sizes = [int(np.prod(shape)) for shape in self.kernel_shapes]
        if config.use_bias:
            sizes += [shape[0] for shape in self.kernel_shapes]
        if self.readout_shape is not None:
            sizes.append(self.readout_shape[0] * self.readout_shape[1])
            if config.use_bias:
                sizes.append(self.readout_shape[0])
        self._genome_size = sum(sizes)

    @property
    def genome_size(self) -> int:
        return self._genome_size

    def build(self, genome: FloatArray) -> CNN:
        position = 0

        def take(count: int) -> FloatArray:
            nonlocal position
            part = genome[position:position + count]
            position += count
            return part

        # (F, C, k, k) -> (k*k*C, F): conv2d orders a patch by row, column, channel
        kernels = [np.ascontiguousarray(
                       take(int(np.prod(shape))).reshape(shape).transpose(2, 3, 1, 0)
                       .reshape(-1, shape[0]))
                   for shape in self.kernel_shapes]
        biases = [take(shape[0]).copy() if self.config.use_bias else None
                  for shape in self.kernel_shapes]
        layers = [ConvLayer(kernel, layer.kernel_size, bias, layer.stride,
                            ACTIVATIONS[layer.activation], layer.pool_size,
                            layer.pool_stride or layer.pool_size)
                  for kernel, bias, layer in zip(kernels, biases, self.config.layers)]
        readout = None
        if self.readout_shape is not None:
            rows, cols = self.readout_shape
            weight = take(rows * cols).reshape(rows, cols).copy()
            readout = (weight, take(rows).copy() if self.config.use_bias else None)
        return CNN(layers, readout, self.image_shape, self.input_scale, self.encoder,
                   self.decoder)
