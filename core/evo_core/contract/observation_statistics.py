"""Running observation normalisation (`[episodes] observation_normalization = "running"`): the
statistics the evaluations gather and the normaliser a generation's brains see them through.

As in the published ES results on locomotion (ARS, OpenAI-ES), each entry of the flattened Box
observation reaches the brain as `(o - mean) / std`, optionally clipped to `[-clip, clip]`,
with `mean` and `std` those of every observation the evaluations of all *earlier* generations
gave their brains (generation 1: mean 0, std 1). They are frozen within a generation: every
candidate of a generation sees the same `ObservationNormalizer`, handed to the evaluators in
an `EvaluationContext`.

The statistics are a count and, per entry, the mean and the sum of squared deviations (M2).
Every engine gathers them per episode, one observation at a time, and the episodes, the
candidates and the generations are pooled in a fixed order by the same formula (Chan, Golub
and LeVeque's pairwise update, of which Welford's one-observation update is the case
`count_b = 1, m2_b = 0`): `combine`, written once over an array namespace `xp` (numpy here,
`jax.numpy` in evo-jax's compiled rollout). Pooling with empty statistics (count 0, mean and M2
zeros) gives the other operand back bit for bit, so a generation's statistics do not depend on
how the handler chunked it, and sequential, mp and Dask evaluation agree exactly.

An entry whose standard deviation is below `MIN_STD` (an observation entry that never changed)
is divided by 1, not by a number near zero, as ARS does for such entries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["MIN_STD", "EvaluationContext", "ObservationNormalizer", "ObservationStatistics",
           "combine", "normalize"]

#: A standard deviation below this is taken as 1 (the entry is only centred).
MIN_STD = 1e-8


def combine(xp: Any, count_a: Any, mean_a: Any, m2_a: Any, count_b: Any, mean_b: Any,
            m2_b: Any) -> tuple[Any, Any, Any]:
    """The count, mean and M2 of two pooled sets of observations (Chan et al.'s update).

    The counts broadcast against the means (a row's count as shape (rows, 1) against means of
    (rows, entries)); a set with count 0 must hold zeros, and then the other set comes back
    unchanged. One observation `x` is pooled as `(1, x, 0)`: Welford's update."""
    count = count_a + count_b
    share = count_b / xp.maximum(count, 1)  # of the pooled count, set b's; 0 when both are empty
    delta = mean_b - mean_a
    mean = mean_a + delta * share
    m2 = m2_a + m2_b + delta * delta * (count_a * share)
    return count, mean, m2


def normalize(xp: Any, observations: Any, mean: Any, std: Any, clip: float | None) -> Any:
    """`(observations - mean) / std`, clipped to `[-clip, clip]` unless `clip` is None; the
    observations flattened, with the entries on the last axis."""
    scaled = (observations - mean) / std
    # minimum of maximum: clip's numbers, at a fraction of numpy's `clip` call on a small array
    return scaled if clip is None else xp.minimum(xp.maximum(scaled, -clip), clip)


@dataclass(frozen=True, eq=False)
class ObservationStatistics:
    """A count of observations and, per entry of the flattened observation, their mean and M2
    (the sum of squared deviations from the mean), in float64."""

    count: int
    mean: NDArray[np.float64]
    m2: NDArray[np.float64]

    @classmethod
    def empty(cls, size: int) -> ObservationStatistics:
        """No observation yet, of `size` entries."""
        return cls(0, np.zeros(size), np.zeros(size))

    def merged(self, other: ObservationStatistics) -> ObservationStatistics:
        """These observations pooled with `other`'s (`combine`)."""
        count, mean, m2 = combine(np, self.count, self.mean, self.m2, other.count, other.mean,
                                  other.m2)
        return ObservationStatistics(int(count), mean, m2)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ObservationStatistics):
            return NotImplemented
        return self.count == other.count and bool(np.array_equal(self.mean, other.mean)) and \
            bool(np.array_equal(self.m2, other.m2))

    __hash__ = None  # type: ignore[assignment]  # holds arrays


@dataclass(frozen=True, eq=False)
class ObservationNormalizer:
    """What a generation's brains see observations through: `normalize` with `mean` and `std`
    (per entry of the flattened observation, float64) and `clip` (None: no clipping)."""

    mean: NDArray[np.float64]
    std: NDArray[np.float64]
    clip: float | None = None

    @classmethod
    def of(cls, statistics: ObservationStatistics, clip: float | None
           ) -> ObservationNormalizer:
        """The normaliser of `statistics`: their mean, and the square root of their variance
        (M2 / count; 1 where it is below `MIN_STD`, and everywhere before any observation)."""
        std = np.sqrt(statistics.m2 / max(statistics.count, 1))
        return cls(statistics.mean.copy(), np.where(std < MIN_STD, 1.0, std), clip)

    @property
    def size(self) -> int:
        """The entries of the flattened observation."""
        return len(self.mean)


@dataclass(frozen=True)
class EvaluationContext:
    """What every evaluation of one generation shares besides the template and the episodes
    table: the observation normaliser (None: observations reach the brains as they are).

    Handlers that declare `IContextHandler` take it with the genomes and hand it to evaluators
    that declare `IContextEvaluator` (contract/protocols.py); it is small, and travels with
    every chunk of genomes."""

    normalizer: ObservationNormalizer | None = None
