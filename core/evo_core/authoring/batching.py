"""Every brain, batched: a template's own `make_batch`, or a stack of `make()` brains.

The batched runner (`episodes.vectorize`) steps a whole chunk of genomes at once. A template that
declares `IBatchTemplate` does that with a few large array operations, and so does the batch the
core derives from an `IArrayBrain`'s functions (authoring/array_brain.py); any other template still
works through `StackedBatch` (as `ReloadingStackedBatch`, which also loads genomes into rows),
which keeps one ordinary brain per row and splits the batched observations into rows (and
stacks the actions back) in the layout of a gymnasium vector environment; a subset of its rows
is a list of fewer brains. It is no faster than stepping the brains one by one, but it lets every
brain run in every vectorised mode, and it is the reference a batched brain is compared with.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

import gymnasium as gym
import numpy as np
from gymnasium.vector.utils import concatenate, create_empty_array, iterate
from numpy.typing import NDArray

from evo_core.authoring.array_brain import array_batch
from evo_core.authoring.array_grouped import grouped_batch, groups_rows
from evo_core.contract.protocols import (
    IArrayBrain,
    IBatchTemplate,
    IBrain,
    IBrainBatch,
    IBrainTemplate,
    IGroupedArrayBrain,
    IRandomBrain,
    IRandomBrainBatch,
)

__all__ = ["StackedBatch", "ReloadingStackedBatch", "make_batch",
           "is_random_batch", "split_rows", "stack_rows"]


def split_rows(space: gym.Space[Any], batch: Any) -> list[Any]:
    """A batch in vector-environment layout (for `space`, one element) to a list of rows."""
    return list(iterate(_batched(space, _rows(space, batch)), batch))


def stack_rows(space: gym.Space[Any], rows: Sequence[Any]) -> Any:
    """Elements of `space` to one batch in vector-environment layout."""
    out: Any = create_empty_array(space, len(rows))
    return concatenate(space, rows, out)


def _rows(space: gym.Space[Any], batch: Any) -> int:
    """How many rows a batch for `space` holds (its first part's first axis)."""
    if isinstance(space, gym.spaces.Tuple):
        return _rows(space.spaces[0], batch[0])
    if isinstance(space, gym.spaces.Dict):
        key = next(iter(space.spaces))
        return _rows(space.spaces[key], batch[key])
    return len(batch)


def _batched(space: gym.Space[Any], rows: int) -> gym.Space[Any]:
    return gym.vector.utils.batch_space(space, rows)


class StackedBatch:
    """One `make()` brain per row; the generic batch every template supports."""

    def __init__(self, brains: list[IBrain], observation_space: gym.Space[Any],
                 action_space: gym.Space[Any]) -> None:
        self.brains = brains
        self.observation_space = observation_space
        self.action_space = action_space
        self.batched_observations = _batched(observation_space, len(brains))
        self.random = [isinstance(brain, IRandomBrain) for brain in brains]

    def subset(self, rows: NDArray[np.intp]) -> StackedBatch:
        """The brains of rows `rows` (`ISubsetBatch`), themselves."""
        return StackedBatch([self.brains[row] for row in rows.tolist()],
                            self.observation_space, self.action_space)

    def use_rngs(self, rngs: Sequence[np.random.Generator | None]) -> None:
        for brain, random, rng in zip(self.brains, self.random, rngs):
            if random and rng is not None:
                brain.use_rng(rng)  # type: ignore[attr-defined]

    def reset(self, mask: NDArray[np.bool_] | None = None) -> None:
        for index, brain in enumerate(self.brains):
            if mask is None or mask[index]:
                brain.reset()

    def step(self, observations: Any) -> Any:
        rows = iterate(self.batched_observations, observations)
        actions = [brain.step(row) for brain, row in zip(self.brains, rows)]
        return stack_rows(self.action_space, actions)


class ReloadingStackedBatch(StackedBatch):
    """A `StackedBatch` that also loads genomes into rows (`IReloadableBatch`) with the
    template's `make`: what `make_batch` gives a template without a batch of its own."""

    def __init__(self, brains: list[IBrain], observation_space: gym.Space[Any],
                 action_space: gym.Space[Any],
                 make: Callable[[NDArray[np.float64]], IBrain]) -> None:
        super().__init__(brains, observation_space, action_space)
        self._make = make

    def subset(self, rows: NDArray[np.intp]) -> ReloadingStackedBatch:
        """The brains of rows `rows` (`ISubsetBatch`), themselves, still loading genomes."""
        return ReloadingStackedBatch([self.brains[row] for row in rows.tolist()],
                                     self.observation_space, self.action_space, self._make)

    def load(self, rows: NDArray[np.intp], genomes: NDArray[np.float64]) -> None:
        """Rows `rows[i]` become `make(genomes[i])`."""
        for row, genome in zip(rows.tolist(), genomes):
            brain = self._make(np.ascontiguousarray(genome, dtype=np.float64))
            self.brains[row] = brain
            self.random[row] = isinstance(brain, IRandomBrain)


def make_batch(template: IBrainTemplate, genomes: NDArray[np.float64],
               observation_space: gym.Space[Any], action_space: gym.Space[Any],
               grouped: bool = True) -> IBrainBatch:
    """The template's own batch if it declares `IBatchTemplate`, the batch derived from its
    array functions if it is an `IArrayBrain` (with rows of one genome grouped if it is an
    `IGroupedArrayBrain` whose functions its declaration vouches for, `groups_rows`, and
    `grouped`), else a `StackedBatch`. `grouped` is False for a batch whose rows will take
    other genomes one by one (`IReloadableBatch.load`, where a chunk has more episodes than
    rows): regrouping at every load cost more than sharing saved (CartPole, a CTRNN of 6
    neurons, 640 episodes on 256 rows: 0.89 s of training against 0.72 row by row)."""
    genomes = np.ascontiguousarray(genomes, dtype=np.float64)
    if isinstance(template, IBatchTemplate):
        return template.make_batch(genomes)
    if isinstance(template, IArrayBrain):
        if genomes.ndim != 2 or genomes.shape[1] != template.genome_size:
            raise ValueError(f"{type(template).__name__}: genomes have shape {genomes.shape}, "
                             f"expected (rows, {template.genome_size}) for this config and these "
                             "spaces")
        if grouped and groups_rows(template):
            return grouped_batch(cast(IGroupedArrayBrain, template), genomes)
        return array_batch(template, genomes)
    return ReloadingStackedBatch([template.make(genome) for genome in genomes],
                                 observation_space, action_space, template.make)


def is_random_batch(batch: IBrainBatch) -> bool:
    """Whether the runner must hand the rows Generators (checked once per batch)."""
    return isinstance(batch, IRandomBrainBatch)
