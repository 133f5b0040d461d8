"""The NEAT brain, written once (`IArrayBrain`): each genome's connection table scattered into a
dense max_nodes x max_nodes weight matrix, and synchronous updates (sweeps) of every node.
The lone brain, the batch (rows of different topologies) and the JAX form are the core's,
derived from these functions.

A sweep is neat-python's `RecurrentNetwork.activate`: every node's new value from the
previous values, the input nodes holding this step's observation: z = bias + response *
sum(weight * source value), value = activation(z); the outputs are the output nodes' new
values. A node with a time constant tau > 0 (neat-python 2.0's CTRNN node) moves towards
activation(z) by delta_t/tau of the way instead (one Euler step), from its value at the start of
the step.

`network = "recurrent"` takes one sweep a step, so a feed-forward genome's signal crosses one
layer a step, as in neat-python's recurrent network and the paper's C++ release.
`network = "feedforward"` takes up to max_nodes - inputs sweeps a step, the inputs held: after k
sweeps every node at most k connections from the inputs (or from a node with no inputs) holds
its final value, and no path of an acyclic graph is longer (its nodes after the first are
distinct non-input nodes), so the outputs are what topological evaluation (neat-python's
`FeedForwardNetwork`) computes, without an order to find per genome: the same array
operations for every row, in numpy and JAX. The loop is over sweeps (a Python loop of
max_nodes - inputs iterations, unrolled under JAX's jit), not over rows or connections; a
genome with a cycle is relaxed that many sweeps, as the NEAT C++ release relaxes its networks.
numpy's loop ends at the first sweep that changes nothing (a fixed point, which every later
sweep would repeat bit for bit): an acyclic genome's depth plus one sweeps, not max_nodes.

Dense, not sparse: the CTRNN brain measured a dense matrix-vector product faster than a
gather-multiply-bincount at every size evo's users run (brain_ctrnn/template.py), and a dense
matrix is what the JAX form compiles best. Memory is rows x max_nodes² floats, and, while a
genome is loaded, rows x max_conns x max_nodes booleans (each connection end's key against
every node's, `_rows_of`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core import (
    ArrayBrainTemplate,
    BrainConfig,
    NetworkGraph,
    NodeKind,
    activation,
    matvec_of,
    memory_shortfall,
)
from evo_neat.config import NEATConfig
from evo_neat.genome import GenomeLayout, NEATLayout

__all__ = ["NEATTemplate", "scatter_add"]


def scatter_add(xp: Any, target: Any, index: tuple[Any, ...], values: Any) -> Any:
    """`target` with `values` added at `index` (repeated indices add up), in numpy (in place,
    in the order of `values`: a row's sums do not depend on the other rows) or JAX (`.at`)."""
    if xp is np:
        np.add.at(target, index, values)
        return target
    return target.at[index].add(values)


class NEATTemplate(ArrayBrainTemplate[NEATConfig]):
    """Builds NEAT brains from genomes laid out by `evo_neat.genome.GenomeLayout`; describes
    a genome's network as a graph (`INetworkGraph`) for `evo plot RUN --network`."""

    config_model: ClassVar[type[BrainConfig]] = NEATConfig

    def __init__(self, config: NEATConfig, observation_space: gym.Space[Any],
                 action_space: gym.Space[Any], rng: np.random.Generator) -> None:
        super().__init__(config, observation_space, action_space, rng)
        self.layout = GenomeLayout(config.max_nodes, config.max_conns)
        inputs, outputs, nodes = self.input_size, self.output_size, config.max_nodes
        if inputs + outputs > nodes:
            raise ValueError(f"brain.max_nodes = {nodes} cannot hold this task's {inputs} "
                             f"inputs and {outputs} outputs; set brain.max_nodes to at least "
                             f"{inputs + outputs} (more leaves room for hidden nodes)")
        shortfall = memory_shortfall(8 * nodes * nodes + 2 * nodes * config.max_conns,
                                     "for one genome's weight matrix and key look-up")
        if shortfall is not None:
            raise ValueError(f"brain.max_nodes = {nodes} {shortfall}; lower brain.max_nodes")
        # what the step reads from the config, looked up once
        self._functions = [activation(name) for name in config.activations]
        self._outputs = slice(inputs, inputs + outputs)
        self._unit_outputs = config.outputs == "unit"
        # CTRNN nodes only where the config makes them (the tau column is read then alone):
        # a plain network's step skips their blend
        self._ctrnn = config.tau > 0.0
        self._layout = NEATLayout(self.layout, inputs, outputs, len(config.activations),
                                  config.response, config.tau, config.network == "feedforward")
        self._sweeps = nodes - inputs if config.network == "feedforward" else 1

    @property
    def genome_size(self) -> int:
        return self.layout.size

    @property
    def genome_layout(self) -> NEATLayout:
        """What the NEAT optimizer reads (the core's `IGenomeLayoutTemplate`): only it can
        search these tables, and evo refuses any other optimizer for this brain."""
        return self._layout

    def params(self, xp: Any, genomes: Any) -> dict[str, Any]:
        """`w` (rows x max_nodes x max_nodes, target row by source row: the enabled
        connections between present nodes, summed where two join the same pair), and per node
        (rows x max_nodes): `bias`, `response`, `code` (the activation's index), `used`,
        `ctrnn` (tau > 0) and `alpha` (delta_t/tau capped at 1)."""
        tables = self.layout.decode(xp, genomes)
        nodes, connections = tables.nodes, tables.connections
        count, size = genomes.shape[0], self.config.max_nodes
        used, keys = nodes["used"] > 0.5, xp.rint(nodes["key"])
        source, found_source = _rows_of(xp, keys, used, connections["source"])
        target, found_target = _rows_of(xp, keys, used, connections["target"])
        expressed = (connections["enabled"] > 0.5) & found_source & found_target
        weights = xp.where(expressed, connections["weight"], 0.0)
        rows = xp.broadcast_to(xp.arange(count)[:, None], source.shape)
        w = scatter_add(xp, xp.zeros((count, size, size), dtype=genomes.dtype),
                        (rows, target, source), weights)
        code = xp.clip(xp.rint(nodes["activation"]), 0, len(self._functions) - 1)
        params = {"w": w, "bias": nodes["bias"], "response": nodes["response"], "code": code,
                  "used": used}
        if self._ctrnn:
            tau = nodes["tau"]
            params["ctrnn"] = tau > 0.0
            params["alpha"] = xp.minimum(
                self.config.delta_t / xp.where(params["ctrnn"], tau, 1.0), 1.0)
        return params

    def initial_state(self, xp: Any, params: dict[str, Any]) -> dict[str, Any]:
        """Every node's value 0 (neat-python's reset)."""
        return {"values": xp.zeros(params["bias"].shape, dtype=params["bias"].dtype)}

    def forward(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any,
                noise: Any) -> tuple[dict[str, Any], Any]:
        # the observation into the input nodes first, so this step's nodes see it (neat-python
        # writes it into both value buffers)
        start = xp.concatenate([xp.asarray(inputs, dtype=state["values"].dtype),
                                state["values"][:, self.input_size:]], axis=1)
        values = start
        for _ in range(self._sweeps):  # 1, or max_nodes - inputs (feedforward): the docstring
            swept = self._sweep(xp, params, start, values)
            # numpy stops at a fixed point: a sweep is a function of the values alone (the
            # inputs held), so every later sweep would repeat it bit for bit (an acyclic
            # genome's is reached after its depth in sweeps). JAX's loop is unrolled: all.
            if xp is np and self._sweeps > 1 and np.array_equal(swept, values):
                break
            values = swept
        outputs = values[:, self._outputs]
        # unit outputs onto the decoder's [-1, 1], so a sigmoid reaches the whole action range
        return {"values": values}, 2.0 * outputs - 1.0 if self._unit_outputs else outputs

    def _sweep(self, xp: Any, params: dict[str, Any], start: Any, previous: Any) -> Any:
        """Every node's value from `previous` (the inputs held): a CTRNN node's Euler step
        starts from its value at the step's `start`, so it is taken once a step however many
        sweeps there are."""
        z = matvec_of(xp)(params["w"], previous)
        # augmented assignments on an array made here: in place in numpy, new in JAX
        z *= params["response"]
        z += params["bias"]
        first, *others = self._functions
        values = first(xp, z)
        for code, function in enumerate(others, start=1):
            values = xp.where(params["code"] == code, function(xp, z), values)
        if self._ctrnn:
            values = xp.where(params["ctrnn"], start + params["alpha"] * (values - start),
                              values)
        values = xp.where(params["used"], values, 0.0)
        return xp.concatenate([start[:, :self.input_size], values[:, self.input_size:]],
                              axis=1)

    def network_graph(self, genome: NDArray[np.float64]) -> NetworkGraph:
        """The network `params` builds from `genome`, as `INetworkGraph` describes it: the
        present nodes (a later one repeating a key is left out: the brain joins every
        connection end to the first, so nothing reaches or leaves it), input, output or hidden
        by their row (the rows the brain writes the observation into and reads the outputs
        from), labelled "in i" and "out j"; the enabled connections between present nodes,
        which are what the brain computes, and the disabled ones between them (connection
        genes, innovation >= 0) with `enabled` False."""
        tables = self.layout.decode(np, np.asarray(genome, dtype=np.float64)[None, :])
        nodes = {name: column[0] for name, column in tables.nodes.items()}
        links = {name: column[0] for name, column in tables.connections.items()}
        keys = _whole(nodes["key"])
        used = np.flatnonzero(nodes["used"] > 0.5)
        _, first = np.unique(keys[used], return_index=True)
        rows = np.sort(used[first])
        inputs, outputs = self.input_size, self.output_size
        names: tuple[NodeKind, ...] = ("input", "output", "hidden")
        kind = np.searchsorted([inputs, inputs + outputs], rows, side="right")
        labels = tuple(f"in {row}" if k == 0 else f"out {row - inputs}" if k == 1 else ""
                       for row, k in zip(rows.tolist(), kind.tolist(), strict=True))
        source, target = _whole(links["source"]), _whole(links["target"])
        joined = np.isin(source, keys[rows]) & np.isin(target, keys[rows])
        enabled = links["enabled"] > 0.5
        shown = joined & (enabled | (links["innovation"] >= 0))
        return NetworkGraph(keys=keys[rows], kinds=tuple(names[k] for k in kind),
                            sources=source[shown], targets=target[shown],
                            weights=links["weight"][shown], enabled=enabled[shown],
                            labels=labels)

    def trace(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any
              ) -> dict[str, Any]:
        """`nodes`: every node's value (rows x max_nodes: inputs, outputs, then hidden)."""
        return {"nodes": state["values"]}


def _whole(values: NDArray[np.float64]) -> NDArray[np.int64]:
    """Keys as the brain reads them (rounded), as integers: beyond +-2**62 they are clipped,
    where no node counter reaches."""
    limit = 2.0 ** 62
    return np.clip(np.rint(values), -limit, limit).astype(np.int64)


def _rows_of(xp: Any, keys: Any, used: Any, ends: Any) -> tuple[Any, Any]:
    """For connection ends named by node key (rows x max_conns), the row of the present node
    (`used`) with that key (`keys`: the first, should two share it) and whether there is one.
    A comparison of every end with every node (rows x max_conns x max_nodes booleans), done
    once per genome loaded, not per step: no sort or search, the same in numpy and JAX."""
    matches = (xp.rint(ends)[:, :, None] == keys[:, None, :]) & used[:, None, :]
    return xp.argmax(matches, axis=2), matches.any(axis=2)
