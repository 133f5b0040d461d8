"""The observation encoders and action decoders over rows, for the array namespaces a brain's
derived forms compute in: `jax.numpy` (the JAX form) and an ONNX graph's (`evo export`).

Those forms must encode observations and decode actions exactly as numpy's `make()` does, so
`encode_rows` and `decode_rows` repeat the arithmetic of the `batch` methods of
`authoring/spaces.py` once, for any namespace, reading the same encoder and decoder objects
(their scales, offsets and bounds). numpy keeps its own `batch` methods: they write in place on
the hot path, and cover spaces (MultiDiscrete, Dict, Tuple) these forms have no use for. What
differs between the namespaces is only which number types they have (`_Numbers`): an ONNX
model computes in float64 and gives actions in the space's own dtype; JAX computes in its
default float (float32 unless `jax_enable_x64`) and has no 64-bit integers without it.

They cover Box and Discrete observations (with `with_bias`'s trailing 1) and Box, Discrete and
MultiBinary actions; `space_support` names any other space in one line. `jax_encode` and
`jax_decode` are the JAX form's functions of one observation and one output, for brains that
declare their own JAX form (`IJaxTemplate`); jax, an optional extra, is imported inside the
functions, never when this module is imported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from evo_core.authoring.onnx_graph import OnnxNamespace
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

__all__ = ["decode_rows", "encode_rows", "jax_decode", "jax_encode", "jax_space_support",
           "space_support"]

_OBSERVATIONS = (gym.spaces.Box, gym.spaces.Discrete)
_ACTIONS = (gym.spaces.Box, gym.spaces.Discrete, gym.spaces.MultiBinary)


def space_support(observation_space: gym.Space[Any], action_space: gym.Space[Any],
                  form: str) -> str | None:
    """None if both spaces have an encoder and decoder here, else why not, naming the `form`
    ("JAX", "ONNX") that lacks them."""
    if not isinstance(observation_space, _OBSERVATIONS):
        return (f"{type(observation_space).__name__} observations have no {form} encoder (Box "
                "and Discrete have)")
    if not isinstance(action_space, _ACTIONS):
        return (f"{type(action_space).__name__} actions have no {form} decoder (Box, Discrete "
                "and MultiBinary have)")
    return None


@dataclass(frozen=True)
class _Numbers:
    #: the float type the namespace computes in
    floating: Any
    #: the type of Discrete actions (None: the space's own)
    discrete: Any
    #: Box actions cast to the space's dtype
    exact_box: bool


def _numbers(xp: Any) -> _Numbers:
    if isinstance(xp, OnnxNamespace):
        return _Numbers(np.float64, None, True)
    import jax.numpy as jnp

    return _Numbers(jnp.result_type(float), jnp.int32, False)


def encode_rows(xp: Any, encoder: ObservationEncoder, observations: Any) -> Any:
    """Observations (rows x the space's shape) to the brain's inputs (rows x `encoder.size`),
    as `encoder.batch`."""
    floating = _numbers(xp).floating
    rows = observations.shape[0]
    if isinstance(encoder, _BiasEncoder):
        inner = encode_rows(xp, encoder.inner, observations)
        return xp.concatenate([inner, np.ones((rows, 1), dtype=floating)], axis=1)
    if isinstance(encoder, _DiscreteEncoder):
        choices = xp.asarray(observations).reshape(rows, 1) - float(encoder.start)
        return (choices == np.arange(encoder.size, dtype=np.float64)).astype(floating)
    if not isinstance(encoder, _BoxEncoder):
        raise TypeError(f"{type(encoder).__name__} has no form over rows")
    flat = xp.asarray(observations, floating).reshape(rows, encoder.size)
    if encoder.scale is None or encoder.offset is None:
        return flat
    return flat * encoder.scale.astype(floating) + encoder.offset.astype(floating)


def decode_rows(xp: Any, decoder: ActionDecoder, outputs: Any) -> Any:
    """The brain's outputs (rows x `decoder.size`) to actions (rows x the space's shape), as
    `decoder.batch`: argmax (+ start) for Discrete, output > 0 for MultiBinary, the bounds
    mapping for Box."""
    numbers = _numbers(xp)
    rows = outputs.shape[0]
    if isinstance(decoder, _DiscreteDecoder):
        actions = xp.argmax(outputs, axis=1)
        return (actions + decoder.start if decoder.start else actions).astype(
            decoder.scalar if numbers.discrete is None else numbers.discrete)
    if isinstance(decoder, _MultiBinaryDecoder):
        return (outputs > 0.0).astype(np.int8).reshape((rows, *decoder.shape))
    if not isinstance(decoder, _BoxDecoder):
        raise TypeError(f"{type(decoder).__name__} has no form over rows")
    floating = numbers.floating
    low, high = decoder.low.astype(floating), decoder.high.astype(floating)
    action = outputs
    if not decoder.none_finite:
        mapped = low + (xp.clip(outputs, -1.0, 1.0) + 1.0) * decoder.half_width.astype(floating)
        action = mapped if decoder.all_finite else xp.where(decoder.finite, mapped, outputs)
    if decoder.needs_clip:
        action = xp.clip(action, low, high)
    action = action.reshape((rows, *decoder.shape))
    return action.astype(decoder.dtype) if numbers.exact_box else action


def jax_space_support(observation_space: gym.Space[Any], action_space: gym.Space[Any]
                      ) -> str | None:
    """None if both spaces have a JAX encoder and decoder, else why not."""
    return space_support(observation_space, action_space, "JAX")


def jax_encode(encoder: ObservationEncoder) -> Callable[[Any], Any]:
    """A traceable function of one observation to the brain's input vector, as `encoder(obs)`."""
    import jax.numpy as jnp

    def encode(observation: Any) -> Any:
        return encode_rows(jnp, encoder, jnp.asarray(observation)[None])[0]

    return encode


def jax_decode(decoder: ActionDecoder) -> Callable[[Any], Any]:
    """A traceable function of the brain's output vector to an action, as `decoder(output)`."""
    import jax.numpy as jnp

    def decode(output: Any) -> Any:
        return decode_rows(jnp, decoder, jnp.asarray(output)[None])[0]

    return decode
