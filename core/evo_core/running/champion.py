"""`[champion]`: the champion chosen on episodes it did not train on (config/champion.py says why).

Each generation the best `candidates` by training fitness play fresh episodes through the run's
own handler, so they run where every evaluation runs (workers, a cluster, a batch, JAX): each
candidate is evaluated `repeats` times, each time on `episodes.runs` episodes from a seed of the
champion stream, the same seeds for every candidate of the generation (a fair comparison). Its
fresh score is the mean of those episodes. The seeds lie outside the range training draws from.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from evo_core.config.champion import ChampionConfig
from evo_core.contract.protocols import EvaluationResult
from evo_core.running.seeding import Streams

__all__ = ["ChampionRecord", "fresh_scores", "fresh_episodes"]

#: Evaluates genomes on seeds (one each) as the generation's candidates were: the run's handler.
Evaluate = Callable[[NDArray[np.float64], NDArray[np.int64]], list[EvaluationResult]]


@dataclass
class ChampionRecord:
    """best.npz's champion: its genome, training fitness, generation and fresh score."""

    genome: NDArray[np.float64]
    fitness: float
    generation: int
    fresh: float

    def arrays(self) -> dict[str, NDArray[np.generic]]:
        return {"genome": self.genome, "fitness": np.asarray(self.fitness, dtype=np.float64),
                "generation": np.asarray(self.generation, dtype=np.int64),
                "fresh": np.asarray(self.fresh, dtype=np.float64)}

    @classmethod
    def from_arrays(cls, arrays: dict[str, NDArray[np.generic]]) -> ChampionRecord | None:
        """The record a checkpoint holds (checked by `checkpoint_checks`), or None."""
        if not arrays:
            return None
        return cls(np.array(arrays["genome"], dtype=np.float64), float(arrays["fitness"]),
                   int(arrays["generation"]), float(arrays["fresh"]))


def fresh_episodes(config: ChampionConfig, runs: int) -> int:
    """The fresh episodes a candidate plays: `config.episodes`, rounded up to whole
    evaluations of `runs` episodes."""
    return math.ceil(config.episodes / runs) * runs


def fresh_scores(config: ChampionConfig, runs: int, fitness: NDArray[np.float64],
                 genomes: NDArray[np.float64], streams: Streams, evaluate: Evaluate
                 ) -> NDArray[np.float64]:
    """One fresh score per candidate: the mean return of the fresh episodes of the best
    `config.candidates` (finite training fitness only), NaN for the others."""
    scores = np.full(len(fitness), np.nan)
    ranked = np.argsort(-fitness, kind="stable")
    chosen = ranked[np.isfinite(fitness[ranked])][:config.candidates]
    if not len(chosen):
        return scores
    repeats = fresh_episodes(config, runs) // runs
    seeds = streams.fresh_seeds(repeats)
    results = evaluate(np.repeat(genomes[chosen], repeats, axis=0),
                       np.tile(seeds, len(chosen)))
    played = np.array([result.fitness for result in results], dtype=np.float64)
    scores[chosen] = played.reshape(len(chosen), repeats).mean(axis=1)
    return scores
