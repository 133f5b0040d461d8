"""The conformance check of a template's JAX form (`IJaxTemplate`): `jax_step` acts as `make()`.

`evo check-brain` runs it for every space pair the JAX form supports: the same genome, the
same sampled observations, the numpy brain's actions against the jitted `jax_step`'s, to
`TOLERANCE` (JAX computes in float32 by default; tests/plugins/jax/test_jax_brains.py holds
the built-in brains to 1e-6 in float32 and 1e-12 in float64 on fewer steps). jax is imported
here only when a template declares the capability, and a machine without jax gets the check
marked as not run.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core.contract.protocols import IJaxTemplate

__all__ = ["JAX_STEPS", "TOLERANCE", "jax_mismatch", "jax_missing"]

JAX_STEPS = 10
TOLERANCE = 1e-5


def jax_missing() -> str | None:
    """Why the JAX form cannot be checked on this machine, or None."""
    if importlib.util.find_spec("jax") is None:
        return "not checked: jax is not installed (pip install 'evo-core[jax]')"
    return None


def jax_mismatch(template: IJaxTemplate, genome: NDArray[np.float64],
                 observation_space: gym.Space[Any], seed: int) -> str | None:
    """Where the jitted JAX form acts differently from `make(genome)`, or None."""
    import jax
    import jax.numpy as jnp

    brain = template.make(genome)
    brain.reset()
    params = jax.jit(template.jax_params)(jnp.asarray(genome, dtype=jnp.result_type(float)))
    state = jax.jit(template.jax_init_state)(params)
    step = jax.jit(template.jax_step)
    observation_space.seed(seed)
    for index in range(JAX_STEPS):
        observation = observation_space.sample()
        expected = np.asarray(brain.step(observation), dtype=np.float64)
        state, action = step(params, state, jnp.asarray(observation))
        got = np.asarray(action, dtype=np.float64)
        if got.shape != expected.shape:
            return (f"step {index}: jax_step() gave an action of shape {got.shape}, make()'s "
                    f"brain one of shape {expected.shape}")
        if not np.allclose(got, expected, rtol=TOLERANCE, atol=TOLERANCE):
            return (f"step {index}: jax_step() gave {got.tolist()}, make()'s brain "
                    f"{expected.tolist()}; the JAX form must repeat the numpy brain's math")
    return None
