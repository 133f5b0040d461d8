"""Many CTRNNs stepped together: the population's matrices stacked along a first axis of rows.

A small CTRNN's step is dominated by numpy's per-call overhead, not by arithmetic, so one call
over the whole batch replaces a call per brain. Row `i` acts exactly as `CTRNN` built from the
same genome: `np.matmul` over stacked matrices calls the same BLAS matrix-vector product per row
as `w @ a` does for one brain, and every other operation is elementwise in the same order, so the
results agree bit for bit (tests/test_batched_brains.py checks it, noise and every option
included).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from brain_ctrnn.brain import CTRNNParameters
from brain_ctrnn.config import CTRNNConfig
from evo_core import ActionDecoder, ObservationEncoder

__all__ = ["CTRNNBatch", "CTRNNStack", "NoisyCTRNNBatch", "stack_parameters"]

FloatArray = NDArray[np.float64]


def _stack_bounds(bounds: list[float | FloatArray]) -> FloatArray:
    """Per-row bounds as a (rows, 1) or (rows, N) array that broadcasts against the states."""
    rows = len(bounds)
    return np.array([np.asarray(b, dtype=np.float64).reshape(-1) for b in bounds]).reshape(rows, -1)


class CTRNNStack(NamedTuple):
    """The rows' parameters, each stacked along a first axis of rows: what `CTRNNBatch` steps."""

    v: FloatArray
    w: FloatArray
    t_transposed: FloatArray
    y0: FloatArray
    tau: FloatArray | None  # None without time constants
    lower: FloatArray  # (rows, 1) or (rows, N)
    upper: FloatArray


def stack_parameters(parameters: list[CTRNNParameters]) -> CTRNNStack:
    """Decoded genomes (one `CTRNNParameters` each) stacked."""
    tau = None if parameters[0].tau is None else \
        np.stack([p.tau for p in parameters if p.tau is not None])
    return CTRNNStack(np.stack([p.v for p in parameters]), np.stack([p.w for p in parameters]),
                      np.stack([np.ascontiguousarray(p.t.T) for p in parameters]),
                      np.stack([p.y0 for p in parameters]), tau,
                      _stack_bounds([p.lower for p in parameters]),
                      _stack_bounds([p.upper for p in parameters]))


def _column_buffer(rows: int, size: int) -> tuple[FloatArray, FloatArray]:
    """A (rows, size) array and its (rows, size, 1) view: `np.matmul` writes a product of
    stacked matrices with stacked columns straight into the view (`out=`), with no new array
    and no slicing per step."""
    columns = np.zeros((rows, size, 1))
    return columns, columns[:, :, 0]


class CTRNNBatch:
    """The batched `CTRNN`: states (rows, N), inputs (rows, inputs + bias). Without state
    noise it draws no random numbers, so it takes no Generators (`NoisyCTRNNBatch` does): the
    runner then makes none for its rows. It loads genomes into rows (given `decode`) and gives
    a batch of some of its rows (`ISubsetBatch`)."""

    def __init__(self, parameters: list[CTRNNParameters] | CTRNNStack, config: CTRNNConfig,
                 encoder: ObservationEncoder, decoder: ActionDecoder,
                 decode: Callable[[FloatArray], CTRNNStack] | None = None) -> None:
        """`parameters`: one per row, or already stacked; `decode` (the template's genomes to
        stacked parameters) lets it load genomes into rows (`IReloadableBatch`)."""
        self._decode = decode
        self._config = config
        stack = parameters if isinstance(parameters, CTRNNStack) else \
            stack_parameters(parameters)
        rows = len(stack.v)
        self.rows = rows
        self.encoder = encoder
        self.decoder = decoder
        self.inputs = encoder.size
        self.v, self.w, self.t_transposed, self.y0, self.tau, self.lower, self.upper = stack
        self.dt = config.delta_t
        self.tanh = config.neuron_activation == "tanh"
        self.inplace = config.neuron_activation_inplace
        self.noise = config.parameter_perturbations
        n = self.y0.shape[1]
        # the step writes into buffers made once: the state (two, in turn: the new state is
        # computed from the old), the activation, the input and V·u
        self._states = [_column_buffer(rows, n), _column_buffer(rows, n)]
        self._state = 0
        self.y = self._states[0][1]
        self.y[...] = self.y0
        self._a3, self._a = _column_buffer(rows, n)
        self._vu3, self._vu = _column_buffer(rows, n)
        self._u3, self.u = _column_buffer(rows, self.inputs + int(config.use_bias))
        self.u[:, self.inputs:] = 1.0
        self._out3 = np.zeros((rows, self.t_transposed.shape[1], 1))
        self.rngs: list[np.random.Generator | None] = [None] * rows

    def load(self, rows: NDArray[np.intp], genomes: FloatArray) -> None:
        """Rows `rows[i]` become the CTRNN of `genomes[i]`: the parameters `make` decodes,
        stacked as `__init__` stacks them, copied in; the rows draw from no Generator yet."""
        if self._decode is None:
            raise TypeError("a CTRNNBatch made without its template loads no genome")
        v, w, t_transposed, y0, tau, lower, upper = self._decode(genomes)
        self.v[rows] = v
        self.w[rows] = w
        self.t_transposed[rows] = t_transposed
        self.y0[rows] = y0
        if self.tau is not None and tau is not None:
            self.tau[rows] = tau
        self.lower[rows] = lower
        self.upper[rows] = upper
        for row in rows.tolist():
            self.rngs[row] = None

    def subset(self, rows: NDArray[np.intp]) -> CTRNNBatch:
        """A batch of the same kind of rows `rows`: their parameters, states and Generators
        (`ISubsetBatch`)."""
        stack = CTRNNStack(self.v[rows], self.w[rows], self.t_transposed[rows], self.y0[rows],
                           None if self.tau is None else self.tau[rows], self.lower[rows],
                           self.upper[rows])
        kept = type(self)(stack, self._config, self.encoder, self.decoder, self._decode)
        kept.y[...] = self.y[rows]
        kept.rngs = [self.rngs[row] for row in rows.tolist()]
        return kept

    def reset(self, mask: NDArray[np.bool_] | None = None) -> None:
        if mask is None:
            self.y[...] = self.y0
        else:
            self.y[mask] = self.y0[mask]

    def _noise(self) -> FloatArray:
        """Each row's draw from its own Generator, as the lone brain draws it."""
        n = self.y.shape[1]
        draws = []
        for index, rng in enumerate(self.rngs):
            if rng is None:  # as CTRNN: without a Generator, one seeded with 0
                rng = self.rngs[index] = np.random.default_rng(0)
            draws.append(rng.normal(0.0, self.noise, n))
        return np.array(draws)

    def step(self, observations: Any) -> Any:
        """`CTRNN.step` for every row: the same operations in the same order (so the same
        numbers), into the buffers made in `__init__`."""
        self.u[:, :self.inputs] = self.encoder.batch(observations)
        y = self.y
        a = np.tanh(y, out=self._a) if self.tanh else np.maximum(y, 0.0, out=self._a)
        if self.inplace:
            y = a
        self._state ^= 1
        dy3, dy = self._states[self._state]
        np.matmul(self.w, self._a3, out=dy3)
        np.matmul(self.v, self._u3, out=self._vu3)
        dy += self._vu
        if self.tau is not None:
            dy -= y
            dy /= self.tau
        dy *= self.dt
        dy += y
        y = dy
        if self.noise:
            y += self._noise()
        np.maximum(y, self.lower, out=y)
        np.minimum(y, self.upper, out=y)
        self.y = y
        out = np.matmul(self.t_transposed, dy3, out=self._out3)[:, :, 0]
        return self.decoder.batch(np.tanh(out))


class NoisyCTRNNBatch(CTRNNBatch):
    """A `CTRNNBatch` with state noise (`parameter_perturbations` > 0): row `i` draws it from
    the Generator the runner hands it (`IRandomBrainBatch`), as `CTRNN.use_rng`."""

    def use_rngs(self, rngs: Sequence[np.random.Generator | None]) -> None:
        """Row `i` draws its state noise from `rngs[i]` (as `CTRNN.use_rng`)."""
        for index, rng in enumerate(rngs):
            if rng is not None:
                self.rngs[index] = rng
