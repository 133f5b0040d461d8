"""The FFNN template: layer shapes and where each matrix and bias sits in the genome."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from brain_ffnn.batch import FFNNBatch
from brain_ffnn.brain import ACTIVATIONS, FFNN
from brain_ffnn.config import FFNNConfig
from brain_ffnn.jax_brain import jax_forward, jax_layers
from evo_core import (
    BrainConfig,
    BrainTemplateBase,
    ReloadingStackedBatch,
    jax_decode,
    jax_encode,
    jax_space_support,
)

__all__ = ["FFNNTemplate"]

FloatArray = NDArray[np.float64]


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
        self.activation_names: list[str] = [config.non_linearity] * (len(self.shapes) - 1) + [
            config.output_activation or config.non_linearity]
        self.activations = [ACTIVATIONS[name] for name in self.activation_names]

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
        return FFNN(list(zip(weights, biases, self.activations)), self.encoder, self.decoder)

    def make_batch(self, genomes: FloatArray) -> FFNNBatch | ReloadingStackedBatch:
        """The brains of `genomes` (rows, genome_size) as one batch whose row `i` acts exactly
        as `make(genomes[i])` (IBatchTemplate). Brains of a subclass that builds something other
        than an `FFNN` are stacked as they are."""
        if self._own_build():
            return self._sliced(genomes)
        brains = [self.make(genome) for genome in genomes]
        if not all(type(brain) is FFNN for brain in brains):
            return ReloadingStackedBatch(brains, self.observation_space, self.action_space,
                                         self.make)
        return self._stack([brain for brain in brains if isinstance(brain, FFNN)])

    def _own_build(self) -> bool:
        """Whether `make` is this class's own (then a batch is cut from the genomes at once)."""
        return type(self).build is FFNNTemplate.build and \
            type(self).make is BrainTemplateBase.make and \
            type(self).check_genome is BrainTemplateBase.check_genome

    def _rebuild(self, genomes: FloatArray) -> FFNNBatch:
        """A batch of `genomes` for `FFNNBatch.load` (only asked where `make` gives FFNNs)."""
        if self._own_build():
            return self._sliced(genomes)
        return self._stack([brain for brain in (self.make(g) for g in genomes)
                            if isinstance(brain, FFNN)])

    def _sliced(self, genomes: FloatArray) -> FFNNBatch:
        """`build`'s layers for every row at once: the same genes copied into the same
        C-ordered matrices as stacking each genome's `FFNN` (so the same numbers), without a
        brain per genome (a refill loads rows every few steps when episodes are short)."""
        for genome in genomes[:1]:
            self.check_genome(genome)  # the one-line error of a genome of the wrong size
        genomes = np.ascontiguousarray(genomes, dtype=np.float64)
        if genomes.ndim != 2 or genomes.shape[1] != self.genome_size:
            self.check_genome(genomes)
        count = len(genomes)
        weights: list[FloatArray] = []
        position = 0
        for rows, cols in self.shapes:
            weights.append(genomes[:, position:position + rows * cols]
                           .reshape(count, rows, cols).copy())
            position += rows * cols
        biases: list[FloatArray | None] = []
        for rows, _ in self.shapes:
            if self.config.use_bias:
                biases.append(genomes[:, position:position + rows].copy())
                position += rows
            else:
                biases.append(None)
        return FFNNBatch(list(zip(weights, biases, self.activations)), self.encoder,
                         self.decoder, self._rebuild)

    def _stack(self, ffnns: list[FFNN]) -> FFNNBatch:
        layers = []
        for index, (_, bias, activation) in enumerate(ffnns[0].layers):
            weights = np.stack([brain.layers[index][0] for brain in ffnns])
            present = [b for b in (brain.layers[index][1] for brain in ffnns) if b is not None]
            layers.append((weights, np.stack(present) if bias is not None else None, activation))
        return FFNNBatch(layers, self.encoder, self.decoder, self._rebuild)

    # ------------------------------------------------------------------ IJaxTemplate

    def jax_unsupported(self) -> str | None:
        """Every FFNN option runs in JAX; a subclass that builds other brains does not."""
        if type(self).build is not FFNNTemplate.build:
            return (f"{type(self).__name__} overrides build(), whose math the JAX form of "
                    "FFNNTemplate would not repeat")
        return jax_space_support(self.observation_space, self.action_space)

    def jax_params(self, genome: Any) -> Any:
        return jax_layers(genome, self.shapes, self.config.use_bias)

    def jax_init_state(self, params: Any) -> Any:
        return ()

    def jax_step(self, params: Any, state: Any, observation: Any) -> tuple[Any, Any]:
        output = jax_forward(params, self.activation_names, jax_encode(self.encoder)(observation))
        return state, jax_decode(self.decoder)(output)
