"""mu+lambda's variation operators, checked on what they produce: a crossover child mixes two
different parents, and mutation hits each gene with the probability its strategy gene encodes
(2 ** (gene - 3)) with the step size 2 ** (other gene). Each test fails if the operator is
changed: a parent crossed with itself, or a mutation rate off by a power of two."""

from __future__ import annotations

import numpy as np
import pytest

from evo_core.optimizers.mu_lambda import MuLambda, MuLambdaConfig


def offspring(optimizer: MuLambda) -> np.ndarray:
    """The brain genes of the offspring of one `ask` (parents come first: they are
    re-evaluated)."""
    children: np.ndarray = optimizer.ask()[optimizer.mu:]
    return children


@pytest.mark.parametrize("per_gene", [False, True])
def test_a_crossover_child_mixes_two_different_parents(per_gene: bool) -> None:
    genes, mu = 12, 6
    optimizer = MuLambda(MuLambdaConfig(population_size=200, mu=mu, mutpb=0.0,
                                        strategy_parameter_per_gene=per_gene),
                         genes, np.random.default_rng(3))
    width = optimizer.parents.shape[1]
    # parent i holds the value i in every gene: a child's values say which parents it mixes
    optimizer.load_state({"parents": np.repeat(np.arange(mu, dtype=np.float64)[:, None],
                                               width, axis=1)})
    # the whole genomes, strategy genes included: a crossover point may fall among them
    children = optimizer._offspring()
    assert children.shape == (200, width)
    for child in children:
        values = np.unique(child)
        assert len(values) == 2, f"a crossover child of one parent only: {child}"
        assert set(values) <= set(range(mu))
        # the first gene is the first parent's, and what follows is one or two segments
        assert np.count_nonzero(np.diff(child)) in (1, 2)
    # every parent is crossed with every other, not with a fixed partner
    pairs = {tuple(np.unique(child)) for child in children}
    assert len(pairs) == mu * (mu - 1) // 2


@pytest.mark.parametrize("probability_gene, probability", [(0.0, 1 / 8), (-2.0, 1 / 32)])
def test_mutation_hits_genes_at_the_encoded_rate(probability_gene: float,
                                                 probability: float) -> None:
    genes, children = 4000, 20
    optimizer = MuLambda(MuLambdaConfig(population_size=children, mu=2, mutpb=1.0),
                         genes, np.random.default_rng(11))
    parents = np.zeros((2, genes + 2))
    parents[:, -2] = probability_gene  # log2 of the mutation probability, + 3
    parents[:, -1] = 0.0  # log2 sigma: steps of standard deviation 1
    optimizer.load_state({"parents": parents})
    changed = offspring(optimizer) != 0.0
    rate = changed.mean()
    # 80,000 genes: the binomial standard deviation is below 0.0012, so 0.25 * p is > 10 of them
    assert abs(rate - probability) < 0.25 * probability, rate
    steps = offspring_steps(optimizer, parents)
    assert 0.9 < steps.std() < 1.1


def offspring_steps(optimizer: MuLambda, parents: np.ndarray) -> np.ndarray:
    """The mutation steps of the genes that moved in a second generation from `parents`."""
    optimizer.load_state({"parents": parents})
    children = offspring(optimizer)
    steps: np.ndarray = children[children != 0.0]
    return steps


def test_per_gene_step_sizes_scale_the_steps() -> None:
    genes, children = 500, 40
    optimizer = MuLambda(MuLambdaConfig(population_size=children, mu=2, mutpb=1.0,
                                        strategy_parameter_per_gene=True),
                         genes, np.random.default_rng(5))
    parents = np.zeros((2, 2 * genes))
    parents[:, genes:] = -3.0  # every gene moves, by steps of standard deviation 1/8
    optimizer.load_state({"parents": parents})
    steps = offspring(optimizer)
    assert np.count_nonzero(steps) == steps.size
    assert 0.9 / 8 < steps.std() < 1.1 / 8
