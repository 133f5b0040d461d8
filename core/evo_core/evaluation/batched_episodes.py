"""Scoring a whole chunk of genomes at once: `episodes.vectorize` = "sync", "native", "envpool".

A small brain's step costs mostly numpy's per-call overhead, so stepping every candidate of a
worker's chunk with one batched brain (`IBatchTemplate.make_batch`, or the stacked fallback) is
much cheaper than one brain at a time. The environments are stepped in one of three ways:

- **sync**: one ordinary environment per candidate, made with `make_environment` and seeded
  exactly as `EpisodeRunner` seeds its one environment; each candidate runs its `runs` episodes
  one after the other in its own environment, the first from the evaluation seed, the next ones
  continuing the environment's random stream, and each episode's brain row gets the Generator
  `use_rng` would get. Results are therefore identical to "off" (for a brain whose batch acts
  exactly as its rows; the built-in ones do).
- **native**: gymnasium's vector environment of the id (`gymnasium.make_vec` with its vector
  entry point, e.g. CartPole's numpy `CartPoleVectorEnv`), one row per candidate and episode
  (candidates x runs), all stepped in one call.
- **envpool**: envpool's C++ pool of the same id, rows as for native.

native and envpool have their own random streams: the vector environment is reset once per chunk
with a seed derived from the chunk's evaluation seeds, so a run is reproducible for a seed (and
the same processing set-up, since chunks follow the number of workers), but its episodes differ
from "off". Brain noise still comes from each row's own Generator, as in "off".

In every mode a finished row is masked: it gets no reward and its environment is not stepped
(sync), or its steps are ignored (native and envpool step every environment; gymnasium 1.x and
envpool reset a finished environment on the step after the end, and that episode is not
counted). `max_steps`, `max_steps_penalty` and the NaN/inf penalty act per row as in
`EpisodeRunner`. A `BatchObserver` sees every row's actions and the observations the step
returned, for per-row records: behaviour descriptors (evaluation/batched_behaviour.py) are recorded
so, exactly as `EpisodeRunner` records them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core.authoring.batching import is_random_batch, make_batch, split_rows, stack_rows
from evo_core.config.behaviour import BehaviourConfig
from evo_core.config.schema import EpisodesConfig
from evo_core.contract.config_models import EnvironmentConfig
from evo_core.contract.protocols import EvaluationResult, IBrainBatch, IBrainTemplate
from evo_core.environments import make_environment
from evo_core.errors import BatchRowFailed, EnvironmentRaised
from evo_core.evaluation.batched_behaviour import BatchBehaviour, check_batched_behaviour
from evo_core.evaluation.episodes import EpisodeOutcome, finite_check
from evo_core.evaluation.observation_shape import rows_shape_checked, shape_checked
from evo_core.evaluation.vector_envs import VectorEnvironments, environment_id
from evo_core.interrupts import is_interrupt

__all__ = ["BatchObserver", "BatchedEpisodeRunner", "BatchedRunnerSpec"]

BoolArray = NDArray[np.bool_]


class BatchObserver(Protocol):
    """Hears every batched step: where per-row records (behaviour descriptors) hook in."""

    def started(self, rows: int) -> None:
        """A batch of `rows` rows begins, right after their first reset (each row one candidate
        in sync mode, one candidate's episode in native and envpool mode)."""

    def stepped(self, active: BoolArray, observations: Any, actions: Any) -> None:
        """The rows where `active` is True were stepped with `actions` and returned
        `observations` (what `env.step` returned, as `EpisodeRunner`'s tracker records it: the
        last one of an episode included, before any reset); the other rows' values mean
        nothing. In sync mode the rows' environments have not been reset since."""

    def episode_ended(self, row: int, outcome: EpisodeOutcome) -> None:
        """Row `row` finished an episode (in sync mode its next episode, if any, starts after
        this call)."""


class _NoObserver:
    def started(self, rows: int) -> None:
        pass

    def stepped(self, active: BoolArray, observations: Any, actions: Any) -> None:
        pass

    def episode_ended(self, row: int, outcome: EpisodeOutcome) -> None:
        pass


@dataclass(frozen=True)
class BatchedRunnerSpec:
    """What a worker needs to build its batched runner; small and picklable, like RunnerSpec."""

    #: the config's environment (a bare id is accepted too); made by `make_environment`
    environment: EnvironmentConfig | str
    episodes: EpisodesConfig
    #: record a behaviour descriptor of every evaluation (None: none)
    behaviour: BehaviourConfig | None = None

    def build(self, template: IBrainTemplate) -> BatchedEpisodeRunner:
        return BatchedEpisodeRunner(template, self.environment, self.episodes,
                                    behaviour=self.behaviour)


def _brain_rngs(seed: int, runs: int) -> tuple[int, list[np.random.Generator]]:
    """The environment seed and the per-episode brain Generators `EpisodeRunner` derives."""
    sequence = np.random.SeedSequence(seed)
    env_seed = int(sequence.generate_state(1)[0])
    return env_seed, [np.random.Generator(np.random.PCG64(child))
                      for child in sequence.spawn(runs)]


def _results(outcomes: Sequence[Sequence[EpisodeOutcome]],
             descriptors: Sequence[NDArray[np.float64]] | None) -> list[EvaluationResult]:
    return [EvaluationResult(sum(o.total for o in episodes) / len(episodes),
                             sum(o.steps for o in episodes),
                             sum(o.nonfinite for o in episodes),
                             None if descriptors is None else descriptors[i])
            for i, episodes in enumerate(outcomes)]


@dataclass
class _Rows:
    """Per-row bookkeeping of the episode in progress."""

    count: int
    totals: list[float] = field(init=False)
    steps: list[int] = field(init=False)

    def __post_init__(self) -> None:
        self.totals = [0.0] * self.count
        self.steps = [0] * self.count


class BatchedEpisodeRunner:
    """Holds the environments and one template; `evaluate_many` scores a chunk (IBatchEvaluator)."""

    def __init__(self, template: IBrainTemplate, environment: EnvironmentConfig | str,
                 episodes: EpisodesConfig,
                 observer: BatchObserver | None = None,
                 behaviour: BehaviourConfig | None = None) -> None:
        """`behaviour`: record descriptors (with a BatchBehaviour as the observer, so not
        together with `observer`)."""
        self.template = template
        self.environment = environment
        self.episodes = episodes
        self.behaviour: BatchBehaviour | None = None
        if behaviour is not None:
            assert observer is None, "behaviour is recorded by its own observer"
            check_batched_behaviour(behaviour, episodes.vectorize, "episodes.vectorize")
            self.behaviour = BatchBehaviour(
                behaviour, self._row_env,
                1 if episodes.vectorize == "sync" else episodes.runs)
        self.observer: BatchObserver = self.behaviour or observer or _NoObserver()
        self.envs: list[gym.Env[Any, Any]] = [make_environment(environment)]
        self.observation_space = self.envs[0].observation_space
        self.action_space = self.envs[0].action_space
        self.observation_ok = shape_checked(self.observation_space, finite_check)
        self.vector: VectorEnvironments | None = None
        if episodes.vectorize in ("native", "envpool"):
            self.vector = VectorEnvironments(environment_id(environment), episodes.vectorize)

    def close(self) -> None:
        for env in self.envs:
            env.close()
        self.envs = []
        if self.vector is not None:
            self.vector.close()

    def evaluate(self, genome: NDArray[np.float64], seed: int) -> EvaluationResult:
        return self.evaluate_many(np.asarray(genome, dtype=np.float64)[None, :],
                                  np.array([seed], dtype=np.int64))[0]

    def evaluate_many(self, genomes: NDArray[np.float64], seeds: NDArray[np.int64]
                      ) -> list[EvaluationResult]:
        outcomes = self._run_sync(genomes, seeds) if self.vector is None \
            else self._run_vector(genomes, seeds)
        return _results(outcomes, None if self.behaviour is None
                        else self.behaviour.descriptors(len(genomes)))

    def _row_env(self, row: int) -> gym.Env[Any, Any]:
        """The environment a row's behaviour tracker reads: its own in sync mode (made before
        the batch starts), else the first one, for its spaces only."""
        return self.envs[row] if self.vector is None else self.envs[0]

    def _batch(self, genomes: NDArray[np.float64]) -> IBrainBatch:
        return make_batch(self.template, genomes, self.observation_space, self.action_space)

    # ------------------------------------------------------------------ sync

    def _sync_envs(self, count: int) -> list[gym.Env[Any, Any]]:
        while len(self.envs) < count:
            self.envs.append(make_environment(self.environment))
        return self.envs[:count]

    def _run_sync(self, genomes: NDArray[np.float64], seeds: NDArray[np.int64]
                  ) -> list[list[EpisodeOutcome]]:
        """Each row one candidate, its episodes one after another in its own environment."""
        count, runs, limit = len(genomes), self.episodes.runs, self.episodes.max_steps
        envs = self._sync_envs(count)
        batch = self._batch(genomes)
        random = is_random_batch(batch)
        seeded = [_brain_rngs(int(seed), runs) for seed in seeds]
        outcomes: list[list[EpisodeOutcome]] = [[] for _ in range(count)]
        rows = _Rows(count)
        active = np.ones(count, dtype=bool)
        neutral = split_rows(self.observation_space,
                             gym.vector.utils.create_empty_array(self.observation_space, 1))[0]
        observations: list[Any] = [neutral] * count
        observation_ok = self.observation_ok

        def start(row: int) -> None:
            """The next episode of `row`: brain row reset with its Generator, env reset."""
            episode = len(outcomes[row])
            if random:
                rngs: list[np.random.Generator | None] = [None] * count
                rngs[row] = seeded[row][1][episode]
                batch.use_rngs(rngs)  # type: ignore[attr-defined]
            mask = np.zeros(count, dtype=bool)
            mask[row] = True
            batch.reset(mask)
            rows.totals[row], rows.steps[row] = 0.0, 0
            try:
                observations[row], _ = envs[row].reset(seed=seeded[row][0] if episode == 0
                                                       else None)
            except BaseException as exc:
                if is_interrupt(exc):
                    raise
                raise BatchRowFailed(row) from _environment_raised("reset", exc)

        def end(row: int, outcome: EpisodeOutcome) -> bool:
            """Record the episode; start the next one. True if the row goes on."""
            outcomes[row].append(outcome)
            self.observer.episode_ended(row, outcome)
            if len(outcomes[row]) < runs:
                start(row)
                return True
            active[row] = False
            observations[row] = neutral  # a finished row's brain steps on a harmless input
            return False

        if random:
            batch.use_rngs([each[1][0] for each in seeded])  # type: ignore[attr-defined]
        batch.reset()
        for row in range(count):
            try:
                observations[row], _ = envs[row].reset(seed=seeded[row][0])
            except BaseException as exc:
                if is_interrupt(exc):
                    raise
                raise BatchRowFailed(row) from _environment_raised("reset", exc)
        self.observer.started(count)
        penalty = self.episodes.nonfinite_penalty
        while True:
            if observation_ok is not None:
                for row in np.flatnonzero(active).tolist():
                    while not observation_ok(observations[row]):
                        if not end(row, EpisodeOutcome(rows.totals[row] + penalty,
                                                       rows.steps[row], True)):
                            break
            live = np.flatnonzero(active).tolist()
            if not live:
                break
            batched = stack_rows(self.observation_space, observations)
            actions = batch.step(batched)
            action_rows = split_rows(self.action_space, actions)
            stepped = active.copy()
            # episodes end (and the next one resets) after the observer saw the whole step
            ended: list[tuple[int, EpisodeOutcome]] = []
            for row in live:
                try:
                    observation, reward, terminated, truncated, _ = envs[row].step(
                        action_rows[row])
                    reward = float(reward)
                except BaseException as exc:
                    if is_interrupt(exc):
                        raise
                    raise BatchRowFailed(row) from _environment_raised("step", exc)
                observations[row] = observation
                steps = rows.steps[row] = rows.steps[row] + 1
                if not math.isfinite(reward):
                    ended.append((row, EpisodeOutcome(rows.totals[row] + penalty, steps, True)))
                    continue
                total = rows.totals[row] = rows.totals[row] + reward
                if terminated or truncated:
                    ended.append((row, EpisodeOutcome(total, steps, False)))
                elif limit is not None and steps >= limit:
                    ended.append((row, EpisodeOutcome(
                        total + self.episodes.max_steps_penalty, steps, False)))
            self.observer.stepped(stepped, observations, action_rows)
            for row, outcome in ended:
                end(row, outcome)
        return outcomes

    # ------------------------------------------------------------------ native, envpool

    def _run_vector(self, genomes: NDArray[np.float64], seeds: NDArray[np.int64]
                    ) -> list[list[EpisodeOutcome]]:
        """One row per candidate and episode, all in one vector environment."""
        assert self.vector is not None
        runs, limit = self.episodes.runs, self.episodes.max_steps
        count = len(genomes) * runs
        batch = self._batch(np.repeat(np.ascontiguousarray(genomes, dtype=np.float64), runs,
                                      axis=0))
        if is_random_batch(batch):
            batch.use_rngs([rng for seed in seeds  # type: ignore[attr-defined]
                            for rng in _brain_rngs(int(seed), runs)[1]])
        batch.reset()
        env_seed = int(np.random.SeedSequence([int(s) for s in seeds]).generate_state(1)[0])
        vector_env = self.vector.get(count)
        try:
            observations, _ = vector_env.reset(seed=env_seed)
        except BaseException as exc:
            if is_interrupt(exc):
                raise
            raise BatchRowFailed(0) from _environment_raised("reset", exc)  # no row to blame
        finite_rows = rows_shape_checked(self.observation_space, _finite_rows)
        totals = np.zeros(count)
        steps = np.zeros(count, dtype=np.int64)
        nonfinite = np.zeros(count, dtype=bool)
        active = np.ones(count, dtype=bool)
        penalty = self.episodes.nonfinite_penalty
        self.observer.started(count)
        while True:
            if finite_rows is not None:
                bad = active & ~finite_rows(observations)
                if bad.any():
                    totals[bad] += penalty
                    nonfinite |= bad
                    active &= ~bad
            if not active.any():
                break
            actions = batch.step(observations)
            stepped = active.copy()
            try:
                observations, rewards, terminated, truncated, _ = vector_env.step(actions)
            except BaseException as exc:
                if is_interrupt(exc):
                    raise
                # the pool cannot tell which environment raised: blame the first running row
                raise BatchRowFailed(int(np.flatnonzero(active)[0]) // runs) from \
                    _environment_raised("step", exc)
            self.observer.stepped(stepped, observations, actions)
            rewards = np.asarray(rewards, dtype=np.float64)
            steps[active] += 1
            bad_reward = active & ~np.isfinite(rewards)
            totals[bad_reward] += penalty
            nonfinite |= bad_reward
            going = active & ~bad_reward
            totals[going] += rewards[going]
            done = going & (np.asarray(terminated) | np.asarray(truncated))
            hit = np.zeros(count, dtype=bool) if limit is None else going & ~done & \
                (steps >= limit)
            totals[hit] += self.episodes.max_steps_penalty
            active &= ~(bad_reward | done | hit)
        outcomes = [EpisodeOutcome(float(t), int(s), bool(n))
                    for t, s, n in zip(totals.tolist(), steps.tolist(), nonfinite.tolist())]
        for row, outcome in enumerate(outcomes):
            self.observer.episode_ended(row, outcome)
        return [outcomes[i * runs:(i + 1) * runs] for i in range(len(genomes))]


def _environment_raised(call: str, exc: BaseException) -> EnvironmentRaised:
    raised = EnvironmentRaised(call)
    raised.__cause__ = exc
    return raised


def _finite_rows(space: gym.Space[Any]) -> Callable[[Any], BoolArray] | None:
    """Which rows of a batch of observations are free of NaN/inf, or None where none can be."""
    check = finite_check(space)
    if check is None:
        return None
    if isinstance(space, gym.spaces.Box):
        def box_rows(observations: Any) -> BoolArray:
            array = np.asarray(observations)
            rows: BoolArray = np.isfinite(array.reshape(array.shape[0], -1)).all(axis=1)
            return rows

        return box_rows

    def any_rows(observations: Any) -> BoolArray:
        return np.array([check(row) for row in split_rows(space, observations)], dtype=bool)

    return any_rows
