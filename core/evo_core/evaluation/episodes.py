"""Scoring one genome: episodes in an environment that is made once and reused.

Seeds: an evaluation seed determines everything about the evaluation. The environment is reset
with a seed derived from it before the first episode and continues its own random stream for the
following ones (so with one seed per generation every candidate faces the same episodes), and the
brain gets a fresh Generator per episode for its own noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core.config.behaviour import BehaviourConfig
from evo_core.config.schema import EpisodesConfig
from evo_core.contract.config_models import EnvironmentConfig
from evo_core.contract.protocols import (
    EvaluationResult,
    IBrain,
    IBrainTemplate,
    IRandomBrain,
)
from evo_core.environments import make_environment
from evo_core.errors import EnvironmentRaised
from evo_core.evaluation.behaviour import BehaviourTracker
from evo_core.evaluation.observation_shape import shape_checked
from evo_core.interrupts import is_interrupt

__all__ = ["EpisodeOutcome", "EpisodeRunner", "RunnerSpec"]


@dataclass(frozen=True)
class EpisodeOutcome:
    """One episode: its return, its steps, and whether a NaN/inf ended it."""

    total: float
    steps: int
    nonfinite: bool


@dataclass(frozen=True)
class RunnerSpec:
    """What a worker needs to build its runner; small and picklable."""

    #: the config's environment (a bare id is accepted too); made by `make_environment`
    environment: EnvironmentConfig | str
    episodes: EpisodesConfig
    #: record a behaviour descriptor of every evaluation (None: none)
    behaviour: BehaviourConfig | None = None

    def build(self, template: IBrainTemplate) -> EpisodeRunner:
        return EpisodeRunner(template, self.environment, self.episodes,
                             behaviour=self.behaviour)


#: Up to this many entries a Python sum of `tolist()` is the fastest finiteness test.
_SMALL = 64


def _small_box_finite(value: Any) -> bool:
    try:
        return math.isfinite(sum(value.tolist()))  # NaN and inf survive a sum
    except (AttributeError, TypeError):  # a list, or a numpy scalar (`tolist()` gives a float)
        return _box_finite(np.asarray(value, dtype=np.float64))


def _box_finite(value: Any) -> bool:
    return math.isfinite(np.add.reduce(value, axis=None))


def finite_check(space: gym.Space[Any]) -> Any:
    """A fast test for NaN/inf in observations of `space`, or None where none can occur."""
    if isinstance(space, (gym.spaces.Discrete, gym.spaces.MultiDiscrete, gym.spaces.MultiBinary)):
        return None
    if isinstance(space, gym.spaces.Box) and space.dtype is not None and space.dtype.kind == "f":
        return _small_box_finite if len(space.shape) == 1 and space.shape[0] <= _SMALL \
            else _box_finite
    return _all_finite


def _all_finite(value: Any) -> bool:
    """Any observation: arrays, numbers of every kind (numpy scalars too: `np.float32` is no
    Python float), and the tuples, lists and dicts that composite spaces are made of."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind not in "fc" or bool(np.isfinite(value).all())
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (complex, np.inexact)):
        return bool(np.isfinite(value))
    if isinstance(value, (tuple, list)):
        return all(_all_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_all_finite(v) for v in value.values())
    return True


class EpisodeRunner:
    """Holds one environment and one template; `evaluate` scores a genome."""

    def __init__(self, template: IBrainTemplate, environment: EnvironmentConfig | str,
                 episodes: EpisodesConfig, render_mode: str | None = None,
                 behaviour: BehaviourConfig | None = None) -> None:
        self.template = template
        self.episodes = episodes
        self.env = make_environment(environment, render_mode)
        self.observation_ok = shape_checked(self.env.observation_space, finite_check)
        self._random_brain: dict[type[Any], bool] = {}
        self.behaviour: BehaviourTracker | None = None
        if behaviour is not None:
            try:
                self.behaviour = BehaviourTracker(behaviour, self.env)
            except BaseException:
                self.env.close()
                raise

    def close(self) -> None:
        self.env.close()

    def evaluate(self, genome: NDArray[np.float64], seed: int) -> EvaluationResult:
        outcomes = self.run_episodes(genome, seed)
        return EvaluationResult(sum(o.total for o in outcomes) / len(outcomes),
                                sum(o.steps for o in outcomes),
                                sum(o.nonfinite for o in outcomes),
                                None if self.behaviour is None else self.behaviour.descriptor())

    def run_episodes(self, genome: NDArray[np.float64], seed: int) -> list[EpisodeOutcome]:
        """`episodes.runs` episodes of the brain of `genome`."""
        brain = self.template.make(np.ascontiguousarray(genome, dtype=np.float64))
        sequence = np.random.SeedSequence(seed)
        env_seed = int(sequence.generate_state(1)[0])
        if self.behaviour is not None:
            self.behaviour.clear()
        outcomes = []
        for episode, brain_seed in enumerate(sequence.spawn(self.episodes.runs)):
            self._reset_brain(brain, np.random.Generator(np.random.PCG64(brain_seed)))
            outcomes.append(self.run_episode(brain, env_seed if episode == 0 else None))
        return outcomes

    def run_episode(self, brain: IBrain, seed: int | None) -> EpisodeOutcome:
        """One episode from `env.reset(seed=seed)` (`evo replay --render` records its frames
        with a wrapper around `env`), its behaviour recorded if the runner has a tracker."""
        tracker = self.behaviour
        outcome = self._play(brain, seed, tracker)
        if tracker is not None:
            tracker.end()
        return outcome

    def _play(self, brain: IBrain, seed: int | None, tracker: BehaviourTracker | None
              ) -> EpisodeOutcome:
        """What the environment raises in `reset` or `step` (a bad reward included) comes out as
        `EnvironmentRaised`, everything else as raised: the brain's. A `try` costs nothing
        until something raises, so the hot loop is no slower for telling the two apart; nor is
        it for the one test of `tracker` per step when no behaviour is recorded."""
        limit = self.episodes.max_steps
        observation_ok = self.observation_ok
        env_step, brain_step = self.env.step, brain.step
        try:
            observation, _ = self.env.reset(seed=seed)
        except BaseException as exc:
            if is_interrupt(exc):
                raise
            raise EnvironmentRaised("reset") from exc
        if tracker is not None:
            tracker.begin()
        total, steps = 0.0, 0
        while True:
            if observation_ok is not None and not observation_ok(observation):
                return EpisodeOutcome(total + self.episodes.nonfinite_penalty, steps, True)
            action = brain_step(observation)
            try:
                observation, reward, terminated, truncated, _ = env_step(action)
                reward = float(reward)
                if tracker is not None:  # its state hook is the environment's code
                    tracker.step(action, observation)
            except BaseException as exc:
                if is_interrupt(exc):
                    raise
                raise EnvironmentRaised("step") from exc
            steps += 1
            if not math.isfinite(reward):
                return EpisodeOutcome(total + self.episodes.nonfinite_penalty, steps, True)
            total += reward
            if terminated or truncated:
                return EpisodeOutcome(total, steps, False)
            if limit is not None and steps >= limit:
                return EpisodeOutcome(total + self.episodes.max_steps_penalty, steps, False)

    def _reset_brain(self, brain: IBrain, rng: np.random.Generator) -> None:
        """`use_rng` for brains that draw random numbers, then `reset()`."""
        kind = type(brain)
        random = self._random_brain.get(kind)
        if random is None:  # isinstance on a protocol is slow: once per brain class
            random = self._random_brain[kind] = isinstance(brain, IRandomBrain)
        if random:
            brain.use_rng(rng)  # type: ignore[attr-defined]
        brain.reset()
