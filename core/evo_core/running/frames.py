"""What each frame of a replay shows, gathered by a wrapper around the environment: a wrapper
sees every reset, step and reward, so the episode loop needs no rendering code of its own.

A frame follows every reset and every step of the recorded episodes. It holds the
environment's picture (when drawing), the observation the brain receives next, and the
brain's state it will read that observation with: after a step, the state the step left
(the brain steps, and is traced, before the environment does); after a reset, the state the
brain starts the episode from. The episode loop resets the brain after the environment, so a
reset's frame waits until the brain's first step, when that state is known, and goes on then
(`finish` hands on one still waiting when the episodes end).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core.running.frame_panels import Shown
from evo_core.running.tracing import Trace

__all__ = ["FrameRecorder"]


class FrameRecorder(gym.Wrapper[Any, Any, Any, Any]):
    """Hands `show` a `Shown` after every reset and step of the first `episodes` of
    `of_episodes` episodes (the module docstring), and keeps none."""

    def __init__(self, env: gym.Env[Any, Any], episodes: int, of_episodes: int,
                 show: Callable[[Shown], None], *, pictures: bool = True,
                 observation: bool = False, neurons: Trace | None = None) -> None:
        """`pictures`: render the environment (False: the pass that only measures the
        panels' scales); `observation`: show the observation; `neurons`: the trace the brain's
        steps go into, whose state is shown."""
        super().__init__(env)
        self.record_episodes = episodes
        self.of_episodes = of_episodes
        self.show = show
        self.pictures = pictures
        self.observation = observation
        self.neurons = neurons
        self.count = 0
        self.episode = 0
        self.step_count = 0
        self.total = 0.0
        #: a reset's frame waiting for the brain's initial state
        self._waiting: Shown | None = None

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        self.finish()
        result = self.env.reset(seed=seed, options=options)
        self.episode += 1
        self.step_count, self.total = 0, 0.0
        shown = self._shown(result[0])
        if shown is not None and self.neurons is not None:
            self._waiting = shown
        elif shown is not None:
            self._hand(shown)
        return result

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        self.finish()  # the brain has stepped: its initial state is the trace's
        result = self.env.step(action)
        self.step_count += 1
        self.total += float(result[1])
        shown = self._shown(result[0])
        if shown is not None:
            self._hand(shown)
        return result

    def finish(self) -> None:
        """The reset's frame still waiting, with the brain's initial state."""
        waiting, self._waiting = self._waiting, None
        if waiting is not None and self.neurons is not None:
            self._hand(replace(waiting, state=dict(self.neurons.initial)))

    def _hand(self, shown: Shown) -> None:
        self.show(shown)
        self.count += 1

    def _shown(self, observation: Any) -> Shown | None:
        """This frame (the state filled in after a step; a reset's waits), or None: not a
        recorded episode, or the environment drew nothing."""
        if self.episode > self.record_episodes:
            return None
        picture = None
        if self.pictures:
            picture = self.env.render()
            if picture is None:
                return None
        return Shown(picture, observation if self.observation else None,
                     self._state() if self.neurons is not None else None, self.episode,
                     self.of_episodes, self.step_count, self.total)

    def _state(self) -> Mapping[str, NDArray[np.float64]]:
        """The brain's state after its last step (its last trace row)."""
        trace = self.neurons
        assert trace is not None
        return {key: rows[-1] for key, rows in trace.states.items() if rows}
