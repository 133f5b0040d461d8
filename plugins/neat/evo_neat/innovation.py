"""Historical markings de-duplicated within a generation (Stanley & Miikkulainen 2002, 3.2):
the same structural mutation made twice in one generation gets the same innovation number.
neat-python missed this for a while (#285, #291) and TensorNEAT gives every child fresh
markings (#11); both changed results.

A pure function of arrays: the population's tables and the mutations requested in, new tables
and the advanced counter out, so the optimizer's state stays arrays (exact resume) and a
generation's markings depend on nothing but its requests' order.

Only add-connection so far (add-node: see STATUS.md). Connections name their ends by node key
(evo_neat.genome), a node's identity across genomes, so the same pair is the same structure in
every genome.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from evo_neat.genome import GenomeLayout, Tables

__all__ = ["Added", "add_connections"]

IntArray = NDArray[np.intp]


class Added(NamedTuple):
    """What `add_connections` made: the new tables, the counter after this generation's new
    markings, and for each request whether it was applied (False: the genome already had that
    connection, asked for it twice, or its connection table was full, as TensorNEAT refuses)."""

    tables: Tables
    counter: int
    applied: NDArray[np.bool_]


def add_connections(layout: GenomeLayout, tables: Tables, genomes: IntArray, sources: IntArray,
                    targets: IntArray, weights: NDArray[np.float64], counter: int) -> Added:
    """Request k adds the connection `sources[k]` -> `targets[k]` with `weights[k]` to genome
    `genomes[k]` (a row of `tables`), in that genome's first free connection row. Every distinct
    (source, target) pair applied this generation gets one new innovation number, `counter`,
    `counter` + 1, ... in the order of its first applied request; `tables` is not written.
    The ends are node keys, not checked against the genome's nodes: the mutation operator picks
    them among its nodes."""
    connections = {name: column.copy() for name, column in tables.connections.items()}
    present = connections["innovation"] >= 0
    # a connection the genome has already (present rows of the same ends)
    existing = (present[genomes]
                & (np.rint(connections["source"][genomes]) == sources[:, None])
                & (np.rint(connections["target"][genomes]) == targets[:, None])).any(axis=1)
    # a repeat of an earlier request for the same genome and pair
    pair = sources * layout.max_nodes + targets
    _, first = np.unique(np.stack([genomes, pair], axis=1), axis=0, return_index=True)
    unique = np.zeros(len(genomes), dtype=bool)
    unique[first] = True
    wanted = unique & ~existing
    # each wanted request's rank among its genome's, and that genome's free rows in order
    order = np.argsort(genomes, kind="stable")
    ranked = np.flatnonzero(wanted[order])
    kept = order[ranked]
    starts = np.searchsorted(genomes[kept], genomes[kept], side="left")
    rank = np.arange(len(kept)) - starts
    free_rows = np.argsort(present, axis=1, kind="stable")
    fits = rank < (~present).sum(axis=1)[genomes[kept]]
    kept, rank = kept[fits], rank[fits]
    applied = np.zeros(len(genomes), dtype=bool)
    applied[kept] = True
    # one marking per distinct pair, numbered in the order of first applied request
    chosen = np.sort(kept)
    pairs, first_seen, which = np.unique(pair[chosen], return_index=True, return_inverse=True)
    numbering = np.empty(len(pairs), dtype=np.intp)
    numbering[np.argsort(first_seen, kind="stable")] = np.arange(len(pairs))
    markings = np.empty(len(genomes), dtype=np.intp)
    markings[chosen] = counter + numbering[which]
    rows, slots = genomes[kept], free_rows[genomes[kept], rank]
    for name, values in (("source", sources[kept]), ("target", targets[kept]),
                         ("innovation", markings[kept]), ("weight", weights[kept]),
                         ("enabled", np.ones(len(kept)))):
        connections[name][rows, slots] = values
    return Added(Tables(dict(tables.nodes), connections), counter + len(pairs), applied)
