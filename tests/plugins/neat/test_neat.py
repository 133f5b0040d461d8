"""evo-neat's genome tables and its brain: the layout round-trips and pads inertly; the brain
computes neat-python's recurrent step (checked by hand on an XOR network and a CTRNN node); its
derived batch rows act as make() bit for bit and its JAX form to 1e-6."""

from __future__ import annotations

import itertools
import math
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from evo_core import check_brain, jax_form
from evo_core.authoring.conformance import batch_mismatch
from evo_neat import GenomeLayout, NEATConfig, NEATTemplate, Tables
from evo_neat.genome import CONNECTION_FIELDS, HIDDEN, INPUT, NODE_FIELDS, OUTPUT
from evo_neat.innovation import add_connections, add_nodes

OBSERVATION = spaces.Box(-2.0, 3.0, (3,), dtype=np.float32)
ACTION = spaces.Box(-1.0, 1.0, (2,), dtype=np.float64)
INPUTS, OUTPUTS = 3, 2
HIDDEN_KEYS = [11, 8, 30]


def template_of(observation: gym.Space[Any] = OBSERVATION, action: gym.Space[Any] = ACTION,
                **options: Any) -> NEATTemplate:
    """Outputs read as they are (signed), so the tests see the nodes' values; `outputs =
    "unit"` is tested on its own. CTRNN nodes read from the genomes (brain.tau > 0)."""
    options.setdefault("outputs", "signed")
    options.setdefault("tau", 1.0)   # the genomes' tau column read (nodes with 0 stay plain)
    return NEATTemplate(NEATConfig(**options), observation, action, np.random.default_rng(0))


def grown(layout: GenomeLayout, count: int, seed: int, activations: int = 1) -> Tables:
    """`count` minimal genomes grown at random: random weights, biases, responses, activations
    and time constants, a few hidden nodes, extra (recurrent, self, duplicate and disabled)
    connections, some of them to absent nodes: every case the brain must handle."""
    rng = np.random.default_rng(seed)
    tables = layout.minimal(count, INPUTS, OUTPUTS)
    nodes, connections = tables.nodes, tables.connections
    hidden = slice(INPUTS + OUTPUTS, INPUTS + OUTPUTS + 3)
    nodes["used"][:, hidden] = rng.random((count, 3)) < 0.8
    nodes["kind"][:, hidden] = HIDDEN
    nodes["key"][:, hidden] = HIDDEN_KEYS  # keys a node counter gave, not the rows
    present = INPUTS + OUTPUTS + 3
    keys = np.concatenate([np.arange(INPUTS + OUTPUTS), HIDDEN_KEYS])
    nodes["bias"][:, INPUTS:present] = rng.normal(0.0, 1.0, (count, present - INPUTS))
    nodes["response"][:, INPUTS:present] = rng.uniform(0.5, 4.9, (count, present - INPUTS))
    nodes["activation"][:, INPUTS:present] = rng.integers(0, activations,
                                                          (count, present - INPUTS))
    nodes["tau"][:, INPUTS:present] = np.where(
        rng.random((count, present - INPUTS)) < 0.4, rng.uniform(0.01, 1.0), 0.0)
    first = INPUTS * OUTPUTS
    extra = layout.max_conns - first
    connections["source"][:, first:] = keys[rng.integers(0, present, (count, extra))]
    connections["target"][:, first:] = keys[rng.integers(INPUTS, present, (count, extra))]
    connections["innovation"][:, first:] = first + np.arange(extra)
    connections["enabled"][:, first:] = rng.random((count, extra)) < 0.8
    connections["weight"][:] = rng.normal(0.0, 1.5, (count, layout.max_conns))
    return tables


# ----------------------------------------------------------------- the genome layout


def test_tables_round_trip_through_the_flat_vector() -> None:
    layout = GenomeLayout(max_nodes=7, max_conns=5)
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(4, layout.size))
    tables = layout.decode(np, vectors)
    assert set(tables.nodes) == set(NODE_FIELDS)
    assert set(tables.connections) == set(CONNECTION_FIELDS)
    assert all(column.shape == (4, 7) for column in tables.nodes.values())
    assert all(column.shape == (4, 5) for column in tables.connections.values())
    assert np.array_equal(layout.encode(tables), vectors)
    grown_tables = grown(GenomeLayout(10, 12), 3, seed=2)
    again = GenomeLayout(10, 12).decode(np, GenomeLayout(10, 12).encode(grown_tables))
    for name in NODE_FIELDS:
        assert np.array_equal(again.nodes[name], grown_tables.nodes[name])
    for name in CONNECTION_FIELDS:
        assert np.array_equal(again.connections[name], grown_tables.connections[name])


def test_padding_is_finite_and_minimal_genomes_are_marked_alike() -> None:
    layout = GenomeLayout(max_nodes=8, max_conns=9)
    vectors = layout.encode(layout.minimal(2, INPUTS, OUTPUTS))
    assert np.isfinite(vectors).all()
    tables = layout.decode(np, vectors)
    assert np.array_equal(tables.nodes["kind"][0, :5], [INPUT] * 3 + [OUTPUT] * 2)
    assert np.array_equal(tables.connections["innovation"][0], [0, 1, 2, 3, 4, 5, -1, -1, -1])
    assert np.array_equal(vectors[0], vectors[1])


def test_minimal_refuses_a_capacity_too_small_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"raise brain.max_nodes to at least 5$"):
        GenomeLayout(4, 10).minimal(1, INPUTS, OUTPUTS)
    with pytest.raises(ValueError, match=r"raise brain.max_conns to at least 6$"):
        GenomeLayout(5, 5).minimal(1, INPUTS, OUTPUTS)


def _actions(template: NEATTemplate, genome: np.ndarray, observations: np.ndarray
             ) -> np.ndarray:
    brain = template.make(genome)
    brain.reset()
    return np.array([np.asarray(brain.step(o), dtype=np.float64) for o in observations])


def test_padded_rows_are_inert() -> None:
    """The same network in tables with room to spare acts the same, also when the spare rows
    hold weights that a flag switches off."""
    small, large = GenomeLayout(9, 10), GenomeLayout(14, 25)
    tables = grown(small, 1, seed=3)
    wide = large.padded(1)
    for name in NODE_FIELDS:
        wide.nodes[name][:, :9] = tables.nodes[name]
    for name in CONNECTION_FIELDS:
        wide.connections[name][:, :10] = tables.connections[name]
    # garbage behind the flags: a disabled connection, connections from and to absent nodes
    wide.connections["weight"][:, 10:] = 7.0
    wide.connections["source"][:, 10:13] = [0, 12, 4]  # no node has key 12 or 13
    wide.connections["target"][:, 10:13] = [4, 4, 13]
    wide.connections["enabled"][:, 11:13] = 1.0
    wide.nodes["bias"][:, 9:] = 5.0
    observations = np.random.default_rng(4).uniform(-2, 3, (12, INPUTS)).astype(np.float32)
    narrow_actions = _actions(template_of(max_nodes=9, max_conns=10),
                              small.encode(tables)[0], observations)
    wide_actions = _actions(template_of(max_nodes=14, max_conns=25), large.encode(wide)[0],
                            observations)
    assert np.array_equal(narrow_actions, wide_actions)


def test_a_hidden_node_acts_by_its_key_not_its_row() -> None:
    """Hidden node genes moved to other rows (as crossover may place them) act the same."""
    layout = GenomeLayout(12, 16)
    tables = grown(layout, 1, seed=11)
    tables.nodes["used"][0, 5:8] = 1.0
    genome = layout.encode(tables)[0]
    moved = layout.padded(1)
    rows = np.array([0, 1, 2, 3, 4, 10, 6, 8, 5, 7, 9, 11])  # hidden 5, 6, 7 to 10, 6, 8
    for name in NODE_FIELDS:
        moved.nodes[name][:, rows] = tables.nodes[name]
    for name in CONNECTION_FIELDS:
        moved.connections[name][:] = tables.connections[name]
    template = template_of(max_nodes=12, max_conns=16)
    observations = np.random.default_rng(12).uniform(-2, 3, (10, INPUTS)).astype(np.float32)
    moved_genome = layout.encode(moved)[0]
    assert np.array_equal(_actions(template, moved_genome, observations),
                          _actions(template, genome, observations))
    w = template.params(np, genome[None])["w"][0]
    assert np.array_equal(template.params(np, moved_genome[None])["w"][0][np.ix_(rows, rows)], w)
    # and keys that no connection names leave the hidden nodes unconnected
    assert w[5:8].any() and w[:, 5:8].any()
    tables.nodes["key"][0, 5:8] = [97, 98, 99]
    unnamed = template.params(np, layout.encode(tables)[0][None])["w"][0]
    assert not unnamed[5:8].any() and not unnamed[:, 5:8].any()


# ----------------------------------------------------------------- the step, by hand


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _steps(template: NEATTemplate, genome: np.ndarray, inputs: list[float], steps: int
           ) -> np.ndarray:
    """The raw outputs (before decoding) after `steps` steps of the same inputs."""
    params = template.params(np, genome[None])
    state = template.initial_state(np, params)
    x = np.array([inputs])
    for _ in range(steps):
        state, outputs = template.forward(np, params, state, x, None)
    result: np.ndarray = np.asarray(outputs[0], dtype=np.float64)
    return result


XOR_LINKS = [  # (source, target, weight) by key: OR (key 7) and NAND (key 9) into AND (key 2)
    (0, 7, 20.0), (1, 7, 20.0), (0, 9, -20.0), (1, 9, -20.0), (7, 2, 20.0), (9, 2, 20.0)]
XOR_BIASES = {2: -30.0, 3: -10.0, 4: 30.0}  # by row: the output, OR in row 3, NAND in row 4


def xor_genome(layout: GenomeLayout) -> np.ndarray:
    tables = layout.minimal(1, 2, 1)
    tables.connections["enabled"][:] = 0.0  # the two direct links, off
    tables.nodes["used"][0, 3:5] = 1.0
    tables.nodes["key"][0, 3:5] = [7, 9]
    tables.nodes["kind"][0, 3:5] = HIDDEN
    tables.nodes["response"][0, 3:5] = 1.0
    for node, bias in XOR_BIASES.items():
        tables.nodes["bias"][0, node] = bias
    for row, (source, target, weight) in enumerate(XOR_LINKS, start=2):
        for name, value in (("source", source), ("target", target), ("weight", weight),
                            ("innovation", row), ("enabled", 1.0)):
            tables.connections[name][0, row] = value
    genome: np.ndarray = layout.encode(tables)[0]
    return genome


@pytest.mark.parametrize("pattern", [(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0)])
def test_an_xor_network_computes_its_hand_computed_outputs(pattern: tuple[float, float]
                                                           ) -> None:
    template = template_of(spaces.Box(0.0, 1.0, (2,), dtype=np.float64),
                           spaces.Box(0.0, 1.0, (1,), dtype=np.float64), max_nodes=6,
                           max_conns=8)
    genome = xor_genome(template.layout)
    a, b = pattern
    # step 1: the hidden nodes see the inputs, the output the hidden nodes' zero start
    assert _steps(template, genome, [a, b], 1)[0] == pytest.approx(_sigmoid(-30.0), abs=1e-15)
    # step 2: the output reads the hidden values of step 1 (synchronous update)
    hidden_or = _sigmoid(20 * a + 20 * b - 10)
    hidden_nand = _sigmoid(-20 * a - 20 * b + 30)
    expected = _sigmoid(20 * hidden_or + 20 * hidden_nand - 30)
    assert _steps(template, genome, [a, b], 2)[0] == pytest.approx(expected, abs=1e-12)
    assert (expected > 0.5) == (a != b)


@pytest.mark.parametrize("pattern", [(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0)])
def test_a_feedforward_xor_network_answers_in_the_same_step(pattern: tuple[float, float]
                                                            ) -> None:
    template = template_of(spaces.Box(0.0, 1.0, (2,), dtype=np.float64),
                           spaces.Box(0.0, 1.0, (1,), dtype=np.float64), max_nodes=6,
                           max_conns=8, network="feedforward")
    genome = xor_genome(template.layout)
    a, b = pattern
    hidden_or = _sigmoid(20 * a + 20 * b - 10)
    hidden_nand = _sigmoid(-20 * a - 20 * b + 30)
    expected = _sigmoid(20 * hidden_or + 20 * hidden_nand - 30)
    first = _steps(template, genome, [a, b], 1)[0]
    assert first == pytest.approx(expected, abs=1e-12)
    assert (first > 0.5) == (a != b)
    assert _steps(template, genome, [a, b], 3)[0] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("network", ["recurrent", "feedforward"])
def test_a_ctrnn_node_moves_towards_its_activation_by_delta_t_over_tau(network: str) -> None:
    # feedforward: three sweeps a step, and still one Euler step a step
    template = template_of(spaces.Box(-1.0, 1.0, (1,), dtype=np.float64),
                           spaces.Box(-1.0, 1.0, (1,), dtype=np.float64), max_nodes=4,
                           max_conns=1, activations=["tanh"], delta_t=0.1, network=network)
    tables = template.layout.minimal(1, 1, 1)
    tables.nodes["tau"][0, 1] = 0.5
    tables.nodes["bias"][0, 1] = 0.2
    tables.nodes["response"][0, 1] = 2.0
    tables.connections["weight"][0, 0] = 0.7
    genome = template.layout.encode(tables)[0]
    alpha, y = 0.1 / 0.5, 0.0
    for step in range(1, 4):
        y += alpha * (math.tanh(0.2 + 2.0 * 0.7 * 0.9) - y)
        assert _steps(template, genome, [0.9], step)[0] == pytest.approx(y, abs=1e-12)


def test_a_task_larger_than_the_node_table_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match=r"^brain.max_nodes = 4 cannot hold this task's 3 "
                       r"inputs and 2 outputs; set brain.max_nodes to at least 5"):
        template_of(max_nodes=4)


# ----------------------------------------------------------------- the derived forms


def test_a_feedforward_chain_as_long_as_the_node_table_allows_is_through_in_one_step() -> None:
    # input -> four hidden nodes -> output: five connections, max_nodes - inputs sweeps
    template = template_of(spaces.Box(-1.0, 1.0, (1,), dtype=np.float64),
                           spaces.Box(-1.0, 1.0, (1,), dtype=np.float64), max_nodes=6,
                           max_conns=6, activations=["linear"], network="feedforward")
    tables = template.layout.minimal(1, 1, 1)
    tables.nodes["used"][0, 2:] = 1.0
    tables.nodes["key"][0, 2:] = [40, 30, 20, 10]  # keys out of row order: order is by links
    tables.nodes["kind"][0, 2:] = HIDDEN
    tables.nodes["response"][0, 2:] = 1.0
    chain = [0, 10, 20, 30, 40, 1]
    for row, (source, target) in enumerate(itertools.pairwise(chain)):
        for name, value in (("source", source), ("target", target), ("weight", 2.0),
                            ("innovation", row), ("enabled", 1.0)):
            tables.connections[name][0, row] = value
    genome = template.layout.encode(tables)[0]
    assert _steps(template, genome, [0.3], 1)[0] == pytest.approx(0.3 * 2.0 ** 5, abs=1e-12)


@pytest.mark.parametrize(("activations", "network"), [
    (["sigmoid"], "recurrent"), (["tanh", "relu", "sigmoid", "linear"], "recurrent"),
    (["tanh", "relu", "sigmoid", "linear"], "feedforward")])
def test_batch_rows_act_as_make(activations: list[str], network: str) -> None:
    template = template_of(max_nodes=10, max_conns=16, activations=activations,
                           network=network)
    genomes = template.layout.encode(grown(template.layout, 5, seed=5, activations=4))
    assert batch_mismatch(template, genomes, OBSERVATION, ACTION, seed=6, steps=30) is None
    # vectors another optimizer would hand over: every gene perturbed, still a network
    noisy = np.random.default_rng(7).normal(0.0, 1.5, (4, template.genome_size))
    assert batch_mismatch(template, noisy, OBSERVATION, ACTION, seed=8, steps=30) is None


@pytest.mark.parametrize("network", ["recurrent", "feedforward"])
def test_check_brain_passes(network: str) -> None:
    check_brain(NEATTemplate, NEATConfig(max_nodes=12, max_conns=20, network=network)
                ).raise_for_failures()


@pytest.mark.parametrize("network", ["recurrent", "feedforward"])
def test_jax_form_acts_as_make_within_1e_6(network: str) -> None:
    jax = pytest.importorskip("jax", reason="jax is not installed (pip install 'evo-core[jax]')")
    jnp = pytest.importorskip("jax.numpy")
    template = template_of(max_nodes=10, max_conns=16,
                           activations=["tanh", "relu", "sigmoid", "linear"], network=network)
    genome = template.layout.encode(grown(template.layout, 1, seed=9, activations=4))[0]
    observations = np.random.default_rng(10).uniform(-2, 3, (8, INPUTS)).astype(np.float32)
    expected = _actions(template, genome, observations)
    form = jax_form(template)
    assert form is not None and form.jax_unsupported() is None

    def episode(genes: Any, seen: Any) -> Any:
        params = form.jax_params(genes)

        def one(state: Any, observation: Any) -> tuple[Any, Any]:
            return form.jax_step(params, state, observation)

        return jax.lax.scan(one, form.jax_init_state(params), seen)[1]

    got = np.asarray(jax.jit(episode)(jnp.asarray(genome, dtype=jnp.float32),
                                      jnp.asarray(observations)), dtype=np.float64)
    assert got.shape == expected.shape
    assert float(np.max(np.abs(got - expected))) <= 1e-6


# ----------------------------------------------------------------- historical markings


def test_the_same_connection_added_twice_in_a_generation_gets_one_marking() -> None:
    layout = GenomeLayout(max_nodes=5, max_conns=4)
    tables = layout.minimal(3, 2, 1)  # links 0->2 and 1->2, innovations 0 and 1
    before = layout.encode(tables)
    requests = np.array([  # genome, source, target
        [0, 2, 2], [1, 2, 2],  # the same new pair in two genomes: one marking
        [0, 0, 2],             # a connection genome 0 has: refused
        [2, 3, 2], [0, 3, 2],  # another pair: the next marking
        [0, 2, 2],             # genome 0 asks again: refused
        [0, 0, 3]])            # genome 0's table is full now: refused
    added = add_connections(tables, requests[:, 0], requests[:, 1], requests[:, 2],
                            np.array([0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5]), counter=10)
    assert added.applied.tolist() == [True, True, False, True, True, False, False]
    assert added.counter == 12
    new = added.tables.connections
    assert new["innovation"].tolist() == [[0, 1, 10, 11], [0, 1, 10, -1], [0, 1, 11, -1]]
    assert new["source"][:, 2].tolist() == [2, 2, 3] and new["target"][:, 2].tolist() == [2] * 3
    assert new["weight"][:, 2].tolist() == [0.5, 1.5, 3.5] and new["weight"][0, 3] == 4.5
    assert new["enabled"].tolist() == [[1, 1, 1, 1], [1, 1, 1, 0], [1, 1, 1, 0]]
    assert np.array_equal(layout.encode(tables), before)  # a pure function


def test_pairs_of_keys_beyond_the_node_table_are_told_apart() -> None:
    """Node keys come from a counter and outgrow max_nodes: 0 -> 28 and 1 -> 16 are two
    structures (two markings), though 0 * 12 + 28 == 1 * 12 + 16."""
    layout = GenomeLayout(max_nodes=12, max_conns=4)
    tables = layout.minimal(2, 2, 1)
    added = add_connections(tables, np.array([0, 1]), np.array([0, 1]),
                            np.array([28, 16]), np.array([1.0, 2.0]), counter=5)
    assert added.applied.all() and added.counter == 7
    assert added.tables.connections["innovation"][:, 2].tolist() == [5, 6]


def test_no_request_leaves_the_tables_and_the_counter() -> None:
    layout = GenomeLayout(max_nodes=5, max_conns=4)
    tables = layout.minimal(2, 2, 1)
    none = np.zeros(0, dtype=np.intp)
    added = add_connections(tables, none, none, none, np.zeros(0, dtype=np.float64),
                            counter=3)
    assert added.counter == 3 and added.applied.shape == (0,)
    assert np.array_equal(layout.encode(added.tables), layout.encode(tables))


def test_the_same_connection_split_in_a_generation_gets_one_node_and_two_markings() -> None:
    layout = GenomeLayout(max_nodes=4, max_conns=5)  # room for one hidden node
    tables = layout.minimal(4, 2, 1)  # links 0->2 and 1->2, innovations 0 and 1
    tables.connections["weight"][:, :2] = [0.7, -1.3]
    tables.connections["enabled"][2, 0] = 0.0
    tables.connections["innovation"][3, 2:5] = [50, 51, 52]  # genome 3: two free rows short
    before = layout.encode(tables)
    requests = np.array([  # genome, connection row
        [0, 0], [1, 0],  # the same connection in two genomes: one node key, one pair of numbers
        [2, 1],          # another connection: the next key and pair
        [0, 0],          # genome 0 asks again: refused
        [0, 1],          # genome 0's node table is full now: refused
        [2, 0],          # a disabled connection: refused
        [3, 0]])         # genome 3's connection table has one free row: refused
    split = add_nodes(tables, requests[:, 0], requests[:, 1], node_counter=20,
                      counter=10)
    assert split.applied.tolist() == [True, True, True, False, False, False, False]
    assert (split.node_counter, split.counter) == (22, 14)
    nodes, links = split.tables.nodes, split.tables.connections
    assert nodes["key"][:, 3].tolist() == [20, 20, 21, -1]
    assert nodes["used"][:, 3].tolist() == [1, 1, 1, 0]
    assert nodes["kind"][0, 3] == HIDDEN and nodes["response"][0, 3] == 1.0
    assert links["innovation"][:3].tolist() == [[0, 1, 10, 11, -1], [0, 1, 10, 11, -1],
                                                [0, 1, 12, 13, -1]]
    # in -> new with weight 1, new -> out with the old weight, the old link disabled
    assert links["source"][:3, 2:4].tolist() == [[0, 20], [0, 20], [1, 21]]
    assert links["target"][:3, 2:4].tolist() == [[20, 2], [20, 2], [21, 2]]
    assert links["weight"][:3, 2:4].tolist() == [[1.0, 0.7], [1.0, 0.7], [1.0, -1.3]]
    assert links["enabled"][:3, :4].tolist() == [[0, 1, 1, 1], [0, 1, 1, 1], [0, 0, 1, 1]]
    assert np.array_equal(layout.encode(split.tables)[3], before[3])
    assert np.array_equal(layout.encode(tables), before)  # a pure function


@pytest.mark.parametrize("network", ["recurrent", "feedforward"])
@pytest.mark.parametrize("activation", ["linear", "sigmoid"])
def test_a_split_network_computes_the_papers_rule(activation: str, network: str) -> None:
    template = template_of(spaces.Box(-1.0, 1.0, (2,), dtype=np.float64),
                           spaces.Box(-1.0, 1.0, (1,), dtype=np.float64), max_nodes=4,
                           max_conns=4, activations=[activation], network=network)
    tables = template.layout.minimal(1, 2, 1)
    tables.connections["weight"][0, :2] = [0.7, -1.3]
    tables.nodes["bias"][0, 2] = 0.2
    split = add_nodes(tables, np.array([0]), np.array([0]), node_counter=3,
                      counter=2)
    genome = template.layout.encode(split.tables)[0]
    x = [0.4, -0.9]
    f = {"linear": lambda v: v, "sigmoid": _sigmoid}[activation]
    # the new node passes x0 on through the activation; a recurrent output reads it a step
    # later, a feedforward one in the same step
    steps = 1 if network == "feedforward" else 2
    expected = f(0.2 + 0.7 * f(1.0 * x[0]) - 1.3 * x[1])
    assert _steps(template, genome, x, steps)[0] == pytest.approx(expected, abs=1e-12)
    if activation == "linear":  # a linear split changes nothing (once the signal is through)
        unsplit = template.layout.encode(tables)[0]
        assert _steps(template, genome, x, steps)[0] == pytest.approx(
            _steps(template, unsplit, x, 1)[0], abs=1e-12)


def test_no_split_leaves_the_tables_and_the_counters() -> None:
    layout = GenomeLayout(max_nodes=5, max_conns=4)
    tables = layout.minimal(2, 2, 1)
    none = np.zeros(0, dtype=np.intp)
    split = add_nodes(tables, none, none, node_counter=4, counter=3)
    assert (split.node_counter, split.counter) == (4, 3) and split.applied.shape == (0,)
    assert np.array_equal(layout.encode(split.tables), layout.encode(tables))


def test_unit_outputs_reach_the_whole_action_range() -> None:
    """A sigmoid output (in [0, 1]) is mapped as 2*o - 1 onto the decoder's [-1, 1], so an
    output of 0 pushes fully left (the paper maps its output onto the whole force range)."""
    unit, signed = template_of(outputs="unit"), template_of()
    layout = unit.layout
    tables = layout.minimal(1, INPUTS, OUTPUTS)
    tables.nodes["bias"][0, INPUTS:INPUTS + 2] = [-40.0, 40.0]   # sigmoid outputs 0 and 1
    genome = layout.encode(tables)[0]
    observation = np.zeros(INPUTS, dtype=np.float32)
    raw = signed.make(genome).step(observation)
    np.testing.assert_allclose(raw, [0.0, 1.0], atol=1e-9)
    np.testing.assert_allclose(unit.make(genome).step(observation), [-1.0, 1.0], atol=1e-9)


def test_a_plain_brain_does_not_read_the_tau_column() -> None:
    """brain.tau = 0 makes plain nodes whatever the genome's tau column holds (only a brain
    with CTRNN nodes reads it, and its step alone blends)."""
    plain, ctrnn = template_of(tau=0.0), template_of(tau=1.0)
    tables = plain.layout.minimal(1, INPUTS, OUTPUTS)
    tables.connections["weight"][0, :] = 0.8
    zero = plain.layout.encode(tables)[0]
    tables.nodes["tau"][0, INPUTS:] = 5.0
    with_tau = plain.layout.encode(tables)[0]
    observation = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    np.testing.assert_array_equal(plain.make(with_tau).step(observation),
                                  plain.make(zero).step(observation))
    assert not np.allclose(ctrnn.make(with_tau).step(observation),
                           ctrnn.make(zero).step(observation))
