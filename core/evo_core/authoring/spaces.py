"""Observations to brain inputs and brain outputs to actions, for every brain in one place.

The predecessor repeated this in each brain, differently each time: only the CTRNN understood
Discrete observations, Box actions were neither rescaled nor reshaped, and the input scaling
overwrote the environment's observation array. Here a brain asks for an encoder and a decoder once,
in its template, and calls them on the hot path. Both are plain picklable objects (templates travel
to worker processes) and neither ever writes into the array it is given.

Each also has a `batch` method for batched brains (`IBatchTemplate`): observations and actions
stacked along a first axis of rows, in the layout of a gymnasium vector environment (a Tuple or
Dict of parts, each part stacked). Row `i` of a batch is computed with the same floating-point
operations as the single call on row `i`, so batched brains act exactly as their rows alone.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Protocol

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

__all__ = ["ObservationEncoder", "ActionDecoder", "observation_encoder", "action_decoder",
           "with_bias", "UNBOUNDED"]

FloatArray = NDArray[np.float64]

#: Bounds at or beyond this magnitude count as "no bound": environments such as CartPole declare
#: unbounded velocities with float32's largest value, and scaling by it would turn them into zeros.
UNBOUNDED = float(np.finfo(np.float32).max)


class ObservationEncoder(Protocol):
    """Turns one observation into a new 1-D float64 vector of `size` entries."""

    size: int

    def __call__(self, observation: Any) -> FloatArray: ...

    def into(self, observation: Any, out: FloatArray) -> None:
        """Write the encoding into `out` (float64, `size` entries): for brains that keep an
        input buffer, it saves the copy `__call__` makes."""

    def writer(self, out: FloatArray) -> Callable[[Any], None]:
        """`into(observation, out)` bound to one buffer, once: what a brain that encodes
        every step into the same buffer calls (an encoder that adds to the observation, as
        `with_bias` does, writes its part of the buffer once, here)."""

    def batch(self, observations: Any) -> FloatArray:
        """Observations stacked along axis 0 to a new float64 array of shape (rows, size)."""


class ActionDecoder(Protocol):
    """Turns a brain's output vector of `size` entries into an action of the space."""

    size: int

    def __call__(self, output: FloatArray) -> Any: ...

    def batch(self, outputs: FloatArray) -> Any:
        """Outputs of shape (rows, size) to actions stacked along axis 0."""


def _unsupported(space: gym.Space[Any], role: str) -> TypeError:
    return TypeError(f"{type(space).__name__} is not supported as {role} space; evo handles Box, "
                     "Discrete, MultiDiscrete, MultiBinary and Tuple/Dict of those")


# --------------------------------------------------------------------------- observations


class _Encoder:
    size: int

    def __call__(self, observation: Any) -> FloatArray:
        raise NotImplementedError

    def into(self, observation: Any, out: FloatArray) -> None:
        out[:] = self(observation)

    def writer(self, out: FloatArray) -> Callable[[Any], None]:
        return functools.partial(self.into, out=out)

    def batch(self, observations: Any) -> FloatArray:
        raise NotImplementedError


class _BoxEncoder(_Encoder):
    """Flattens; with a target, maps bounded dimensions linearly onto [-target, target]."""

    def __init__(self, space: gym.spaces.Box, target: float | None) -> None:
        self.size = int(np.prod(space.shape, dtype=np.int64))
        self.flat = len(space.shape) == 1
        self.scale: FloatArray | None = None
        self.offset: FloatArray | None = None
        if target is not None:
            low = np.asarray(space.low, dtype=np.float64).reshape(-1)
            high = np.asarray(space.high, dtype=np.float64).reshape(-1)
            bounded = (np.abs(low) < UNBOUNDED) & (np.abs(high) < UNBOUNDED) & (high > low)
            if bounded.any():
                width = np.where(bounded, high - low, 1.0)
                self.scale = np.where(bounded, 2.0 * target / width, 1.0)
                self.offset = np.where(bounded, -target - low * self.scale, 0.0)
                self.scale.setflags(write=False)
                self.offset.setflags(write=False)

    def __call__(self, observation: Any) -> FloatArray:
        flat = np.array(observation, dtype=np.float64).reshape(-1)  # np.array copies
        scale, offset = self.scale, self.offset
        if scale is None or offset is None:
            return flat
        return flat * scale + offset

    def into(self, observation: Any, out: FloatArray) -> None:
        out[:] = observation if self.flat else np.reshape(observation, -1)  # a casting copy
        if self.scale is not None and self.offset is not None:
            out *= self.scale
            out += self.offset

    def batch(self, observations: Any) -> FloatArray:
        array = np.array(observations, dtype=np.float64)  # np.array copies
        flat = array.reshape(array.shape[0], self.size)
        if self.scale is not None and self.offset is not None:
            flat *= self.scale
            flat += self.offset
        return flat


class _DiscreteEncoder(_Encoder):
    """One-hot, so that category 3 is not "three times" category 1."""

    def __init__(self, space: gym.spaces.Discrete[Any]) -> None:
        self.size = int(space.n)
        self.start = int(space.start)

    def __call__(self, observation: Any) -> FloatArray:
        out = np.zeros(self.size)
        out[int(observation) - self.start] = 1.0
        return out

    def batch(self, observations: Any) -> FloatArray:
        choices = np.asarray(observations, dtype=np.int64).reshape(-1)
        out = np.zeros((len(choices), self.size))
        out[np.arange(len(choices)), choices - self.start] = 1.0
        return out


class _MultiDiscreteEncoder(_Encoder):
    """One one-hot block per component."""

    def __init__(self, space: gym.spaces.MultiDiscrete) -> None:
        nvec = np.asarray(space.nvec, dtype=np.int64).reshape(-1)
        self.size = int(nvec.sum())
        self.block_starts = np.concatenate(([0], np.cumsum(nvec)[:-1]))
        self.start = np.asarray(space.start, dtype=np.int64).reshape(-1)

    def __call__(self, observation: Any) -> FloatArray:
        out = np.zeros(self.size)
        choices = np.asarray(observation, dtype=np.int64).reshape(-1)
        out[self.block_starts + choices - self.start] = 1.0
        return out

    def batch(self, observations: Any) -> FloatArray:
        array = np.asarray(observations, dtype=np.int64)
        rows = array.shape[0]
        choices = array.reshape(rows, -1)
        out = np.zeros((rows, self.size))
        out[np.arange(rows)[:, None], self.block_starts + choices - self.start] = 1.0
        return out


class _CompositeEncoder(_Encoder):
    """Tuple or Dict: the parts' encodings concatenated in the space's order."""

    def __init__(self, keys: list[Any], parts: list[ObservationEncoder]) -> None:
        self.keys = keys
        self.parts = parts
        self.size = sum(part.size for part in parts)

    def __call__(self, observation: Any) -> FloatArray:
        return np.concatenate([part(observation[key]) for key, part in zip(self.keys, self.parts)])

    def batch(self, observations: Any) -> FloatArray:
        return np.concatenate([part.batch(observations[key])
                               for key, part in zip(self.keys, self.parts)], axis=1)


class _BiasEncoder(_Encoder):
    """Another encoder's vector with a trailing 1 (`with_bias`)."""

    def __init__(self, inner: ObservationEncoder) -> None:
        self.inner = inner
        self.size = inner.size + 1

    def __call__(self, observation: Any) -> FloatArray:
        out = np.empty(self.size)
        self.into(observation, out)
        return out

    def into(self, observation: Any, out: FloatArray) -> None:
        self.inner.into(observation, out[:-1])
        out[-1] = 1.0

    def writer(self, out: FloatArray) -> Callable[[Any], None]:
        out[-1] = 1.0
        return self.inner.writer(out[:-1])

    def batch(self, observations: Any) -> FloatArray:
        inner = self.inner.batch(observations)
        return np.concatenate([inner, np.ones((inner.shape[0], 1))], axis=1)


def with_bias(encoder: ObservationEncoder) -> ObservationEncoder:
    """`encoder`'s vector with a trailing 1, the input a bias weight multiplies: a brain that
    keeps its biases as a column of its input matrix (a CTRNN's V) gets its inputs whole,
    instead of appending the 1 at every step."""
    return _BiasEncoder(encoder)


def observation_encoder(space: gym.Space[Any], normalize_target: float | None = None
                        ) -> ObservationEncoder:
    """The encoder for `space`; `normalize_target` enables input scaling of bounded Box parts."""
    if isinstance(space, gym.spaces.Box):
        return _BoxEncoder(space, normalize_target)
    if isinstance(space, gym.spaces.Discrete):
        return _DiscreteEncoder(space)
    if isinstance(space, gym.spaces.MultiDiscrete):
        return _MultiDiscreteEncoder(space)
    if isinstance(space, gym.spaces.MultiBinary):
        return _BoxEncoder(gym.spaces.Box(0, 1, shape=np.shape(np.zeros(space.shape))), None)
    if isinstance(space, gym.spaces.Tuple):
        return _CompositeEncoder(list(range(len(space.spaces))),
                                 [observation_encoder(s, normalize_target) for s in space.spaces])
    if isinstance(space, gym.spaces.Dict):
        return _CompositeEncoder(list(space.spaces),
                                 [observation_encoder(s, normalize_target)
                                  for s in space.spaces.values()])
    raise _unsupported(space, "an observation")


# --------------------------------------------------------------------------- actions


class _DiscreteDecoder:
    """Argmax; ties go to the first index, as in the predecessor. A lone brain's action is a
    Python int, as a hand-written loop passes it: gymnasium's spaces and environments take an
    int faster than a numpy scalar (CartPole-v1's step 11.2 against 12.5 µs, and 0.6 against
    1.1 µs to make it); a batch's actions have the space's dtype."""

    def __init__(self, space: gym.spaces.Discrete[Any]) -> None:
        self.size = int(space.n)
        self.start = int(space.start)
        self.scalar = space.dtype.type if space.dtype is not None else np.int64

    def __call__(self, output: FloatArray) -> Any:
        return int(np.argmax(output)) + self.start

    def batch(self, outputs: FloatArray) -> NDArray[Any]:
        actions: NDArray[Any] = outputs.argmax(axis=1)
        if self.start:
            actions += self.start
        return actions.astype(self.scalar, copy=False)  # argmax's own int64 as it is


class _MultiDiscreteDecoder:
    """Argmax within each component's block of outputs."""

    def __init__(self, space: gym.spaces.MultiDiscrete) -> None:
        nvec = np.asarray(space.nvec, dtype=np.int64)
        self.shape = nvec.shape
        self.bounds = np.cumsum(nvec.reshape(-1))[:-1]
        self.size = int(nvec.sum())
        self.start = np.asarray(space.start, dtype=np.int64)
        self.dtype = space.dtype

    def __call__(self, output: FloatArray) -> NDArray[Any]:
        choices = [int(np.argmax(block)) for block in np.split(output, self.bounds)]
        actions = np.array(choices, dtype=np.int64).reshape(self.shape) + self.start
        return actions.astype(self.dtype)

    def batch(self, outputs: FloatArray) -> NDArray[Any]:
        rows = outputs.shape[0]
        choices = np.stack([block.argmax(axis=1) for block in np.split(outputs, self.bounds,
                                                                       axis=1)], axis=1)
        actions = choices.astype(np.int64).reshape((rows, *self.shape)) + self.start
        return actions.astype(self.dtype)


class _BoxDecoder:
    """Reshape, and map [-1, 1] onto finite bounds; unbounded sides pass the output unchanged.

    Outputs are clipped to the bounds afterwards so that every action is valid, whatever range
    the brain's output layer has.
    """

    def __init__(self, space: gym.spaces.Box) -> None:
        self.shape = space.shape
        self.size = int(np.prod(space.shape, dtype=np.int64))
        self.dtype = space.dtype
        low = np.asarray(space.low, dtype=np.float64).reshape(-1)
        high = np.asarray(space.high, dtype=np.float64).reshape(-1)
        self.finite = np.isfinite(low) & np.isfinite(high)
        self.all_finite = bool(self.finite.all())
        self.none_finite = not self.finite.any()
        self.low = low
        self.high = high
        self.half_width = np.where(self.finite, (high - low) / 2.0, 0.0)
        self.needs_clip = bool(np.isfinite(low).any() or np.isfinite(high).any())
        for array in (self.finite, self.low, self.high, self.half_width):
            array.setflags(write=False)

    def __call__(self, output: FloatArray) -> NDArray[Any]:
        if self.none_finite:
            action = np.array(output, dtype=np.float64)
        else:
            mapped = self.low + (np.clip(output, -1.0, 1.0) + 1.0) * self.half_width
            action = mapped if self.all_finite else np.where(self.finite, mapped, output)
        if self.needs_clip:
            action = np.clip(action, self.low, self.high)
        return action.reshape(self.shape).astype(self.dtype, copy=False)

    def batch(self, outputs: FloatArray) -> NDArray[Any]:
        actions = self._map(outputs)
        return actions.reshape((outputs.shape[0], *self.shape)).astype(self.dtype, copy=False)

    def _map(self, output: FloatArray) -> FloatArray:
        """The bounds mapping of `__call__` (repeated there, where a call would cost time on the
        hot path), elementwise, so rows broadcast against the bounds."""
        if self.none_finite:
            action: FloatArray = np.array(output, dtype=np.float64)
        else:
            mapped = self.low + (np.clip(output, -1.0, 1.0) + 1.0) * self.half_width
            action = mapped if self.all_finite else np.where(self.finite, mapped, output)
        if self.needs_clip:
            action = np.clip(action, self.low, self.high)
        return action


class _MultiBinaryDecoder:
    """An output above zero switches its bit on."""

    def __init__(self, space: gym.spaces.MultiBinary) -> None:
        self.shape = np.shape(np.zeros(space.shape))
        self.size = int(np.prod(self.shape, dtype=np.int64))

    def __call__(self, output: FloatArray) -> NDArray[Any]:
        return (np.asarray(output) > 0).astype(np.int8).reshape(self.shape)

    def batch(self, outputs: FloatArray) -> NDArray[Any]:
        return (np.asarray(outputs) > 0).astype(np.int8).reshape((len(outputs), *self.shape))


class _CompositeDecoder:
    """Tuple or Dict: consecutive slices of the output, one per part."""

    def __init__(self, keys: list[Any] | None, parts: list[ActionDecoder]) -> None:
        self.keys = keys
        self.parts = parts
        self.bounds = np.cumsum([part.size for part in parts])[:-1]
        self.size = sum(part.size for part in parts)

    def __call__(self, output: FloatArray) -> Any:
        actions = [part(piece) for part, piece in zip(self.parts, np.split(output, self.bounds))]
        if self.keys is None:
            return tuple(actions)
        return dict(zip(self.keys, actions))

    def batch(self, outputs: FloatArray) -> Any:
        actions = [part.batch(piece) for part, piece in
                   zip(self.parts, np.split(outputs, self.bounds, axis=1))]
        if self.keys is None:
            return tuple(actions)
        return dict(zip(self.keys, actions))


def action_decoder(space: gym.Space[Any]) -> ActionDecoder:
    """The decoder for `space`."""
    if isinstance(space, gym.spaces.Discrete):
        return _DiscreteDecoder(space)
    if isinstance(space, gym.spaces.MultiDiscrete):
        return _MultiDiscreteDecoder(space)
    if isinstance(space, gym.spaces.Box):
        return _BoxDecoder(space)
    if isinstance(space, gym.spaces.MultiBinary):
        return _MultiBinaryDecoder(space)
    if isinstance(space, gym.spaces.Tuple):
        return _CompositeDecoder(None, [action_decoder(s) for s in space.spaces])
    if isinstance(space, gym.spaces.Dict):
        return _CompositeDecoder(list(space.spaces),
                                 [action_decoder(s) for s in space.spaces.values()])
    raise _unsupported(space, "an action")
