"""The CTRNN template: masks and index maps built once, genomes poured into fresh matrices.

Kernels: V, W and T are dense float64 matrices with zeros where a mask drops a cell. Measured by
bench/ctrnn_step.py on 2 vCPUs with a 10% random mask: dense `W @ a` 0.9 / 1.1 / 4.3 µs at
N = 10 / 50 / 200, a numpy sparse product (gather, multiply, `np.bincount`) 1.2 / 1.9 / 15 µs
(scipy CSR, the predecessor's choice, pays more per call still). Dense wins at every size evo's
users run, so masks save genes, not time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from brain_ctrnn.batch import CTRNNBatch, CTRNNStack, NoisyCTRNNBatch, stack_parameters
from brain_ctrnn.brain import CTRNN, CTRNNParameters, NoisyCTRNN
from brain_ctrnn.config import CTRNNConfig
from brain_ctrnn.jax_brain import jax_parameters, jax_step
from brain_ctrnn.masks import make_mask
from evo_core import (
    BrainConfig,
    BrainTemplateBase,
    ReloadingStackedBatch,
    jax_decode,
    jax_encode,
    jax_space_support,
    memory_shortfall,
)

__all__ = ["CTRNNTemplate"]

FloatArray = NDArray[np.float64]

def _clipping_genes(mode: str, neurons: int) -> int:
    return {"global": 2, "per_neuron": 2 * neurons, "legacy": 2 * neurons, "fixed": 0}[mode]


class CTRNNTemplate(BrainTemplateBase[CTRNNConfig]):
    """Builds CTRNN brains; subclass it (and CTRNNConfig) for variants."""

    config_model: ClassVar[type[BrainConfig]] = CTRNNConfig

    def __init__(self, config: CTRNNConfig, observation_space: gym.Space[Any],
                 action_space: gym.Space[Any], rng: np.random.Generator,
                 masks: dict[str, NDArray[np.bool_]] | None = None) -> None:
        super().__init__(config, observation_space, action_space, rng)
        n = config.number_neurons
        # W's mask (a byte a cell) and the index of its kept cells (8 bytes each), before either
        # exists: numpy would otherwise fill gigabytes before it fails
        shortfall = memory_shortfall(9 * n * n, "for the N x N connection matrix alone")
        if shortfall is not None:
            raise ValueError(f"brain.number_neurons = {n} {shortfall}; lower "
                             "brain.number_neurons")
        self._use_masks(self.generate_masks(rng) if masks is None else masks)

    def _use_masks(self, masks: Mapping[str, NDArray[Any]]) -> None:
        """Set the masks and everything derived from them (index maps, genome layout)."""
        config = self.config
        n, inputs, outputs = config.number_neurons, self.input_size, self.output_size
        bias = int(config.use_bias)
        expected = {"v_mask": (n, inputs + bias), "w_mask": (n, n), "t_mask": (n, outputs)}
        for name, shape in expected.items():
            if name not in masks:
                raise ValueError(f"the saved template state has no {name}")
            if np.shape(masks[name]) != shape:
                raise ValueError(f"{name} has shape {np.shape(masks[name])}, expected {shape}")
        self.v_mask = np.array(masks["v_mask"], dtype=bool)
        self.w_mask = np.array(masks["w_mask"], dtype=bool)
        self.t_mask = np.array(masks["t_mask"], dtype=bool)
        # flat (row-major) indices of kept cells: the genome fills them in this order
        self.v_index = np.flatnonzero(self.v_mask)
        self.w_index = np.flatnonzero(self.w_mask)
        self.t_index = np.flatnonzero(self.t_mask)
        self.diagonal = np.arange(n) * (n + 1)  # flat indices of W_ii
        sizes = [len(self.v_index), len(self.w_index), len(self.t_index),
                 n if config.optimize_y0 else 0,
                 _clipping_genes(config.optimize_state_boundaries, n),
                 n if config.time_constants else 0]
        self.offsets = np.concatenate(([0], np.cumsum(sizes)))
        self._genome_size = int(self.offsets[-1])

    def generate_masks(self, rng: np.random.Generator) -> dict[str, NDArray[np.bool_]]:
        """V (inputs only; the bias column is always dense), W and T, drawn in that order."""
        c = self.config
        n = c.number_neurons
        v = make_mask(c.v_mask, n, self.input_size, c.v_mask_param, rng)
        if c.use_bias:
            v = np.concatenate([v, np.ones((n, 1), dtype=bool)], axis=1)
        return {"v_mask": v,
                "w_mask": make_mask(c.w_mask, n, n, c.w_mask_param, rng),
                "t_mask": make_mask(c.t_mask, n, self.output_size, c.t_mask_param, rng)}

    @property
    def genome_size(self) -> int:
        return self._genome_size

    def saved_state(self) -> dict[str, NDArray[Any]]:
        """What a run folder stores so that a replay rebuilds exactly these brains."""
        return {"v_mask": self.v_mask, "w_mask": self.w_mask, "t_mask": self.t_mask}

    def restore(self, state: Mapping[str, NDArray[Any]]) -> CTRNNTemplate:
        """A copy of this template with the saved masks; a subclass's own `__init__` is not
        called again, so any signature works."""
        return self.derive(lambda template: template._use_masks(state))

    def build(self, genome: FloatArray) -> CTRNN:
        brain = NoisyCTRNN if self.config.parameter_perturbations else CTRNN
        return brain(self.parameters(genome), self.config, self.input_size, self.encoder.into,
                     self.decoder)

    def make_batch(self, genomes: FloatArray) -> CTRNNBatch | ReloadingStackedBatch:
        """One batch of the brains of `genomes` (rows, genome_size); row `i` acts exactly as
        `make(genomes[i])` (IBatchTemplate). A subclass that overrides `build` changes the math
        that `CTRNNBatch` repeats, so it gets a stack of its own brains instead."""
        if type(self).build is not CTRNNTemplate.build:
            return ReloadingStackedBatch([self.make(genome) for genome in genomes],
                                         self.observation_space, self.action_space, self.make)
        batch = NoisyCTRNNBatch if self.config.parameter_perturbations else CTRNNBatch
        return batch(self._decode(genomes), self.config, self.encoder, self.decoder,
                     self._decode)

    def _decode(self, genomes: FloatArray) -> CTRNNStack:
        """The parameters of `genomes` (rows, genome_size), stacked, for `make_batch` and
        `CTRNNBatch.load`: decoded all at once unless a subclass decodes its own way."""
        own = type(self).parameters is CTRNNTemplate.parameters and \
            type(self).check_genome is BrainTemplateBase.check_genome and \
            type(self)._pour is CTRNNTemplate._pour and \
            type(self)._bounds is CTRNNTemplate._bounds
        if not own or not len(genomes):
            return stack_parameters([self.parameters(self.check_genome(genome))
                                     for genome in genomes])
        self.check_genome(genomes[0])  # a genome of the wrong size: make's one-line error
        return self._stacked(np.ascontiguousarray(genomes, dtype=np.float64))

    def _stacked(self, genomes: FloatArray) -> CTRNNStack:
        """`parameters` for every row at once: the same copies, signs and bounds per row (so
        the same numbers) without a decode per genome (a refill loads rows every few steps
        when episodes are short)."""
        c = self.config
        n = c.number_neurons
        o = self.offsets
        count = len(genomes)
        v = self._pour_rows(self.v_mask.shape, self.v_index, genomes[:, o[0]:o[1]],
                            c.v_mask == "learned", c.v_mask_param)
        w = self._pour_rows((n, n), self.w_index, genomes[:, o[1]:o[2]],
                            c.w_mask == "learned", c.w_mask_param)
        t = self._pour_rows(self.t_mask.shape, self.t_index, genomes[:, o[2]:o[3]],
                            c.t_mask == "learned", c.t_mask_param)
        if c.set_principle_diagonal_elements_of_W_negative:
            flat = w.reshape(count, n * n)
            diagonal = flat[:, self.diagonal]
            flat[:, self.diagonal] = np.where(diagonal != 0.0, -np.abs(diagonal), diagonal)
        y0 = genomes[:, o[3]:o[4]].copy() if c.optimize_y0 else np.zeros((count, n))
        lower, upper = self._bounds_rows(genomes[:, o[4]:o[5]])
        tau = c.delta_t + np.abs(genomes[:, o[5]:o[6]]) if c.time_constants else None
        return CTRNNStack(v, w, np.ascontiguousarray(t.transpose(0, 2, 1)), y0, tau, lower,
                          upper)

    @staticmethod
    def _pour_rows(shape: tuple[int, ...], index: NDArray[np.intp], values: FloatArray,
                   learned: bool, percentile: float) -> FloatArray:
        """`_pour` for every row of `values` at once."""
        count = len(values)
        if len(index) == math.prod(shape):
            matrices = values.reshape(count, *shape).copy()
        else:
            matrices = np.zeros((count, *shape))
            matrices.reshape(count, -1)[:, index] = values
        if learned and matrices.size:
            magnitudes = np.abs(matrices)
            thresholds = np.percentile(magnitudes.reshape(count, -1), percentile, axis=1,
                                       method="higher")
            matrices[magnitudes < thresholds.reshape(count, *[1] * len(shape))] = 0.0
        return matrices

    def _bounds_rows(self, genes: FloatArray) -> tuple[FloatArray, FloatArray]:
        """`_bounds` for every row, as (rows, 1) or (rows, N) arrays."""
        mode = self.config.optimize_state_boundaries
        n = self.config.number_neurons
        count = len(genes)
        if mode == "fixed":
            return (np.full((count, 1), float(self.config.clipping_range_min)),
                    np.full((count, 1), float(self.config.clipping_range_max)))
        if mode == "legacy":  # composed per row (`_bounds` adds the offset)
            pairs = [self._bounds(row) for row in genes]
            return (np.array([[low] for low, _ in pairs], dtype=np.float64),
                    np.array([[high] for _, high in pairs], dtype=np.float64))
        genes = genes + self.config.bounds_offset
        if mode == "global":
            return -np.abs(genes[:, 0:1]), np.abs(genes[:, 1:2])
        return -np.abs(genes[:, :n]), np.abs(genes[:, n:])

    def parameters(self, genome: FloatArray) -> CTRNNParameters:
        """Decode a checked genome; subclasses that change the math override this or `build`."""
        c = self.config
        n = c.number_neurons
        o = self.offsets
        v = self._pour(self.v_mask.shape, self.v_index, genome[o[0]:o[1]], c.v_mask == "learned",
                       c.v_mask_param)
        w = self._pour((n, n), self.w_index, genome[o[1]:o[2]], c.w_mask == "learned",
                       c.w_mask_param)
        t = self._pour(self.t_mask.shape, self.t_index, genome[o[2]:o[3]], c.t_mask == "learned",
                       c.t_mask_param)
        if c.set_principle_diagonal_elements_of_W_negative:
            diagonal = w.flat[self.diagonal]
            w.flat[self.diagonal] = np.where(diagonal != 0.0, -np.abs(diagonal), diagonal)
        y0 = genome[o[3]:o[4]].copy() if c.optimize_y0 else np.zeros(n)
        lower, upper = self._bounds(genome[o[4]:o[5]])
        tau = c.delta_t + np.abs(genome[o[5]:o[6]]) if c.time_constants else None
        return CTRNNParameters(v=v, w=w, t=t, y0=y0, lower=lower, upper=upper, tau=tau)

    @staticmethod
    def _pour(shape: tuple[int, ...], index: NDArray[np.intp], values: FloatArray,
              learned: bool, percentile: float) -> FloatArray:
        if len(index) == math.prod(shape):  # dense mask: a plain reshaped copy is faster
            matrix = values.reshape(shape).copy()
        else:
            matrix = np.zeros(shape)
            matrix.flat[index] = values
        if learned and matrix.size:
            threshold = np.percentile(np.abs(matrix), percentile, method="higher")
            matrix[np.abs(matrix) < threshold] = 0.0
        return matrix

    def _bounds(self, genes: FloatArray) -> tuple[float | FloatArray, float | FloatArray]:
        mode = self.config.optimize_state_boundaries
        n = self.config.number_neurons
        if mode == "fixed":
            return self.config.clipping_range_min, self.config.clipping_range_max
        genes = genes + self.config.bounds_offset
        if mode == "global":
            return -abs(float(genes[0])), abs(float(genes[1]))
        lower, upper = -np.abs(genes[:n]), np.abs(genes[n:])
        if mode == "per_neuron":
            return lower, upper
        # legacy: clipping the whole state by interval 1, then 2, ..., then N is one clip by the
        # composed interval: clamp_b(clamp_a(x)) == clamp(x, clamp_b(lo_a), clamp_b(hi_a)).
        low, high = -np.inf, np.inf
        for lo_i, hi_i in zip(lower.tolist(), upper.tolist()):
            low, high = min(max(low, lo_i), hi_i), min(max(high, lo_i), hi_i)
        return low, high

    # ------------------------------------------------------------------ IJaxTemplate

    def jax_unsupported(self) -> str | None:
        """State noise cannot be compiled (it comes from numpy Generators); a subclass that
        changes the math is not repeated either. Every other option runs in JAX."""
        if self.config.parameter_perturbations:
            return (f"brain.parameter_perturbations = {self.config.parameter_perturbations} "
                    "(state noise from numpy Generators) has no JAX form; set it to 0")
        if type(self).build is not CTRNNTemplate.build or \
                type(self).parameters is not CTRNNTemplate.parameters:
            return (f"{type(self).__name__} overrides build() or parameters(), whose math the "
                    "JAX form of CTRNNTemplate would not repeat")
        return jax_space_support(self.observation_space, self.action_space)

    def jax_params(self, genome: Any) -> Any:
        return jax_parameters(self, genome)

    def jax_init_state(self, params: Any) -> Any:
        return params["y0"]

    def jax_step(self, params: Any, state: Any, observation: Any) -> tuple[Any, Any]:
        state, output = jax_step(self.config, params, state, jax_encode(self.encoder)(observation))
        return state, jax_decode(self.decoder)(output)
