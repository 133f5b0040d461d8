"""The lone brain and the batch of an `IArrayBrain`, derived from its array functions.

A brain written as `params`, `initial_state` and `forward` over rows runs here in numpy in two
forms: `ArrayBrain` (what `make()` returns: one row) and `ArrayBrainBatch` (a chunk's rows, for
the batched runner: reset by mask, genomes loaded into rows, a subset of rows, a Generator per
row). Both call the same functions on the same per-row arithmetic, so a batch row and the lone
brain of its genome agree bit for bit; nothing here is written per brain.

A brain whose `noise_size` is not 0 draws that many standard normal numbers per row and step,
each row from its own Generator (the one the runner hands it for the episode, `use_rng` /
`use_rngs`; without one, a Generator seeded with 0, so a run is still reproducible). Those
forms are the `Noisy...` classes: a brain that draws nothing declares no `IRandomBrain`, so the
runner makes no Generator for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.contract.protocols import IArrayBrain

__all__ = ["Arrays", "ArrayBrain", "ArrayBrainBatch", "NoisyArrayBrain", "NoisyArrayBrainBatch",
           "RowGenerators", "array_batch", "array_brain", "draw_rows", "owned"]

Arrays = dict[str, Any]


def owned(arrays: Arrays) -> Arrays:
    """Writable C-ordered copies: `params` may return views of the genomes, which a batch
    writes into when it loads rows, and a brain's state must not share memory with its start.
    C order, whatever view `params` returned (a transposed matrix, say): BLAS rounds a product
    of a strided matrix differently, and every form must compute the same numbers."""
    return {name: np.array(value, order="C") for name, value in arrays.items()}


def _c_ordered(arrays: Arrays) -> Arrays:
    """The arrays in C order, copied only where they are not (a transposed matrix, say): what
    the lone brain, which never writes into its parameters or its start, needs of `owned`."""
    return {name: np.ascontiguousarray(value) for name, value in arrays.items()}


def _rows(arrays: Arrays, rows: Any) -> Arrays:
    return {name: value[rows] for name, value in arrays.items()}


def draw_rows(rngs: list[np.random.Generator | None], size: int) -> NDArray[np.float64]:
    """Each row's standard normal numbers from its own Generator (a row without one gets a
    Generator seeded with 0, as a lone brain without one does)."""
    draws = np.empty((len(rngs), size))
    for row, rng in enumerate(rngs):
        if rng is None:
            rng = rngs[row] = np.random.default_rng(0)
        draws[row] = rng.standard_normal(size)
    return draws


class ArrayBrain:
    """The lone brain of one genome (`IBrain`, `ITraceableBrain`): the array functions on a
    single row. Observations are encoded into one input buffer (the inputs `forward` gets are
    this buffer: a brain that keeps them in its state keeps a copy).

    It writes into neither its parameters nor its start (`forward` is pure, `reset` copies
    the start), so unlike the batch it copies only the genome, once (an optimizer may write
    into the array it asked with), and what is not in C order: a `make()` copies no more than
    a hand-written brain's does (bench/ffnn_lstm_step.py)."""

    def __init__(self, template: IArrayBrain, genome: NDArray[np.float64]) -> None:
        self.template = template
        self.params = _c_ordered(template.params(np, genome.reshape(1, -1).copy()))
        self.start = _c_ordered(template.initial_state(np, self.params))
        self.state = dict(self.start)
        self.inputs = np.zeros((1, template.encoder.size))
        self._encode = template.encoder.writer(self.inputs[0])
        self._decode = template.decoder
        self._forward = template.forward

    def reset(self) -> None:
        self.state = {name: value.copy() for name, value in self.start.items()}

    def step(self, observation: Any) -> Any:
        self._encode(observation)
        self.state, outputs = self._forward(np, self.params, self.state, self.inputs, None)
        return self._decode(outputs[0])

    def trace_state(self) -> dict[str, NDArray[np.float64]]:
        """`trace` of the state after the last step (of zero inputs before the first)."""
        traced = self.template.trace(np, self.params, self.state, self.inputs)
        return {name: np.array(value[0], dtype=np.float64).reshape(-1)
                for name, value in traced.items()}


class NoisyArrayBrain(ArrayBrain):
    """An `ArrayBrain` that draws noise from each episode's Generator (`IRandomBrain`)."""

    def __init__(self, template: IArrayBrain, genome: NDArray[np.float64]) -> None:
        super().__init__(template, genome)
        self._rngs: list[np.random.Generator | None] = [None]
        self._noise = int(template.noise_size)

    def use_rng(self, rng: np.random.Generator) -> None:
        self._rngs = [rng]

    def step(self, observation: Any) -> Any:
        self._encode(observation)
        self.state, outputs = self._forward(np, self.params, self.state, self.inputs,
                                            draw_rows(self._rngs, self._noise))
        return self._decode(outputs[0])


class ArrayBrainBatch:
    """The rows of many genomes stepped together (`IReloadableBatch`, `ISubsetBatch`)."""

    def __init__(self, template: IArrayBrain, params: Arrays, start: Arrays, state: Arrays,
                 rngs: list[np.random.Generator | None]) -> None:
        self.template = template
        self.params = params
        self.start = start
        self.state = state
        self.rngs = rngs
        self._noise = int(template.noise_size)

    def load(self, rows: NDArray[np.intp], genomes: NDArray[np.float64]) -> None:
        """Rows `rows[i]` become the brain of `genomes[i]`; they draw from no Generator yet."""
        params = self.template.params(np, genomes)
        for name, value in params.items():
            self.params[name][rows] = value
        for name, value in self.template.initial_state(np, params).items():
            self.start[name][rows] = value
        for row in rows.tolist():
            self.rngs[row] = None

    def subset(self, rows: NDArray[np.intp]) -> ArrayBrainBatch:
        """A batch of rows `rows`: their parameters, states and Generators."""
        return type(self)(self.template, _rows(self.params, rows), _rows(self.start, rows),
                          _rows(self.state, rows), [self.rngs[row] for row in rows.tolist()])

    def reset(self, mask: NDArray[np.bool_] | None = None) -> None:
        if mask is None:
            self.state = {name: value.copy() for name, value in self.start.items()}
            return
        self.state = {name: np.where(mask.reshape(-1, *[1] * (value.ndim - 1)),
                                     self.start[name], value)
                      for name, value in self.state.items()}

    def step(self, observations: Any) -> Any:
        template = self.template
        inputs = template.encoder.batch(observations)
        noise = draw_rows(self.rngs, self._noise) if self._noise else None
        self.state, outputs = template.forward(np, self.params, self.state, inputs, noise)
        return template.decoder.batch(outputs)


class RowGenerators:
    """`use_rngs` of a batch whose rows draw noise (`IRandomBrainBatch`): each row's
    Generator, kept in `rngs`."""

    rngs: list[np.random.Generator | None]

    def use_rngs(self, rngs: Sequence[np.random.Generator | None]) -> None:
        for row, rng in enumerate(rngs):
            if rng is not None:
                self.rngs[row] = rng


class NoisyArrayBrainBatch(RowGenerators, ArrayBrainBatch):
    """An `ArrayBrainBatch` whose rows draw noise (`IRandomBrainBatch`)."""


def array_brain(template: IArrayBrain, genome: NDArray[np.float64]) -> ArrayBrain:
    """The lone brain of a checked genome: what an `IArrayBrain`'s `make()` returns."""
    kind = NoisyArrayBrain if template.noise_size else ArrayBrain
    return kind(template, genome)


def array_batch(template: IArrayBrain, genomes: NDArray[np.float64]) -> ArrayBrainBatch:
    """The batch of `genomes` (rows x genome_size), row `i` acting as `make(genomes[i])`."""
    params = owned(template.params(np, genomes))
    start = owned(template.initial_state(np, params))
    kind = NoisyArrayBrainBatch if template.noise_size else ArrayBrainBatch
    return kind(template, params, start, {name: value.copy() for name, value in start.items()},
                [None] * len(genomes))
