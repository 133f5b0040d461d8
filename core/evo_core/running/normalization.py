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

from collections.abc import Sequence
from typing import Any

from evo_core.config.schema import EpisodesConfig
from evo_core.contract.observation_statistics import (
    EvaluationContext,
    ObservationNormalizer,
    ObservationStatistics,
)
from evo_core.contract.protocols import EvaluationResult
from evo_core.results.observation_arrays import statistics_of

__all__ = ["generation_context", "pooled", "restored_statistics"]


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
