"""NEAT's compatibility distance (Stanley & Miikkulainen 2002, 3.3) over a population at once,
and the alignment of genes by their historical markings that crossover shares with it.

Speciation measures every genome against every species' representative each generation: with
populations of 1,000 genomes of 512 connection rows, a pairwise comparison of rows (n x C x C)
is out of the question, and so is a Python loop over genomes. Lining two genomes' genes up is a
merge of two sets of markings; every row's merge is done together by one sort of the rows'
markings side by side, so the cost is O(n C log C) time and O(n C) memory.

The tables are read as decoded (evo_neat.genome): markings are floats read by rounding, and a
row whose marking is negative is padding, whatever its other columns hold.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["align", "compatibility"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]
BoolArray = NDArray[np.bool_]


def align(keys_a: FloatArray, present_a: BoolArray, keys_b: FloatArray, present_b: BoolArray
          ) -> tuple[IntArray, BoolArray]:
    """For each gene of row i of a (rows x width keys, rounded), the column of row i of b (or of
    b's one row, which then stands for every row) that holds a present gene of the same key,
    and whether there is one (the partner is 0 where not: read it through the mask). Keys
    within one row are distinct (historical markings, node keys); a gene that is not present
    matches nothing, not even another absent one.

    One sort per row of a's keys beside b's puts a matching pair side by side: no key
    comparison of every row against every row, and any float key (no offsets to overflow)."""
    count, width = keys_a.shape
    keys_b = np.broadcast_to(keys_b, (count, keys_b.shape[1]))
    present_b = np.broadcast_to(present_b, keys_b.shape)
    merged = np.concatenate([np.where(present_a, keys_a, np.inf),
                             np.where(present_b, keys_b, np.inf)], axis=1)
    order = np.argsort(merged, axis=1)
    ordered = np.take_along_axis(merged, order, axis=1)
    # equal neighbours, one of a and one of b (in either order: the sort need not be stable)
    pairs = ((ordered[:, :-1] == ordered[:, 1:]) & np.isfinite(ordered[:, :-1])
             & ((order[:, :-1] < width) != (order[:, 1:] < width)))
    rows, at = np.nonzero(pairs)
    first, second = order[rows, at], order[rows, at + 1]
    columns = np.minimum(first, second)
    partner = np.zeros((count, width), dtype=np.intp)
    matched = np.zeros((count, width), dtype=bool)
    partner[rows, columns] = np.maximum(first, second) - width
    matched[rows, columns] = True
    return partner, matched


def compatibility(innovations_a: FloatArray, weights_a: FloatArray, innovations_b: FloatArray,
                  weights_b: FloatArray, *, excess: float, disjoint: float, weight: float,
                  small_genome: int = 20) -> FloatArray:
    """The paper's delta = excess E/N + disjoint D/N + weight W between row i of a and row i of
    b (or b's one row: one representative against every genome), from the connection tables'
    innovation and weight columns (n x C; b n x C or 1 x C).

    Every present connection gene counts, enabled or not (the paper measures the genes, not the
    network they express). E: the genes of either genome marked above the other's largest
    marking; D: the other unmatched genes of both; W: the mean absolute weight difference of
    the matching genes (0 where none match); N: the larger genome's gene count, or 1 where it
    is below `small_genome` (the paper's "N can be set to 1 if both genomes are small", fewer
    than 20 genes), so two empty genomes are at distance 0."""
    marks_a, marks_b = np.rint(innovations_a), np.rint(innovations_b)
    present_a, present_b = marks_a >= 0, marks_b >= 0
    partner, matched = align(marks_a, present_a, marks_b, present_b)
    count = marks_a.shape[0]
    partner_weights = np.take_along_axis(
        np.broadcast_to(weights_b, (count, marks_b.shape[1])), partner, axis=1)
    matching = matched.sum(axis=1)
    differences = np.where(matched, np.abs(weights_a - partner_weights), 0.0).sum(axis=1)
    mean_difference = differences / np.maximum(matching, 1)
    # a gene beyond the other's largest marking cannot match, so excess needs no mask of it
    last_a = np.where(present_a, marks_a, -1.0).max(axis=1, initial=-1.0)
    last_b = np.where(present_b, marks_b, -1.0).max(axis=1, initial=-1.0)
    genes_a, genes_b = present_a.sum(axis=1), present_b.sum(axis=1)
    excess_genes = ((present_a & (marks_a > last_b[:, None])).sum(axis=1)
                    + (present_b & (marks_b > last_a[:, None])).sum(axis=1))
    disjoint_genes = genes_a + genes_b - 2 * matching - excess_genes
    larger = np.maximum(genes_a, genes_b)
    normaliser = np.where(larger < small_genome, 1, larger)
    distance: FloatArray = ((excess * excess_genes + disjoint * disjoint_genes) / normaliser
                            + weight * mean_difference)
    return distance
