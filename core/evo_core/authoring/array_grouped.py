"""The batch of an `IGroupedArrayBrain`: the rows of one genome share one copy of its parameters.

A chunk's batch runs each candidate's episodes in several rows (a candidate of 16 episodes,
16 rows). The per-row batch (`ArrayBrainBatch`) keeps the parameters once per row, so every
step reads all those copies from memory: 1,024 rows of EvoJAX's swing-up MLP (4,609 genes) are
38 MB a step, most of the step's time. A brain whose functions broadcast over leading row
axes is stepped here on a grid instead, groups (one per distinct genome) by slots (its rows):
the parameters once per group with an axis of one for the slots, which numpy broadcasts, so
`np.matvec` reads each group's matrix once for all its rows (measured: the MLP's 64 x 64 layer
for 64 groups of 16 rows, 0.42 ms against 1.25 ms with a copy per row). The numbers are
those of the per-row batch and of the lone brain, bit for bit: the same routine on the same
vectors.

Rows are grouped by their genome's values (a digest of them), so a row loaded later with a
genome the batch holds joins that genome's group, and nothing outside the batch says which
rows belong together. A load lays the grid out again, which costs more than the sharing
saves where rows take other candidates one by one: the batched runner asks for this batch
only where no row will (`make_batch`'s `grouped`). The grid has as many slots as the largest
group has rows; a smaller group's spare slots step zero inputs from the start state, and
nothing reads their outputs. While the rows are the grid in order (row r in slot r % K of
group r // K, as a fresh chunk's rows are), inputs and outputs are reshaped, not copied.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.authoring.array_brain import Arrays, RowGenerators, draw_rows, owned
from evo_core.contract.protocols import IGroupedArrayBrain

__all__ = ["GroupedArrayBrainBatch", "NoisyGroupedArrayBrainBatch", "grouped_batch",
           "groups_rows"]

#: The functions an `IGroupedArrayBrain`'s declaration vouches for
_BROADCASTING = ("initial_state", "forward")


def groups_rows(template: object) -> bool:
    """Whether the batch groups `template`'s rows: it declares `IGroupedArrayBrain`, and no
    class below the one that declared it overrides `initial_state` or `forward`. A
    declaration vouches for the functions its class has; a subclass that writes its own (a
    thesis's variant of a brain, say, which may index one row axis) is stepped row by row
    unless it declares again."""
    if not isinstance(template, IGroupedArrayBrain):
        return False
    classes = type(template).__mro__
    declared = next((index for index, cls in enumerate(classes)
                     if "broadcasts_rows" in vars(cls)), len(classes))
    return not any(name in vars(cls) for cls in classes[:declared] for name in _BROADCASTING)


def _key(genome: NDArray[np.float64]) -> bytes:
    """A genome's values as a 32-byte BLAKE2b digest: what groups its rows, read from the
    array without a copy, and a few bytes kept per group whatever the genome's size (a
    collision needs about 2^128 genomes)."""
    return hashlib.blake2b(np.ascontiguousarray(genome), digest_size=32).digest()


def _group_of(genomes: NDArray[np.float64], known: dict[bytes, int]
              ) -> tuple[NDArray[np.intp], list[int]]:
    """Each genome's group in `known` (its key to its group), genomes not in it added as
    new groups, numbered on; and the index of each new group's first genome."""
    groups = np.empty(len(genomes), dtype=np.intp)
    firsts: list[int] = []
    for index, genome in enumerate(genomes):
        key = _key(genome)
        group = known.get(key)
        if group is None:
            group = known[key] = len(known)
            firsts.append(index)
        groups[index] = group
    return groups, firsts


def _slots(groups: NDArray[np.intp], count: int) -> tuple[NDArray[np.intp], int]:
    """Each row's slot in its group (its rows in row order) and the grid's width, the largest
    group's row count."""
    sizes = np.bincount(groups, minlength=count)
    order = np.argsort(groups, kind="stable")
    firsts = np.cumsum(sizes) - sizes
    slots = np.empty_like(groups)
    slots[order] = np.arange(len(groups), dtype=np.intp) - firsts[groups[order]]
    return slots, int(np.max(sizes, initial=0))


class GroupedArrayBrainBatch:
    """The rows of many genomes stepped as a grid of groups (`IReloadableBatch`,
    `ISubsetBatch`): `params` and `start` hold a group per genome (groups x 1 x ...), `state`
    the grid (groups x slots x ...), `groups` and `slots` where each row sits."""

    def __init__(self, template: IGroupedArrayBrain, params: Arrays, groups: NDArray[np.intp],
                 keys: list[bytes], row_states: Arrays,
                 rngs: list[np.random.Generator | None]) -> None:
        """`params`: each group's (groups x 1 x ...); `keys`: each group's genome's key;
        `row_states`: each row's state (rows x ...; `{}`: the start)."""
        self.template = template
        self.rngs = rngs
        self._noise = int(template.noise_size)
        self._arrange(groups, params, keys, row_states)

    def _arrange(self, groups: NDArray[np.intp], params: Arrays, keys: list[bytes],
                 row_states: Arrays) -> None:
        """Rows in `groups` (of `params` and `keys`) laid out on the grid with the states
        `row_states`; groups no row holds are left out."""
        used, inverse = np.unique(groups, return_inverse=True)
        if len(used) < len(keys):
            params = {name: value[used] for name, value in params.items()}
            keys = [keys[group] for group in used.tolist()]
        self.params, self._keys = params, keys
        self.groups = groups = inverse.astype(np.intp).reshape(-1)
        self.slots, self.width = _slots(groups, len(keys))
        self._dense = len(groups) == len(keys) * self.width and bool(
            np.array_equal(groups, np.arange(len(groups)) // max(self.width, 1)))
        self.start = owned(self.template.initial_state(np, params))
        self.state = {name: np.broadcast_to(value, (len(keys), self.width, *value.shape[2:])
                                            ).copy() for name, value in self.start.items()}
        for name, value in row_states.items():
            self.state[name][groups, self.slots] = value

    def _grid(self, rows: Any) -> Any:
        """Rows x ... as the grid, zeros in the spare slots."""
        if self._dense:
            return rows.reshape(len(self._keys), self.width, *rows.shape[1:])
        grid = np.zeros((len(self._keys), self.width, *rows.shape[1:]), rows.dtype)
        grid[self.groups, self.slots] = rows
        return grid

    def _rows(self, grid: Any) -> Any:
        """The grid's rows, in row order."""
        if self._dense:
            return grid.reshape(len(self.groups), *grid.shape[2:])
        return grid[self.groups, self.slots]

    def load(self, rows: NDArray[np.intp], genomes: NDArray[np.float64]) -> None:
        """Rows `rows[i]` become the brain of `genomes[i]`, in that genome's group (a new one
        if no row holds it); they draw from no Generator yet."""
        known = {key: group for group, key in enumerate(self._keys)}
        loaded, firsts = _group_of(genomes, known)
        params = self.params
        if firsts:
            new = _group_params(self.template, genomes[firsts])
            params = {name: np.concatenate([value, new[name]]) for name, value in
                      params.items()}
        groups = self.groups.copy()
        groups[rows] = loaded
        for row in rows.tolist():
            self.rngs[row] = None
        self._arrange(groups, params, list(known),
                      {name: self._rows(value) for name, value in self.state.items()})

    def subset(self, rows: NDArray[np.intp]) -> GroupedArrayBrainBatch:
        """A batch of rows `rows`: their groups' parameters, their states and Generators."""
        row_states = {name: self._rows(value)[rows] for name, value in self.state.items()}
        return type(self)(self.template, self.params, self.groups[rows], self._keys,
                          row_states, [self.rngs[row] for row in rows.tolist()])

    def reset(self, mask: NDArray[np.bool_] | None = None) -> None:
        rows = slice(None) if mask is None else np.flatnonzero(mask)
        groups, slots = self.groups[rows], self.slots[rows]
        state = {}
        for name, value in self.state.items():
            value = value.copy()
            value[groups, slots] = self.start[name][groups, 0]
            state[name] = value
        self.state = state

    def step(self, observations: Any) -> Any:
        template = self.template
        inputs = self._grid(template.encoder.batch(observations))
        noise = self._grid(draw_rows(self.rngs, self._noise)) if self._noise else None
        self.state, outputs = template.forward(np, self.params, self.state, inputs, noise)
        return template.decoder.batch(self._rows(outputs))


class NoisyGroupedArrayBrainBatch(RowGenerators, GroupedArrayBrainBatch):
    """A `GroupedArrayBrainBatch` whose rows draw noise (`IRandomBrainBatch`)."""


def _group_params(template: IGroupedArrayBrain, genomes: NDArray[np.float64]) -> Arrays:
    """The parameters of `genomes`, one group each (genomes x 1 x ...)."""
    return {name: value[:, None] for name, value in owned(template.params(np, genomes)).items()}


def grouped_batch(template: IGroupedArrayBrain, genomes: NDArray[np.float64]
                  ) -> GroupedArrayBrainBatch:
    """The batch of `genomes` (rows x genome_size), row `i` acting as `make(genomes[i])`, rows
    of equal genomes in one group."""
    keys: dict[bytes, int] = {}
    groups, firsts = _group_of(genomes, keys)
    kind = NoisyGroupedArrayBrainBatch if template.noise_size else GroupedArrayBrainBatch
    return kind(template, _group_params(template, genomes[firsts]), groups, list(keys), {},
                [None] * len(genomes))
