"""The LSTM template: layer sizes and the genome's slices."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from brain_lstm.batch import LSTMBatch
from brain_lstm.brain import LSTM, LSTMLayer
from brain_lstm.config import LSTMConfig
from brain_lstm.jax_brain import jax_forward, jax_init_state, jax_params
from evo_core import (
    BrainConfig,
    BrainTemplateBase,
    ReloadingStackedBatch,
    jax_decode,
    jax_encode,
    jax_space_support,
)

__all__ = ["LSTMTemplate"]

FloatArray = NDArray[np.float64]


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
        return LSTM(layers, head, h, self.encoder, self.decoder)

    def make_batch(self, genomes: FloatArray) -> LSTMBatch | ReloadingStackedBatch:
        """The brains of `genomes` (rows, genome_size) as one batch whose row `i` acts exactly
        as `make(genomes[i])` (IBatchTemplate). Brains of a subclass that builds something other
        than an `LSTM` are stacked as they are."""
        brains = [self.make(genome) for genome in genomes]
        if not all(type(brain) is LSTM for brain in brains):
            return ReloadingStackedBatch(brains, self.observation_space, self.action_space,
                                         self.make)
        return self._stack([brain for brain in brains if isinstance(brain, LSTM)])

    def _rebuild(self, genomes: FloatArray) -> LSTMBatch:
        """A batch of `genomes` for `LSTMBatch.load` (only asked where `make` gives LSTMs)."""
        return self._stack([brain for brain in (self.make(g) for g in genomes)
                            if isinstance(brain, LSTM)])

    def _stack(self, lstms: list[LSTM]) -> LSTMBatch:

        def stacked(arrays: list[FloatArray | None]) -> FloatArray | None:
            present = [array for array in arrays if array is not None]
            return np.stack(present) if present else None

        layers = []
        for index in range(len(lstms[0].layers)):
            parts = [brain.layers[index] for brain in lstms]
            layers.append(LSTMLayer(np.stack([p.w_ih for p in parts]),
                                    np.stack([p.w_hh for p in parts]),
                                    stacked([p.bias for p in parts])))
        head: tuple[FloatArray, FloatArray | None] | None = None
        heads = [brain.head for brain in lstms if brain.head is not None]
        if heads:
            head = (np.stack([w for w, _ in heads]), stacked([b for _, b in heads]))
        return LSTMBatch(layers, head, self.hidden, len(lstms), self.encoder, self.decoder,
                         self._rebuild)
    # ------------------------------------------------------------------ IJaxTemplate

    def jax_unsupported(self) -> str | None:
        """Every LSTM option runs in JAX; a subclass that builds other brains does not."""
        if type(self).build is not LSTMTemplate.build:
            return (f"{type(self).__name__} overrides build(), whose math the JAX form of "
                    "LSTMTemplate would not repeat")
        return jax_space_support(self.observation_space, self.action_space)

    def jax_params(self, genome: Any) -> Any:
        head = self.output_size if self.config.hidden_size is not None else None
        return jax_params(genome, self.layer_inputs, self.hidden, self.config.use_bias, head)

    def jax_init_state(self, params: Any) -> Any:
        return jax_init_state(len(self.layer_inputs), self.hidden)

    def jax_step(self, params: Any, state: Any, observation: Any) -> tuple[Any, Any]:
        state, output = jax_forward(params, state, jax_encode(self.encoder)(observation),
                                    self.hidden)
        return state, jax_decode(self.decoder)(output)
