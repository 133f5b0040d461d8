"""The CNN, written once (`IArrayBrain`): image geometry layer by layer, where each kernel sits
in the genome, and the forward pass over rows. The lone brain, the batch and the JAX form are
the core's, derived from these functions.

Every convolution is one gather and one stacked matrix product: `patch_index` gives, per layer,
which pixels of the flattened (H*W*C) input each output position reads (positions x k*k*C, a
patch ordered by row, column, channel), so `take(x, index, axis=1)` copies every row's patches
side by side (im2col) in numpy and `jax.numpy` alike, and one `matmul` of (rows, positions,
k*k*C) with each row's own (rows, k*k*C, features) kernels gives every output pixel of every
feature map. Max-pooling combines strided slices. No Python loop runs over pixels or rows.

The index is computed once per geometry and kept in this module's cache, writeable, rather than
on the (frozen, so read-only) template: numpy's `take` copies read-only indices at every call
(830 kB for a 64x64x3 frame: the step took 2.7x as long), and `x[:, index]`, which does not,
made the step about 15 % slower than `sliding_window_view`'s copy did; `take` with a writeable
index copies the patches in about half that copy's time. Nothing writes into the index.

Genome layout: every layer's kernels (features x channels x k x k, row-major: PyTorch's
`Conv2d.weight` layout) layer by layer, then every layer's biases (when `use_bias`), then the
readout's weights (outputs x features, row-major) and its biases (when `use_bias`). With the
predecessor's layers, no biases and no readout, a 64x64x3 frame needs 5*3*3*3 + 5*5*5*5 = 760
genes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from brain_cnn.config import CNNConfig
from evo_core import ArrayBrainTemplate, BrainConfig, activation, rows_matvec

__all__ = ["CNNTemplate", "image_shape", "feature_shape", "patch_index", "max_pool"]


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


@functools.lru_cache(maxsize=64)
def patch_index(shape: tuple[int, int, int], size: int, stride: int) -> NDArray[np.intp]:
    """For an (H, W, C) map flattened row-major, the flat position of every pixel of every
    `size` x `size` patch `stride` pixels apart: (output positions, size*size*C), the output
    positions row by row, each patch by row, column, channel (the kernels' order). Cached: one
    array per geometry (of the last 64) in a process, which the caller must not write into."""
    height, width, channels = shape
    rows = np.arange((height - size) // stride + 1) * stride
    cols = np.arange((width - size) // stride + 1) * stride
    offsets = np.arange(size)
    pixel_rows = rows[:, None, None, None] + offsets[None, None, :, None]
    pixel_cols = cols[None, :, None, None] + offsets[None, None, None, :]
    pixels = pixel_rows * width + pixel_cols  # (out rows, out cols, size, size)
    index = pixels[..., None] * channels + np.arange(channels)
    return np.ascontiguousarray(index.reshape(len(rows) * len(cols), -1), dtype=np.intp)


def max_pool(xp: Any, x: Any, size: int, stride: int) -> Any:
    """Max over size x size windows every `stride` pixels of rows x H x W x F maps.

    Separable: the max over the window's rows, then over its columns, each as `size` strided
    slices of the whole array combined with `maximum`. The loop runs over window offsets (at
    most a handful), never over pixels.
    """
    if size == 1 and stride == 1:
        return x
    span_rows = stride * ((x.shape[1] - size) // stride) + 1
    span_cols = stride * ((x.shape[2] - size) // stride) + 1
    by_rows = x[:, 0:span_rows:stride]
    for offset in range(1, size):
        by_rows = xp.maximum(by_rows, x[:, offset:offset + span_rows:stride])
    pooled = by_rows[:, :, 0:span_cols:stride]
    for offset in range(1, size):
        pooled = xp.maximum(pooled, by_rows[:, :, offset:offset + span_cols:stride])
    return pooled


@dataclass(frozen=True)
class _Stage:
    """What every row shares about one layer: its input's shape and its convolution (whose
    `patch_index` it gathers), the shape of its output, its activation and pooling, and the
    names of its parameters."""

    in_shape: tuple[int, int, int]
    size: int
    stride: int
    out_shape: tuple[int, int]
    kernels: str
    bias: str | None
    activate: Callable[[Any, Any], Any]
    pool_size: int
    pool_stride: int


class CNNTemplate(ArrayBrainTemplate[CNNConfig]):
    """Stateless: conv -> activation -> max-pool layer by layer, then the readout."""

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
        shape = self.image_shape
        self.kernel_shapes: list[tuple[int, int, int, int]] = []
        self._stages: list[_Stage] = []
        for number, layer in enumerate(config.layers):
            k, stride = layer.kernel_size, layer.stride
            self.kernel_shapes.append((layer.features, shape[2], k, k))
            out_shape = ((shape[0] - k) // stride + 1, (shape[1] - k) // stride + 1)
            pool_stride = layer.pool_stride or layer.pool_size
            self._stages.append(_Stage(
                shape, k, stride, out_shape, f"kernels{number}",
                f"bias{number}" if config.use_bias else None, activation(layer.activation),
                layer.pool_size, pool_stride))
            shape = ((out_shape[0] - layer.pool_size) // pool_stride + 1,
                     (out_shape[1] - layer.pool_size) // pool_stride + 1, layer.features)
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

    def params(self, xp: Any, genomes: Any) -> dict[str, Any]:
        """`kernels0`, `kernels1`, ... (rows x k*k*C x features: a patch's pixels by row,
        column, channel, as `patch_index` lays them), `bias0`, ... (rows x features), and the
        readout's `weight` (rows x outputs x features) and `bias` (rows x outputs)."""
        count = genomes.shape[0]
        params: dict[str, Any] = {}
        position = 0
        for number, (features, channels, k, _) in enumerate(self.kernel_shapes):
            size = features * channels * k * k
            params[f"kernels{number}"] = genomes[:, position:position + size].reshape(
                count, features, channels, k, k).transpose(0, 3, 4, 2, 1).reshape(
                count, k * k * channels, features)
            position += size
        if self.config.use_bias:
            for number, (features, _, _, _) in enumerate(self.kernel_shapes):
                params[f"bias{number}"] = genomes[:, position:position + features]
                position += features
        if self.readout_shape is not None:
            outputs, inputs = self.readout_shape
            params["weight"] = genomes[:, position:position + outputs * inputs].reshape(
                count, outputs, inputs)
            position += outputs * inputs
            if self.config.use_bias:
                params["bias"] = genomes[:, position:position + outputs]
        return params

    def features(self, xp: Any, params: dict[str, Any], images: Any) -> Any:
        """The flattened feature maps of every row's image (rows x H*W*C, `input_scale`
        applied) as rows x features, channel-major (feature map by feature map, each row by
        row), as the predecessor's NCHW flatten gave them."""
        x, count = images, images.shape[0]
        for stage in self._stages:
            index = patch_index(stage.in_shape, stage.size, stage.stride)
            x = xp.matmul(xp.take(x.reshape(count, -1), index, axis=1), params[stage.kernels])
            if stage.bias is not None:
                x = x + params[stage.bias][:, None, :]
            x = stage.activate(xp, x).reshape(count, *stage.out_shape, -1)
            x = max_pool(xp, x, stage.pool_size, stage.pool_stride)
        return x.transpose(0, 3, 1, 2).reshape(count, -1)

    def network(self, xp: Any, params: dict[str, Any], inputs: Any) -> tuple[Any, Any]:
        """(the features, the outputs) of the encoded inputs: uint8 pixels scaled, the feature
        maps, then the tanh of the dense readout, or the features themselves as outputs."""
        features = self.features(
            xp, params, inputs * self.input_scale if self.input_scale != 1.0 else inputs)
        if self.readout_shape is None:
            return features, features
        out = rows_matvec(xp, params["weight"], features)
        if self.config.use_bias:
            out = out + params["bias"]
        return features, xp.tanh(out)

    def forward(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any,
                noise: Any) -> tuple[dict[str, Any], Any]:
        return state, self.network(xp, params, inputs)[1]

    def trace(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any
              ) -> dict[str, Any]:
        """`features` (what a chain's next stage reads) and, with a tanh readout, `output`
        (before decoding), recomputed from the step's inputs, so the step keeps nothing."""
        features, outputs = self.network(xp, params, inputs)
        if self.readout_shape is None:
            return {"features": features}
        return {"features": features, "output": outputs}
