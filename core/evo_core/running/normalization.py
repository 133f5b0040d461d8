"""`observation_normalization = "running"` in the main process: the frozen normaliser of a
generation, and the statistics its evaluations add.

A generation's brains see observations through the normaliser of the statistics of every
earlier generation (contract/observation_statistics.py); the evaluations return each
candidate's statistics, which are pooled here in genome order once the generation is evaluated,
so the result is the same whichever handler evaluated it and however it chunked the genomes.
The statistics travel in the checkpoint (`TrainingState.observations`), so a resumed run
continues with exactly the normaliser an uninterrupted one would have.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from evo_core.config.schema import EpisodesConfig, ExperimentConfig
from evo_core.contract.observation_statistics import (
    EvaluationContext,
    ObservationNormalizer,
    ObservationStatistics,
    normalize,
)
from evo_core.contract.protocols import EvaluationResult, IBrain
from evo_core.environments import probe_spaces
from evo_core.errors import UserError
from evo_core.results.observation_arrays import NORMALIZER_KEYS, normalizer_problem, statistics_of
from evo_core.results.run_folder import KeptGenome

__all__ = ["NormalizedBrain", "generation_context", "kept_normalizer", "normalised_size",
           "pooled", "restored_statistics"]

_RUNNING = "episodes.observation_normalization = \"running\""


class NormalizedBrain:
    """A kept genome's brain for a caller's own loop (`Run.champion()`), fed raw observations:
    it sees them through the normaliser it was evaluated with, as in training and replay. Its
    other capabilities (`use_rng`, `trace_state`) take no observation: call them on `brain`."""

    def __init__(self, brain: IBrain, normalizer: ObservationNormalizer) -> None:
        self.brain = brain
        self.normalizer = normalizer

    def reset(self) -> None:
        self.brain.reset()

    def step(self, observation: Any) -> Any:
        values = np.asarray(observation, dtype=np.float64)
        seen = normalize(np, values.reshape(-1, self.normalizer.size), self.normalizer.mean,
                         self.normalizer.std, self.normalizer.clip)
        return self.brain.step(seen.reshape(values.shape))


def normalised_size(config: ExperimentConfig, source: str) -> int | None:
    """The entries of the flattened observation the normaliser works on (None when it is off);
    an environment whose observations are no Box is refused in one line."""
    if config.episodes.observation_normalization != "running":
        return None
    space = probe_spaces(config.environment, source)[0]
    if not isinstance(space, gym.spaces.Box):
        raise UserError(f"{source}: {_RUNNING} normalises Box observations, and environment "
                        f"{config.environment.id!r} gives {type(space).__name__} ones; use "
                        "observation_normalization = \"off\"")
    return math.prod(space.shape)


def kept_normalizer(kept: KeptGenome, config: ExperimentConfig, file: Path, source: str
                    ) -> ObservationNormalizer | None:
    """The normaliser a kept genome (of best.npz or hall_of_fame.npz, `file`) was evaluated
    with, its arrays checked as received input (None when the run had none)."""
    size = normalised_size(config, source)
    if size is None:
        return None
    problem = normalizer_problem(kept.normalizer, (size,), file.stem)
    if problem is not None:
        raise UserError(f"{file}: {problem}; the run folder was edited or damaged")
    mean, std = (np.array(kept.normalizer[key], dtype=np.float64) for key in NORMALIZER_KEYS)
    return ObservationNormalizer(mean, std, config.episodes.observation_clip)


def generation_context(statistics: ObservationStatistics | None, episodes: EpisodesConfig
                       ) -> EvaluationContext | None:
    """The context every evaluation of the next generation gets (None when the normaliser is
    off: the handler's plain `evaluate`)."""
    if statistics is None:
        return None
    return EvaluationContext(ObservationNormalizer.of(statistics, episodes.observation_clip))


def pooled(statistics: ObservationStatistics, results: Sequence[EvaluationResult]
           ) -> ObservationStatistics:
    """`statistics` with the generation's candidates' pooled in, in genome order."""
    for candidate, result in enumerate(results):
        observed = result.observations
        if observed is None or observed.mean.shape != statistics.mean.shape:
            raise ValueError(f"candidate {candidate}'s evaluation returned no statistics of the "
                             f"{len(statistics.mean)} observation entries, but "
                             "episodes.observation_normalization is \"running\" (a bug in the "
                             "evaluator: report it to its author)")
        statistics = statistics.merged(observed)
    return statistics


def restored_statistics(fresh: ObservationStatistics | None, arrays: dict[str, Any]
                        ) -> ObservationStatistics | None:
    """The statistics of a checkpoint's `observations` arrays (checked by `check_checkpoint`)
    for a run that normalises (`fresh`, its empty statistics, is not None), else None."""
    return None if fresh is None else statistics_of(arrays)
