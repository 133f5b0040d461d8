"""Distances between behaviour descriptors, as (queries x references) matrices.

Descriptors have a fixed length (the `[behaviour]` table fixes it), so no distance needs to
truncate or pad. Euclidean and equality are computed on whole blocks with numpy; a block of
queries at a time bounds the memory of the (queries, references, length) difference array.
Euclidean is computed from the differences, not from the |a|^2 + |b|^2 - 2ab expansion: the
expansion leaves rounding noise on identical descriptors (a distance of 1e-4 instead of 0), and
identical behaviours are common (every genome that falls over at once).

The compression distance cannot be vectorised: every pair is one bz2 compression.
"""

from __future__ import annotations

import bz2
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

__all__ = ["euclidean", "mean_absolute", "equality", "compression", "compressed_size",
           "COMPRESS_LEVEL"]

FloatArray = NDArray[np.float64]

#: Entries of the difference array computed at once (8 bytes each: 32 MB).
_BLOCK = 4_000_000
#: bz2's level: the block size in units of 100 kB; descriptors are far smaller, so the level
#: changes only the memory bz2 sets aside, and 1 sets aside least.
COMPRESS_LEVEL = 1


def _blocked(queries: FloatArray, references: FloatArray,
             reduce: Callable[[FloatArray, FloatArray], FloatArray]) -> FloatArray:
    queries, references = np.atleast_2d(queries), np.atleast_2d(references)
    out = np.empty((len(queries), len(references)), dtype=np.float64)
    if out.size == 0:
        return out
    rows = max(1, _BLOCK // max(1, references.size))
    for start in range(0, len(queries), rows):
        block = queries[start:start + rows]
        out[start:start + len(block)] = reduce(block[:, None, :], references[None, :, :])
    return out


def euclidean(queries: FloatArray, references: FloatArray) -> FloatArray:
    """sqrt(sum((a - b)^2)) for every query a and reference b."""
    return _blocked(queries, references,
                    lambda a, b: np.sqrt(np.square(a - b).sum(axis=-1)))


def mean_absolute(queries: FloatArray, references: FloatArray) -> FloatArray:
    """mean(|a - b|) over the entries: the distance of Lehman and Stanley's novelty-search
    release (on a maze's final (x, y), half the city-block distance), in whose units its
    archive threshold of 6.0 is set."""
    return _blocked(queries, references, lambda a, b: np.abs(a - b).mean(axis=-1))


def equality(queries: FloatArray, references: FloatArray) -> FloatArray:
    """The number of entries in which a and b differ (a Hamming distance: meaningful for
    discrete sources, such as the actions of a Discrete action space, where identical choices
    give identical window means)."""
    return _blocked(queries, references,
                    lambda a, b: (a != b).sum(axis=-1).astype(np.float64))


def compressed_size(descriptor: FloatArray) -> int:
    """C(x): the length of bz2's compression of the descriptor's float64 bytes."""
    return len(bz2.compress(np.ascontiguousarray(descriptor, dtype=np.float64).tobytes(),
                            COMPRESS_LEVEL))


def compression(queries: FloatArray, references: FloatArray,
                query_sizes: NDArray[np.int64] | None = None,
                reference_sizes: NDArray[np.int64] | None = None) -> FloatArray:
    """The normalised compression distance (C(ab) - min(C(a), C(b))) / max(C(a), C(b)), with
    ab the query's bytes followed by the reference's. All three sizes are measured the same way
    (one bz2 compression each); sizes already known (the archive's) can be passed in."""
    queries, references = np.atleast_2d(queries), np.atleast_2d(references)
    if query_sizes is None:
        query_sizes = np.array([compressed_size(q) for q in queries], dtype=np.int64)
    if reference_sizes is None:
        reference_sizes = np.array([compressed_size(r) for r in references], dtype=np.int64)
    query_bytes = [np.ascontiguousarray(q, dtype=np.float64).tobytes() for q in queries]
    reference_bytes = [np.ascontiguousarray(r, dtype=np.float64).tobytes() for r in references]
    joint = np.array([[len(bz2.compress(a + b, COMPRESS_LEVEL)) for b in reference_bytes]
                      for a in query_bytes], dtype=np.float64).reshape(len(queries),
                                                                       len(references))
    smaller = np.minimum(query_sizes[:, None], reference_sizes[None, :])
    larger = np.maximum(query_sizes[:, None], reference_sizes[None, :])
    distance: FloatArray = (joint - smaller) / larger
    return distance

