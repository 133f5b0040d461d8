"""The best genomes ever evaluated, ranked by raw fitness.

The predecessor ranked its hall of fame by a within-generation rank, so every generation's winner
looked equally good and early winners were never displaced (docs/predecessor.md).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from evo_core.contract.observation_statistics import ObservationNormalizer
from evo_core.results.observation_arrays import NORMALIZER_KEYS

__all__ = ["HallOfFame"]


class HallOfFame:
    """Up to `size` distinct genomes with the highest fitness; earlier ones win ties. Each keeps
    its fresh score too (`[champion]`: the mean of the `fresh_episodes` episodes it played but
    did not train on; 0 and 0 for a genome that played none: no NaN in a file that is compared
    and checked as numbers) and, with `observation_normalization = "running"`
    (`observation_size` entries), the observation normaliser its generation was evaluated
    with (`observation_mean`, `observation_std`: a row per genome)."""

    def __init__(self, size: int, genome_size: int, observation_size: int | None = None
                 ) -> None:
        self.size = size
        self.normalizers: tuple[NDArray[np.float64], NDArray[np.float64]] | None = \
            None if observation_size is None else \
            (np.empty((0, observation_size)), np.empty((0, observation_size)))
        self.genomes = np.empty((0, genome_size))
        self.fitness = np.empty(0)
        self.generation = np.empty(0, dtype=np.int64)
        self.fresh = np.empty(0)
        self.fresh_episodes = np.empty(0, dtype=np.int64)

    def update(self, genomes: NDArray[np.float64], fitness: NDArray[np.float64],
               generation: int, fresh: NDArray[np.float64] | None = None,
               fresh_episodes: int = 0, normalizer: ObservationNormalizer | None = None
               ) -> bool:
        """Merge in a generation (with its fresh scores, NaN where a candidate played none, the
        episodes each of the others played, and the normaliser it was evaluated with); True if
        the hall of fame changed."""
        all_genomes = np.concatenate([self.genomes, genomes])
        all_fitness = np.concatenate([self.fitness, fitness])
        all_generation = np.concatenate([self.generation,
                                         np.full(len(fitness), generation, dtype=np.int64)])
        fresh = np.full(len(fitness), np.nan) if fresh is None else fresh
        played = np.isfinite(fresh)
        all_fresh = np.concatenate([self.fresh, np.where(played, fresh, 0.0)])
        all_episodes = np.concatenate([self.fresh_episodes,
                                       np.where(played, fresh_episodes, 0).astype(np.int64)])
        order = np.argsort(-all_fitness, kind="stable")
        keep: list[int] = []
        seen: set[bytes] = set()
        for index in order:
            key = all_genomes[index].tobytes()
            if key in seen or not np.isfinite(all_fitness[index]):
                continue
            seen.add(key)
            keep.append(int(index))
            if len(keep) == self.size:
                break
        changed = keep != list(range(len(self.fitness)))
        self.genomes = all_genomes[keep]
        self.fitness = all_fitness[keep]
        self.generation = all_generation[keep]
        self.fresh = all_fresh[keep]
        self.fresh_episodes = all_episodes[keep]
        if self.normalizers is not None:
            assert normalizer is not None, "a normalised run's generation has its normaliser"
            mean, std, count = *self.normalizers, len(fitness)
            self.normalizers = (np.concatenate([mean, np.tile(normalizer.mean, (count, 1))])[keep],
                                np.concatenate([std, np.tile(normalizer.std, (count, 1))])[keep])
        return changed

    def arrays(self) -> dict[str, NDArray[np.generic]]:
        normalizers = {} if self.normalizers is None else dict(zip(NORMALIZER_KEYS,
                                                                    self.normalizers))
        return {"genomes": self.genomes, "fitness": self.fitness, "generation": self.generation,
                "fresh": self.fresh, "fresh_episodes": self.fresh_episodes, **normalizers}

    def load(self, arrays: dict[str, NDArray[np.generic]]) -> None:
        self.genomes = np.array(arrays["genomes"], dtype=np.float64)
        self.fitness = np.array(arrays["fitness"], dtype=np.float64)
        self.generation = np.array(arrays["generation"], dtype=np.int64)
        # checkpoints written before fresh scores existed have none
        none = np.zeros(len(self.fitness))
        self.fresh = np.array(arrays.get("fresh", none), dtype=np.float64)
        self.fresh_episodes = np.array(arrays.get("fresh_episodes", none), dtype=np.int64)
        if self.normalizers is not None:  # check_checkpoint made sure they are there
            mean, std = (np.array(arrays[key], dtype=np.float64) for key in NORMALIZER_KEYS)
            self.normalizers = (mean, std)
