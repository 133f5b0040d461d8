"""Scoring a whole chunk of genomes at once: `episodes.vectorize` = "sync", "native", "envpool".

A small brain's step costs mostly numpy's per-call overhead, so stepping many candidates of a
worker's chunk with one batched brain (`IBatchTemplate.make_batch`, or the stacked fallback) is
much cheaper than one brain at a time. The chunk runs on the episode engine (evaluation/rows.py)
with up to `episodes.batch_rows` rows; a row whose episodes end takes the chunk's next candidate
(`IReloadableBatch.load`), so the batch never waits for its slowest episode while jobs remain.

- **sync**: each row has its own ordinary environment (made with `make_environment`) and keeps a
  candidate for all its `runs` episodes, seeded exactly as "off" seeds them: results are
  identical to "off" (for a brain whose batch acts exactly as its rows; the built-in ones do).
- **native**: the rows of gymnasium's vector environment of the id (`gymnasium.make_vec` with
  its vector entry point, e.g. CartPole's numpy `CartPoleVectorEnv`); a row runs one episode of a
  candidate at a time, any free row the next one.
- **envpool**: envpool's C++ pool of the same id, rows as for native.

native and envpool have their own random streams (evaluation/row_envs.py): a run is
reproducible for a seed and the same processing set-up (workers, `episodes.batch_rows`), but
its episodes differ from "off". Brain noise still comes from each job's own Generator.

A batch that cannot load genomes into rows (a template's own batch without `IReloadableBatch`)
gets one row per candidate (sync) or per episode (native, envpool), as many as the chunk needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core.authoring.batching import is_random_batch, make_batch
from evo_core.config.behaviour import BehaviourConfig
from evo_core.config.schema import EpisodesConfig
from evo_core.contract.config_models import EnvironmentConfig
from evo_core.contract.observation_statistics import EvaluationContext, ObservationNormalizer
from evo_core.contract.protocols import (
    EvaluationResult,
    IBrainBatch,
    IBrainTemplate,
    IReloadableBatch,
    IVectorBehaviourState,
)
from evo_core.environments import make_environment
from evo_core.evaluation.batched_behaviour import check_batched_behaviour
from evo_core.evaluation.behaviour import RowBehaviour
from evo_core.evaluation.row_brains import BatchBrains
from evo_core.evaluation.row_envs import OwnEnvironments, VectorRows
from evo_core.evaluation.rows import (
    RowEnvironments,
    Rules,
    Schedule,
    brain_seeds,
    environment_seed,
    results,
    run_jobs,
)
from evo_core.evaluation.vector_envs import VectorEnvironments, check_vectorize

__all__ = ["BatchedEpisodeRunner", "BatchedRunnerSpec"]


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


class BatchedEpisodeRunner:
    """Holds the environments and one template; `evaluate_many` scores a chunk (IBatchEvaluator),
    with the normaliser of the last `use_context` (an `IContextEvaluator`)."""

    def __init__(self, template: IBrainTemplate, environment: EnvironmentConfig | str,
                 episodes: EpisodesConfig, behaviour: BehaviourConfig | None = None) -> None:
        if episodes.vectorize == "sync" or behaviour is None or behaviour.source != "state":
            check_batched_behaviour(behaviour, episodes.vectorize)
        else:  # whether the vector environment offers its rows' states
            check_vectorize(environment, episodes.vectorize, behaviour)
        self.template = template
        self.environment = environment
        self.episodes = episodes
        self.rules = Rules(episodes)
        self.behaviour_config = behaviour
        self.envs: list[gym.Env[Any, Any]] = [make_environment(environment)]
        self.observation_space = self.envs[0].observation_space
        self.action_space = self.envs[0].action_space
        self.vector: VectorEnvironments | None = None
        if episodes.vectorize in ("native", "envpool"):
            self.vector = VectorEnvironments(environment, episodes.vectorize)
        self._behaviours: dict[int, RowBehaviour] = {}
        #: the normaliser the brains' observations go through (None: none; `use_context`)
        self.normalizer: ObservationNormalizer | None = None

    def close(self) -> None:
        for env in self.envs:
            env.close()
        self.envs = []
        if self.vector is not None:
            self.vector.close()

    def use_context(self, context: EvaluationContext) -> None:
        """The normaliser of the evaluations that follow (an `IContextEvaluator`)."""
        self.normalizer = context.normalizer

    def evaluate(self, genome: NDArray[np.float64], seed: int) -> EvaluationResult:
        return self.evaluate_many(np.asarray(genome, dtype=np.float64)[None, :],
                                  np.array([seed], dtype=np.int64))[0]

    def evaluate_many(self, genomes: NDArray[np.float64], seeds: NDArray[np.int64]
                      ) -> list[EvaluationResult]:
        genomes = np.ascontiguousarray(genomes, dtype=np.float64)
        runs = self.episodes.runs
        whole = self.vector is None
        schedule = Schedule(len(genomes), runs, whole, self.episodes.batch_rows)
        batch, held = self._batch(genomes, schedule)
        if not isinstance(batch, IReloadableBatch) and schedule.rows < schedule.jobs // (
                runs if whole else 1):  # fixed rows: one per candidate (whole) or episode
            schedule = Schedule(len(genomes), runs, whole, schedule.jobs)
            batch, held = self._batch(genomes, schedule)
        random = is_random_batch(batch)
        # the evaluation seeds' own seeds where something uses them: the rows' own
        # environments (sync) and the Generators of a random batch
        brains = BatchBrains(batch, genomes, runs,
                             [brain_seeds(int(seed), runs) for seed in seeds] if random
                             else None, held)
        behaviour = self._behaviour(schedule.rows)
        environments: RowEnvironments
        if self.vector is None:
            environments = OwnEnvironments(self._own_envs(schedule.rows), runs,
                                           [environment_seed(int(seed)) for seed in seeds],
                                           self.rules, behaviour)
        else:
            environments = VectorRows(self.vector.get(schedule.rows), schedule.rows, seeds,
                                      runs, self.rules, behaviour, self.observation_space)
        return results(run_jobs(schedule, environments, brains, self.rules, behaviour,
                                self.normalizer), runs)

    def _batch(self, genomes: NDArray[np.float64], schedule: Schedule
               ) -> tuple[IBrainBatch, list[int]]:
        """The batch of the rows' first candidates, and those candidates: the rows of one
        genome grouped only where no row will take another job (`make_batch`'s `grouped`)."""
        held = [job // self.episodes.runs for job in schedule.first()]
        return make_batch(self.template, genomes[held], self.observation_space,
                          self.action_space, grouped=not schedule.reloads), held

    def _own_envs(self, count: int) -> list[gym.Env[Any, Any]]:
        while len(self.envs) < count:
            self.envs.append(make_environment(self.environment))
        return self.envs[:count]

    def _behaviour(self, rows: int) -> RowBehaviour | None:
        """The recorder of `rows` rows (the `state` source reads the rows' own environments)."""
        config = self.behaviour_config
        if config is None:
            return None
        recorder = self._behaviours.get(rows)
        if recorder is None:
            envs = self._own_envs(rows) if self.vector is None else None
            recorder = self._behaviours[rows] = RowBehaviour(config, self.envs[0], rows, envs)
        if self.vector is not None and config.source == "state":
            # the pool of this size may have been made again since (VectorEnvironments keeps
            # a few): the states are read from the one these rows step
            vector = self.vector.get(rows)
            assert isinstance(vector, IVectorBehaviourState)  # check_vectorize made sure
            recorder.read_states_from(vector)
        return recorder
