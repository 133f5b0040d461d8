"""The LSTM, written once (`IArrayBrain`): layer sizes, where each matrix and bias sits in the
genome, and the step over rows. The lone brain, the batch and the JAX form are the core's,
derived from these functions.

Genome layout, layer by layer: W_ih (4H x in, row-major, gate blocks input, forget, cell,
output), W_hh (4H x H), then b_ih and b_hh (4H each, with `use_bias`; summed once, at decoding);
then, with `hidden_size`, the output layer's weights (outputs x H) and bias (with `use_bias`).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import gymnasium as gym
import numpy as np

from brain_lstm.config import LSTMConfig
from evo_core import ArrayBrainTemplate, BrainConfig, matvec_of

__all__ = ["LSTMTemplate", "sigmoid"]


def sigmoid(xp: Any, x: Any) -> Any:
    """`1 / (1 + exp(-x))`, the LSTM's own formula since its first version (not the shared
    `activation("sigmoid")`), so the runs and checkpoints made before act the same bit for
    bit."""
    return 1.0 / (1.0 + xp.exp(-x))


class LSTMTemplate(ArrayBrainTemplate[LSTMConfig]):
    """Hidden and cell states per layer, zero at the start of every episode."""

    config_model: ClassVar[type[BrainConfig]] = LSTMConfig

    def __init__(self, config: LSTMConfig, observation_space: gym.Space[Any],
                 action_space: gym.Space[Any], rng: np.random.Generator) -> None:
        super().__init__(config, observation_space, action_space, rng)
        self.hidden = config.hidden_size or self.output_size
        self.layer_inputs = [self.input_size] + [self.hidden] * (config.lstm_num_layers - 1)
        #: each layer's parameter and state names, looked up once
        self._layers = [(f"w_ih{index}", f"w_hh{index}",
                         f"b{index}" if config.use_bias else None, f"h{index}", f"c{index}")
                        for index in range(config.lstm_num_layers)]
        #: the output layer's parameter names, if there is one
        self._head = None if config.hidden_size is None else \
            ("w_out", "b_out" if config.use_bias else None)
        self._matrices, self._biases, self._genome_size = self._layout()
        #: the state's names, in order: h0, c0, h1, c1, ...
        self._states = [name for *_, h, c in self._layers for name in (h, c)]

    @property
    def genome_size(self) -> int:
        return self._genome_size

    def broadcasts_rows(self) -> Literal[True]:
        """`IGroupedArrayBrain`: the functions below broadcast over leading row axes."""
        return True

    def _layout(self) -> tuple[list[tuple[str, int, int, tuple[int, int]]],
                               list[tuple[str, int, int, int]], int]:
        """Where each parameter sits in the genome, worked out once: the matrices as (name,
        start, stop, shape), the biases as (name, start, middle, stop), the sum of the two
        slices around `middle` (an LSTM layer's input and recurrent bias; the output layer's
        bias is one slice, `middle` = `stop`); and the genome's size, where they end."""
        h = self.hidden
        matrices: list[tuple[str, int, int, tuple[int, int]]] = []
        biases: list[tuple[str, int, int, int]] = []
        position = 0
        for (w_ih, w_hh, bias, _, _), inputs in zip(self._layers, self.layer_inputs):
            for name, shape in ((w_ih, (4 * h, inputs)), (w_hh, (4 * h, h))):
                matrices.append((name, position, position + shape[0] * shape[1], shape))
                position += shape[0] * shape[1]
            if bias is not None:
                biases.append((bias, position, position + 4 * h, position + 8 * h))
                position += 8 * h
        if self._head is not None:
            weight, bias = self._head
            matrices.append((weight, position, position + self.output_size * h,
                             (self.output_size, h)))
            position += self.output_size * h
            if bias is not None:
                biases.append((bias, position, position + self.output_size,
                               position + self.output_size))
                position += self.output_size
        return matrices, biases, position

    def params(self, xp: Any, genomes: Any) -> dict[str, Any]:
        """Per layer `w_ih0` (rows x 4H x in), `w_hh0` (rows x 4H x H) and `b0` (rows x 4H,
        the input and recurrent biases summed), ...; with `hidden_size`, `w_out` and `b_out`."""
        count = genomes.shape[0]
        params: dict[str, Any] = {}
        for name, start, stop, shape in self._matrices:
            params[name] = genomes[:, start:stop].reshape((count, *shape))
        for name, start, middle, stop in self._biases:
            params[name] = genomes[:, start:middle] + genomes[:, middle:stop] \
                if middle < stop else genomes[:, start:middle]
        return params

    def initial_state(self, xp: Any, params: dict[str, Any]) -> dict[str, Any]:
        """`h0`, `c0`, `h1`, `c1`, ...: every layer's hidden and cell state (rows x H), zero."""
        weights = params[self._layers[0][0]]
        zeros = xp.zeros((len(self._states), *weights.shape[:-2], self.hidden), weights.dtype)
        return dict(zip(self._states, zeros))

    def forward(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any,
                noise: Any) -> tuple[dict[str, Any], Any]:
        """Per layer the gates (input, forget, cell, output blocks of H) from
        `W_ih x + W_hh h + b`, in that order of additions; the new cell and hidden states;
        layer k > 0 takes layer k-1's new h. Then the tanh output layer, if there is one.
        The `+=` add into arrays made here: numpy saves an allocation, JAX makes new arrays,
        and the numbers are those of `+`."""
        n = self.hidden
        matvec = matvec_of(xp)
        x = inputs
        new: dict[str, Any] = {}
        for w_ih, w_hh, bias, h, c in self._layers:
            z = matvec(params[w_ih], x)
            z += matvec(params[w_hh], state[h])
            if bias is not None:
                z += params[bias]
            i, f, o = (sigmoid(xp, z[..., :n]), sigmoid(xp, z[..., n:2 * n]),
                       sigmoid(xp, z[..., 3 * n:]))
            g = xp.tanh(z[..., 2 * n:3 * n])
            cell = f * state[c]
            cell += i * g
            new[c] = cell
            x = new[h] = o * xp.tanh(cell)
        if self._head is None:
            return new, x
        weight, bias = self._head
        out = matvec(params[weight], x)
        if bias is not None:
            out += params[bias]
        return new, xp.tanh(out)

    def trace(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any
              ) -> dict[str, Any]:
        """`layer0.hidden`, `layer0.cell`, ...: every layer's states after the step."""
        traced: dict[str, Any] = {}
        for index, (*_, h, c) in enumerate(self._layers):
            traced[f"layer{index}.hidden"] = state[h]
            traced[f"layer{index}.cell"] = state[c]
        return traced
