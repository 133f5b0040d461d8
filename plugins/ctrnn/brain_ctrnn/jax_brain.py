"""The CTRNN in JAX (`IJaxTemplate`): the genome decoded as `CTRNNTemplate.parameters` decodes
it, and the step of `CTRNN.step`, traceable.

Masks are the template's (fixed index arrays, so every mask kind works: dense, random,
logarithmic, and learned, whose per-brain pruning by the magnitude percentile is repeated with
`jnp.percentile(method="higher")`), and so are every clipping mode, time constants, the
in-place activation and the bias input. State noise (`parameter_perturbations`) is drawn from
numpy Generators per episode, which a compiled function cannot repeat: the template refuses it.
jax is imported inside the functions: it is an optional extra.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from brain_ctrnn.config import CTRNNConfig

__all__ = ["jax_parameters", "jax_step"]


def _pour(shape: tuple[int, int], index: NDArray[np.intp], values: Any, learned: bool,
          percentile: float) -> Any:
    import jax.numpy as jnp

    size = int(np.prod(shape))
    if len(index) == size:
        matrix = values.reshape(shape)
    else:
        matrix = jnp.zeros(size, dtype=values.dtype).at[jnp.asarray(index)].set(
            values).reshape(shape)
    if learned and size:
        threshold = jnp.percentile(jnp.abs(matrix), percentile, method="higher")
        matrix = jnp.where(jnp.abs(matrix) < threshold, 0.0, matrix)
    return matrix


def _bounds(config: CTRNNConfig, genes: Any) -> tuple[Any, Any]:
    import jax.numpy as jnp

    mode = config.optimize_state_boundaries
    n = config.number_neurons
    if mode == "fixed":
        return jnp.asarray(config.clipping_range_min), jnp.asarray(config.clipping_range_max)
    genes = genes + config.bounds_offset
    if mode == "global":
        return -jnp.abs(genes[0]), jnp.abs(genes[1])
    lower, upper = -jnp.abs(genes[:n]), jnp.abs(genes[n:])
    if mode == "per_neuron":
        return lower, upper
    low: Any = -jnp.inf  # legacy: the composed interval, as the template composes it
    high: Any = jnp.inf
    for index in range(n):
        lo_i, hi_i = lower[index], upper[index]
        low, high = (jnp.minimum(jnp.maximum(low, lo_i), hi_i),
                     jnp.minimum(jnp.maximum(high, lo_i), hi_i))
    return low, high


def jax_parameters(template: Any, genome: Any) -> dict[str, Any]:
    """The genome's V, W, T, y0, bounds and time constants (as `CTRNNTemplate.parameters`)."""
    import jax.numpy as jnp

    c: CTRNNConfig = template.config
    n = c.number_neurons
    o = [int(x) for x in template.offsets]
    v = _pour(template.v_mask.shape, template.v_index, genome[o[0]:o[1]], c.v_mask == "learned",
              c.v_mask_param)
    w = _pour((n, n), template.w_index, genome[o[1]:o[2]], c.w_mask == "learned",
              c.w_mask_param)
    t = _pour(template.t_mask.shape, template.t_index, genome[o[2]:o[3]],
              c.t_mask == "learned", c.t_mask_param)
    if c.set_principle_diagonal_elements_of_W_negative:
        diagonal = jnp.diagonal(w)
        w = w.at[jnp.arange(n), jnp.arange(n)].set(
            jnp.where(diagonal != 0.0, -jnp.abs(diagonal), diagonal))
    y0 = genome[o[3]:o[4]] if c.optimize_y0 else jnp.zeros(n, dtype=genome.dtype)
    lower, upper = _bounds(c, genome[o[4]:o[5]])
    parameters = {"v": v, "w": w, "t_transposed": t.T, "y0": y0, "lower": lower,
                  "upper": upper}
    if c.time_constants:
        parameters["tau"] = c.delta_t + jnp.abs(genome[o[5]:o[6]])
    return parameters


def jax_step(config: CTRNNConfig, parameters: dict[str, Any], y: Any, inputs: Any
             ) -> tuple[Any, Any]:
    """(the next state, tanh(Tᵀ·y)) from the encoded observation, as `CTRNN.step`."""
    import jax.numpy as jnp

    u = jnp.concatenate([inputs, jnp.ones(1, dtype=inputs.dtype)]) if config.use_bias \
        else inputs
    a = jnp.tanh(y) if config.neuron_activation == "tanh" else jnp.maximum(y, 0.0)
    if config.neuron_activation_inplace:
        y = a
    dy = parameters["w"] @ a + parameters["v"] @ u
    if config.time_constants:
        dy = (dy - y) / parameters["tau"]
    y = dy * config.delta_t + y
    y = jnp.minimum(jnp.maximum(y, parameters["lower"]), parameters["upper"])
    return y, jnp.tanh(parameters["t_transposed"] @ y)
