"""Behaviour descriptors recorded by the batched runner: one `BehaviourTracker` per row.

The per-genome runner's tracker already knows what to record and how to combine episodes, so
each row of a batch gets its own tracker rather than a second implementation. In "sync" mode a
row is a candidate with its own environment, so its tracker records its `runs` episodes one
after another and combines them itself, exactly as `EpisodeRunner` does (its `state` source reads
that row's environment). In "native" and "envpool" mode a row is one episode of a candidate; the
candidate's descriptor is the mean of its rows' episodes, combined by the same function. Those
rows share one vector environment, which offers no per-row state, so the `state` source is
refused for them (`check_batched_behaviour`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core.config.behaviour import BehaviourConfig
from evo_core.errors import BatchRowFailed, EnvironmentRaised, UserError
from evo_core.evaluation.behaviour import BehaviourTracker, mean_of_episodes
from evo_core.evaluation.episodes import EpisodeOutcome
from evo_core.interrupts import is_interrupt

__all__ = ["BatchBehaviour", "check_batched_behaviour"]

BoolArray = NDArray[np.bool_]


def check_batched_behaviour(behaviour: BehaviourConfig | None, vectorize: str,
                            source: str) -> None:
    """The one-line error for a behaviour a batched mode cannot record."""
    if behaviour is not None and behaviour.source == "state" and vectorize != "sync":
        raise UserError(f"{source}: behaviour.source = \"state\" needs each candidate's own "
                        f"environment, which episodes.vectorize = {vectorize!r} does not have; "
                        "use episodes.vectorize = \"sync\" (or \"off\"), or source = "
                        "\"observation\" or \"action\"")


class BatchBehaviour:
    """A `BatchObserver` that records every row's descriptor.

    `env_of(row)` is the environment whose spaces (and, for the `state` source, whose state) a
    row's tracker reads; it is asked once per row, when the row first takes part in a batch.
    `rows_per_candidate` is 1 in "sync" mode and `runs` in "native" and "envpool" mode."""

    def __init__(self, config: BehaviourConfig, env_of: Callable[[int], gym.Env[Any, Any]],
                 rows_per_candidate: int) -> None:
        self.config = config
        self._env_of = env_of
        self._per = rows_per_candidate
        self._trackers: list[BehaviourTracker] = []

    def started(self, rows: int) -> None:
        """After the rows' first reset, so a `state` tracker reads its width from a valid state."""
        while len(self._trackers) < rows:
            self._trackers.append(BehaviourTracker(self.config,
                                                   self._env_of(len(self._trackers))))
        for tracker in self._trackers[:rows]:
            tracker.clear()
            tracker.begin()

    def stepped(self, active: BoolArray, observations: Any, actions: Any) -> None:
        """Each stepped row records its value, as `EpisodeRunner` does after `env.step` (a
        `state` hook is the environment's code, so what it raises is the environment's)."""
        trackers = self._trackers
        for row in np.flatnonzero(active).tolist():
            try:
                trackers[row].step(actions[row], observations[row])
            except BaseException as exc:
                if is_interrupt(exc):
                    raise
                raised = EnvironmentRaised("step")
                raised.__cause__ = exc
                raise BatchRowFailed(row // self._per) from raised

    def episode_ended(self, row: int, outcome: EpisodeOutcome) -> None:
        """Close the row's episode; its next one (if any) starts recording from here (its
        tracker already knows its width, so no state is read before the next reset)."""
        tracker = self._trackers[row]
        tracker.end()
        tracker.begin()

    def descriptors(self, candidates: int) -> list[NDArray[np.float64]]:
        """Each candidate's descriptor; a candidate's episodes are the consecutive rows it owns."""
        per = self._per
        if per == 1:
            return [tracker.descriptor() for tracker in self._trackers[:candidates]]
        return [mean_of_episodes([tracker.descriptor()
                                  for tracker in self._trackers[i * per:(i + 1) * per]])
                for i in range(candidates)]
