"""The FFNN template (layer shapes and genome slices) and the brain (the forward pass)."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core import BrainConfig, BrainTemplateBase

from brain_ffnn.config import FFNNConfig

__all__ = ["FFNNTemplate", "FFNN", "ACTIVATIONS"]

FloatArray = NDArray[np.float64]


def _relu(x: FloatArray) -> FloatArray:
    return np.maximum(x, 0.0, out=x)


def _tanh(x: FloatArray) -> FloatArray:
    return np.tanh(x, out=x)


def _linear(x: FloatArray) -> FloatArray:
    return x


ACTIVATIONS = {"relu": _relu, "tanh": _tanh, "linear": _linear}


class FFNNTemplate(BrainTemplateBase[FFNNConfig]):
    """Layer sizes and where each matrix and bias sits in the genome."""

    config_model: ClassVar[type[BrainConfig]] = FFNNConfig

    def __init__(self, config: FFNNConfig, observation_space: gym.Space[Any],
                 action_space: gym.Space[Any], rng: np.random.Generator) -> None:
        super().__init__(config, observation_space, action_space, rng)
        sizes = [self.input_size, *config.hidden_layers, self.output_size]
        self.shapes = [(sizes[i + 1], sizes[i]) for i in range(len(sizes) - 1)]
        weights = sum(rows * cols for rows, cols in self.shapes)
        biases = sum(rows for rows, _ in self.shapes) if config.use_bias else 0
        self._genome_size = weights + biases
        hidden = ACTIVATIONS[config.non_linearity]
        self.activations = [hidden] * (len(self.shapes) - 1) + [
            ACTIVATIONS[config.output_activation or config.non_linearity]]

    @property
    def genome_size(self) -> int:
        return self._genome_size

    def build(self, genome: FloatArray) -> FFNN:
        weights: list[FloatArray] = []
        biases: list[FloatArray | None] = []
        position = 0
        for rows, cols in self.shapes:
            weights.append(genome[position:position + rows * cols].reshape(rows, cols).copy())
            position += rows * cols
        for rows, _ in self.shapes:
            if self.config.use_bias:
                biases.append(genome[position:position + rows].copy())
                position += rows
            else:
                biases.append(None)
        return FFNN(weights, biases, self)


class FFNN:
    """Stateless: `reset` has nothing to do."""

    def __init__(self, weights: list[FloatArray], biases: list[FloatArray | None],
                 template: FFNNTemplate) -> None:
        self.layers = list(zip(weights, biases, template.activations))
        self.encode = template.encoder
        self.decode = template.decoder

    def reset(self) -> None:
        pass

    def forward(self, x: FloatArray) -> FloatArray:
        for weight, bias, activation in self.layers:
            x = weight @ x
            if bias is not None:
                x += bias
            x = activation(x)
        return x

    def step(self, observation: Any) -> Any:
        return self.decode(self.forward(self.encode(observation)))
