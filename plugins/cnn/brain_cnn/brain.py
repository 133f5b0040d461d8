"""One CNN individual: its kernels and the vectorised forward pass.

Every convolution is one matrix product: `sliding_window_view` lays the k x k x C patches of an
H x W x C image side by side without copying, the reshape to (patches, k*k*C) copies them once
(im2col), and a single matmul with the (k*k*C, features) kernel matrix gives every output pixel
of every feature map. Max-pooling combines strided slices. No Python loop runs over pixels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from numpy.typing import NDArray

__all__ = ["CNN", "ConvLayer", "ACTIVATIONS", "conv2d", "max_pool"]

FloatArray = NDArray[np.float64]


def _relu(x: FloatArray) -> FloatArray:
    return np.maximum(x, 0.0, out=x)


def _sigmoid(x: FloatArray) -> FloatArray:
    # 1 / (1 + e^-x) written with tanh: no overflow warning for large negative x
    np.multiply(x, 0.5, out=x)
    np.tanh(x, out=x)
    x += 1.0
    x *= 0.5
    return x


def _tanh(x: FloatArray) -> FloatArray:
    return np.tanh(x, out=x)


def _linear(x: FloatArray) -> FloatArray:
    return x


ACTIVATIONS: dict[str, Callable[[FloatArray], FloatArray]] = {
    "relu": _relu, "sigmoid": _sigmoid, "tanh": _tanh, "linear": _linear}


def conv2d(image: FloatArray, kernels: FloatArray, size: int, stride: int) -> FloatArray:
    """Valid (unpadded) convolution of an (H, W, C) image with `size` x `size` kernels given as
    a (size*size*C, F) matrix, rows ordered (row, column, channel); returns (H', W', F).

    The window view is transposed so that channels are innermost before the copy: numpy copies
    the patches about twice as fast in that order as in the view's own (C, row, column).
    """
    windows = sliding_window_view(image, (size, size), axis=(0, 1))[::stride, ::stride]
    rows, cols = windows.shape[0], windows.shape[1]
    patches = windows.transpose(0, 1, 3, 4, 2).reshape(rows * cols, -1)  # the copy: im2col
    out: FloatArray = (patches @ kernels).reshape(rows, cols, kernels.shape[1])
    return out


def max_pool(x: FloatArray, size: int, stride: int) -> FloatArray:
    """Max over size x size windows every `stride` pixels of an (H, W, F) array.

    Separable: the max over rows of the window, then over its columns, each as `size` strided
    slices of the whole array combined with `np.maximum`. The loop runs over window offsets
    (at most a handful), never over pixels, and is ~25x faster than reducing a 5-D window view.
    """
    if size == 1 and stride == 1:
        return x
    rows = (x.shape[0] - size) // stride + 1
    cols = (x.shape[1] - size) // stride + 1
    span_rows, span_cols = stride * (rows - 1) + 1, stride * (cols - 1) + 1
    by_rows = x[0:span_rows:stride].copy()
    for offset in range(1, size):
        np.maximum(by_rows, x[offset:offset + span_rows:stride], out=by_rows)
    pooled = by_rows[:, 0:span_cols:stride].copy()
    for offset in range(1, size):
        np.maximum(pooled, by_rows[:, offset:offset + span_cols:stride], out=pooled)
    return pooled


@dataclass(frozen=True)
class ConvLayer:
    """A decoded layer: kernels as a (k*k*C, F) matrix, the bias, and the stage's settings."""

    kernels: FloatArray
    kernel_size: int
    bias: FloatArray | None
    stride: int
    activation: Callable[[FloatArray], FloatArray]
    pool_size: int
    pool_stride: int


class CNN:
    """Stateless: `reset` has nothing to do."""

    def __init__(self, layers: list[ConvLayer],
                 readout: tuple[FloatArray, FloatArray | None] | None,
                 image_shape: tuple[int, int, int], input_scale: float,
                 encode: Callable[[Any], FloatArray], decode: Callable[[FloatArray], Any]) -> None:
        self.layers = layers
        self.readout = readout
        self.image_shape = image_shape
        self.input_scale = input_scale
        self.encode = encode
        self.decode = decode

    def reset(self) -> None:
        pass

    def features(self, image: FloatArray) -> FloatArray:
        """The flattened feature maps, channel-major (feature map by feature map, each row by
        row), as the predecessor's NCHW flatten gave them."""
        x = image
        for layer in self.layers:
            x = conv2d(x, layer.kernels, layer.kernel_size, layer.stride)
            if layer.bias is not None:
                x += layer.bias
            x = max_pool(layer.activation(x), layer.pool_size, layer.pool_stride)
        return np.ascontiguousarray(x.transpose(2, 0, 1)).reshape(-1)

    def forward(self, image: FloatArray) -> FloatArray:
        features = self.features(image)
        if self.readout is None:
            return features
        weight, bias = self.readout
        out = weight @ features
        if bias is not None:
            out += bias
        return np.tanh(out, out=out)

    def step(self, observation: Any) -> Any:
        image = self.encode(observation).reshape(self.image_shape)
        if self.input_scale != 1.0:
            image *= self.input_scale
        return self.decode(self.forward(image))
