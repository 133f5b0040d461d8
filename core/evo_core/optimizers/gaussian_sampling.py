"""Gaussian samples around a centre, mirrored or not, and the weighted sums of their noise that
the evolution strategies' updates are made of.

The noise is drawn in float32 from the optimizer's Generator: at a million genes and a
population of 64, float64 noise is 512 MB, and mirrored sampling (each noise row used once
added, once subtracted) halves what is drawn and kept. numpy's float32 normal draws are as
reproducible as its float64 ones (the same Generator state gives the same numbers), so a run
resumed from a checkpoint asks for the same genomes. The genomes themselves, and every update,
are float64: only the noise is kept in float32.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["NOISE_DTYPE", "standard_noise", "sampled_population", "mirrored_pairs",
           "noise_sum"]

FloatArray = NDArray[np.float64]
NoiseArray = NDArray[np.float32]

NOISE_DTYPE = np.float32


def standard_noise(rng: np.random.Generator, rows: int, genes: int) -> NoiseArray:
    """`rows` draws of the standard normal distribution over `genes` genes."""
    return rng.standard_normal((rows, genes), dtype=NOISE_DTYPE)


def sampled_population(mean: FloatArray, scale: float | FloatArray, noise: NoiseArray, *,
                       mirrored: bool) -> FloatArray:
    """The genomes mean + scale * noise, one per noise row; `mirrored`: then, in the same
    order, mean - scale * noise (twice as many rows). `scale` is one step size or one per
    gene. C-contiguous float64, written in place row block by row block, so that no second
    population-sized temporary is made."""
    rows, genes = noise.shape
    population = np.empty((2 * rows if mirrored else rows, genes))
    signs = (1.0, -1.0) if mirrored else (1.0,)
    for block, sign in enumerate(signs):
        out = population[block * rows:(block + 1) * rows]
        np.multiply(noise, sign * np.asarray(scale, dtype=np.float64), out=out,
                    dtype=np.float64)
        np.add(out, mean, out=out)
    return population


def mirrored_pairs(fitness: NDArray[np.float64], directions: int
                   ) -> tuple[FloatArray, FloatArray]:
    """The fitness of each noise row added (the first half of a mirrored population) and
    subtracted (the second half)."""
    values = np.asarray(fitness, dtype=np.float64)
    return values[:directions], values[directions:2 * directions]


def noise_sum(weights: FloatArray, noise: NoiseArray, *, squared: bool = False) -> FloatArray:
    """sum_i weights[i] * noise[i] (or * noise[i]^2), per gene, in float64. The product is
    taken in float32, the noise's type, so that the noise matrix is never copied into float64
    (256 MB at a million genes and 32 rows); the weights are a handful of numbers of moderate
    range (ranks, utilities, reward differences), which float32 holds to 7 digits. The squares
    are taken a block of genes at a time, so that their temporary stays in the cache instead of
    being a second noise matrix."""
    rows = np.asarray(weights, dtype=NOISE_DTYPE)
    if not squared:
        return np.asarray(rows @ noise, dtype=np.float64)
    genes = noise.shape[1]
    result = np.empty(genes)
    for start in range(0, genes, _SQUARED_BLOCK):
        block = noise[:, start:start + _SQUARED_BLOCK]
        result[start:start + _SQUARED_BLOCK] = rows @ np.square(block)
    return result


#: genes per block of squared noise: 64 rows of 8,192 float32 genes are 2 MB
_SQUARED_BLOCK = 8192
