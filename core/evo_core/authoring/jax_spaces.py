"""The JAX forms of the observation encoders and action decoders (`IJaxTemplate` brains).

A brain that JAX traces must encode observations and decode actions exactly as its numpy
`make()` does, so these functions repeat the arithmetic of `authoring/spaces.py` with
`jax.numpy`, reading the same encoder and decoder objects (their scales, offsets and bounds).
They cover what JAX environments have: Box and Discrete observations, Box, Discrete and
MultiBinary actions; `jax_space_support` names any other space in one line.

jax is an optional extra of evo-core: it is imported inside the functions, never when this
module is imported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from evo_core.authoring.spaces import (
    ActionDecoder,
    ObservationEncoder,
    _BiasEncoder,
    _BoxDecoder,
    _BoxEncoder,
    _DiscreteDecoder,
    _DiscreteEncoder,
    _MultiBinaryDecoder,
)

__all__ = ["jax_decode", "jax_encode", "jax_space_support"]

_OBSERVATIONS = (gym.spaces.Box, gym.spaces.Discrete)
_ACTIONS = (gym.spaces.Box, gym.spaces.Discrete, gym.spaces.MultiBinary)


def jax_space_support(observation_space: gym.Space[Any], action_space: gym.Space[Any]
                      ) -> str | None:
    """None if both spaces have a JAX encoder and decoder here, else why not."""
    if not isinstance(observation_space, _OBSERVATIONS):
        return (f"{type(observation_space).__name__} observations have no JAX encoder (Box and "
                "Discrete have)")
    if not isinstance(action_space, _ACTIONS):
        return (f"{type(action_space).__name__} actions have no JAX decoder (Box, Discrete and "
                "MultiBinary have)")
    return None


def _float() -> Any:
    """The float type JAX computes in: float64 with `jax_enable_x64`, else float32."""
    import jax.numpy as jnp

    return jnp.result_type(float)


def jax_encode(encoder: ObservationEncoder) -> Callable[[Any], Any]:
    """A traceable function of one observation to the brain's input vector, as `encoder(obs)`."""
    import jax
    import jax.numpy as jnp

    size = encoder.size
    if isinstance(encoder, _BiasEncoder):
        inner = jax_encode(encoder.inner)

        def biased(observation: Any) -> Any:
            return jnp.concatenate([inner(observation), jnp.ones(1, dtype=_float())])

        return biased
    if isinstance(encoder, _DiscreteEncoder):
        start = encoder.start

        def one_hot(observation: Any) -> Any:
            return jax.nn.one_hot(jnp.asarray(observation).reshape(()) - start, size,
                                  dtype=_float())

        return one_hot
    if not isinstance(encoder, _BoxEncoder):
        raise TypeError(f"{type(encoder).__name__} has no JAX form")
    scale, offset = encoder.scale, encoder.offset

    def box(observation: Any) -> Any:
        flat = jnp.reshape(jnp.asarray(observation), (-1,)).astype(_float())
        if scale is None or offset is None:
            return flat
        return flat * jnp.asarray(scale, dtype=_float()) + jnp.asarray(offset, dtype=_float())

    return box


def jax_decode(decoder: ActionDecoder) -> Callable[[Any], Any]:
    """A traceable function of the brain's output vector to an action, as `decoder(output)`:
    argmax (+ start) for Discrete, output > 0 for MultiBinary, the bounds mapping for Box."""
    import jax.numpy as jnp

    if isinstance(decoder, _BoxDecoder):
        return _box_decode(decoder)
    if isinstance(decoder, _DiscreteDecoder):
        start = decoder.start

        def argmax(output: Any) -> Any:
            return (jnp.argmax(output) + start).astype(jnp.int32)

        return argmax
    if not isinstance(decoder, _MultiBinaryDecoder):
        raise TypeError(f"{type(decoder).__name__} has no JAX form")
    shape = decoder.shape

    def bits(output: Any) -> Any:
        return (output > 0).astype(jnp.int8).reshape(shape)

    return bits


def _box_decode(decoder: _BoxDecoder) -> Callable[[Any], Any]:
    import jax.numpy as jnp

    low = np.asarray(decoder.low)
    high = np.asarray(decoder.high)
    finite = np.asarray(decoder.finite)
    half_width = np.asarray(decoder.half_width)
    shape = decoder.shape
    needs_clip, none_finite = decoder.needs_clip, decoder.none_finite

    def box(output: Any) -> Any:
        action = output
        if not none_finite:
            mapped = jnp.asarray(low, _float()) + (jnp.clip(output, -1.0, 1.0) + 1.0) * \
                jnp.asarray(half_width, _float())
            action = jnp.where(jnp.asarray(finite), mapped, output)
        if needs_clip:
            action = jnp.clip(action, jnp.asarray(low, _float()), jnp.asarray(high, _float()))
        return action.reshape(shape)

    return box
