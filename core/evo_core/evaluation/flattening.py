"""Values of a gymnasium space as flat float64 arrays: what the behaviour recorder buffers.

The recorder takes one row of numbers per step, so whatever a step gives (an image observation,
a RAM state, a Tuple of Discrete actions, a Dict) is flattened in front of it, once, here. The
order is gymnasium's `spaces.flatten`: a Box in C order, a Tuple part after part, a Dict key
after key in the space's own key order (gymnasium sorts a Dict's keys). One rule differs, on
purpose: a Discrete value is its index, one number, not gymnasium's one-hot vector. It is what
the predecessor recorded and what evo recorded before composite spaces were accepted, it keeps
an Atari action one number instead of 18, and a descriptor's length then does not depend on how
many actions a game has. A Discrete with a `start` is its value (start included), as the
environment gives it.

Spaces without a fixed length (Text, Sequence, Graph) have no flat form and are refused in one
line, naming the source.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core.errors import UserError

__all__ = ["Flattener", "flat_state", "flattener"]

FloatArray = NDArray[np.float64]
#: one value of the space -> its flat float64 numbers
Flattener = Callable[[Any], FloatArray]


def _array(value: Any) -> FloatArray:
    return np.asarray(value, dtype=np.float64).reshape(-1)


def _index(value: Any) -> FloatArray:
    return np.asarray([value], dtype=np.float64).reshape(-1)


def _joined(parts: list[Flattener], keys: list[Any] | None) -> Flattener:
    """A Tuple's (keys None) or a Dict's flattener: its parts' numbers, concatenated."""
    if not parts:
        return lambda value: np.zeros(0, dtype=np.float64)
    if keys is None:
        return lambda value: np.concatenate([part(item) for part, item in zip(parts, value,
                                                                              strict=True)])
    return lambda value: np.concatenate([part(value[key]) for part, key in zip(parts, keys,
                                                                               strict=True)])


def _refuse(space: gym.Space[Any], what: str) -> UserError:
    return UserError(f"behaviour.source = {what!r}: the {what} space {space} has no fixed number "
                     "of values to record; use another source, or a wrapper that turns it into "
                     "an array")


def flattener(space: gym.Space[Any], what: str) -> tuple[int, Flattener]:
    """(width, flatten) for values of `space`; `what` names the source in the error for a space
    without a flat form."""
    if isinstance(space, gym.spaces.Discrete):
        return 1, _index
    if isinstance(space, (gym.spaces.Box, gym.spaces.MultiDiscrete, gym.spaces.MultiBinary)):
        return int(np.prod(space.shape, dtype=np.int64)), _array
    if isinstance(space, gym.spaces.Tuple):
        widths, parts = _parts(list(space.spaces), what)
        return sum(widths), _joined(parts, None)
    if isinstance(space, gym.spaces.Dict):
        keys = list(space.spaces)
        widths, parts = _parts([space.spaces[key] for key in keys], what)
        return sum(widths), _joined(parts, keys)
    raise _refuse(space, what)


def _parts(spaces: list[gym.Space[Any]], what: str) -> tuple[list[int], list[Flattener]]:
    made = [flattener(part, what) for part in spaces]
    return [width for width, _ in made], [flatten for _, flatten in made]


def flat_state(value: Any) -> FloatArray:
    """An environment's state (MuJoCo qpos, Atari RAM, an IBehaviourState hook's array) as flat
    float64 numbers: its width is only known from a value, not from a space."""
    return _array(value)
