"""The ONNX forms of the observation encoders and action decoders, over rows.

An exported brain must encode observations and decode actions exactly as its numpy `make()`
does, so these functions repeat the arithmetic of `authoring/spaces.py`'s `batch` methods with
the graph's namespace (`authoring/onnx_graph.py`), reading the same encoder and decoder objects
(their scales, offsets and bounds), as `jax_spaces.py` does for JAX. They cover Box and
Discrete observations (with `with_bias`'s trailing 1) and Box, Discrete and MultiBinary
actions; `onnx_space_support` names any other space in one line.
"""

from __future__ import annotations

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

__all__ = ["onnx_decode", "onnx_encode", "onnx_space_support"]

_OBSERVATIONS = (gym.spaces.Box, gym.spaces.Discrete)
_ACTIONS = (gym.spaces.Box, gym.spaces.Discrete, gym.spaces.MultiBinary)


def onnx_space_support(observation_space: gym.Space[Any], action_space: gym.Space[Any]
                       ) -> str | None:
    """None if both spaces have an ONNX encoder and decoder here, else why not."""
    if not isinstance(observation_space, _OBSERVATIONS):
        return (f"{type(observation_space).__name__} observations have no ONNX encoder (Box and "
                "Discrete have)")
    if not isinstance(action_space, _ACTIONS):
        return (f"{type(action_space).__name__} actions have no ONNX decoder (Box, Discrete and "
                "MultiBinary have)")
    return None


def onnx_encode(xp: OnnxNamespace, encoder: ObservationEncoder, observations: Any) -> Any:
    """Observations (rows x the space's shape, float64) to the brain's inputs (rows x
    `encoder.size`, float64), as `encoder.batch`."""
    rows = observations.shape[0]
    if isinstance(encoder, _BiasEncoder):
        inner = onnx_encode(xp, encoder.inner, observations)
        return xp.concatenate([inner, np.ones((rows, 1))], axis=1)
    if isinstance(encoder, _DiscreteEncoder):
        choices = observations.reshape(rows, 1) - float(encoder.start)
        return (choices == np.arange(encoder.size, dtype=np.float64)).astype(np.float64)
    if not isinstance(encoder, _BoxEncoder):
        raise TypeError(f"{type(encoder).__name__} has no ONNX form")
    flat = xp.asarray(observations, np.float64).reshape(rows, encoder.size)
    if encoder.scale is None or encoder.offset is None:
        return flat
    return flat * encoder.scale + encoder.offset


def onnx_decode(xp: OnnxNamespace, decoder: ActionDecoder, outputs: Any) -> Any:
    """The brain's outputs (rows x `decoder.size`) to actions (rows x the space's shape, of its
    dtype), as `decoder.batch`: argmax (+ start) for Discrete, output > 0 for MultiBinary, the
    bounds mapping for Box."""
    rows = outputs.shape[0]
    if isinstance(decoder, _DiscreteDecoder):
        actions = xp.argmax(outputs, axis=1)
        return (actions + decoder.start if decoder.start else actions).astype(decoder.scalar)
    if isinstance(decoder, _MultiBinaryDecoder):
        return (outputs > 0.0).astype(np.int8).reshape((rows, *decoder.shape))
    if not isinstance(decoder, _BoxDecoder):
        raise TypeError(f"{type(decoder).__name__} has no ONNX form")
    action = outputs
    if not decoder.none_finite:
        mapped = decoder.low + (xp.clip(outputs, -1.0, 1.0) + 1.0) * decoder.half_width
        action = mapped if decoder.all_finite else xp.where(decoder.finite, mapped, outputs)
    if decoder.needs_clip:
        action = xp.clip(action, decoder.low, decoder.high)
    return action.reshape((rows, *decoder.shape)).astype(decoder.dtype)
