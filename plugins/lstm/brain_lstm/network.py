"""The LSTM template (layer shapes, genome slices) and the brain (states and the step)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core import BrainConfig, BrainTemplateBase

from brain_lstm.config import LSTMConfig

__all__ = ["LSTMTemplate", "LSTM", "LSTMLayer"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class LSTMLayer:
    """One layer's weights; the two bias vectors are summed once, here, not every step."""

    w_ih: FloatArray
    w_hh: FloatArray
    bias: FloatArray | None


class LSTMTemplate(BrainTemplateBase[LSTMConfig]):
    """Layer sizes and the genome's slices."""

    config_model: ClassVar[type[BrainConfig]] = LSTMConfig

    def __init__(self, config: LSTMConfig, observation_space: gym.Space[Any],
                 action_space: gym.Space[Any], rng: np.random.Generator) -> None:
        super().__init__(config, observation_space, action_space, rng)
        self.hidden = config.hidden_size or self.output_size
        self.layer_inputs = [self.input_size] + [self.hidden] * (config.lstm_num_layers - 1)
        h = self.hidden
        per_layer = [4 * h * (inputs + h) + (8 * h if config.use_bias else 0)
                     for inputs in self.layer_inputs]
        head = 0
        if config.hidden_size is not None:
            head = self.output_size * h + (self.output_size if config.use_bias else 0)
        self._genome_size = sum(per_layer) + head

    @property
    def genome_size(self) -> int:
        return self._genome_size

    def build(self, genome: FloatArray) -> LSTM:
        h = self.hidden
        position = 0

        def take(count: int) -> FloatArray:
            nonlocal position
            part = genome[position:position + count].copy()
            position += count
            return part

        layers = []
        for inputs in self.layer_inputs:
            w_ih = take(4 * h * inputs).reshape(4 * h, inputs)
            w_hh = take(4 * h * h).reshape(4 * h, h)
            bias = take(4 * h) + take(4 * h) if self.config.use_bias else None
            layers.append(LSTMLayer(w_ih, w_hh, bias))
        head: tuple[FloatArray, FloatArray | None] | None = None
        if self.config.hidden_size is not None:
            weight = take(self.output_size * h).reshape(self.output_size, h)
            head = (weight, take(self.output_size) if self.config.use_bias else None)
        return LSTM(layers, head, self)


def _sigmoid(x: FloatArray) -> FloatArray:
    result: FloatArray = 1.0 / (1.0 + np.exp(-x))
    return result


class LSTM:
    """Hidden and cell states per layer, zero at `reset`."""

    def __init__(self, layers: list[LSTMLayer], head: tuple[FloatArray, FloatArray | None] | None,
                 template: LSTMTemplate) -> None:
        self.layers = layers
        self.head = head
        self.hidden = template.hidden
        self.encode = template.encoder
        self.decode = template.decoder
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
            i, f, o = _sigmoid(z[:n]), _sigmoid(z[n:2 * n]), _sigmoid(z[3 * n:])
            g = np.tanh(z[2 * n:3 * n])
            c = f * self.c[index] + i * g
            h = o * np.tanh(c)
            self.c[index], self.h[index] = c, h
            x = h
        if self.head is None:
            return x.copy()
        weight, bias = self.head
        out = weight @ x
        if bias is not None:
            out += bias
        return np.tanh(out)

    def step(self, observation: Any) -> Any:
        return self.decode(self.forward(self.encode(observation)))
