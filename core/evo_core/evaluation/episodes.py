"""Scoring one genome at a time ("off"): the episode engine (evaluation/rows.py) with one row.

Seeds: an evaluation seed determines everything about the evaluation. The environment is reset
with a seed derived from it before the first episode and continues its own random stream for the
following ones (so with one seed per generation every candidate faces the same episodes), and the
brain gets a fresh Generator per episode for its own noise (`rows.brain_seeds`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.config.behaviour import BehaviourConfig
from evo_core.config.schema import EpisodesConfig
from evo_core.contract.config_models import EnvironmentConfig
from evo_core.contract.observation_statistics import EvaluationContext, ObservationNormalizer
from evo_core.contract.protocols import EvaluationResult, IBrain, IBrainTemplate, IRandomBrain
from evo_core.environments import make_environment
from evo_core.errors import BatchRowFailed
from evo_core.evaluation.behaviour import RowBehaviour
from evo_core.evaluation.row_brains import LoneBrain
from evo_core.evaluation.row_envs import LoneEnvironment
from evo_core.evaluation.rows import (
    EpisodeOutcome,
    Played,
    Rules,
    Schedule,
    brain_seeds,
    environment_seed,
    results,
    run_jobs,
)

__all__ = ["EpisodeOutcome", "EpisodeRunner", "RunnerSpec"]


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


class EpisodeRunner:
    """Holds one environment (`env`, which replay may wrap) and one template; `evaluate`
    scores a genome (IEvaluator), with the normaliser of the last `use_context` (an
    `IContextEvaluator`)."""

    def __init__(self, template: IBrainTemplate, environment: EnvironmentConfig | str,
                 episodes: EpisodesConfig, render_mode: str | None = None,
                 behaviour: BehaviourConfig | None = None) -> None:
        self.template = template
        self.episodes = episodes
        self.rules = Rules(episodes)
        self.env = make_environment(environment, render_mode)
        self._random_brain: dict[type[Any], bool] = {}
        #: the normaliser the brains' observations go through (None: none; `use_context`)
        self.normalizer: ObservationNormalizer | None = None
        self.behaviour: RowBehaviour | None = None
        if behaviour is not None:
            try:
                self.behaviour = RowBehaviour(behaviour, self.env, 1)
            except BaseException:
                self.env.close()
                raise

    def close(self) -> None:
        self.env.close()

    def use_context(self, context: EvaluationContext) -> None:
        """The normaliser of the evaluations that follow (an `IContextEvaluator`)."""
        self.normalizer = context.normalizer

    def evaluate(self, genome: NDArray[np.float64], seed: int) -> EvaluationResult:
        return results(self._run(genome, seed), self.episodes.runs)[0]

    def run_episodes(self, genome: NDArray[np.float64], seed: int) -> list[EpisodeOutcome]:
        """`episodes.runs` episodes of the brain of `genome`."""
        return self._run(genome, seed).outcomes

    def _run(self, genome: NDArray[np.float64], seed: int) -> Played:
        """What the environment raises comes out as `EnvironmentRaised`, everything else as
        raised: the brain's."""
        runs = self.episodes.runs
        brain = self.template.make(np.ascontiguousarray(genome, dtype=np.float64))
        kind = type(brain)
        random = self._random_brain.get(kind)
        if random is None:  # isinstance on a protocol is slow: once per brain class
            random = self._random_brain[kind] = isinstance(brain, IRandomBrain)
        seeds = brain_seeds(seed, runs) if random else []
        return self._play(LoneBrain(brain, seeds, random), runs, environment_seed(seed),
                          self.behaviour)

    def run_episode(self, brain: IBrain, seed: int) -> EpisodeOutcome:
        """One episode of `brain` from `env.reset(seed=seed)`, the brain reset first and, if it
        draws random numbers, given a Generator seeded with `seed` too: `[stop]`'s champion
        tests, whose episode i is seeded with i."""
        lone = LoneBrain(brain, [np.random.SeedSequence(seed)], isinstance(brain, IRandomBrain))
        return self._play(lone, 1, seed, None).outcomes[0]

    def _play(self, brain: LoneBrain, runs: int, env_seed: int, behaviour: RowBehaviour | None
              ) -> Played:
        """`runs` episodes of one row on the runner's environment (the first from
        `reset(seed=env_seed)`), through the one episode engine."""
        environments = LoneEnvironment(self.env, runs, env_seed, self.rules, behaviour)
        try:
            return run_jobs(Schedule(1, runs, whole=True, most=1), environments, brain,
                            self.rules, behaviour, self.normalizer)
        except BatchRowFailed as failed:  # one row: the environment's error as it is
            cause = failed.__cause__
            assert cause is not None
            raise cause from cause.__cause__
