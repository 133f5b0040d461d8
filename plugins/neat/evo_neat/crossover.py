"""NEAT's crossover (Stanley & Miikkulainen 2002, 3.2): genes lined up by historical marking,
matching genes inherited from either parent, disjoint and excess genes from the fitter one,
and a gene disabled in either parent disabled in the child with probability 0.75.

A pure function of arrays over a whole generation's children at once: the population's tables,
the parents of each child and a generator in, the children's tables out. Its draws are whole
arrays of a fixed shape taken in a fixed order, whatever the parents hold, so the generator's
stream (the optimizer's state, for exact resume) advances by the same amount every generation
of the same size.

The child is the fitter parent's structure: its connection rows and node rows where the fitter
keeps them, since a gene's row is only where a genome keeps it (evo_neat.genome), and a child
with every gene of the fitter cannot lack a node its connections name. Node genes are lined up
by key as connection genes are by marking, with the same alignment (evo_neat.distance.align).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from evo_neat.distance import align
from evo_neat.genome import NODE_FIELDS, GenomeLayout, Tables

__all__ = ["crossover"]

IntArray = NDArray[np.intp]

#: What a matching node gene inherits from either parent: everything but its identity (key),
#: its presence and its place in the network (kind), which matching keys share
INHERITED_NODE_FIELDS = tuple(name for name in NODE_FIELDS if name not in ("key", "used", "kind"))


def crossover(layout: GenomeLayout, tables: Tables, fitter: IntArray, other: IntArray,
              rng: np.random.Generator, disabled_rate: float = 0.75) -> Tables:
    """Child k of rows `fitter[k]` and `other[k]` of `tables` (the caller orders each pair,
    fitter first, and settles ties); `tables` is not written.

    A connection gene of the fitter that the other parent has too takes its weight from either
    parent with even odds, and where either parent has it disabled it is disabled with
    probability `disabled_rate` (enabled otherwise: the paper's way back for a disabled gene).
    A node gene whose key the other parent has too takes its attributes (INHERITED_NODE_FIELDS,
    together) from either parent with even odds. Every other gene is the fitter's as it is."""
    count = len(fitter)
    weight_draw = rng.random((count, layout.max_conns))
    disabled_draw = rng.random((count, layout.max_conns))
    node_draw = rng.random((count, layout.max_nodes))

    links = {name: column[fitter] for name, column in tables.connections.items()}
    other_links = {name: column[other] for name, column in tables.connections.items()}
    marks, other_marks = np.rint(links["innovation"]), np.rint(other_links["innovation"])
    partner, matched = align(marks, marks >= 0, other_marks, other_marks >= 0)
    other_weight = np.take_along_axis(other_links["weight"], partner, axis=1)
    links["weight"] = np.where(matched & (weight_draw < 0.5), other_weight, links["weight"])
    both_enabled = ((links["enabled"] > 0.5)
                    & (np.take_along_axis(other_links["enabled"], partner, axis=1) > 0.5))
    links["enabled"] = np.where(matched & ~both_enabled,
                                (disabled_draw >= disabled_rate).astype(np.float64),
                                links["enabled"])

    nodes = {name: column[fitter] for name, column in tables.nodes.items()}
    other_nodes = {name: column[other] for name, column in tables.nodes.items()}
    partner, matched = align(np.rint(nodes["key"]), nodes["used"] > 0.5,
                             np.rint(other_nodes["key"]), other_nodes["used"] > 0.5)
    from_other = matched & (node_draw < 0.5)
    for name in INHERITED_NODE_FIELDS:
        nodes[name] = np.where(from_other,
                               np.take_along_axis(other_nodes[name], partner, axis=1),
                               nodes[name])
    return Tables(nodes, links)
