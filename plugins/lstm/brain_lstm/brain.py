"""One LSTM individual: its layers, hidden and cell states, and the step."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["LSTM", "LSTMLayer", "sigmoid"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class LSTMLayer:
    """One layer's weights; the two bias vectors are summed once, here, not every step."""

    w_ih: FloatArray
    w_hh: FloatArray
    bias: FloatArray | None



def cell(z: FloatArray, c: FloatArray, n: int) -> tuple[FloatArray, FloatArray]:
    """The gates of one layer from its pre-activations `z` (input, forget, cell, output blocks
    of `n` along the last axis): the new cell state and hidden state. Shared by one brain (1-D)
    and the batch (rows x 4n), so both compute exactly the same."""
    i, f, o = sigmoid(z[..., :n]), sigmoid(z[..., n:2 * n]), sigmoid(z[..., 3 * n:])
    g = np.tanh(z[..., 2 * n:3 * n])
    c = f * c + i * g
    return c, o * np.tanh(c)


def sigmoid(x: FloatArray) -> FloatArray:
    result: FloatArray = 1.0 / (1.0 + np.exp(-x))
    return result


class LSTM:
    """Hidden and cell states per layer, zero at `reset`."""

    def __init__(self, layers: list[LSTMLayer], head: tuple[FloatArray, FloatArray | None] | None,
                 hidden: int, encode: Callable[[Any], FloatArray],
                 decode: Callable[[FloatArray], Any]) -> None:
        self.layers = layers
        self.head = head
        self.hidden = hidden
        self.encode = encode
        self.decode = decode
        self.reset()

    def reset(self) -> None:
        self.h = [np.zeros(self.hidden) for _ in self.layers]
        self.c = [np.zeros(self.hidden) for _ in self.layers]

    def forward(self, x: FloatArray) -> FloatArray:
        n = self.hidden
        for index, layer in enumerate(self.layers):
            z = layer.w_ih @ x
            z += layer.w_hh @ self.h[index]
            if layer.bias is not None:
                z += layer.bias
            self.c[index], self.h[index] = cell(z, self.c[index], n)
            x = self.h[index]
        if self.head is None:
            return x.copy()
        weight, bias = self.head
        out = weight @ x
        if bias is not None:
            out += bias
        return np.tanh(out)

    def step(self, observation: Any) -> Any:
        return self.decode(self.forward(self.encode(observation)))

    def trace_state(self) -> dict[str, FloatArray]:
        """Each layer's hidden and cell state after the last step (ITraceableBrain, for
        `evo replay --trace`): `layer0.hidden`, `layer0.cell`, ..."""
        state: dict[str, FloatArray] = {}
        for index, (h, c) in enumerate(zip(self.h, self.c)):
            state[f"layer{index}.hidden"] = h.copy()
            state[f"layer{index}.cell"] = c.copy()
        return state
