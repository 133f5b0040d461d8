"""A NEAT genome as two fixed-capacity tables, flattened into the float vector evo carries.

evo's optimizers, checkpoints, hall of fame and workers hold a genome as a fixed-length float
vector; NEAT's genomes grow. TensorNEAT's answer, kept here: a table of `max_nodes` node genes
and a table of `max_conns` connection genes, each row a gene or an empty (padded) one. The
layout is defined once, here, and every other module reads the tables through `decode`.

Flat vector: the node table row-major (a node's `NODE_FIELDS` together), then the connection
table row-major (`CONNECTION_FIELDS`). A node's `key` is its identity across genomes (what
crossover lines node genes up by, and what a connection names its ends by); its row is only
where this genome keeps it. Input and output nodes have fixed places: rows and keys
0 .. inputs-1 are the inputs, the next `outputs` rows and keys the outputs (neat-python's
negative input keys and 0 .. outputs-1 output keys, shifted); hidden nodes sit in any free row
after them, with the keys a node counter gives them.

Padding is finite (evo refuses non-finite genes, so TensorNEAT's NaN is not an option) and
inert: a padded node has `used` 0 and key -1, a padded connection `enabled` 0 and weight 0,
so neither adds anything to a network (the brain also drops a connection whose ends are not
present nodes).
Flags and integer fields are floats in the vector and read back by rounding (flags: > 0.5), so
a vector that another optimizer perturbed still decodes to a valid network.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

__all__ = ["CONNECTION_FIELDS", "CONNECTION_PAD", "HIDDEN", "INPUT", "NODE_FIELDS", "NODE_PAD",
           "OUTPUT", "GenomeLayout", "NEATLayout", "Tables"]

FloatArray = NDArray[np.float64]

#: A node gene's columns: its key; present (1) or padding (0); INPUT, HIDDEN or OUTPUT; bias
#: and response (the node computes activation(bias + response * sum of weighted inputs)); the
#: index of its activation among the brain's `activations`; its time constant (> 0: a CTRNN
#: node that integrates towards that value, 0: a node that takes it at once)
NODE_FIELDS = ("key", "used", "kind", "bias", "response", "activation", "tau")
#: A connection gene's columns: the keys of the nodes it joins, its historical marking, its
#: weight and whether it is expressed
CONNECTION_FIELDS = ("source", "target", "innovation", "weight", "enabled")

INPUT, HIDDEN, OUTPUT = 0, 1, 2

#: What an empty row holds (finite, inert); key and innovation -1: no node, no marking
NODE_PAD: dict[str, float] = {"key": -1.0, "used": 0.0, "kind": float(HIDDEN), "bias": 0.0,
                              "response": 0.0, "activation": 0.0, "tau": 0.0}
CONNECTION_PAD: dict[str, float] = {"source": 0.0, "target": 0.0, "innovation": -1.0,
                                    "weight": 0.0, "enabled": 0.0}


class Tables(NamedTuple):
    """Rows of genomes as named columns: `nodes[field]` is rows x max_nodes, `connections
    [field]` rows x max_conns (numpy or JAX arrays, whichever was decoded)."""

    nodes: dict[str, Any]
    connections: dict[str, Any]


@dataclass(frozen=True)
class GenomeLayout:
    """Where each gene sits in the flat vector of a genome of this capacity."""

    max_nodes: int
    max_conns: int

    @property
    def node_genes(self) -> int:
        """The node table's length in the vector (it comes first)."""
        return self.max_nodes * len(NODE_FIELDS)

    @property
    def size(self) -> int:
        """The flat vector's length: the brain's `genome_size`."""
        return self.node_genes + self.max_conns * len(CONNECTION_FIELDS)

    def decode(self, xp: Any, genomes: Any) -> Tables:
        """Rows x size vectors as tables; views of `genomes` where the namespace makes them."""
        count = genomes.shape[0]
        nodes = genomes[:, :self.node_genes].reshape(count, self.max_nodes, len(NODE_FIELDS))
        connections = genomes[:, self.node_genes:self.size].reshape(
            count, self.max_conns, len(CONNECTION_FIELDS))
        return Tables({name: nodes[:, :, index] for index, name in enumerate(NODE_FIELDS)},
                      {name: connections[:, :, index]
                       for index, name in enumerate(CONNECTION_FIELDS)})

    def encode(self, tables: Tables) -> FloatArray:
        """Tables (numpy, every field given) as rows x size vectors: `decode`'s inverse."""
        nodes = np.stack([np.asarray(tables.nodes[name], dtype=np.float64)
                          for name in NODE_FIELDS], axis=-1)
        connections = np.stack([np.asarray(tables.connections[name], dtype=np.float64)
                                for name in CONNECTION_FIELDS], axis=-1)
        count = nodes.shape[0]
        return np.concatenate([nodes.reshape(count, -1), connections.reshape(count, -1)],
                              axis=1)

    def padded(self, count: int) -> Tables:
        """`count` genomes with every row empty."""
        return Tables({name: np.full((count, self.max_nodes), value)
                       for name, value in NODE_PAD.items()},
                      {name: np.full((count, self.max_conns), value)
                       for name, value in CONNECTION_PAD.items()})

    def minimal(self, count: int, inputs: int, outputs: int) -> Tables:
        """NEAT's first generation: `count` copies of the network with its input and output
        nodes (bias 0, response 1, activation 0, no time constant) and every input joined to
        every output with weight 0, innovation numbers 0 .. inputs*outputs-1 in (output, input)
        order, the same in every copy (one structure, one marking). Raises ValueError where the
        capacity cannot hold it."""
        if inputs + outputs > self.max_nodes:
            raise ValueError(f"max_nodes = {self.max_nodes} cannot hold {inputs} inputs and "
                             f"{outputs} outputs; raise brain.max_nodes to at least "
                             f"{inputs + outputs}")
        if inputs * outputs > self.max_conns:
            raise ValueError(f"max_conns = {self.max_conns} cannot hold the {inputs * outputs} "
                             f"connections of {inputs} inputs to {outputs} outputs; raise "
                             f"brain.max_conns to at least {inputs * outputs}")
        tables = self.padded(count)
        present = inputs + outputs
        tables.nodes["key"][:, :present] = np.arange(present)
        tables.nodes["used"][:, :present] = 1.0
        tables.nodes["kind"][:, :inputs] = INPUT
        tables.nodes["kind"][:, inputs:present] = OUTPUT
        tables.nodes["response"][:, :present] = 1.0
        links = inputs * outputs
        targets, sources = np.divmod(np.arange(links), inputs)
        tables.connections["source"][:, :links] = sources
        tables.connections["target"][:, :links] = inputs + targets
        tables.connections["innovation"][:, :links] = np.arange(links)
        tables.connections["weight"][:, :links] = 0.0
        tables.connections["enabled"][:, :links] = 1.0
        return tables


@dataclass(frozen=True)
class NEATLayout:
    """What the NEAT optimizer learns from the NEAT brain (its `genome_layout`, the core's
    `IGenomeLayoutTemplate`): the tables' capacity, the task's inputs and outputs, how many
    node functions a node gene chooses from, what a new node starts at, and whether a
    connection may close a cycle (not in a feed-forward network)."""

    tables: GenomeLayout
    inputs: int
    outputs: int
    activations: int
    #: a new node's response (the paper's steepened sigmoid: 4.9)
    response: float
    #: a new node's time constant (0: a plain node; > 0: a CTRNN node, whose tau evolves)
    tau: float
    feedforward: bool

    def first_generation(self, count: int) -> Tables:
        """`GenomeLayout.minimal` with this layout's node defaults (weights still 0)."""
        tables = self.tables.minimal(count, self.inputs, self.outputs)
        present = self.inputs + self.outputs
        tables.nodes["response"][:, :present] = self.response
        tables.nodes["tau"][:, self.inputs:present] = self.tau
        return tables
