"""Fitness shaping by rank, shared by the gradient-estimating evolution strategies.

An evolution strategy that estimates a gradient from raw returns takes its step size from the
returns' scale: one lucky episode, or a task whose returns grow a thousandfold as it is learnt,
changes the step by as much. Ranks make the update invariant to any increasing transform of the
fitness. A NaN fitness ranks below every number (the candidate taught nothing), and of equal
fitnesses the earlier candidate ranks lower, so the shaping is a function of the fitnesses alone.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["ranks", "centered_ranks", "nes_utilities"]

FloatArray = NDArray[np.float64]


def ranks(fitness: NDArray[np.floating]) -> NDArray[np.intp]:
    """Each candidate's rank, 0 for the worst and n - 1 for the best (NaN worst of all)."""
    values = np.asarray(fitness, dtype=np.float64)
    keys = np.where(np.isnan(values), -np.inf, values)
    # NaN and -inf tie at the bottom; the stable sort keeps their order, as for any tie
    order = np.argsort(keys, kind="stable")
    result = np.empty(len(values), dtype=np.intp)
    result[order] = np.arange(len(values))
    return result


def centered_ranks(fitness: NDArray[np.floating]) -> FloatArray:
    """Ranks scaled onto [-0.5, 0.5]: rank / (n - 1) - 0.5, the worst -0.5 and the best 0.5
    (Salimans et al. 2017; EvoJAX's PGPE and evosax's `centered_rank` compute the same)."""
    n = len(fitness)
    if n < 2:
        return np.zeros(n)
    shaped: FloatArray = ranks(fitness) / (n - 1) - 0.5
    return shaped


def nes_utilities(fitness: NDArray[np.floating]) -> FloatArray:
    """The rank-based utilities of natural evolution strategies (Wierstra et al. 2014, section
    3.1, which SNES uses): the candidate of rank k (1 the best of lambda) gets
    max(0, ln(lambda / 2 + 1) - ln k) / sum_j max(0, ln(lambda / 2 + 1) - ln j) - 1 / lambda, so
    the better half pulls in proportion to the log of its rank and the utilities sum to 0."""
    n = len(fitness)
    position = n - ranks(fitness)  # 1 for the best
    raw = np.maximum(0.0, np.log(n / 2 + 1) - np.log(np.arange(1, n + 1)))
    utilities: FloatArray = raw[position - 1] / raw.sum() - 1 / n
    return utilities
