"""evo-neat's compatibility distance and crossover: the paper's E, D, W and N counted by hand on
grown genomes and against a brute-force reference on random populations; crossover's child is
the fitter's structure, with matching genes from either parent at even odds and the 75 % rule
for disabled genes measured over thousands of children."""

from __future__ import annotations

import numpy as np
import pytest

from evo_neat import GenomeLayout, Tables
from evo_neat.crossover import INHERITED_NODE_FIELDS, crossover
from evo_neat.distance import compatibility
from evo_neat.genome import CONNECTION_FIELDS, INPUT, NODE_FIELDS
from evo_neat.innovation import add_connections, add_nodes

COEFFICIENTS = {"excess": 1.0, "disjoint": 2.0, "weight": 0.4}
CHILDREN = 4000


def three_sigma(p: float, count: int) -> float:
    return 3.0 * float(np.sqrt(p * (1.0 - p) / count))


def distance(a: Tables, b: Tables, **options: float) -> np.ndarray:
    coefficients = {**COEFFICIENTS, **options}
    return compatibility(a.connections["innovation"], a.connections["weight"],
                         b.connections["innovation"], b.connections["weight"],
                         excess=coefficients["excess"], disjoint=coefficients["disjoint"],
                         weight=coefficients["weight"],
                         small_genome=int(coefficients.get("small_genome", 20)))


def rows_of(tables: Tables, rows: np.ndarray | list[int]) -> Tables:
    return Tables({name: column[rows] for name, column in tables.nodes.items()},
                  {name: column[rows] for name, column in tables.connections.items()})


GROWN = GenomeLayout(24, 40)


def grown_population(count: int, seed: int, rounds: int = 8) -> Tables:
    """`count` genomes of 3 inputs and 2 outputs grown by the optimizer's own mutations (each
    round a random half splits a random enabled connection, a random half adds a connection
    between random nodes), so they share markings and differ in size and row order; random
    weights and enabled flags, and garbage weights in padded rows."""
    rng = np.random.default_rng(seed)
    layout = GROWN
    tables = layout.minimal(count, 3, 2)
    node_counter, counter = 5, 6
    for _ in range(rounds):
        links = tables.connections
        enabled = (links["innovation"] >= 0) & (links["enabled"] > 0.5)
        genomes = np.flatnonzero((rng.random(count) < 0.5) & enabled.any(axis=1))
        rows = np.argmax(np.where(enabled, rng.random(enabled.shape), -1.0), axis=1)[genomes]
        split = add_nodes(tables, genomes, rows, node_counter, counter)
        tables, node_counter, counter = split.tables, split.node_counter, split.counter
        used = tables.nodes["used"] > 0.5
        target_ok = used & (tables.nodes["kind"] != INPUT)
        genomes = np.flatnonzero(rng.random(count) < 0.5)
        source_rows = np.argmax(np.where(used, rng.random(used.shape), -1.0), axis=1)
        target_rows = np.argmax(np.where(target_ok, rng.random(used.shape), -1.0), axis=1)
        keys = np.rint(tables.nodes["key"]).astype(np.intp)
        added = add_connections(tables, genomes,
                                keys[genomes, source_rows[genomes]],
                                keys[genomes, target_rows[genomes]],
                                rng.normal(size=len(genomes)), counter)
        tables, counter = added.tables, added.counter
    links = tables.connections
    links["weight"][:] = rng.normal(0.0, 1.5, links["weight"].shape)
    present = links["innovation"] >= 0
    links["enabled"][:] = np.where(present, rng.random(present.shape) < 0.8, 0.0)
    return tables


def reference_distance(marks_a: np.ndarray, weights_a: np.ndarray, marks_b: np.ndarray,
                       weights_b: np.ndarray, excess: float, disjoint: float, weight: float,
                       small_genome: int) -> float:
    """The paper's figure 4 in plain Python: walk the union of both genomes' markings in order;
    matching in both, excess beyond the end of the genome that ends first, disjoint else."""
    a = {int(np.rint(m)): float(w) for m, w in zip(marks_a, weights_a, strict=True)
         if np.rint(m) >= 0}
    b = {int(np.rint(m)): float(w) for m, w in zip(marks_b, weights_b, strict=True)
         if np.rint(m) >= 0}
    first_end = min(max(a, default=-1), max(b, default=-1))
    matching, excess_genes, disjoint_genes = [], 0, 0
    for mark in sorted(set(a) | set(b)):
        if mark in a and mark in b:
            matching.append(abs(a[mark] - b[mark]))
        elif mark > first_end:
            excess_genes += 1
        else:
            disjoint_genes += 1
    genes = max(len(a), len(b))
    normaliser = 1 if genes < small_genome else genes
    mean = sum(matching) / len(matching) if matching else 0.0
    return excess * excess_genes / normaliser + disjoint * disjoint_genes / normaliser + (
        weight * mean)


def hand_grown() -> Tables:
    """Two genomes of 2 inputs and 1 output (markings 0, 1) grown by hand: both split
    connection 0 in one generation (node 3, markings 2 and 3 in both), then genome 0 adds 1 -> 3
    (marking 4) and genome 1 splits connection 1 (node 4, markings 5 and 6). Genome 0 holds
    {0, 1, 2, 3, 4}, genome 1 {0, 1, 2, 3, 5, 6}; rows of the same marking differ after the
    shuffle of genome 1's rows."""
    layout = GenomeLayout(8, 10)
    tables = layout.minimal(2, 2, 1)
    tables = add_nodes(tables, np.array([0, 1]), np.array([0, 0]), 3, 2).tables
    tables = add_connections(tables, np.array([0]), np.array([1]), np.array([3]),
                             np.array([0.0]), 4).tables
    tables = add_nodes(tables, np.array([1]), np.array([1]), 4, 5).tables
    shuffle = np.random.default_rng(0).permutation(layout.max_conns)
    for column in tables.connections.values():
        column[1] = column[1, shuffle]
    marks = np.rint(tables.connections["innovation"])
    assert set(marks[0][marks[0] >= 0]) == {0, 1, 2, 3, 4}
    assert set(marks[1][marks[1] >= 0]) == {0, 1, 2, 3, 5, 6}
    return tables


def _set_weights(tables: Tables, row: int, weights: dict[int, float]) -> None:
    marks = np.rint(tables.connections["innovation"][row])
    for mark, value in weights.items():
        tables.connections["weight"][row, marks == mark] = value


# ----------------------------------------------------------------- compatibility distance


def test_distance_counts_excess_disjoint_and_weights_by_hand() -> None:
    """{0, 1, 2, 3, 4} against {0, 1, 2, 3, 5, 6}: 0 .. 3 match; genome 0's 4 is below genome
    1's end (6), so disjoint; genome 1's 5 and 6 are beyond genome 0's end (4), so excess.
    E = 2, D = 1, W = mean(|0.5 - -0.5|, |-1 - 1|, 0, 0) = 0.75."""
    tables = hand_grown()
    _set_weights(tables, 0, {0: 0.5, 1: -1.0, 2: 0.25, 3: 3.0, 4: 9.0})
    _set_weights(tables, 1, {0: -0.5, 1: 1.0, 2: 0.25, 3: 3.0, 5: -7.0, 6: 4.0})
    a, b = rows_of(tables, [0]), rows_of(tables, [1])
    small = 1.0 * 2 + 2.0 * 1 + 0.4 * 0.75  # 6 genes < 20: N = 1
    assert distance(a, b) == pytest.approx([small], abs=1e-12)
    large = (1.0 * 2 + 2.0 * 1) / 6 + 0.4 * 0.75  # N = 6, the larger genome's genes
    assert distance(a, b, small_genome=6) == pytest.approx([large], abs=1e-12)
    assert distance(a, b, small_genome=7) == pytest.approx([small], abs=1e-12)
    assert distance(b, a, small_genome=6) == pytest.approx([large], abs=1e-12)


def test_distance_of_genomes_of_twenty_genes_and_more_is_normalised() -> None:
    """5 x 4 inputs to outputs: 20 markings each; one genome splits a connection (22 genes,
    the split one kept disabled): E = 2 over N = 22, the 20 matching genes' weights."""
    layout = GenomeLayout(12, 30)
    tables = layout.minimal(2, 5, 4)
    tables = add_nodes(tables, np.array([1]), np.array([7]), 9, 20).tables
    rng = np.random.default_rng(5)
    tables.connections["weight"][:] = rng.normal(size=(2, 30))
    mean = float(np.abs(tables.connections["weight"][0, :20]
                        - tables.connections["weight"][1, :20]).mean())
    expected = 1.0 * 2 / 22 + 0.4 * mean
    a, b = rows_of(tables, [0]), rows_of(tables, [1])
    assert distance(a, b) == pytest.approx([expected], abs=1e-12)
    assert distance(b, a) == pytest.approx([expected], abs=1e-12)
    # 20 genes against 20: not small (N = 20), the weights alone
    same = distance(a, rows_of(layout.minimal(1, 5, 4), [0]))
    assert same == pytest.approx([0.4 * np.abs(tables.connections["weight"][0, :20]).mean()])


def test_empty_genomes_are_at_distance_zero_and_all_genes_beyond_them_are_excess() -> None:
    layout = GenomeLayout(6, 8)
    empty = layout.padded(1)
    empty.connections["weight"][:] = 5.0  # garbage behind the padding
    assert distance(empty, empty) == pytest.approx([0.0])
    one = layout.minimal(1, 2, 2)  # 4 genes, all beyond an empty genome's end
    assert distance(one, empty) == pytest.approx([4.0])
    assert distance(empty, one) == pytest.approx([4.0])


def test_distance_is_symmetric() -> None:
    tables = grown_population(60, seed=1)
    a, b = rows_of(tables, np.arange(60)), rows_of(tables, np.arange(60)[::-1])
    for small_genome in (20, 4):
        assert np.allclose(distance(a, b, small_genome=small_genome),
                           distance(b, a, small_genome=small_genome), rtol=1e-12, atol=0)


def test_padded_rows_and_their_garbage_are_ignored_wherever_they_sit() -> None:
    """The same genomes in wider tables, rows shuffled, padded rows holding any weight,
    flag and ends and any negative marking (-0.6 rounds to -1): the same distances."""
    tables = grown_population(30, seed=2)
    wide = GenomeLayout(24, 64).padded(30)
    rng = np.random.default_rng(3)
    for name in CONNECTION_FIELDS:
        wide.connections[name][:, :40] = tables.connections[name]
    padded = wide.connections["innovation"] < 0
    for name in ("source", "target", "weight", "enabled"):
        wide.connections[name][:] = np.where(padded, rng.normal(0, 5, padded.shape),
                                             wide.connections[name])
    wide.connections["innovation"][:] = np.where(
        padded, rng.choice([-1.0, -0.6, -3.0, -1e6], padded.shape), wide.connections["innovation"])
    shuffle = np.argsort(rng.random(padded.shape), axis=1)
    for name in CONNECTION_FIELDS:
        wide.connections[name][:] = np.take_along_axis(wide.connections[name], shuffle, axis=1)
    other = np.roll(np.arange(30), 7)
    expected = distance(tables, rows_of(tables, other))
    assert np.allclose(distance(wide, rows_of(wide, other)), expected, rtol=1e-12, atol=0)
    assert np.allclose(distance(wide, rows_of(tables, other)), expected, rtol=1e-12, atol=0)


def test_one_representative_against_every_genome_equals_row_by_row() -> None:
    tables = grown_population(40, seed=4)
    representative = rows_of(tables, [11])
    together = distance(tables, representative)
    assert together.shape == (40,)
    one_by_one = [distance(rows_of(tables, [i]), representative)[0] for i in range(40)]
    assert np.array_equal(together, one_by_one)
    assert np.array_equal(together, distance(tables, rows_of(tables, [11] * 40)))
    assert together[11] == 0.0


@pytest.mark.parametrize("seed", [5, 6])
def test_distance_agrees_with_a_brute_force_reference(seed: int) -> None:
    tables = grown_population(80, seed=seed, rounds=10)
    marks = np.rint(tables.connections["innovation"])
    genes = (marks >= 0).sum(axis=1)
    assert genes.min() < 20 <= genes.max()  # small and large genomes both met
    other = np.random.default_rng(seed).permutation(80)
    b = rows_of(tables, other)
    for small_genome in (20, 4):
        fast = distance(tables, b, small_genome=small_genome)
        slow = [reference_distance(marks[i], tables.connections["weight"][i], marks[j],
                                   tables.connections["weight"][j], small_genome=small_genome,
                                   **COEFFICIENTS)
                for i, j in enumerate(other)]
        assert np.allclose(fast, slow, rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------- crossover


def crossing_parents() -> Tables:
    """hand_grown with known weights, flags and node attributes: the fitter (row 0) and the
    other (row 1) match in markings 0 (disabled in both), 1 (disabled in the other only), 2
    (disabled in the fitter only) and 3 (enabled in both); the fitter's 4 and the other's 5, 6
    are theirs alone, and the fitter's 4 is disabled. Node keys 0 .. 3 in both, 4 in the other
    only, in other rows there."""
    tables = hand_grown()
    _set_weights(tables, 0, {0: 10.0, 1: 11.0, 2: 12.0, 3: 13.0, 4: 14.0})
    _set_weights(tables, 1, {0: 20.0, 1: 21.0, 2: 22.0, 3: 23.0, 5: 25.0, 6: 26.0})
    flags = {0: {0: 0.0, 1: 1.0, 2: 0.0, 3: 1.0, 4: 0.0},
             1: {0: 0.0, 1: 0.0, 2: 1.0, 3: 1.0, 5: 1.0, 6: 1.0}}
    for row, by_mark in flags.items():
        marks = np.rint(tables.connections["innovation"][row])
        for mark, flag in by_mark.items():
            tables.connections["enabled"][row, marks == mark] = flag
    nodes = tables.nodes
    for offset, name in enumerate(INHERITED_NODE_FIELDS):
        nodes[name][0] = np.where(nodes["used"][0] > 0.5, 100.0 * (offset + 1), 0.0)
        nodes[name][1] = np.where(nodes["used"][1] > 0.5, 100.0 * (offset + 1) + 50.0, 0.0)
    nodes["bias"][0, 5] = 7.0  # a padded row of the fitter's with garbage behind its flag
    for column in nodes.values():
        column[1] = np.roll(column[1], 3)
    return tables


def copy_of(tables: Tables) -> Tables:
    return Tables({name: column.copy() for name, column in tables.nodes.items()},
                  {name: column.copy() for name, column in tables.connections.items()})


def crossed(tables: Tables, seed: int = 0, count: int = CHILDREN,
            disabled_rate: float = 0.75) -> Tables:
    return crossover(GenomeLayout(8, 10), tables, np.zeros(count, dtype=np.intp),
                     np.ones(count, dtype=np.intp), np.random.default_rng(seed),
                     disabled_rate=disabled_rate)


def by_mark(tables: Tables, field: str, mark: int) -> np.ndarray:
    """Each child's value of `field` in its connection gene of marking `mark`."""
    marks = np.rint(tables.connections["innovation"])
    assert ((marks == mark).sum(axis=1) == 1).all()
    values: np.ndarray = tables.connections[field][marks == mark]
    return values


def test_the_child_has_the_fitter_parents_structure_and_tables_are_not_written() -> None:
    parents = crossing_parents()
    before = copy_of(parents)
    child = crossed(parents, count=50)
    for name in ("source", "target", "innovation"):
        assert np.array_equal(child.connections[name],
                              np.repeat(parents.connections[name][:1], 50, axis=0))
    for name in ("key", "used", "kind"):
        assert np.array_equal(child.nodes[name], np.repeat(parents.nodes[name][:1], 50, axis=0))
    for name, column in before.connections.items():
        assert np.array_equal(parents.connections[name], column)
    for name, column in before.nodes.items():
        assert np.array_equal(parents.nodes[name], column)


def test_genes_of_the_fitter_alone_are_its_own() -> None:
    """Marking 4 (disabled, the fitter's alone) keeps its weight and stays disabled: the 75 %
    rule is for genes both parents have; the padded rows stay as the fitter's."""
    parents = crossing_parents()
    child = crossed(parents)
    assert (by_mark(child, "weight", 4) == 14.0).all()
    assert (by_mark(child, "enabled", 4) == 0.0).all()
    padded = parents.connections["innovation"][0] < 0
    for name in CONNECTION_FIELDS:
        assert np.array_equal(child.connections[name][:, padded],
                              np.repeat(parents.connections[name][:1, padded], CHILDREN, 0))


def test_matching_weights_come_from_either_parent_at_even_odds() -> None:
    child = crossed(crossing_parents())
    for mark in (0, 1, 2, 3):
        weights = by_mark(child, "weight", mark)
        assert set(weights) == {10.0 + mark, 20.0 + mark}
        share = float((weights == 20.0 + mark).mean())
        assert abs(share - 0.5) < three_sigma(0.5, CHILDREN), (mark, share)
    # each gene draws its own parent
    assert not np.array_equal(by_mark(child, "weight", 0) - 10.0,
                              by_mark(child, "weight", 1) - 11.0)


def test_a_gene_disabled_in_either_parent_is_disabled_three_times_in_four() -> None:
    child = crossed(crossing_parents())
    for mark in (0, 1, 2):  # disabled in both, in the other only, in the fitter only
        share = float((by_mark(child, "enabled", mark) < 0.5).mean())
        assert abs(share - 0.75) < three_sigma(0.75, CHILDREN), (mark, share)
    assert (by_mark(child, "enabled", 3) == 1.0).all()  # enabled in both: stays enabled
    never = crossed(crossing_parents(), count=200, disabled_rate=0.0)
    always = crossed(crossing_parents(), count=200, disabled_rate=1.0)
    for mark in (0, 1, 2):
        assert (by_mark(never, "enabled", mark) == 1.0).all()
        assert (by_mark(always, "enabled", mark) == 0.0).all()


def test_matching_node_genes_take_their_attributes_together_from_either_parent() -> None:
    parents = crossing_parents()
    child = crossed(parents)
    used = parents.nodes["used"][0] > 0.5
    inherited = np.stack([child.nodes[name] for name in INHERITED_NODE_FIELDS], axis=-1)
    fitter = np.stack([parents.nodes[name][0] for name in INHERITED_NODE_FIELDS], axis=-1)
    from_other = (inherited == fitter + 50.0).all(axis=-1)
    from_fitter = (inherited == fitter).all(axis=-1)
    assert (from_other ^ from_fitter)[:, used].all()  # all fields from one parent
    share = from_other[:, used].mean(axis=0)
    assert (np.abs(share - 0.5) < three_sigma(0.5, CHILDREN)).all(), share
    assert from_fitter[:, ~used].all()  # padded rows (garbage included) stay the fitter's


def test_children_of_a_grown_population_line_genes_up_by_marking() -> None:
    """Random pairs of grown genomes (markings in different rows): every child gene's weight is
    the fitter's, or the other's for that marking where the other has it."""
    tables = grown_population(40, seed=7)
    rng = np.random.default_rng(8)
    fitter, other = rng.integers(0, 40, 200), rng.integers(0, 40, 200)
    child = crossover(GROWN, tables, fitter, other, rng)
    marks = np.rint(tables.connections["innovation"])
    weights = tables.connections["weight"]
    took_other = 0
    for k, (f, o) in enumerate(zip(fitter, other, strict=True)):
        theirs = {int(m): w for m, w in zip(marks[o], weights[o], strict=True) if m >= 0}
        for row in np.flatnonzero(marks[f] >= 0):
            allowed = {weights[f, row], theirs.get(int(marks[f, row]), weights[f, row])}
            assert child.connections["weight"][k, row] in allowed
            took_other += child.connections["weight"][k, row] != weights[f, row]
    assert took_other > 0


def test_the_same_seed_gives_the_same_children_and_the_stream_advances_alike() -> None:
    parents = crossing_parents()
    first, again, other = crossed(parents, 1, 30), crossed(parents, 1, 30), crossed(parents, 2, 30)
    for name in NODE_FIELDS:
        assert np.array_equal(first.nodes[name], again.nodes[name])
    for name in CONNECTION_FIELDS:
        assert np.array_equal(first.connections[name], again.connections[name])
    assert not np.array_equal(first.connections["weight"], other.connections["weight"])
    # three whole arrays drawn whatever the parents: here, parents without a matching gene
    layout = GenomeLayout(8, 10)
    rng = np.random.default_rng(3)
    crossover(layout, layout.padded(2), np.array([0, 1, 0]), np.array([1, 0, 1]), rng)
    expected = np.random.default_rng(3)
    for shape in ((3, 10), (3, 10), (3, 8)):
        expected.random(shape)
    assert rng.random() == expected.random()
