"""The brains of the engine's rows (evaluation/rows.py): a lone brain, or a brain batch.

Before a row begins a job its brain gets the job's Generator (a random brain or batch: the one
`use_rng` gets for the same episode of the same genome, `rows.brain_seeds`) and is reset;
a batch row that held another candidate is first loaded with the job's genome
(`IReloadableBatch.load`). Once no job is left, a batch that can (`ISubsetBatch`) steps only the
rows still running.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.contract.protocols import IBrain, IBrainBatch, IReloadableBatch, ISubsetBatch
from evo_core.evaluation.rows import brain_generator

__all__ = ["BatchBrains", "LoneBrain"]


class LoneBrain:
    """One brain, one row: per-genome evaluation."""

    def __init__(self, brain: IBrain, seeds: list[np.random.SeedSequence], random: bool) -> None:
        """`seeds`: each episode's brain seed (`rows.brain_seeds`); used if `random`."""
        self.brain = brain
        self.step = brain.step
        self._seeds = seeds
        self._random = random

    def narrow(self, busy: NDArray[np.bool_]) -> NDArray[np.intp] | None:
        """One row: nothing to leave out."""
        return None

    def prepare(self, rows: list[int], jobs: list[int]) -> None:
        if self._random:
            self.brain.use_rng(brain_generator(self._seeds[jobs[0]]))  # type: ignore[attr-defined]
        self.brain.reset()


class BatchBrains:
    """A brain batch whose row `i` holds candidate `held[i]` of `genomes`.

    Once the chunk has no job left to hand out, `narrow` keeps stepping only the rows that
    still have a job, in the batch's subset of them (`ISubsetBatch`), each time their number
    has at least halved: the environments then give those rows' observations alone, and the
    other rows' actions stay what they last were (the runner ignores them). The engine's rows
    keep their numbers; `_rows` maps the batch's rows to them.
    """

    def __init__(self, batch: IBrainBatch, genomes: NDArray[np.float64], runs: int,
                 seeds: list[list[np.random.SeedSequence]] | None, held: list[int]) -> None:
        """`seeds`: each candidate's per-episode brain seeds, or None for a batch whose rows
        draw no random numbers."""
        self.batch = batch
        self._genomes = genomes
        self._runs = runs
        self._seeds = seeds
        self._held = list(held)
        self._mask = np.zeros(len(held), dtype=bool)
        self._rows: NDArray[np.intp] | None = None  # the engine's row of each batch row
        self._position = np.arange(len(held), dtype=np.intp)  # the batch row of each row
        self._actions: Any = None  # the last actions of every row

    def prepare(self, rows: list[int], jobs: list[int]) -> None:
        runs = self._runs
        positions = self._position[rows].tolist() if self._rows is not None else rows
        candidates = [job // runs for job in jobs]
        loading = [(row, c) for row, c in zip(positions, candidates) if self._held[row] != c]
        if loading:
            batch = self.batch
            assert isinstance(batch, IReloadableBatch), "rows of a fixed batch never change"
            batch.load(np.array([row for row, _ in loading], dtype=np.intp),
                       self._genomes[[c for _, c in loading]])
            for row, c in loading:
                self._held[row] = c
        if self._seeds is not None:
            rngs: list[np.random.Generator | None] = [None] * len(self._held)
            for row, job in zip(positions, jobs):
                rngs[row] = brain_generator(self._seeds[job // runs][job % runs])
            self.batch.use_rngs(rngs)  # type: ignore[attr-defined]
        mask = self._mask
        mask[:] = False
        mask[positions] = True
        self.batch.reset(mask)

    def step(self, observations: Any) -> Any:
        if self._rows is None:
            self._actions = self.batch.step(observations)
            return self._actions
        actions = _copy_rows(self._actions)  # the observations are the kept rows' alone
        _put_rows(actions, self._rows, self.batch.step(observations))
        self._actions = actions
        return actions

    def narrow(self, busy: NDArray[np.bool_]) -> NDArray[np.intp] | None:
        kept = np.flatnonzero(busy)
        if len(kept) > len(self._held) // 2 or self._actions is None or \
                not isinstance(self.batch, ISubsetBatch):
            return None
        ours = kept if self._rows is None else self._position[kept]
        self.batch = self.batch.subset(ours)
        self._held = [self._held[row] for row in ours.tolist()]
        self._mask = np.zeros(len(kept), dtype=bool)
        self._rows = kept
        self._position[kept] = np.arange(len(kept), dtype=np.intp)
        return kept


def _put_rows(batched: Any, rows: NDArray[np.intp], values: Any) -> None:
    """`values` (a batch of `len(rows)` rows) written into rows `rows` of `batched`."""
    if isinstance(batched, tuple):
        for part, value in zip(batched, values):
            _put_rows(part, rows, value)
    elif isinstance(batched, Mapping):
        for key, part in batched.items():
            _put_rows(part, rows, values[key])
    else:
        batched[rows] = values


def _copy_rows(batched: Any) -> Any:
    """A writable copy of a batch in vector-environment layout."""
    if isinstance(batched, tuple):
        return tuple(_copy_rows(part) for part in batched)
    if isinstance(batched, Mapping):
        return {key: _copy_rows(part) for key, part in batched.items()}
    return np.array(batched)
