"""NEAT's mutations of a generation's children, over all of them at once.

Each function takes the children's tables and draws from the generator it is given in a fixed
order, whole arrays at a time (one draw per child, per gene or per node pair, whether or not it
is used), so a generation's children depend only on the stream's state: what exact resume needs.
Structural mutations choose what to change here and leave the bookkeeping of historical markings
to `evo_neat.innovation`, which numbers them (de-duplicated within the generation).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from evo_neat.config import NEATOptimizerConfig
from evo_neat.genome import INPUT, NEATLayout, Tables
from evo_neat.innovation import add_connections, add_nodes

__all__ = ["Counters", "grow", "mutate_values", "reachable"]

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


class Counters(NamedTuple):
    """The historical counters: the next new node's key and the next innovation number."""

    node: int
    innovation: int


def grow(layout: NEATLayout, config: NEATOptimizerConfig, tables: Tables, rows: BoolArray,
         counters: Counters, rng: np.random.Generator) -> tuple[Tables, Counters]:
    """Add-node, then add-connection, each with its probability, in the children `rows`
    selects (the others are elites or crossover children left unmutated)."""
    count = len(rows)
    splitting = rows & (rng.random(count) < config.add_node)
    scores = rng.random((count, layout.tables.max_conns))
    enabled = (tables.connections["enabled"] > 0.5) & (tables.connections["innovation"] >= 0)
    scores = np.where(enabled, scores, -1.0)
    genomes = np.flatnonzero(splitting & enabled.any(axis=1))
    split = add_nodes(tables, genomes, np.argmax(scores[genomes], axis=1),
                      counters.node, counters.innovation)
    tables = _new_nodes_as_layout_says(layout, split.tables, counters.node)
    counters = Counters(split.node_counter, split.counter)

    linking = rows & (rng.random(count) < config.add_connection)
    size = layout.tables.max_nodes
    scores = rng.random((count, size, size))   # target row x source row
    weights = rng.uniform(-config.initial_weight_range, config.initial_weight_range, count)
    genomes = np.flatnonzero(linking)
    candidates = _possible_links(layout, tables, genomes)
    picked = np.where(candidates, scores[genomes], -1.0).reshape(len(genomes), size * size)
    best = np.argmax(picked, axis=1)
    possible = picked[np.arange(len(genomes)), best] >= 0.0
    genomes, best = genomes[possible], best[possible]
    target_rows, source_rows = np.divmod(best, size)
    keys = np.rint(tables.nodes["key"]).astype(np.intp)
    added = add_connections(tables, genomes, keys[genomes, source_rows],
                            keys[genomes, target_rows], weights[genomes], counters.innovation)
    return added.tables, Counters(counters.node, added.counter)


def mutate_values(layout: NEATLayout, config: NEATOptimizerConfig, tables: Tables,
                  rows: BoolArray, rng: np.random.Generator) -> Tables:
    """Weights and node biases (as the paper's bias input's weights) perturbed or replaced in
    a `weight_mutation` share of the children `rows` selects, capped at `weight_limit`; CTRNN
    nodes' time constants moved log-normally."""
    count = len(rows)
    mutated = rows & (rng.random(count) < config.weight_mutation)
    connections = dict(tables.connections)
    present = connections["innovation"] >= 0
    connections["weight"] = _mutated(connections["weight"], mutated[:, None] & present, config,
                                     rng)
    nodes = dict(tables.nodes)
    acting = (nodes["used"] > 0.5) & (np.rint(nodes["kind"]) != INPUT)
    nodes["bias"] = _mutated(nodes["bias"], mutated[:, None] & acting, config, rng)
    if layout.tau > 0.0:
        moved = mutated[:, None] & acting & (rng.random(acting.shape) < config.tau_mutation)
        factor = np.exp(rng.normal(0.0, config.tau_power, acting.shape))
        nodes["tau"] = np.where(moved, np.clip(nodes["tau"] * factor, 1e-3, 1e6), nodes["tau"])
    return Tables(nodes, connections)


def _mutated(values: FloatArray, where: BoolArray, config: NEATOptimizerConfig,
             rng: np.random.Generator) -> FloatArray:
    """Each value `where` selects perturbed by U(-power, power) (probability
    `weight_perturbation`) or replaced by U(-power, power), capped at +-weight_limit."""
    power = config.weight_power
    perturbed = rng.random(values.shape) < config.weight_perturbation
    draws = rng.uniform(-power, power, values.shape)
    changed = np.clip(np.where(perturbed, values + draws, draws), -config.weight_limit,
                      config.weight_limit)
    return np.where(where, changed, values)


def _new_nodes_as_layout_says(layout: NEATLayout, tables: Tables, first_new: int) -> Tables:
    """Nodes made this generation (keys from `first_new`) take the brain's response and time
    constant (`innovation.add_nodes` makes plain ones)."""
    nodes = dict(tables.nodes)
    new = (nodes["used"] > 0.5) & (np.rint(nodes["key"]) >= first_new)
    nodes["response"] = np.where(new, layout.response, nodes["response"])
    nodes["tau"] = np.where(new, layout.tau, nodes["tau"])
    return Tables(nodes, tables.connections)


def _possible_links(layout: NEATLayout, tables: Tables, genomes: NDArray[np.intp]) -> BoolArray:
    """(genomes, target row, source row): the links a genome may gain. Ends are present
    nodes, the target no input; not a link the genome has (enabled or not); in a feed-forward
    network not one that closes a cycle (the target already reaches the source, or a self
    link), as neat-python's `creates_cycle`."""
    nodes = tables.nodes
    used = nodes["used"][genomes] > 0.5
    target_ok = used & (np.rint(nodes["kind"][genomes]) != INPUT)
    links = _adjacency(tables, genomes)
    allowed: BoolArray = target_ok[:, :, None] & used[:, None, :] & ~links
    if layout.feedforward:
        # the target reaches the source already: source -> target would close a cycle (a
        # disabled link counts, since crossover may enable it again)
        allowed &= ~np.swapaxes(reachable(links), 1, 2)
        allowed &= ~np.eye(layout.tables.max_nodes, dtype=bool)[None]
    return allowed


def _adjacency(tables: Tables, genomes: NDArray[np.intp]) -> BoolArray:
    """(genomes, target row, source row): where a present connection, enabled or not, joins
    two present nodes (by their rows in that genome)."""
    nodes, connections = tables.nodes, tables.connections
    keys = np.rint(nodes["key"][genomes])
    used = nodes["used"][genomes] > 0.5
    present = connections["innovation"][genomes] >= 0
    source = np.rint(connections["source"][genomes])[:, :, None] == keys[:, None, :]
    target = np.rint(connections["target"][genomes])[:, :, None] == keys[:, None, :]
    source &= used[:, None, :] & present[:, :, None]
    target &= used[:, None, :]
    # (genomes, target, conns) @ (genomes, conns, source): a batched product, BLAS's
    counts = np.matmul(np.swapaxes(target, 1, 2).astype(np.float32), source.astype(np.float32))
    linked: BoolArray = counts > 0
    return linked


def reachable(adjacency: BoolArray) -> BoolArray:
    """(genomes, to, from): whether a path of one or more links leads from `from` to `to`,
    by repeated squaring of the adjacency (log2 of the node count boolean products)."""
    reach = adjacency.copy()
    size = adjacency.shape[-1]
    steps = 1
    while steps < size:
        grown = reach | (np.matmul(reach.astype(np.float32), reach.astype(np.float32)) > 0)
        if np.array_equal(grown, reach):
            break
        reach = grown
        steps *= 2
    return reach
