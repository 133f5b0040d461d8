"""The FFNN, written once (`IArrayBrain`): layer shapes, where each matrix and bias sits in the
genome, and the forward pass over rows. The lone brain, the batch and the JAX form are the
core's, derived from these functions.

Genome layout: every layer's weight matrix (outputs x inputs, row-major), then every layer's
bias (with `use_bias`).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import gymnasium as gym
import numpy as np

from brain_ffnn.config import FFNNConfig
from evo_core import ArrayBrainTemplate, BrainConfig, activation, matvec_of

__all__ = ["FFNNTemplate"]


class FFNNTemplate(ArrayBrainTemplate[FFNNConfig]):
    """Stateless: `activation(W @ x + b)` layer by layer. Its arithmetic broadcasts over
    leading row axes (`IGroupedArrayBrain`): a candidate's episodes share one copy of its
    weights in the batch."""

    config_model: ClassVar[type[BrainConfig]] = FFNNConfig

    def __init__(self, config: FFNNConfig, observation_space: gym.Space[Any],
                 action_space: gym.Space[Any], rng: np.random.Generator) -> None:
        super().__init__(config, observation_space, action_space, rng)
        sizes = [self.input_size, *config.hidden_layers, self.output_size]
        self.shapes = [(sizes[i + 1], sizes[i]) for i in range(len(sizes) - 1)]
        weights = sum(rows * cols for rows, cols in self.shapes)
        biases = sum(rows for rows, _ in self.shapes) if config.use_bias else 0
        self._genome_size = weights + biases
        self.activation_names: list[str] = [config.non_linearity] * (len(self.shapes) - 1) + [
            config.output_activation or config.non_linearity]
        #: each layer's parameter names and activation, looked up once
        self._layers = [(f"w{index}", f"b{index}" if config.use_bias else None,
                         activation(name))
                        for index, name in enumerate(self.activation_names)]

    @property
    def genome_size(self) -> int:
        return self._genome_size

    def broadcasts_rows(self) -> Literal[True]:
        """`IGroupedArrayBrain`: `forward` broadcasts over leading row axes."""
        return True

    def params(self, xp: Any, genomes: Any) -> dict[str, Any]:
        """`w0`, `w1`, ... (rows x outputs x inputs) and `b0`, `b1`, ... (rows x outputs)."""
        count = genomes.shape[0]
        params: dict[str, Any] = {}
        position = 0
        for index, (rows, cols) in enumerate(self.shapes):
            params[f"w{index}"] = genomes[:, position:position + rows * cols].reshape(
                count, rows, cols)
            position += rows * cols
        if self.config.use_bias:
            for index, (rows, _) in enumerate(self.shapes):
                params[f"b{index}"] = genomes[:, position:position + rows]
                position += rows
        return params

    def layers(self, xp: Any, params: dict[str, Any], x: Any) -> list[Any]:
        """Every layer's activations for the inputs `x`, the last being the outputs."""
        matvec = matvec_of(xp)
        activations = []
        for weights, bias, activate in self._layers:
            x = matvec(params[weights], x)
            if bias is not None:
                x += params[bias]
            x = activate(xp, x)
            activations.append(x)
        return activations

    def forward(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any,
                noise: Any) -> tuple[dict[str, Any], Any]:
        return state, self.layers(xp, params, inputs)[-1]

    def trace(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any
              ) -> dict[str, Any]:
        """`layer0`, `layer1`, ...: every layer's activations (the last: the outputs before
        decoding), recomputed from the step's inputs, so the step keeps nothing extra."""
        return {f"layer{index}": value
                for index, value in enumerate(self.layers(xp, params, inputs))}
