"""The built-in optimizers and the hall of fame."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import legacy_key

from evo_core.errors import UserError
from evo_core.optimizers.cma_es import CMAES, CMAESConfig
from evo_core.optimizers.mu_lambda import MuLambda, MuLambdaConfig
from evo_core.results.hall_of_fame import HallOfFame


def sphere_fitness(genomes: np.ndarray) -> np.ndarray:
    fitness: np.ndarray = -np.sum((genomes - 1.5) ** 2, axis=1)
    return fitness


def run(optimizer, generations: int) -> list[float]:
    bests = []
    for _ in range(generations):
        genomes = optimizer.ask()
        assert genomes.flags.c_contiguous and genomes.dtype == np.float64
        fitness = sphere_fitness(genomes)
        optimizer.tell(fitness)
        bests.append(float(fitness.max()))
    return bests


def test_cma_es_is_seeded_by_the_generator_and_improves() -> None:
    state = np.random.get_state()
    config = CMAESConfig(population_size=10, sigma=0.5)
    a = run(CMAES(config, 8, np.random.default_rng(3)), 40)
    b = run(CMAES(config, 8, np.random.default_rng(3)), 40)
    c = run(CMAES(config, 8, np.random.default_rng(4)), 40)
    assert a == b and a != c
    assert a[-1] > -1e-2 and a[0] < -1
    assert np.array_equal(legacy_key(np.random.get_state()), legacy_key(state))


def test_cma_es_population_mu_and_diagonal() -> None:
    optimizer = CMAES(CMAESConfig(population_size=12, mu=3, diagonal=True), 5,
                      np.random.default_rng(0))
    assert optimizer.ask().shape == (12, 5)
    assert optimizer.es.sp.weights.mu == 3
    assert run(optimizer, 30)[-1] > -0.5


def test_cma_es_state_round_trip_continues_identically() -> None:
    config = CMAESConfig(population_size=6)
    a = CMAES(config, 4, np.random.default_rng(1))
    run(a, 5)
    b = CMAES(config, 4, np.random.default_rng(99))
    b.load_state(a.state())
    assert run(a, 5) == run(b, 5)


def test_cma_es_large_genomes() -> None:
    with pytest.warns(UserWarning, match="optimizer.diagonal = true"):
        CMAES(CMAESConfig(population_size=4), 3500, np.random.default_rng(0))
    with pytest.raises(UserError, match=r"set optimizer\.diagonal = true"):
        CMAES(CMAESConfig(population_size=4), 400_000, np.random.default_rng(0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        CMAES(CMAESConfig(population_size=4, diagonal=True), 400_000, np.random.default_rng(0))


@pytest.mark.parametrize("per_gene", [False, True])
@pytest.mark.parametrize("tournsize", [0, 3])
def test_mu_lambda_improves_and_is_deterministic(per_gene: bool, tournsize: int) -> None:
    config = MuLambdaConfig(population_size=30, mu=10, tournsize=tournsize,
                            strategy_parameter_per_gene=per_gene, initial_gene_range=2.0)
    a = run(MuLambda(config, 6, np.random.default_rng(5)), 40)
    b = run(MuLambda(config, 6, np.random.default_rng(5)), 40)
    assert a == b
    assert max(a[-5:]) > a[0] + 1.0


def test_mu_lambda_genomes_carry_strategy_genes() -> None:
    rng = np.random.default_rng(0)
    two = MuLambda(MuLambdaConfig(population_size=8, mu=4), 5, rng)
    assert two.parents.shape == (4, 7) and two.ask().shape == (12, 5)  # parents + offspring
    per_gene = MuLambda(MuLambdaConfig(population_size=8, mu=4,
                                       strategy_parameter_per_gene=True), 5, rng)
    assert per_gene.parents.shape == (4, 10)


def test_mu_lambda_without_parent_reevaluation_keeps_parent_fitness() -> None:
    optimizer = MuLambda(MuLambdaConfig(population_size=6, mu=3, reevaluate_parents=False), 2,
                         np.random.default_rng(0))
    first = optimizer.ask()
    assert len(first) == 9  # parents have no fitness yet
    optimizer.tell(sphere_fitness(first))
    second = optimizer.ask()
    assert len(second) == 6
    optimizer.tell(sphere_fitness(second))
    assert optimizer.parent_fitness is not None
    best_so_far = max(sphere_fitness(first).max(), sphere_fitness(second).max())
    assert np.max(optimizer.parent_fitness) == best_so_far


def test_mu_lambda_truncation_keeps_the_best() -> None:
    optimizer = MuLambda(MuLambdaConfig(population_size=4, mu=2, mutpb=1.0), 3,
                         np.random.default_rng(0))
    genomes = optimizer.ask()
    fitness = np.arange(len(genomes), dtype=float)
    optimizer.tell(fitness)
    assert optimizer.parent_fitness is not None
    assert np.array_equal(optimizer.parent_fitness, [5.0, 4.0])


def test_mu_lambda_crossover_takes_a_contiguous_segment() -> None:
    optimizer = MuLambda(MuLambdaConfig(population_size=4, mu=2), 10, np.random.default_rng(0))
    masks = optimizer._crossover_masks(500, 12)
    for mask in masks:
        changes = np.flatnonzero(np.diff(mask.astype(int)))
        assert mask.any() and not mask[0] and len(changes) in (1, 2)


def test_hall_of_fame_ranks_by_raw_fitness_and_keeps_distinct_genomes() -> None:
    hof = HallOfFame(3, 2)
    hof.update(np.array([[0.0, 0], [1, 1], [2, 2]]), np.array([1.0, 5.0, 3.0]), 1)
    hof.update(np.array([[1.0, 1], [3, 3], [4, 4]]), np.array([5.0, 4.0, np.nan]), 2)
    assert np.array_equal(hof.fitness, [5.0, 4.0, 3.0])
    assert np.array_equal(hof.genomes, [[1, 1], [3, 3], [2, 2]])
    assert np.array_equal(hof.generation, [1, 2, 1])
