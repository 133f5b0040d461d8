"""An observation outside its environment's observation space's shape is the environment's bug.

A brain is built for `observation_space`: fed an observation of another shape it raises (a
matrix product that does not fit), and the run then blamed the brain's plugin for the
environment's mistake. The runners already test every observation for NaN/inf before the brain
sees it; `shape_checked` puts a shape test in front of that test, so that the wrong shape is
reported as the environment's (an `EnvironmentRaised` whose cause says what was returned) at the
cost of one tuple comparison per step (dimensions of length 1 aside: a scalar for a Box of shape
(1,) is that value). Only `Box` spaces have a shape a brain depends on in this
way; other spaces are left to the existing test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core.errors import EnvironmentRaised

__all__ = ["ObservationShapeError", "batch_shape_checked", "rows_shape_checked", "shape_checked"]

BoolArray = NDArray[np.bool_]


class ObservationShapeError(ValueError):
    """The environment returned an observation whose shape is not its observation space's."""


def _outside(space: gym.spaces.Box, got: tuple[int, ...]) -> EnvironmentRaised:
    """Raised from the environment's side: the call is not known here (reset or step), so the
    error names none and says what came back instead."""
    raised = EnvironmentRaised("")
    raised.__cause__ = ObservationShapeError(
        f"it returned an observation of shape {got}, but its observation_space {space} has "
        f"shape {space.shape}; a bug in the environment (or a wrapper)")
    return raised


def _fits(got: tuple[int, ...], shape: tuple[int, ...]) -> bool:
    """The space's shape, give or take dimensions of length 1 (a scalar for a Box of shape
    (1,) is read as that one value)."""
    return got == shape or [n for n in got if n != 1] == [n for n in shape if n != 1]


def _rows(space: gym.spaces.Box, observations: Any) -> int:
    """The number of rows of a batch of observations, after testing that each row has the
    space's shape."""
    got = np.shape(observations)
    if got[1:] != space.shape and not _fits(got[1:], space.shape):
        raise _outside(space, got[1:])
    return int(got[0])


def shape_checked(space: gym.Space[Any],
                  test: Callable[[gym.Space[Any]], Callable[[Any], bool] | None]
                  ) -> Callable[[Any], bool] | None:
    """The runner's `test(space)` of one observation (None for none), after a test that the
    observation has `space`'s shape, which raises the environment's error when it has not."""
    inner = test(space)
    if not isinstance(space, gym.spaces.Box):
        return inner
    shape = space.shape

    def check(observation: Any) -> bool:
        if getattr(observation, "shape", None) != shape:
            got = np.shape(observation)  # a list or a scalar may still fit
            if not _fits(got, shape):
                raise _outside(space, got)
        return True if inner is None else inner(observation)

    return check


def rows_shape_checked(space: gym.Space[Any],
                       test: Callable[[gym.Space[Any]], Callable[[Any], BoolArray] | None]
                       ) -> Callable[[Any], BoolArray] | None:
    """The same for a batch of observations, one row per environment of a vector environment
    (`test(space)` says which rows are finite)."""
    inner = test(space)
    if not isinstance(space, gym.spaces.Box):
        return inner

    def check(observations: Any) -> BoolArray:
        rows = _rows(space, observations)
        return np.ones(rows, dtype=bool) if inner is None else inner(observations)

    return check


def batch_shape_checked(space: gym.Space[Any],
                        test: Callable[[gym.Space[Any]], Callable[[Any], bool] | None]
                        ) -> Callable[[Any], bool] | None:
    """The same for a whole batch at once: `test(space)` says whether every row is finite
    (True where it is None: a Box of integers)."""
    inner = test(space)
    if not isinstance(space, gym.spaces.Box):
        return inner

    def check(observations: Any) -> bool:
        _rows(space, observations)
        return True if inner is None else inner(observations)

    return check
