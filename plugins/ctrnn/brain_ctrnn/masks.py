"""Connection masks: which cells of V, W and T exist (and so take a gene).

Rows are neurons. Every draw comes from the template's seeded Generator, so a seed rebuilds the
same masks; the arrays are saved with a run as well, so a replay never depends on that.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

__all__ = ["make_mask", "logarithmic_offsets", "BoolArray"]

BoolArray = NDArray[np.bool_]


def make_mask(kind: str, rows: int, columns: int, param: float,
              rng: np.random.Generator) -> BoolArray:
    """A rows x columns mask of the given kind. `learned` masks are dense: pruning happens per
    brain, by weight magnitude."""
    if kind in ("dense", "learned"):
        return np.ones((rows, columns), dtype=bool)
    if kind == "random":
        mask: BoolArray = rng.random((rows, columns)) < param
        return mask
    if kind == "logarithmic":
        return logarithmic_mask(rows, columns, param)
    raise ValueError(f"unknown mask type {kind!r}; use dense, random, logarithmic or learned")


def logarithmic_offsets(base: float, extent: int) -> list[int]:
    """floor(base**k) for k = 0, 1, ... while base**k <= extent (duplicates kept, as before)."""
    offsets = []
    k = 0
    while base**k <= extent:
        offsets.append(math.floor(base**k))
        k += 1
    return offsets


def logarithmic_mask(rows: int, columns: int, base: float) -> BoolArray:
    """The predecessor's logarithmic mask, cell for cell (plugins/ctrnn/docs/math.md).

    Each anchor of a pseudo-diagonal connects to the cells at logarithmically spaced offsets on
    both sides, wrapping around. Kept exactly, quirks included (the anchor cell itself is left out
    unless a wrapped offset reaches it; narrow matrices come out dense), because old experiments'
    genome sizes depend on it.
    """
    offsets = np.asarray(logarithmic_offsets(base, max(rows, columns)), dtype=np.int64)
    if columns > rows:  # wide: one anchor row per column
        anchor_cols = np.arange(columns)
        anchor_rows = np.round(anchor_cols * (rows - 1) / columns).astype(np.int64)
    else:
        anchor_rows = np.arange(rows)
        anchor_cols = np.round(anchor_rows * (columns - 1) / rows).astype(np.int64)
    mask = np.zeros((rows, columns), dtype=bool)
    for sign in (1, -1):
        cells = (anchor_cols[:, None] + sign * offsets[None, :]) % columns
        mask[np.repeat(anchor_rows, len(offsets)), cells.reshape(-1)] = True
    return mask
