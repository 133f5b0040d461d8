"""The observation normaliser on the engine's rows (evaluation/rows.py), and the statistics of
the observations each job's brain was given.

Every observation a running row's brain steps on is pooled, raw, into the row's statistics
(`combine` with a count of 1: Welford's update, per row, so a job's statistics depend on its
own observations and their order alone, not on which other rows step beside it); the brains
get them normalised by the generation's frozen normaliser. When a row's episode ends its
statistics become its job's, and a candidate's jobs are pooled in episode order
(`candidate_statistics`): "off" and sync give the same numbers, whatever the rows.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.contract.observation_statistics import (
    ObservationNormalizer,
    ObservationStatistics,
    combine,
    normalize,
)

__all__ = ["RowObservations", "candidate_statistics"]


class RowObservations:
    """Each row's statistics of its current job, and each ended job's."""

    def __init__(self, normalizer: ObservationNormalizer, rows: int, jobs: int) -> None:
        self.normalizer = normalizer
        size = normalizer.size
        self._count = np.zeros((rows, 1))  # float64: exact to 2**53, and no int-float mixing
        self._mean = np.zeros((rows, size))
        self._m2 = np.zeros((rows, size))
        self._kept: NDArray[np.intp] | None = None  # the rows the brains step (None: all)
        self.jobs: list[ObservationStatistics] = [ObservationStatistics.empty(size)] * jobs

    def begin(self, rows: Sequence[int]) -> None:
        """Rows begin a job: no observation yet."""
        self._count[rows] = 0
        self._mean[rows] = 0.0
        self._m2[rows] = 0.0

    def narrow(self, kept: NDArray[np.intp]) -> None:
        """The brains step only `kept` (sorted) from now on: their input holds those rows."""
        self._kept = kept

    def see(self, observations: Any, running: Sequence[int] | NDArray[np.intp]) -> Any:
        """The brains' input normalised, in its own shape, after pooling the observations of
        the `running` rows (those in an episode) into their statistics."""
        normalizer = self.normalizer
        values = np.asarray(observations, dtype=np.float64)
        flat = values.reshape(-1, normalizer.size)
        if self._kept is None and len(running) == len(self._count):  # every row runs ("off")
            self._count, self._mean, self._m2 = combine(np, self._count, self._mean, self._m2,
                                                        1.0, flat, 0.0)
        elif len(running):
            rows = np.asarray(running, dtype=np.intp)
            positions = rows if self._kept is None else np.searchsorted(self._kept, rows)
            count, mean, m2 = combine(np, self._count[rows], self._mean[rows], self._m2[rows],
                                      1.0, flat[positions], 0.0)
            self._count[rows], self._mean[rows], self._m2[rows] = count, mean, m2
        return normalize(np, flat, normalizer.mean, normalizer.std,
                         normalizer.clip).reshape(values.shape)

    def end(self, row: int, job: int) -> None:
        """The row's episode, of `job`, has ended: its statistics are the job's."""
        self.jobs[job] = ObservationStatistics(int(self._count[row, 0]), self._mean[row].copy(),
                                               self._m2[row].copy())


def candidate_statistics(jobs: Sequence[ObservationStatistics], runs: int
                         ) -> list[ObservationStatistics]:
    """Each candidate's statistics: its `runs` consecutive jobs pooled in episode order."""
    return [functools.reduce(ObservationStatistics.merged, jobs[start:start + runs])
            for start in range(0, len(jobs), runs)]
