"""Species: who belongs together (speciation) and how many children each species has
(explicit fitness sharing), as pure functions of arrays.

Speciation follows the paper (Stanley & Miikkulainen 2002, 3.3): each existing species is
represented by a random member of the previous generation, and a genome joins the FIRST species
(by id, oldest first) whose representative is closer than the threshold; a genome that fits none
founds a new species and represents it for the rest of the genomes. neat-python instead puts a
genome in the closest species: a different partition, and the paper's is kept here.

Every distance is computed for the whole population at once against one representative, so the
loops below are over species, never over genomes or genes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

__all__ = ["Distances", "Speciation", "allocate", "speciate"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: The distances of some genomes of a population (their indices) to one genome: a
#: representative's of the previous generation, or a member's of this one
Distances = Callable[[IntArray], FloatArray]


class Speciation(NamedTuple):
    """Each genome's species id, and the id the next new species gets."""

    species: IntArray
    next_id: int


def speciate(count: int, representatives: list[tuple[int, Distances]],
             to_member: Callable[[int], Distances], threshold: float, next_id: int
             ) -> Speciation:
    """The species of `count` genomes. `representatives`: the existing species in order
    (species id, the distances of genomes to its representative); `to_member(i)`: the
    distances of genomes to genome i, for the species genome i founds. Only the genomes not
    placed yet are measured, so founding many species costs little when few are left."""
    species = np.full(count, -1, dtype=np.int64)
    for identity, distances in representatives:
        free = np.flatnonzero(species < 0)
        if len(free) == 0:
            break
        species[free[distances(free) < threshold]] = identity
    while (species < 0).any():
        free = np.flatnonzero(species < 0)
        founder = int(free[0])
        species[free[to_member(founder)(free) < threshold]] = next_id
        species[founder] = next_id
        next_id += 1
    return Speciation(species, next_id)


def allocate(shares: FloatArray, total: int) -> IntArray:
    """Children per species in proportion to `shares` (the species' summed adjusted
    fitness), `total` in all: floors, then the largest remainders (ties: the earlier species).
    Species with share 0 get none unless every share is 0, when the children are spread
    evenly over all of them."""
    shares = np.asarray(shares, dtype=np.float64)
    if shares.sum() <= 0.0:
        shares = np.ones_like(shares)
    exact = shares / shares.sum() * total
    counts: IntArray = np.floor(exact).astype(np.int64)
    remainder = exact - counts
    left = total - int(counts.sum())
    order = np.argsort(-remainder, kind="stable")
    counts[order[:left]] += 1
    return counts
