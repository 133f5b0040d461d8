"""The best genomes ever evaluated, ranked by raw fitness.

The predecessor ranked its hall of fame by a within-generation rank, so every generation's winner
looked equally good and early winners were never displaced (docs/predecessor.md).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["HallOfFame"]


class HallOfFame:
    """Up to `size` distinct genomes with the highest fitness; earlier ones win ties."""

    def __init__(self, size: int, genome_size: int) -> None:
        self.size = size
        self.genomes = np.empty((0, genome_size))
        self.fitness = np.empty(0)
        self.generation = np.empty(0, dtype=np.int64)

    def update(self, genomes: NDArray[np.float64], fitness: NDArray[np.float64],
               generation: int) -> bool:
        """Merge in a generation; True if the hall of fame changed."""
        all_genomes = np.concatenate([self.genomes, genomes])
        all_fitness = np.concatenate([self.fitness, fitness])
        all_generation = np.concatenate([self.generation,
                                         np.full(len(fitness), generation, dtype=np.int64)])
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
        return changed

    def arrays(self) -> dict[str, NDArray[np.generic]]:
        return {"genomes": self.genomes, "fitness": self.fitness, "generation": self.generation}

    def load(self, arrays: dict[str, NDArray[np.generic]]) -> None:
        self.genomes = np.array(arrays["genomes"], dtype=np.float64)
        self.fitness = np.array(arrays["fitness"], dtype=np.float64)
        self.generation = np.array(arrays["generation"], dtype=np.int64)
