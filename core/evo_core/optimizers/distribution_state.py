"""The state of a Gaussian search distribution (centre, step sizes, a gradient step's arrays),
read from a checkpoint as hostile input and kept, update after update, within the bounds that
reading checks.

A run folder can come from anyone, so every value `load_state` takes is checked before it is
used: its key present, its shape, a number type, finite, in its range; a failure is a
ValueError naming `optimizer.<key>`. The centre and the step sizes are held to the bound every
optimizer config is held to (`authoring/gene_limits.py`): genes sampled DEVIATIONS steps out
stay within `gene_limit(float64)`, and a step size is a float64 number of full precision. Each
update ends in `within_limits`, so a run that drifts for ten thousand generations (a stdev
shrinking by 20% a generation, a centre pushed along a ridge) still writes a state that a resume
reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.authoring.gene_limits import DEVIATIONS, gene_limit

__all__ = ["LIMIT", "TINY", "MAX_GENERATIONS", "told_fitness", "state_array", "state_number",
           "check_distribution", "within_limits", "gradient_sigma_problem"]

FloatArray = NDArray[np.float64]

#: how far from 0 a gene may go in float64
LIMIT = gene_limit(np.float64)
#: the smallest float64 number of full precision: the smallest step size kept
TINY = float(np.finfo(np.float64).tiny)
#: generations counted exactly in float64 (Adam's bias correction, the decays)
MAX_GENERATIONS = 2**53


def told_fitness(fitnesses: NDArray[np.floating], population_size: int) -> FloatArray:
    """The fitnesses `tell` got, as float64, or a ValueError when they are not one per genome
    of the last `ask`."""
    values = np.asarray(fitnesses, dtype=np.float64)
    if values.shape != (population_size,):
        raise ValueError(f"tell() got {values.shape} fitness values for {population_size} "
                         "genomes")
    return values


def state_array(state: Mapping[str, Any], key: str, shape: tuple[int, ...]) -> FloatArray:
    """`state[key]` as a float64 array of `shape` with finite values, or a ValueError naming
    `optimizer.<key>`."""
    value = _present(state, key)
    array = np.asarray(value) if isinstance(value, (np.ndarray, np.generic, int, float)) \
        else None
    if array is None or array.shape != shape or array.dtype.kind not in "fiu":
        what = (f"{array.shape} {array.dtype}" if array is not None
                else type(value).__name__)
        expected = "a number" if shape == () else f"the {shape} float64 array"
        raise ValueError(f"optimizer.{key}: {what}, not {expected} this optimizer keeps")
    result = np.array(array, dtype=np.float64)
    if not np.isfinite(result).all():
        raise ValueError(f"optimizer.{key}: NaN or infinite values")
    return result


def state_number(state: Mapping[str, Any], key: str, low: float, high: float, *,
                 integer: bool = False) -> float:
    """`state[key]`, one finite number within [low, high] (a whole number if `integer`), or a
    ValueError naming `optimizer.<key>`."""
    value = float(state_array(state, key, ()))
    if not low <= value <= high or (integer and not value.is_integer()):
        kind = "a whole number" if integer else "a number"
        raise ValueError(f"optimizer.{key}: {value:g}, not {kind} within [{low:g}, {high:g}]")
    return value


def check_distribution(mean: FloatArray, sigma: float | FloatArray, mean_key: str,
                       sigma_key: str) -> None:
    """Refuse step sizes that are not float64 numbers of full precision or that alone reach
    beyond the gene limit (DEVIATIONS steps), and a centre from which they would sample genes
    beyond it: `within_limits` keeps an update's results where this accepts them."""
    steps = np.asarray(sigma, dtype=np.float64)
    if not bool(np.all((steps >= TINY) & (steps <= LIMIT / DEVIATIONS))):
        raise ValueError(f"optimizer.{sigma_key}: values outside [{TINY:.3g}, "
                         f"{LIMIT / DEVIATIONS:.3g}], not step sizes whose genes stay within "
                         f"±{LIMIT:.3g} in float64 ({DEVIATIONS:g} standard deviations out)")
    if not bool(np.all(np.abs(mean) <= _centre_bound(steps))):
        raise ValueError(f"optimizer.{mean_key}: values from which genes would go beyond "
                         f"±{LIMIT:.3g}, the farthest a gene may go in float64 "
                         f"({DEVIATIONS:g} standard deviations of optimizer.{sigma_key} out)")


def within_limits(mean: FloatArray, sigma: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The step sizes within [TINY, LIMIT / DEVIATIONS], then the centre within
    ±(LIMIT - DEVIATIONS x step size): what `check_distribution` accepts. A normal run never
    comes near either bound; a run that drifts for long stays readable."""
    kept_sigma: FloatArray = np.clip(sigma, TINY, LIMIT / DEVIATIONS)
    bound = _centre_bound(kept_sigma)
    kept_mean: FloatArray = np.clip(mean, -bound, bound)
    return kept_mean, kept_sigma


def _centre_bound(sigma: FloatArray) -> FloatArray:
    """How far from 0 the centre may be with these step sizes (one expression, so that the
    clamp and the check agree to the last bit)."""
    bound: FloatArray = LIMIT - DEVIATIONS * sigma
    return bound


def gradient_sigma_problem(field: str, sigma: float) -> str | None:
    """Why a step size is too small for a gradient estimate that divides by it (OpenAI-ES's):
    shaped fitnesses of at most 0.5 times noise of at most DEVIATIONS, over sigma, must stay
    within the gene limit, whose squares Adam sums. None when it is large enough."""
    smallest = DEVIATIONS / LIMIT
    if sigma < smallest:
        return (f"{field} = {sigma:g} is below {smallest:.3g}: the gradient estimate divides by "
                f"it and would overflow float64; the smallest {field} allowed is "
                f"{smallest:.3g}")
    return None


def _present(state: Mapping[str, Any], key: str) -> Any:
    if key not in state:
        raise ValueError(f"optimizer.{key}: missing from the state")
    return state[key]
