"""When a run of `cma-es-jax` is over, for its restarts: the termination criteria of Hansen's
tutorial (appendix B.3) with pycma's default tolerances, the ones pycma's `stop()` applies for
the core's `cma-es`.

On the fitness, in float64 on the host (`fitness_over`):

- tolflatfitness: the best and the median fitness of the last generation are equal (a flat
  landscape, pycma's default of one flat generation);
- tolfun: the best fitness of each of the last 10 + ceil(30 n / lambda) generations and every
  fitness of the last one lie within TOL_FUN.

On the state, on the device (each form's `stalled`, over `spread_stalled`):

- tolx: sigma times every coordinate's standard deviation and every entry of p_c below TOL_X;
- noeffectaxis: adding a tenth of a standard deviation along the principal axis g mod n leaves
  the mean unchanged; noeffectcoord: adding a fifth along any coordinate does;
- conditioncov: C's condition number above MAX_CONDITION.

and a generation limit (`generation_limit`): pycma's default maxiter, 100 + 150 (n + 3)^2 /
sqrt(lambda), or a BIPOP small run's budget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["TOL_FUN", "TOL_X", "MAX_CONDITION", "history_length", "generation_limit",
           "fitness_over", "spread_stalled", "RunHistory"]

TOL_FUN = 1e-11
TOL_X = 1e-11
MAX_CONDITION = 1e14


def history_length(n: int, lam: int) -> int:
    """How many generations' best fitness tolfun looks back over."""
    return 10 + math.ceil(30 * n / lam)


def generation_limit(n: int, lam: int, budget: float | None) -> float:
    """The most generations a run may take: pycma's maxiter, or less (a small run's budget)."""
    default = 100 + 150 * (n + 3) ** 2 / math.sqrt(lam)
    return default if budget is None else min(default, budget)


def fitness_over(best_history: NDArray[np.float64], last: NDArray[np.float64], n: int
                 ) -> str | None:
    """The fitness criterion that ends the run (`best_history` the best of each generation
    so far, at most `history_length` of them; `last` the last generation's), or None."""
    if len(last) == 0:
        return None
    ranked = np.sort(last)[::-1]  # NaN first: never equal to anything
    if ranked[0] == ranked[len(ranked) // 2]:
        return "tolflatfitness"
    if len(best_history) >= history_length(n, len(last)):
        values = np.concatenate([best_history, last])
        if float(np.max(values) - np.min(values)) < TOL_FUN:
            return "tolfun"
    return None


def spread_stalled(mean: Any, sigma: Any, p_c: Any, deviations: Any, axis: Any,
                   condition: Any) -> Any:
    """The state's criteria, from `deviations` (every coordinate's standard deviation per
    unit of sigma, sqrt(C_jj)), `axis` (the principal axis g mod n, scaled by its standard
    deviation) and C's `condition` number; a JAX boolean."""
    import jax.numpy as jnp

    tolx = (sigma * jnp.max(deviations) < TOL_X) & (sigma * jnp.max(jnp.abs(p_c)) < TOL_X)
    no_effect_axis = jnp.all(mean == mean + 0.1 * sigma * axis)
    no_effect_coord = jnp.any(mean == mean + 0.2 * sigma * deviations)
    return tolx | no_effect_axis | no_effect_coord | (condition > MAX_CONDITION)


@dataclass(frozen=True)
class RunHistory:
    """What the fitness criteria read of the current run: the best fitness of its last
    generations (at most `history_length`) and every fitness of its last one (none before its
    first tell)."""

    best: NDArray[np.float64]
    last: NDArray[np.float64]

    @classmethod
    def empty(cls) -> RunHistory:
        return cls(np.zeros(0), np.zeros(0))

    def told(self, fitness: NDArray[np.float64], n: int) -> RunHistory:
        best = np.append(self.best, np.max(fitness) if not np.isnan(fitness).all() else np.nan)
        return RunHistory(best[-history_length(n, len(fitness)):], fitness.copy())

    def arrays(self) -> dict[str, NDArray[np.float64]]:
        return {"best_history": self.best, "last_fitness": self.last}

    @classmethod
    def restored(cls, state: dict[str, Any], n: int, lam: int, generation: int) -> RunHistory:
        """`arrays` read back as hostile input, for a run of `lam` samples after `generation`
        tells: KeyError for a missing field, ValueError naming one of another shape or type or
        that the tells cannot have left."""
        best, last = np.asarray(state["best_history"]), np.asarray(state["last_fitness"])
        most = min(generation, history_length(n, lam))
        if best.dtype.kind != "f" or best.shape != (most,):
            raise ValueError(f"optimizer.best_history: {best.shape} {best.dtype}, not the best "
                             f"fitness of the run's last {most} generations")
        told = lam if generation else 0
        if last.dtype.kind != "f" or last.shape != (told,):
            raise ValueError(f"optimizer.last_fitness: {last.shape} {last.dtype}, not the "
                             f"{told} fitness values of the run's last generation")
        return cls(np.array(best, dtype=np.float64), np.array(last, dtype=np.float64))
