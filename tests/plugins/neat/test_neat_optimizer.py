"""The NEAT optimizer: the paper's generation (speciation, sharing, elitism, stagnation,
structural mutations with markings de-duplicated in a generation), exact state, and the
core's pairing of a layout brain with the optimizer that reads it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import evo_in_process

from evo_neat.config import NEATConfig, NEATOptimizerConfig
from evo_neat.mutation import reachable
from evo_neat.optimizer import NEAT
from evo_neat.species import allocate, speciate
from evo_neat.template import NEATTemplate

PATTERNS = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
TARGETS = np.array([0.0, 1.0, 1.0, 0.0])


def xor_template(**options: Any) -> NEATTemplate:
    options = {"max_nodes": 10, "max_conns": 30, "network": "feedforward",
               "outputs": "signed", **options}
    return NEATTemplate(NEATConfig(**options), gym.spaces.Box(0.0, 1.0, (2,)),
                        gym.spaces.Box(0.0, 1.0, (1,)), np.random.default_rng(0))


def xor_outputs(template: NEATTemplate, genomes: np.ndarray) -> np.ndarray:
    """Each genome's output for the four patterns (genomes x 4), through the brain's own
    functions (the batch evo's batched modes derive from them)."""
    params = template.params(np, genomes)
    state = template.initial_state(np, params)
    outputs = []
    for pattern in PATTERNS:
        state, out = template.forward(np, params, state, np.tile(pattern, (len(genomes), 1)),
                                      None)
        outputs.append(out[:, 0])
    return np.stack(outputs, axis=1)


def xor_fitness(template: NEATTemplate, genomes: np.ndarray) -> np.ndarray:
    """The paper's XOR fitness: (4 - the summed distance to the answers) squared."""
    fitness: np.ndarray = (4.0 - np.abs(xor_outputs(template, genomes) - TARGETS).sum(axis=1)
                           ) ** 2
    return fitness


def optimizer(template: NEATTemplate, seed: int = 0, **options: Any) -> NEAT:
    config = NEATOptimizerConfig(**options)
    return NEAT(config, template.genome_size, np.random.default_rng(seed),
                layout=template.genome_layout)


def solve_xor(seed: int, generations: int = 150) -> int | None:
    """The generation at which a population of 150 first holds a network that answers all
    four patterns on the right side of 0.5 (None: not within `generations`)."""
    template = xor_template()
    neat = optimizer(template, seed)
    for generation in range(generations):
        genomes = neat.ask()
        if ((xor_outputs(template, genomes) > 0.5) == (TARGETS > 0.5)).all(axis=1).any():
            return generation
        neat.tell(xor_fitness(template, genomes))
    return None


def test_neat_solves_xor() -> None:
    """The paper's first test: NEAT finds XOR (a hidden node is needed) in an average of 32
    generations of 150. Two seeds within 150 generations; a NEAT that cannot add a node, or
    breeds at random, does not."""
    solved = [solve_xor(seed) for seed in (1, 2)]
    assert all(generation is not None for generation in solved), solved


def run(neat: NEAT, template: NEATTemplate, generations: int) -> list[np.ndarray]:
    populations = []
    for _ in range(generations):
        genomes = neat.ask()
        populations.append(genomes)
        neat.tell(xor_fitness(template, genomes))
    return populations


def test_state_then_load_state_breeds_the_same_generations() -> None:
    """The state is arrays and integers (what a checkpoint holds: it survives JSON for the
    scalars), and an optimizer given it and the stream's state breeds exactly the same
    generations as the one that kept going."""
    template = xor_template()
    kept = optimizer(template, seed=5, add_node=0.2, add_connection=0.3)
    run(kept, template, 6)
    state, stream = kept.state(), copy.deepcopy(kept.rng.bit_generator.state)
    scalars = {name: value for name, value in state.items() if not isinstance(value, np.ndarray)}
    assert json.loads(json.dumps(scalars)) == scalars
    resumed = optimizer(template, seed=99, add_node=0.2, add_connection=0.3)
    resumed.load_state({name: (np.array(value) if isinstance(value, np.ndarray) else value)
                        for name, value in state.items()})
    resumed.rng.bit_generator.state = stream
    for left, right in zip(run(kept, template, 6), run(resumed, template, 6), strict=True):
        np.testing.assert_array_equal(left, right)
    assert kept.state()["innovation_counter"] > template.genome_layout.inputs  # it grew


def test_the_champion_is_copied_unchanged_and_the_population_keeps_its_size() -> None:
    template = xor_template()
    neat = optimizer(template, seed=3, population_size=40)
    for _ in range(5):
        genomes = neat.ask()
        fitness = xor_fitness(template, genomes)
        neat.tell(fitness)
        after = neat.ask()
        assert after.shape == genomes.shape
        assert (after == genomes[np.argmax(fitness)]).all(axis=1).any()


def test_the_same_new_link_in_one_generation_has_one_innovation_number() -> None:
    """Every marking made in a generation names one structure: the same (source, target)
    added, or the same connection split, in several children gets the same number."""
    template = xor_template(max_nodes=12, max_conns=40)
    neat = optimizer(template, seed=2, add_node=0.5, add_connection=0.8)
    layout = template.genome_layout.tables
    for _ in range(4):
        before = neat.state()["innovation_counter"]
        genomes = neat.ask()
        neat.tell(xor_fitness(template, genomes))
        connections = layout.decode(np, neat.ask()).connections
        new = connections["innovation"] >= before
        pairs = np.stack([connections["source"][new], connections["target"][new]], axis=1)
        markings = connections["innovation"][new]
        assert len(markings) > 3   # structure was added
        by_marking: dict[float, set[tuple[float, ...]]] = {m: set() for m in markings.tolist()}
        for marking, pair in zip(markings.tolist(), map(tuple, pairs.tolist()), strict=True):
            by_marking[marking].add(pair)
        assert all(len(found) == 1 for found in by_marking.values())
        # and one marking per pair: no structure numbered twice in this generation
        assert len({pair for found in by_marking.values() for pair in found}) == len(by_marking)


def test_feedforward_networks_never_gain_a_cycle() -> None:
    template = xor_template(max_nodes=10, max_conns=40)
    neat = optimizer(template, seed=4, add_node=0.3, add_connection=0.9)
    layout = template.genome_layout.tables
    for _ in range(8):
        neat.tell(xor_fitness(template, neat.ask()))
    tables = layout.decode(np, neat.ask())
    keys = np.rint(tables.nodes["key"])
    present = tables.connections["innovation"] >= 0
    source = (np.rint(tables.connections["source"])[:, :, None] == keys[:, None, :])
    target = (np.rint(tables.connections["target"])[:, :, None] == keys[:, None, :])
    adjacency = np.einsum("gct,gcs->gts", target & present[:, :, None],
                          source & present[:, :, None]) > 0
    assert present.sum() > 5 * len(keys)   # links were added
    assert not np.diagonal(reachable(adjacency), axis1=1, axis2=2).any()


def test_recurrent_networks_may_gain_cycles() -> None:
    """The control of the test above: without network = "feedforward" links close cycles."""
    template = xor_template(max_nodes=10, max_conns=40, network="recurrent")
    neat = optimizer(template, seed=4, add_node=0.3, add_connection=0.9)
    for _ in range(8):
        neat.tell(xor_fitness(template, neat.ask()))
    tables = template.genome_layout.tables.decode(np, neat.ask())
    assert (np.rint(tables.connections["source"]) == np.rint(tables.connections["target"])
            )[tables.connections["innovation"] >= 0].any()


def test_a_stagnant_species_has_no_children_and_the_best_species_is_kept() -> None:
    template = xor_template()
    neat = optimizer(template, seed=1, stagnation=3, population_stagnation=0)
    neat.species_ids = np.array([0, 1, 2])
    neat.species_improved = np.array([0, 0, 9])
    neat.generation = 10
    neat.best_ever = 100.0
    breeding = neat._breeding(np.array([5.0, 1.0, 2.0]))
    assert breeding.tolist() == [True, False, True]   # 0 stagnant but the best


def test_after_the_population_stagnates_only_the_two_best_species_breed() -> None:
    template = xor_template()
    neat = optimizer(template, seed=1, population_stagnation=20)
    neat.species_improved = np.array([29, 29, 29, 29])
    neat.generation, neat.best_ever, neat.best_improved = 30, 10.0, 10
    breeding = neat._breeding(np.array([1.0, 4.0, 3.0, 2.0]))
    assert breeding.tolist() == [False, True, True, False]
    assert neat.best_improved == 30   # once: the count starts again


def test_a_genome_joins_the_first_compatible_species_not_the_closest() -> None:
    """Genome 0 is closer to species 1's representative but compatible with species 0's,
    so it joins species 0 (the paper; neat-python takes the closest); genomes 2 and 3 fit
    none and found species 7 and 8."""
    distances = {0: np.array([2.0, 0.5, 9.0, 9.0]), 1: np.array([0.1, 0.1, 9.0, 9.0])}
    to_member = {2: np.array([9.0, 9.0, 0.0, 9.0]), 3: np.array([9.0, 9.0, 9.0, 0.0])}

    def measure(table: dict[int, np.ndarray], key: int) -> Any:
        return lambda rows: table[key][rows]

    result = speciate(4, [(0, measure(distances, 0)), (1, measure(distances, 1))],
                      lambda row: measure(to_member, row), threshold=3.0, next_id=7)
    assert result.species.tolist() == [0, 0, 7, 8] and result.next_id == 9


@pytest.mark.parametrize("shares,total,expected", [
    ([1.0, 1.0, 2.0], 8, [2, 2, 4]), ([1.0, 1.0, 1.0], 10, [4, 3, 3]),
    ([0.0, 3.0], 5, [0, 5]), ([0.0, 0.0], 3, [2, 1])])
def test_children_are_allocated_in_proportion_to_the_shares(shares: list[float], total: int,
                                                             expected: list[int]) -> None:
    assert allocate(np.array(shares), total).tolist() == expected


def test_fitness_sharing_gives_a_crowded_species_no_more_than_its_mean() -> None:
    """Explicit sharing: a species' children follow its members' mean fitness, not their
    number, so a big species of mediocre genomes does not take over. Sixteen genomes of
    fitness 1 in one species and four of fitness 2 in another: the small species has 13 of
    the 20 children (1 : 2; without sharing it would have 7)."""
    template = xor_template()
    neat = optimizer(template, seed=1, population_size=20, stagnation=100,
                     elitism_species_size=100)
    neat.species = np.array([0] * 16 + [1] * 4)
    neat.species_ids = np.array([0, 1])
    neat.species_best = np.full(2, -np.inf)
    neat.species_improved = np.zeros(2, dtype=np.int64)
    neat.threshold = 1e9   # everything the children are joins the first species they meet
    parents = neat.ask()
    children: dict[int, int] = {}
    captured = neat._breed
    def spy(fitness: Any, order: Any, starts: Any, pools: Any, bred: Any) -> Any:
        children.update(enumerate(bred.tolist()))
        return captured(fitness, order, starts, pools, bred)
    neat._breed = spy  # type: ignore[method-assign]
    neat.tell(np.array([1.0] * 16 + [2.0] * 4))
    # 7 and 13; the champion (of species 1) is copied, so 12 of species 1's are bred
    assert children == {0: 7, 1: 12}
    assert parents.shape == neat.ask().shape


EDITS = {
    "population shape": lambda s: s.update(population=s["population"][:-1]),
    "population NaN": lambda s: s["population"].__setitem__((0, 0), np.nan),
    "species unknown": lambda s: s["species"].__setitem__(0, 999),
    "species ids unsorted": lambda s: s.update(species_ids=s["species_ids"][::-1].copy())
    if len(s["species_ids"]) > 1 else s.update(species_ids=np.array([0, 0])),
    "counter negative": lambda s: s.update(node_counter=-1),
    "counter a float": lambda s: s.update(generation=1.5),
    "threshold zero": lambda s: s.update(threshold=0.0),
    "best a string": lambda s: s.update(species_best=np.array(["x"] * len(s["species_ids"]))),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_state_it_did_not_write_is_refused_naming_the_field(edit: str) -> None:
    template = xor_template()
    neat = optimizer(template, seed=1)
    run(neat, template, 2)
    state = neat.state()
    EDITS[edit](state)
    fresh = optimizer(template, seed=1)
    with pytest.raises((ValueError, KeyError)) as raised:
        fresh.load_state(state)
    assert "optimizer." in str(raised.value) or isinstance(raised.value, KeyError)


@pytest.mark.parametrize("brain,optimizer_type,says", [
    ("neat", "cma-es", "brain 'neat' has a NEATLayout genome"),
    ("ffnn", "neat", "optimizer 'neat' searches over a NEATLayout genome")])
def test_a_layout_brain_and_its_optimizer_come_only_together(tmp_path: Path, brain: str,
                                                            optimizer_type: str,
                                                            says: str) -> None:
    config = tmp_path / "c.toml"
    config.write_text(f'environment = "CartPole-v1"\ngenerations = 1\n[brain]\ntype = '
                      f'"{brain}"\n[optimizer]\ntype = "{optimizer_type}"\n'
                      'population_size = 4\n')
    result = evo_in_process("train", str(config), "--out", str(tmp_path / "run"))
    assert result.returncode != 0
    assert says in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_a_population_that_cannot_fit_in_memory_is_one_line(tmp_path: Path) -> None:
    """20,000 genomes of 4,096 nodes: their weight matrices alone are 2.7 TB."""
    config = tmp_path / "c.toml"
    config.write_text('environment = "CartPole-v1"\ngenerations = 1\n[brain]\ntype = "neat"\n'
                      'max_nodes = 4096\nmax_conns = 8\n[optimizer]\ntype = "neat"\n'
                      'population_size = 20000\n')
    result = evo_in_process("train", str(config), "--out", str(tmp_path / "run"))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "population_size = 20000 needs about" in result.stderr
    assert not (tmp_path / "run").exists()


def test_the_threshold_moves_towards_the_target_number_of_species() -> None:
    """target_species > 0: too many species raise the threshold by threshold_step each
    generation, too few lower it (never below the floor); 0 leaves it fixed."""
    template = xor_template()
    crowded = optimizer(template, seed=1, compatibility_threshold=0.5, target_species=1,
                        add_node=0.3, add_connection=0.5)
    fixed = optimizer(template, seed=1, compatibility_threshold=0.5, add_node=0.3,
                      add_connection=0.5)
    run(crowded, template, 3)
    run(fixed, template, 3)
    assert fixed.threshold == 0.5
    assert crowded.threshold == pytest.approx(0.5 + 3 * 0.3)   # more than one species each time
    lonely = optimizer(template, seed=1, compatibility_threshold=1.0, target_species=150,
                       threshold_step=0.4, threshold_floor=0.3)
    run(lonely, template, 3)
    assert lonely.threshold == pytest.approx(0.3)   # 1.0 -> 0.6 -> 0.3 (floor) -> 0.3


def test_ctrnn_nodes_evolve_their_time_constants() -> None:
    """brain.tau > 0: nodes start with it (new ones too) and the optimizer moves it
    log-normally, so it stays positive; with tau = 0 every node stays plain."""
    ctrnn = xor_template(tau=2.0, network="recurrent")
    neat = optimizer(ctrnn, seed=6, add_node=0.5, tau_mutation=0.5)
    layout = ctrnn.genome_layout
    acting = slice(layout.inputs, None)
    first = layout.tables.decode(np, neat.ask()).nodes
    assert (first["tau"][:, acting][first["used"][:, acting] > 0.5] == 2.0).all()
    run(neat, ctrnn, 4)
    nodes = layout.tables.decode(np, neat.ask()).nodes
    taus = nodes["tau"][:, acting][nodes["used"][:, acting] > 0.5]
    assert (taus > 0).all() and (taus != 2.0).any() and (nodes["kind"] == 1).any()
    assert (nodes["tau"][:, :layout.inputs] == 0).all()   # inputs hold the observation
    plain = xor_template()
    flat = optimizer(plain, seed=6, add_node=0.5, tau_mutation=0.5)
    run(flat, plain, 4)
    assert (plain.genome_layout.tables.decode(np, flat.ask()).nodes["tau"] == 0).all()
