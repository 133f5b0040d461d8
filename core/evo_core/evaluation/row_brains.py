"""The brains of the engine's rows (evaluation/rows.py): a lone brain, or a brain batch.

Before a row begins a job its brain gets the job's Generator (a random brain or batch: the one
`use_rng` gets for the same episode of the same genome, `rows.evaluation_seeds`) and is reset;
a batch row that held another candidate is first loaded with the job's genome
(`IReloadableBatch.load`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from evo_core.contract.protocols import IBrain, IBrainBatch, IReloadableBatch
from evo_core.evaluation.rows import brain_generator

__all__ = ["BatchBrains", "LoneBrain"]


class LoneBrain:
    """One brain, one row: per-genome evaluation."""

    def __init__(self, brain: IBrain, seeds: list[np.random.SeedSequence], random: bool) -> None:
        """`seeds`: each episode's brain seed (`rows.evaluation_seeds`); used if `random`."""
        self.brain = brain
        self.step = brain.step
        self._seeds = seeds
        self._random = random

    def prepare(self, rows: list[int], jobs: list[int]) -> None:
        if self._random:
            self.brain.use_rng(brain_generator(self._seeds[jobs[0]]))  # type: ignore[attr-defined]
        self.brain.reset()


class BatchBrains:
    """A brain batch whose row `i` holds candidate `held[i]` of `genomes`."""

    def __init__(self, batch: IBrainBatch, genomes: NDArray[np.float64], runs: int,
                 seeds: list[list[np.random.SeedSequence]] | None, held: list[int]) -> None:
        """`seeds`: each candidate's per-episode brain seeds, or None for a batch whose rows
        draw no random numbers."""
        self.batch = batch
        self.step = batch.step
        self._genomes = genomes
        self._runs = runs
        self._seeds = seeds
        self._held = list(held)
        self._mask = np.zeros(len(held), dtype=bool)

    def prepare(self, rows: list[int], jobs: list[int]) -> None:
        runs = self._runs
        candidates = [job // runs for job in jobs]
        loading = [(row, c) for row, c in zip(rows, candidates) if self._held[row] != c]
        if loading:
            batch = self.batch
            assert isinstance(batch, IReloadableBatch), "rows of a fixed batch never change"
            batch.load(np.array([row for row, _ in loading], dtype=np.intp),
                       self._genomes[[c for _, c in loading]])
            for row, c in loading:
                self._held[row] = c
        if self._seeds is not None:
            rngs: list[np.random.Generator | None] = [None] * len(self._held)
            for row, job in zip(rows, jobs):
                rngs[row] = brain_generator(self._seeds[job // runs][job % runs])
            self.batch.use_rngs(rngs)  # type: ignore[attr-defined]
        mask = self._mask
        mask[:] = False
        mask[rows] = True
        self.batch.reset(mask)

