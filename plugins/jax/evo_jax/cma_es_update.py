"""CMA-ES's sampling and update as pure JAX functions: a state in, a state out, jitted.

The equations are those of Hansen's tutorial ("The CMA Evolution Strategy: A Tutorial", 2016,
its Table 1 and the default constants of its appendix A), with active covariance update
(negative weights for the worse half, as pycma's and evosax's defaults have) and the learning
rate of the mean 1. The samples are ranked best first, y_(i:lambda) the i-th best's step:

- sample: z_k ~ N(0, I), y_k = B D z_k, x_k = m + sigma y_k, k = 1..lambda
- raw weights w'_i = ln(mu + 1/2) - ln i, i = 1..lambda (positive for the mu best);
  mu_eff = (sum w'+)^2 / sum w'+^2 over the positive ones, mu_eff- likewise over the others;
  the positive ones sum to 1, the negative ones to -min(1 + c_1 / c_mu,
  1 + 2 mu_eff- / (mu_eff + 2), (1 - c_1 - c_mu) / (n c_mu))
- y_w = sum over the mu best of w_i y_(i:lambda); m' = m + sigma y_w
- p_sigma' = (1 - c_sigma) p_sigma + sqrt(c_sigma (2 - c_sigma) mu_eff) C^-1/2 y_w,
  C^-1/2 = B D^-1 B^T
- sigma' = sigma exp(c_sigma / d_sigma (|p_sigma'| / E|N(0, I)| - 1))
- h_sigma = 1 if |p_sigma'| / sqrt(1 - (1 - c_sigma)^(2 (g + 1))) < (1.4 + 2 / (n + 1))
  E|N(0, I)|, else 0
- p_c' = (1 - c_c) p_c + h_sigma sqrt(c_c (2 - c_c) mu_eff) y_w
- C' = (1 + c_1 (1 - h_sigma) c_c (2 - c_c) - c_1 - c_mu sum w_i) C + c_1 p_c' p_c'^T
  + c_mu sum w°_i y_(i:lambda) y_(i:lambda)^T, with w°_i = w_i for w_i >= 0 and
  w_i n / |C^-1/2 y_(i:lambda)|^2 otherwise
- then C' = B' D'^2 B'^T (symmetrised; its eigenvalues kept at or above eps times the
  largest, so that D^-1 stays finite)

Outside the tutorial, so that a run its own update drives to the float type's ends stays
finite and its checkpoints load again (`inconsistency` checks what a loaded state must keep):
once C's largest eigenvalue leaves [2^-32, 2^32], C and p_c are divided by it and sigma
multiplied by its root (the same distribution); an eigenvalue of C below the floor of D (a
negative one: the active update makes them once sigma is too small to tell samples apart) sets
C to B D^2 B^T; the mean is kept within the gene limit of the float type
(`evo_core.gene_limit`) and sigma between its smallest normal number and the largest that keeps
samples, ten standard deviations out, within that limit. Without them a converged run's sigma
underflowed to 0 and C went indefinite, and a diverging one sampled ±inf.

with c_sigma = (mu_eff + 2) / (n + mu_eff + 5), d_sigma = 1 + 2 max(0, sqrt((mu_eff - 1) /
(n + 1)) - 1) + c_sigma, c_c = (4 + mu_eff / n) / (n + 4 + 2 mu_eff / n), c_1 = 2 / ((n + 1.3)^2
+ mu_eff), c_mu = min(1 - c_1, 2 (mu_eff - 2 + 1 / mu_eff) / ((n + 2)^2 + mu_eff)) and
E|N(0, I)| ~ sqrt(n) (1 - 1 / (4 n) + 1 / (21 n^2)) (`Constants.of`). Everything is computed in
JAX's default float type (float32 unless `jax_enable_x64` is set), like the rollout.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from evo_core import DEVIATIONS, gene_limit, sampling_problem
from evo_jax.termination import spread_stalled

__all__ = ["Constants", "CMAState", "SCALE_RANGE", "initial_state", "ask", "tell",
           "inconsistency", "stalled", "Moved", "mean_and_paths", "active_weights", "retained",
           "rescaling", "scale_floor", "within_limits"]

#: C's largest eigenvalue is kept within [1 / SCALE_RANGE, SCALE_RANGE] (sigma carries the scale)
SCALE_RANGE = 2.0**32


@dataclass(frozen=True)
class Constants:
    """The strategy's constants for n genes, lambda samples, mu parents (the tutorial's
    defaults); hashable, so that jit treats them as static."""

    n: int
    lam: int
    mu: int
    weights: tuple[float, ...]
    mu_eff: float
    c_sigma: float
    d_sigma: float
    c_c: float
    c_1: float
    c_mu: float
    chi_n: float

    #: the separable form's (Ros and Hansen 2008): c_1 and c_mu times (n + 2) / 3
    diagonal: bool = False

    @classmethod
    def of(cls, n: int, lam: int, mu: int, diagonal: bool = False) -> Constants:
        """The tutorial's constants; with `diagonal`, separable CMA-ES's: C's diagonal alone
        is learnt, so its learning rates are raised by (n + 2) / 3 (Ros and Hansen 2008; the
        negative weights' bounds computed from the raised rates)."""
        raw = [math.log(mu + 0.5) - math.log(i) for i in range(1, lam + 1)]
        positive, negative = raw[:mu], raw[mu:]
        mu_eff = sum(positive) ** 2 / sum(w * w for w in positive)
        c_sigma = (mu_eff + 2) / (n + mu_eff + 5)
        d_sigma = 1 + 2 * max(0.0, math.sqrt((mu_eff - 1) / (n + 1)) - 1) + c_sigma
        c_c = (4 + mu_eff / n) / (n + 4 + 2 * mu_eff / n)
        faster = (n + 2) / 3 if diagonal else 1.0
        c_1 = min(1.0, faster * 2 / ((n + 1.3) ** 2 + mu_eff))
        c_mu = min(1 - c_1, faster * 2 * (mu_eff - 2 + 1 / mu_eff) / ((n + 2) ** 2 + mu_eff))
        weights = [w / sum(positive) for w in positive]
        if negative and sum(negative) < 0:
            mu_eff_minus = sum(negative) ** 2 / sum(w * w for w in negative)
            scale = min(1 + c_1 / c_mu, 1 + 2 * mu_eff_minus / (mu_eff + 2),
                        (1 - c_1 - c_mu) / (n * c_mu)) if c_mu > 0 else 0.0
            weights += [scale * w / -sum(negative) for w in negative]
        else:  # mu = lambda, or a worse half of weight 0 (mu = lambda - 1)
            weights += [0.0] * len(negative)
        chi_n = math.sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n))
        return cls(n, lam, mu, tuple(weights), mu_eff, c_sigma, d_sigma, c_c, c_1, c_mu, chi_n,
                   diagonal)


class CMAState(NamedTuple):
    """Everything the strategy carries between generations (a pytree of arrays)."""

    mean: Any  # (n,)
    sigma: Any  # ()
    cov: Any  # (n, n) C
    basis: Any  # (n, n) B, eigenvectors of C in columns
    scales: Any  # (n,) D, square roots of C's eigenvalues
    p_sigma: Any  # (n,)
    p_c: Any  # (n,)
    generation: Any  # () int32: tells so far
    key: Any  # (2,) uint32: the raw data of the JAX key the next ask draws from


def initial_state(n: int, mean: Any, sigma: float, key_data: Any) -> CMAState:
    """C = I, paths zero, the mean `mean` (a number for every gene, or n of them)."""
    import jax.numpy as jnp

    real = jnp.result_type(float)
    return CMAState(jnp.broadcast_to(jnp.asarray(mean, dtype=real), (n,)),
                    jnp.asarray(sigma, dtype=real),
                    jnp.eye(n, dtype=real), jnp.eye(n, dtype=real), jnp.ones(n, dtype=real),
                    jnp.zeros(n, dtype=real), jnp.zeros(n, dtype=real),
                    jnp.asarray(0, dtype=jnp.int32), jnp.asarray(key_data, dtype=jnp.uint32))


def ask(constants: Constants, state: CMAState) -> tuple[CMAState, Any, Any]:
    """(the state with its key advanced, the samples x (lambda, n), their steps y = B D z)."""
    import jax

    key, draw = jax.random.split(jax.random.wrap_key_data(state.key))
    z = jax.random.normal(draw, (constants.lam, constants.n), dtype=state.mean.dtype)
    y = (z * state.scales) @ state.basis.T
    x = state.mean + state.sigma * y
    return state._replace(key=jax.random.key_data(key)), x, y


def tell(constants: Constants, state: CMAState, y: Any, order: Any) -> CMAState:
    """The state after the samples with steps `y` were ranked: `order` holds every sample's
    index, the best first (the caller ranks, in whatever precision its fitness has)."""
    import jax
    import jax.numpy as jnp

    c = constants
    ranked = y[order]
    inverse_root = (state.basis / state.scales) @ state.basis.T  # C^-1/2 = B D^-1 B^T
    moved = mean_and_paths(c, state, ranked, lambda steps: steps @ inverse_root.T)
    adjusted = active_weights(c, jnp.sum((ranked @ inverse_root.T) ** 2, axis=1))
    rank_mu = (ranked * adjusted[:, None]).T @ ranked
    cov = (retained(c, moved.h_sigma) * state.cov + c.c_1 * jnp.outer(moved.p_c, moved.p_c)
           + c.c_mu * rank_mu)
    cov = (cov + cov.T) / 2
    eigenvalues, basis = jnp.linalg.eigh(cov)
    rescale = rescaling(eigenvalues)
    cov, eigenvalues = cov / rescale, eigenvalues / rescale
    floor = scale_floor(eigenvalues)
    scales = jnp.sqrt(jnp.maximum(eigenvalues, floor))
    # C itself raised to the floor where it fell below it: an eigenvalue below the floor (a
    # negative one, which the active update makes once sigma is too small to tell samples
    # apart) would otherwise grow, rescaled, until C overflows
    cov = jax.lax.cond(jnp.min(eigenvalues) < floor,
                       lambda: (basis * scales ** 2) @ basis.T, lambda: cov)
    mean, sigma = within_limits(moved.mean, moved.sigma * jnp.sqrt(rescale), scales)
    return CMAState(mean, sigma, cov, basis, scales, moved.p_sigma,
                    moved.p_c / jnp.sqrt(rescale), state.generation + 1, state.key)


def stalled(state: CMAState) -> Any:
    """The state's termination criteria (`termination.spread_stalled`): is the run over?"""
    import jax.numpy as jnp

    i = state.generation % state.mean.shape[0]
    condition = (jnp.max(state.scales) / jnp.min(state.scales)) ** 2
    return spread_stalled(state.mean, state.sigma, state.p_c, jnp.sqrt(jnp.diag(state.cov)),
                          state.scales[i] * state.basis[:, i], condition)


class Moved(NamedTuple):
    """What the full and the separable update compute alike from the ranked steps."""

    mean: Any
    sigma: Any
    p_sigma: Any
    p_c: Any
    h_sigma: Any  # 1.0 or 0.0, in the state's float type


def mean_and_paths(constants: Constants, state: Any, ranked: Any,
                   whiten: Callable[[Any], Any]) -> Moved:
    """m', sigma', p_sigma', p_c' and h_sigma of the module doc's equations, from the steps
    ranked best first; `whiten` is C^-1/2 applied to rows (the forms differ only in it)."""
    import jax.numpy as jnp

    c = constants
    real = state.mean.dtype
    weights = jnp.asarray(c.weights[:c.mu], dtype=real)
    y_w = weights @ ranked[:c.mu]
    mean = state.mean + state.sigma * y_w
    p_sigma = (1 - c.c_sigma) * state.p_sigma + math.sqrt(
        c.c_sigma * (2 - c.c_sigma) * c.mu_eff) * whiten(y_w)
    norm = jnp.linalg.norm(p_sigma)
    sigma = state.sigma * jnp.exp(c.c_sigma / c.d_sigma * (norm / c.chi_n - 1))
    decay = 1 - (1 - c.c_sigma) ** (2 * (state.generation.astype(real) + 1))
    h_sigma = (norm / jnp.sqrt(decay) < (1.4 + 2 / (c.n + 1)) * c.chi_n).astype(real)
    p_c = (1 - c.c_c) * state.p_c + h_sigma * math.sqrt(c.c_c * (2 - c.c_c) * c.mu_eff) * y_w
    return Moved(mean, sigma, p_sigma, p_c, h_sigma)


def active_weights(constants: Constants, whitened: Any) -> Any:
    """w°_i: the weights, the negative ones times n / |C^-1/2 y_(i:lambda)|^2 (`whitened`,
    per ranked sample)."""
    import jax.numpy as jnp

    weights = jnp.asarray(constants.weights, dtype=whitened.dtype)
    return jnp.where(weights >= 0, weights, weights * constants.n / whitened)


def retained(constants: Constants, h_sigma: Any) -> Any:
    """The factor of the old C in C': 1 + c_1 (1 - h_sigma) c_c (2 - c_c) - c_1 - c_mu sum w."""
    c = constants
    return 1 + c.c_1 * (1 - h_sigma) * c.c_c * (2 - c.c_c) - c.c_1 - c.c_mu * sum(c.weights)


def rescaling(eigenvalues: Any) -> Any:
    """What C is divided by (and sigma multiplied by the root of, the distribution unchanged):
    C's largest eigenvalue once it leaves [1 / SCALE_RANGE, SCALE_RANGE], else 1 (a
    converging C would underflow, a diverging one overflow)."""
    import jax.numpy as jnp

    top = jnp.max(eigenvalues)
    return jnp.where((top > 0) & ((top > SCALE_RANGE) | (top < 1 / SCALE_RANGE)), top, 1)


def scale_floor(eigenvalues: Any) -> Any:
    """The least eigenvalue of C that D keeps: eps of the float type times the largest, so
    that C's condition stays below 1 / eps and D^-1 finite."""
    import jax.numpy as jnp

    info = np.finfo(eigenvalues.dtype)
    return jnp.maximum(float(info.eps) * jnp.max(eigenvalues), float(info.tiny))


def within_limits(mean: Any, sigma: Any, scales: Any) -> tuple[Any, Any]:
    """Every gene of the mean and of the samples kept within the float type's gene limit, and
    sigma a normal number of it (a diverging or converged run stays finite)."""
    import jax.numpy as jnp

    info = np.finfo(mean.dtype)
    limit = gene_limit(mean.dtype)
    mean = jnp.clip(mean, -limit, limit)
    room = (limit - jnp.max(jnp.abs(mean))) / (DEVIATIONS * jnp.max(scales))
    return mean, jnp.maximum(jnp.minimum(sigma, room), float(info.tiny))


def inconsistency(state: CMAState) -> str | None:
    """The first relation that `tell` keeps between the fields of a state and `state` breaks, as
    "optimizer.FIELD: why", or None. Its fields are numpy arrays of the state's shapes and
    types, finite (the caller checked): an edit that keeps them so can still give a NaN mean in
    the next generation (a zeroed basis divides by zero, a negative-definite cov takes the root
    of a negative number) or genes that overflow. Checked in float64, within the rounding of
    the state's float type."""
    real = np.asarray(state.mean).dtype
    info = np.finfo(real)
    tolerance = 4 * math.sqrt(float(info.eps))  # float32: 1.4e-3; its eigh is within 3e-6
    limit = gene_limit(real)
    generation = int(state.generation)
    if not 0 <= generation < np.iinfo(np.int32).max:
        return f"optimizer.generation: {generation}, not a count of updates"
    for name in ("mean", "p_sigma", "p_c"):
        largest = float(np.max(np.abs(getattr(state, name))))
        if largest > limit:
            return (f"optimizer.{name}: values as large as {largest:.3g}, beyond ±{limit:.3g}, "
                    f"the farthest a gene may go in {real.name}")
    basis, cov = np.asarray(state.basis, np.float64), np.asarray(state.cov, np.float64)
    scales = np.asarray(state.scales, np.float64)
    if not (scales > 0).all() or scales.max() > limit:
        return f"optimizer.scales: not all within (0, {limit:.3g}]"
    top = float(scales.max()) ** 2
    n = len(scales)
    skew = float(np.max(np.abs(basis.T @ basis - np.eye(n))))
    if skew > tolerance:
        return f"optimizer.basis: not orthonormal (B^T B is off the identity by {skew:.3g})"
    if float(np.max(np.abs(cov - cov.T))) > tolerance * top:
        return "optimizer.cov: not symmetric"
    rotated = basis.T @ cov @ basis  # diagonal, of C's eigenvalues, if B holds C's eigenvectors
    eigenvalues = np.diag(rotated)
    off = float(np.max(np.abs(rotated - np.diag(eigenvalues)))) / top
    if off > tolerance:
        return (f"optimizer.basis: not the eigenvectors of optimizer.cov (B^T C B is off the "
                f"diagonal by {off:.3g} of the largest eigenvalue)")
    if float(eigenvalues.min()) < -tolerance * top:
        return (f"optimizer.cov: not positive-definite (an eigenvalue of "
                f"{float(eigenvalues.min()):.3g})")
    floor = max(float(info.eps) * float(eigenvalues.max()), float(info.tiny))
    if float(np.max(np.abs(np.maximum(eigenvalues, floor) - scales ** 2))) > \
            tolerance * top + float(info.tiny):
        return "optimizer.scales: not the square roots of the eigenvalues of optimizer.cov"
    # the slack: tell caps sigma in the state's own float type
    return sampling_problem("optimizer.sigma", float(state.sigma), real,
                            center=float(np.max(np.abs(state.mean))),
                            spread=math.sqrt(top) * (1 - tolerance))
