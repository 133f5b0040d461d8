"""Historical markings de-duplicated within a generation (Stanley & Miikkulainen 2002, 3.2):
the same structural mutation made twice in one generation gets the same innovation number.
neat-python missed this for a while (#285, #291) and TensorNEAT gives every child fresh
markings (#11); both changed results.

A pure function of arrays: the population's tables and the mutations requested in, new tables
and the advanced counter out, so the optimizer's state stays arrays (exact resume) and a
generation's markings depend on nothing but its requests' order.

Two mutations: add-connection (the same pair of node keys is the same structure in every genome,
since connections name their ends by key, evo_neat.genome) and add-node (the same connection,
named by its innovation number, split in several genomes gets the same new node key and the same
two new innovation numbers: neat-python #291). Both refuse, and report in `applied`, what a full
table cannot hold, as TensorNEAT does.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from evo_neat.genome import HIDDEN, Tables

__all__ = ["Added", "Split", "add_connections", "add_nodes"]

IntArray = NDArray[np.intp]


class Added(NamedTuple):
    """What `add_connections` made: the new tables, the counter after this generation's new
    markings, and for each request whether it was applied (False: the genome already had that
    connection, asked for it twice, or its connection table was full, as TensorNEAT refuses)."""

    tables: Tables
    counter: int
    applied: NDArray[np.bool_]


def add_connections(tables: Tables, genomes: IntArray, sources: IntArray,
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
    # one id per distinct (source, target): node keys grow without bound (a node counter), so
    # no arithmetic packing of the two keys is safe
    _, pair = np.unique(np.stack([sources, targets], axis=1).reshape(-1, 2), axis=0,
                        return_inverse=True)
    pair = pair.reshape(-1)
    wanted = _first_per_genome(genomes, pair) & ~existing
    kept, rank = _ranked(genomes, wanted)
    fits = rank < (~present).sum(axis=1)[genomes[kept]]
    kept, rank = kept[fits], rank[fits]
    applied = np.zeros(len(genomes), dtype=bool)
    applied[kept] = True
    chosen, numbering = _numbered(kept, pair)
    markings = np.empty(len(genomes), dtype=np.intp)
    markings[chosen] = counter + numbering
    rows, slots = genomes[kept], _free_rows(present)[genomes[kept], rank]
    for name, values in (("source", sources[kept]), ("target", targets[kept]),
                         ("innovation", markings[kept]), ("weight", weights[kept]),
                         ("enabled", np.ones(len(kept)))):
        connections[name][rows, slots] = values
    return Added(Tables(dict(tables.nodes), connections), counter + int(np.max(numbering,
        initial=-1)) + 1, applied)


class Split(NamedTuple):
    """What `add_nodes` made: the new tables, the node-key counter and the innovation counter
    after this generation's new nodes, and for each request whether it was applied (False: the
    row is not an enabled connection, the genome asked to split that connection already, or its
    node table has no free row or its connection table fewer than two)."""

    tables: Tables
    node_counter: int
    counter: int
    applied: NDArray[np.bool_]


def add_nodes(tables: Tables, genomes: IntArray, rows: IntArray,
              node_counter: int, counter: int) -> Split:
    """Request k splits the connection in row `rows[k]` of genome `genomes[k]`, as in the
    paper: the connection is disabled, a hidden node is added (bias 0, response 1, activation
    index 0, no time constant: it passes its input through the first activation) and two
    connections, source -> new with weight 1 and new -> target with the old weight, so the
    network computes what it did but for that activation. Every distinct connection (by
    innovation number) split this generation gets one node key, `node_counter` + j, and two
    innovation numbers, `counter` + 2j (the in-link) and `counter` + 2j + 1 (the out-link), j in
    the order of its first applied request; `tables` is not written."""
    nodes = {name: column.copy() for name, column in tables.nodes.items()}
    connections = {name: column.copy() for name, column in tables.connections.items()}
    innovation = np.rint(connections["innovation"][genomes, rows]).astype(np.intp)
    enabled = (innovation >= 0) & (connections["enabled"][genomes, rows] > 0.5)
    wanted = _first_per_genome(genomes, innovation) & enabled
    kept, rank = _ranked(genomes, wanted)
    node_present = nodes["used"] > 0.5
    link_present = connections["innovation"] >= 0
    owner = genomes[kept]
    fits = ((rank < (~node_present).sum(axis=1)[owner])
            & (2 * rank + 2 <= (~link_present).sum(axis=1)[owner]))
    kept, rank = kept[fits], rank[fits]
    applied = np.zeros(len(genomes), dtype=bool)
    applied[kept] = True
    chosen, numbering = _numbered(kept, innovation)
    split = np.empty(len(genomes), dtype=np.intp)
    split[chosen] = numbering
    j, owner, old = split[kept], genomes[kept], rows[kept]
    key = node_counter + j
    node_slot = _free_rows(node_present)[owner, rank]
    for name, value in (("key", key), ("used", 1.0), ("kind", float(HIDDEN)), ("bias", 0.0),
                        ("response", 1.0), ("activation", 0.0), ("tau", 0.0)):
        nodes[name][owner, node_slot] = value
    free_links = _free_rows(link_present)
    into, out_of = free_links[owner, 2 * rank], free_links[owner, 2 * rank + 1]
    source, target = connections["source"][owner, old], connections["target"][owner, old]
    weight = connections["weight"][owner, old]
    for slot, values in ((into, (source, key, counter + 2 * j, 1.0)),
                         (out_of, (key, target, counter + 2 * j + 1, weight))):
        for name, value in zip(("source", "target", "innovation", "weight"), values,
                               strict=True):
            connections[name][owner, slot] = value
        connections["enabled"][owner, slot] = 1.0
    connections["enabled"][owner, old] = 0.0
    made = int(np.max(numbering, initial=-1)) + 1
    return Split(Tables(nodes, connections), node_counter + made, counter + 2 * made, applied)


def _first_per_genome(genomes: IntArray, structure: IntArray) -> NDArray[np.bool_]:
    """Whether each request is its genome's first for that structure (a repeat is refused)."""
    _, first = np.unique(np.stack([genomes, structure], axis=1), axis=0, return_index=True)
    unique = np.zeros(len(genomes), dtype=bool)
    unique[first] = True
    return unique


def _ranked(genomes: IntArray, wanted: NDArray[np.bool_]) -> tuple[IntArray, IntArray]:
    """The wanted requests grouped by genome (in request order within one) and each one's rank
    among its genome's: rank r takes that genome's r-th free row(s)."""
    order = np.argsort(genomes, kind="stable")
    kept = order[np.flatnonzero(wanted[order])]
    starts = np.searchsorted(genomes[kept], genomes[kept], side="left")
    return kept, np.arange(len(kept)) - starts


def _numbered(kept: IntArray, structure: IntArray) -> tuple[IntArray, IntArray]:
    """The applied requests in request order, and for each the index of its structure among
    the distinct ones, numbered in the order of first applied request: what makes one
    structure's markings the same in every genome of a generation."""
    chosen = np.sort(kept)
    distinct, first_seen, which = np.unique(structure[chosen], return_index=True,
                                            return_inverse=True)
    numbering = np.empty(len(distinct), dtype=np.intp)
    numbering[np.argsort(first_seen, kind="stable")] = np.arange(len(distinct))
    return chosen, numbering[which]


def _free_rows(present: NDArray[np.bool_]) -> IntArray:
    """Per genome, its rows with the free ones first, in row order."""
    return np.argsort(present, axis=1, kind="stable")
