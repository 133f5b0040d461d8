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

with c_sigma = (mu_eff + 2) / (n + mu_eff + 5), d_sigma = 1 + 2 max(0, sqrt((mu_eff - 1) /
(n + 1)) - 1) + c_sigma, c_c = (4 + mu_eff / n) / (n + 4 + 2 mu_eff / n), c_1 = 2 / ((n + 1.3)^2
+ mu_eff), c_mu = min(1 - c_1, 2 (mu_eff - 2 + 1 / mu_eff) / ((n + 2)^2 + mu_eff)) and
E|N(0, I)| ~ sqrt(n) (1 - 1 / (4 n) + 1 / (21 n^2)) (`Constants.of`). Everything is computed in
JAX's default float type (float32 unless `jax_enable_x64` is set), like the rollout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

__all__ = ["Constants", "CMAState", "initial_state", "ask", "tell"]


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

    @classmethod
    def of(cls, n: int, lam: int, mu: int) -> Constants:
        raw = [math.log(mu + 0.5) - math.log(i) for i in range(1, lam + 1)]
        positive, negative = raw[:mu], raw[mu:]
        mu_eff = sum(positive) ** 2 / sum(w * w for w in positive)
        c_sigma = (mu_eff + 2) / (n + mu_eff + 5)
        d_sigma = 1 + 2 * max(0.0, math.sqrt((mu_eff - 1) / (n + 1)) - 1) + c_sigma
        c_c = (4 + mu_eff / n) / (n + 4 + 2 * mu_eff / n)
        c_1 = 2 / ((n + 1.3) ** 2 + mu_eff)
        c_mu = min(1 - c_1, 2 * (mu_eff - 2 + 1 / mu_eff) / ((n + 2) ** 2 + mu_eff))
        weights = [w / sum(positive) for w in positive]
        if negative and sum(negative) < 0:
            mu_eff_minus = sum(negative) ** 2 / sum(w * w for w in negative)
            scale = min(1 + c_1 / c_mu, 1 + 2 * mu_eff_minus / (mu_eff + 2),
                        (1 - c_1 - c_mu) / (n * c_mu)) if c_mu > 0 else 0.0
            weights += [scale * w / -sum(negative) for w in negative]
        else:  # mu = lambda, or a worse half of weight 0 (mu = lambda - 1)
            weights += [0.0] * len(negative)
        chi_n = math.sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n))
        return cls(n, lam, mu, tuple(weights), mu_eff, c_sigma, d_sigma, c_c, c_1, c_mu, chi_n)


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


def initial_state(n: int, mean: float, sigma: float, key_data: Any) -> CMAState:
    """C = I, paths zero, every gene of the mean `mean`."""
    import jax.numpy as jnp

    real = jnp.result_type(float)
    return CMAState(jnp.full(n, mean, dtype=real), jnp.asarray(sigma, dtype=real),
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
    import jax.numpy as jnp

    c = constants
    n = c.n
    weights = jnp.asarray(c.weights, dtype=state.mean.dtype)
    ranked = y[order]
    y_w = weights[:c.mu] @ ranked[:c.mu]
    mean = state.mean + state.sigma * y_w
    inverse_root = (state.basis / state.scales) @ state.basis.T  # C^-1/2 = B D^-1 B^T
    p_sigma = (1 - c.c_sigma) * state.p_sigma + math.sqrt(
        c.c_sigma * (2 - c.c_sigma) * c.mu_eff) * (inverse_root @ y_w)
    norm = jnp.linalg.norm(p_sigma)
    sigma = state.sigma * jnp.exp(c.c_sigma / c.d_sigma * (norm / c.chi_n - 1))
    decay = 1 - (1 - c.c_sigma) ** (2 * (state.generation.astype(state.mean.dtype) + 1))
    h_sigma = (norm / jnp.sqrt(decay) < (1.4 + 2 / (n + 1)) * c.chi_n).astype(
        state.mean.dtype)
    p_c = (1 - c.c_c) * state.p_c + h_sigma * math.sqrt(c.c_c * (2 - c.c_c) * c.mu_eff) * y_w
    whitened = jnp.sum((ranked @ inverse_root.T) ** 2, axis=1)  # |C^-1/2 y|^2 = |z|^2
    adjusted = jnp.where(weights >= 0, weights, weights * n / whitened)
    rank_mu = (ranked * adjusted[:, None]).T @ ranked
    keep = 1 + c.c_1 * (1 - h_sigma) * c.c_c * (2 - c.c_c) - c.c_1 - c.c_mu * sum(c.weights)
    cov = keep * state.cov + c.c_1 * jnp.outer(p_c, p_c) + c.c_mu * rank_mu
    cov = (cov + cov.T) / 2
    eigenvalues, basis = jnp.linalg.eigh(cov)
    # C's condition kept below 1 / eps of the float type, so that D^-1 stays finite
    floor = float(np.finfo(cov.dtype).eps) * jnp.max(eigenvalues)
    scales = jnp.sqrt(jnp.maximum(eigenvalues, floor))
    return CMAState(mean, sigma, cov, basis, scales, p_sigma, p_c, state.generation + 1,
                    state.key)
