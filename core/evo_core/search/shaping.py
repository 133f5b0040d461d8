"""What the optimizer is told when `[novelty]` or `[fitness_shaping]` is set: a shaped score.

shaped = fitness rank + novelty_weight x novelty rank + efficiency_weight x steps rank

Ranks run from 1 (lowest fitness, lowest novelty, most steps) to n, and tied values share the
mean of the ranks they span ("average" ranks). With dense ranks, as the predecessor used, a
component with many ties spans fewer ranks and so weighs less than its weight says: with a
sparse reward where most candidates score 0, the fitness ranks span 1-2 while the novelty ranks
span 1-n. Average ranks of every component sum to n(n+1)/2, so the weights mean what they say.

The raw fitness stays what the run reports: log.csv's fitness columns, best.npz and the hall of
fame never see a shaped score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.config.behaviour import FitnessShapingConfig, NoveltyConfig
from evo_core.results.log_file import NOVELTY_COLUMNS, THRESHOLD_COLUMNS
from evo_core.search.novelty import NoveltyArchive

__all__ = ["average_ranks", "shaped_scores", "Shaping"]

FloatArray = NDArray[np.float64]


def average_ranks(values: FloatArray) -> FloatArray:
    """Ranks 1..n in ascending order of `values`, ties sharing their mean rank; NaN ranks
    lowest."""
    values = np.where(np.isnan(values), -np.inf, np.asarray(values, dtype=np.float64))
    count = len(values)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    first = np.concatenate([[True], ordered[1:] != ordered[:-1]]) if count else \
        np.zeros(0, dtype=bool)
    group = np.cumsum(first) - 1
    starts = np.flatnonzero(first)
    ends = np.append(starts[1:], count)
    ranks = np.empty(count, dtype=np.float64)
    ranks[order] = ((starts + 1 + ends) / 2.0)[group]
    return ranks


def shaped_scores(fitness: FloatArray, steps: NDArray[np.int64], novelty: FloatArray | None,
                  novelty_weight: float, efficiency_weight: float) -> FloatArray:
    """fitness rank + novelty_weight x novelty rank + efficiency_weight x steps rank (fewer
    steps rank higher); a weight of 0 leaves its rank out.

    Where that sum could overflow (a config may say `efficiency_weight = 1e308`, and infinite
    scores rank every candidate alike, collapsing the population), every term is divided by the
    largest weight: the optimizers rank what they are told, so the order is the same and the
    scores stay finite. Any other weights give the sum itself."""
    novelty_weight = novelty_weight if novelty is not None else 0.0
    largest = (1.0 + novelty_weight + efficiency_weight) * len(fitness)  # ranks are at most n
    scale = max(1.0, novelty_weight, efficiency_weight) if largest >= _FINITE_BELOW else 1.0
    scores = average_ranks(fitness) / scale if scale != 1.0 else average_ranks(fitness)
    if novelty is not None and novelty_weight:
        scores = scores + (novelty_weight / scale) * average_ranks(novelty)
    if efficiency_weight:
        scores = scores + (efficiency_weight / scale) * average_ranks(
            -np.asarray(steps, dtype=np.float64))
    return scores


#: Sums of ranks below this cannot overflow a float64.
_FINITE_BELOW = float(np.finfo(np.float64).max) / 2


@dataclass
class Shaping:
    """The shaped score of each generation, and novelty search's archive when it is on."""

    efficiency_weight: float
    novelty: NoveltyConfig | None
    archive: NoveltyArchive | None

    @classmethod
    def from_tables(cls, novelty: NoveltyConfig | None, shaping: FitnessShapingConfig | None,
                    rng: np.random.Generator) -> Shaping | None:
        """None when neither table is set: the optimizer is then told the raw fitness."""
        if novelty is None and shaping is None:
            return None
        return cls(0.0 if shaping is None else shaping.efficiency_weight, novelty,
                   None if novelty is None else NoveltyArchive(novelty, rng))

    def scores(self, fitness: FloatArray, steps: NDArray[np.int64],
               descriptors: FloatArray | None) -> tuple[FloatArray, dict[str, Any]]:
        """What to tell the optimizer, and the log.csv columns this adds (none without
        novelty). Adds this generation's chosen candidates to the archive."""
        if self.archive is None or self.novelty is None:
            return shaped_scores(fitness, steps, None, 0.0, self.efficiency_weight), {}
        if descriptors is None:
            raise ValueError("novelty search needs descriptors")
        novelty = self.archive.novelty(descriptors)
        scores = shaped_scores(fitness, steps, novelty, self.novelty.novelty_weight,
                               self.efficiency_weight)
        threshold = self.archive.threshold  # the one this generation's candidates must exceed
        self.archive.insert(descriptors, novelty)
        row: dict[str, Any] = {"novelty_best": float(np.max(novelty)),
                               "novelty_mean": float(novelty.mean()),
                               "archive_size": self.archive.size}
        if self.novelty.adaptive_threshold is not None:
            row["novelty_threshold"] = threshold
        return scores, row

    @property
    def columns(self) -> list[str]:
        if self.novelty is None:
            return []
        return NOVELTY_COLUMNS + (THRESHOLD_COLUMNS if self.novelty.adaptive_threshold
                                  is not None else [])
