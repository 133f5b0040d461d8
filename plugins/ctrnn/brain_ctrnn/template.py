"""The CTRNN, written once (`IArrayBrain`): masks and index maps built once per experiment,
genomes poured into matrices, and the Euler step, over rows. The lone brain, the batch and the
JAX form are the core's, derived from these functions; a subclass that changes them (another
`sigma`, another decoding in `params`) changes every form at once.

The step: dy/dt = W·σ(y) + V·u (or Beer's leaky form with time constants, tau·dy/dt = -y + ...),
one Euler step of `delta_t`, state noise, the state clipped to its bounds, and tanh(Tᵀ·y) as the
output. u is the encoded observation with a trailing 1 (the bias input; `with_bias` appends it
as the observation is encoded).

Kernels: V, W and T are dense matrices with zeros where a mask drops a cell. Measured by
bench/ctrnn_step.py on 2 vCPUs with a 10% random mask: dense `W @ a` 0.9 / 1.1 / 4.3 µs at
N = 10 / 50 / 200, a numpy sparse product (gather, multiply, `np.bincount`) 1.2 / 1.9 / 15 µs
(scipy CSR, the predecessor's choice, pays more per call still). Dense wins at every size evo's
users run, so masks save genes, not time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from brain_ctrnn.config import CTRNNConfig
from brain_ctrnn.masks import make_mask
from evo_core import (
    ArrayBrainTemplate,
    BrainConfig,
    matvec_of,
    memory_shortfall,
    rows_matvec,
    with_bias,
    with_diagonal,
)

__all__ = ["CTRNNTemplate"]

FloatArray = NDArray[np.float64]

def _clipping_genes(mode: str, neurons: int) -> int:
    return {"global": 2, "per_neuron": 2 * neurons, "legacy": 2 * neurons, "fixed": 0}[mode]


class CTRNNTemplate(ArrayBrainTemplate[CTRNNConfig]):
    """Builds CTRNN brains; subclass it (and CTRNNConfig) for variants."""

    config_model: ClassVar[type[BrainConfig]] = CTRNNConfig

    def __init__(self, config: CTRNNConfig, observation_space: gym.Space[Any],
                 action_space: gym.Space[Any], rng: np.random.Generator,
                 masks: dict[str, NDArray[np.bool_]] | None = None) -> None:
        super().__init__(config, observation_space, action_space, rng)
        #: the encoded observation's length; with `use_bias` the inputs end with a 1 more
        self.observed = self.encoder.size
        if config.use_bias:
            self.encoder = with_bias(self.encoder)
        # what the step reads from the config, looked up once
        self._tanh = config.neuron_activation == "tanh"
        self._inplace = config.neuron_activation_inplace
        self._leaky = config.time_constants
        self._dt = config.delta_t
        self._noise = config.parameter_perturbations
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
        n, inputs, outputs = config.number_neurons, self.observed, self.output_size
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
        sizes = [len(self.v_index), len(self.w_index), len(self.t_index),
                 n if config.optimize_y0 else 0,
                 _clipping_genes(config.optimize_state_boundaries, n),
                 n if config.time_constants else 0]
        self.offsets = [int(x) for x in np.concatenate(([0], np.cumsum(sizes)))]
        self._genome_size = self.offsets[-1]
        # where each cell of a matrix takes its gene from: its gene's column among the
        # matrix's genes, or the extra last column of zeros (a cell the mask drops); and
        # whether the mask is learned, at which percentile
        self._pours = {name: (*_gather(np.shape(mask), index),
                              kind == "learned", percentile)
                       for name, mask, index, kind, percentile in (
                           ("v", self.v_mask, self.v_index, config.v_mask, config.v_mask_param),
                           ("w", self.w_mask, self.w_index, config.w_mask, config.w_mask_param),
                           ("t", self.t_mask, self.t_index, config.t_mask, config.t_mask_param))}

    def generate_masks(self, rng: np.random.Generator) -> dict[str, NDArray[np.bool_]]:
        """V (inputs only; the bias column is always dense), W and T, drawn in that order."""
        c = self.config
        n = c.number_neurons
        v = make_mask(c.v_mask, n, self.observed, c.v_mask_param, rng)
        if c.use_bias:
            v = np.concatenate([v, np.ones((n, 1), dtype=bool)], axis=1)
        return {"v_mask": v,
                "w_mask": make_mask(c.w_mask, n, n, c.w_mask_param, rng),
                "t_mask": make_mask(c.t_mask, n, self.output_size, c.t_mask_param, rng)}

    @property
    def genome_size(self) -> int:
        return self._genome_size

    def broadcasts_rows(self) -> Literal[True]:
        """`IGroupedArrayBrain`: `initial_state` and `forward` broadcast over leading row
        axes (a subclass that overrides either declares it again, if it holds)."""
        return True

    def saved_state(self) -> dict[str, NDArray[Any]]:
        """What a run folder stores so that a replay rebuilds exactly these brains."""
        return {"v_mask": self.v_mask, "w_mask": self.w_mask, "t_mask": self.t_mask}

    def restore(self, state: Mapping[str, NDArray[Any]]) -> CTRNNTemplate:
        """A copy of this template with the saved masks; a subclass's own `__init__` is not
        called again, so any signature works."""
        return self.derive(lambda template: template._use_masks(state))

    @property
    def input_size(self) -> int:
        """The encoded observation's length, the bias input not counted."""
        return self.observed

    @property
    def noise_size(self) -> int:
        """N standard normal numbers a step with state noise, none without."""
        return self.config.number_neurons if self.config.parameter_perturbations else 0

    def params(self, xp: Any, genomes: Any) -> dict[str, Any]:
        """V (rows x N x inputs+bias), W (rows x N x N), Tᵀ (rows x outputs x N), y0, the
        clipping bounds and, with time constants, tau (rows x N each)."""
        c = self.config
        o = self.offsets
        v = self._pour(xp, "v", genomes[:, o[0]:o[1]])
        w = self._pour(xp, "w", genomes[:, o[1]:o[2]])
        t = self._pour(xp, "t", genomes[:, o[2]:o[3]])
        if c.set_principle_diagonal_elements_of_W_negative:
            diagonal = xp.diagonal(w, axis1=1, axis2=2)
            w = with_diagonal(xp, w, xp.where(diagonal != 0.0, -xp.abs(diagonal), diagonal))
        count = genomes.shape[0]
        y0 = genomes[:, o[3]:o[4]] if c.optimize_y0 else \
            xp.zeros((count, c.number_neurons), dtype=genomes.dtype)
        lower, upper = self._bounds(xp, genomes[:, o[4]:o[5]])
        params = {"v": v, "w": w, "t_transposed": xp.swapaxes(t, 1, 2), "y0": y0,
                  "lower": lower, "upper": upper}
        if c.time_constants:
            params["tau"] = c.delta_t + xp.abs(genomes[:, o[5]:o[6]])
        return params

    def initial_state(self, xp: Any, params: dict[str, Any]) -> dict[str, Any]:
        return {"y": params["y0"]}

    def sigma(self, xp: Any, y: Any) -> Any:
        """The neuron activation σ the config names: a subclass may give another."""
        return xp.tanh(y) if self._tanh else xp.maximum(y, 0.0)

    def forward(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any,
                noise: Any) -> tuple[dict[str, Any], Any]:
        matvec = matvec_of(xp)
        y = state["y"]
        a = self.sigma(xp, y)
        if self._inplace:
            y = a
        # augmented assignments on arrays made here: in place in numpy (no new array per
        # operation), a new array in JAX, the same numbers either way
        dy = matvec(params["w"], a)
        dy += matvec(params["v"], inputs)
        if self._leaky:
            dy -= y
            dy /= params["tau"]
        dy *= self._dt
        dy += y
        y = dy
        if noise is not None:
            y += noise * self._noise
        y = xp.minimum(xp.maximum(y, params["lower"]), params["upper"])
        return {"y": y}, xp.tanh(matvec(params["t_transposed"], y))

    def trace(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any
              ) -> dict[str, Any]:
        """`potential` y, `activation` σ(y) (what W reads) and `output` tanh(Tᵀ·y) before
        decoding into an action, computed from y: the step keeps nothing extra."""
        y = state["y"]
        return {"potential": y, "activation": self.sigma(xp, y),
                "output": xp.tanh(rows_matvec(xp, params["t_transposed"], y))}

    def _pour(self, xp: Any, name: str, values: Any) -> Any:
        """Each row's genes into its matrix of the mask `name`; a learned mask then drops the
        cells below the row's magnitude percentile."""
        shape, gather, learned, percentile = self._pours[name]
        count = values.shape[0]
        if gather is None:  # a dense mask: the genes are the matrix
            matrices = values.reshape(count, *shape)
        else:
            padded = xp.concatenate([values, xp.zeros((count, 1), dtype=values.dtype)], axis=1)
            matrices = padded[:, gather].reshape(count, *shape)
        if learned and matrices.size:
            magnitudes = xp.abs(matrices)
            thresholds = xp.percentile(magnitudes.reshape(count, -1), percentile, axis=1,
                                       method="higher")
            matrices = xp.where(magnitudes < thresholds.reshape(count, 1, 1), 0.0, matrices)
        return matrices

    def _bounds(self, xp: Any, genes: Any) -> tuple[Any, Any]:
        """The clipping bounds of every row, rows x N each, also where one interval holds for
        every neuron (a numpy ufunc on arrays of one shape skips broadcasting: a step's clip
        costs less)."""
        mode = self.config.optimize_state_boundaries
        n = self.config.number_neurons
        count = genes.shape[0]
        if mode == "fixed":
            return (xp.full((count, n), self.config.clipping_range_min, dtype=genes.dtype),
                    xp.full((count, n), self.config.clipping_range_max, dtype=genes.dtype))
        genes = genes + self.config.bounds_offset
        if mode == "global":
            return (xp.repeat(-xp.abs(genes[:, 0:1]), n, axis=1),
                    xp.repeat(xp.abs(genes[:, 1:2]), n, axis=1))
        lower, upper = -xp.abs(genes[:, :n]), xp.abs(genes[:, n:])
        if mode == "per_neuron":
            return lower, upper
        # legacy: clipping the whole state by interval 1, then 2, ..., then N is one clip by
        # the composed interval: clamp_b(clamp_a(x)) == clamp(x, clamp_b(lo_a), clamp_b(hi_a))
        low = xp.full((count, 1), -np.inf, dtype=genes.dtype)
        high = xp.full((count, 1), np.inf, dtype=genes.dtype)
        for index in range(n):
            lo_i, hi_i = lower[:, index:index + 1], upper[:, index:index + 1]
            low = xp.minimum(xp.maximum(low, lo_i), hi_i)
            high = xp.minimum(xp.maximum(high, lo_i), hi_i)
        return xp.repeat(low, n, axis=1), xp.repeat(high, n, axis=1)


def _gather(shape: tuple[int, ...], index: NDArray[np.intp]
            ) -> tuple[tuple[int, ...], NDArray[np.intp] | None]:
    """A matrix's shape and, for a sparse mask, each cell's column in its genes padded with one
    column of zeros (None for a dense mask, whose genes fill every cell in order)."""
    size = int(np.prod(shape))
    if len(index) == size:
        return shape, None
    gather = np.full(size, len(index), dtype=np.intp)
    gather[index] = np.arange(len(index))
    return shape, gather
