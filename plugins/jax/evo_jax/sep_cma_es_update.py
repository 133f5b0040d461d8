"""Separable CMA-ES (Ros and Hansen 2008) as pure JAX functions: `cma_es_update` with C kept
diagonal.

On genomes of thousands of genes the full form's C is n^2 numbers and its eigen-decomposition
O(n^3) a generation; separable CMA-ES learns C's diagonal alone, so the state is O(n) and a
sample O(n): D is the root of C's diagonal and B the identity, so C^-1/2 y = y / D. Its update is
the full form's (`cma_es_update`'s module doc), C's off-diagonal terms left out:

- C'_jj = (1 + c_1 (1 - h_sigma) c_c (2 - c_c) - c_1 - c_mu sum w_i) C_jj + c_1 p_c'_j^2
  + c_mu sum w°_i y_(i:lambda),j^2, with w°_i = w_i n / |y_(i:lambda) / D|^2 for w_i < 0

with c_1 and c_mu raised by (n + 2) / 3 (`Constants.of(diagonal=True)`): n numbers are learnt
instead of n (n + 1) / 2, and the paper raises the learning rate by that factor. The shared
steps (mean, paths, step size, the active weights, the rescaling and the limits that keep a run
finite) are `cma_es_update`'s own functions; only C's representation differs.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from evo_core import gene_limit, sampling_problem
from evo_jax.cma_es_update import (
    Constants,
    active_weights,
    mean_and_paths,
    rescaling,
    retained,
    scale_floor,
    within_limits,
)
from evo_jax.termination import spread_stalled

__all__ = ["SepCMAState", "initial_state", "ask", "tell", "stalled", "inconsistency"]


class SepCMAState(NamedTuple):
    """Everything separable CMA-ES carries between generations (a pytree of arrays)."""

    mean: Any  # (n,)
    sigma: Any  # ()
    variances: Any  # (n,) C's diagonal, each at or above the floor of D (`scale_floor`)
    p_sigma: Any  # (n,)
    p_c: Any  # (n,)
    generation: Any  # () int32: tells so far
    key: Any  # (2,) uint32: the raw data of the JAX key the next ask draws from


def initial_state(n: int, mean: Any, sigma: float, key_data: Any) -> SepCMAState:
    """C = I, paths zero, the mean `mean` (a number for every gene, or n of them)."""
    import jax.numpy as jnp

    real = jnp.result_type(float)
    return SepCMAState(jnp.broadcast_to(jnp.asarray(mean, dtype=real), (n,)),
                       jnp.asarray(sigma, dtype=real),
                       jnp.ones(n, dtype=real), jnp.zeros(n, dtype=real),
                       jnp.zeros(n, dtype=real), jnp.asarray(0, dtype=jnp.int32),
                       jnp.asarray(key_data, dtype=jnp.uint32))


def ask(constants: Constants, state: SepCMAState) -> tuple[SepCMAState, Any, Any]:
    """(the state with its key advanced, the samples x (lambda, n), their steps y = D z)."""
    import jax
    import jax.numpy as jnp

    key, draw = jax.random.split(jax.random.wrap_key_data(state.key))
    z = jax.random.normal(draw, (constants.lam, constants.n), dtype=state.mean.dtype)
    y = z * jnp.sqrt(state.variances)
    x = state.mean + state.sigma * y
    return state._replace(key=jax.random.key_data(key)), x, y


def tell(constants: Constants, state: SepCMAState, y: Any, order: Any) -> SepCMAState:
    """The state after the samples with steps `y` were ranked: `order` holds every sample's
    index, the best first."""
    import jax.numpy as jnp

    c = constants
    ranked = y[order]
    scales = jnp.sqrt(state.variances)
    moved = mean_and_paths(c, state, ranked, lambda steps: steps / scales)
    adjusted = active_weights(c, jnp.sum((ranked / scales) ** 2, axis=1))
    variances = (retained(c, moved.h_sigma) * state.variances + c.c_1 * moved.p_c ** 2
                 + c.c_mu * (adjusted @ ranked ** 2))
    rescale = rescaling(variances)
    variances = variances / rescale
    variances = jnp.maximum(variances, scale_floor(variances))
    mean, sigma = within_limits(moved.mean, moved.sigma * jnp.sqrt(rescale),
                                jnp.sqrt(variances))
    return SepCMAState(mean, sigma, variances, moved.p_sigma, moved.p_c / jnp.sqrt(rescale),
                       state.generation + 1, state.key)


def stalled(state: SepCMAState) -> Any:
    """The state's termination criteria (`termination.spread_stalled`): is the run over? The
    principal axes are the coordinates."""
    import jax.numpy as jnp

    deviations = jnp.sqrt(state.variances)
    i = state.generation % deviations.shape[0]
    axis = jnp.zeros_like(deviations).at[i].set(deviations[i])
    return spread_stalled(state.mean, state.sigma, state.p_c, deviations, axis,
                          jnp.max(state.variances) / jnp.min(state.variances))


def inconsistency(state: SepCMAState) -> str | None:
    """The first relation that `tell` keeps between the fields of a state and `state` breaks, as
    "optimizer.FIELD: why", or None (the caller checked shapes, types and finiteness): C's
    diagonal positive, within the float type and its condition below 1 / eps (a zero variance
    divides by zero in the next tell), the mean and paths and the samples within the gene
    limit."""
    real = np.asarray(state.mean).dtype
    info = np.finfo(real)
    limit = gene_limit(real)
    generation = int(state.generation)
    if not 0 <= generation < np.iinfo(np.int32).max:
        return f"optimizer.generation: {generation}, not a count of updates"
    for name in ("mean", "p_sigma", "p_c"):
        largest = float(np.max(np.abs(getattr(state, name))))
        if largest > limit:
            return (f"optimizer.{name}: values as large as {largest:.3g}, beyond ±{limit:.3g}, "
                    f"the farthest a gene may go in {real.name}")
    variances = np.asarray(state.variances, np.float64)
    top = float(np.max(variances))
    if not math.sqrt(max(top, 0.0)) <= limit:
        return f"optimizer.variances: as large as {top:.3g}, beyond {limit:.3g} squared"
    floor = max(float(info.eps) * top, float(info.tiny))
    if not float(np.min(variances)) >= floor * (1 - 4 * math.sqrt(float(info.eps))):
        return (f"optimizer.variances: not all positive within the condition {1 / info.eps:.3g} "
                "the update keeps (the least below eps times the largest)")
    return sampling_problem("optimizer.sigma", float(state.sigma), real,
                            center=float(np.max(np.abs(state.mean))),
                            spread=math.sqrt(top) * (1 - 4 * math.sqrt(float(info.eps))))
