"""The predecessor's (mu + lambda) evolution strategy with self-adaptive mutation (see
docs/predecessor.md).

Each genome carries strategy genes (two for the whole genome, or one log2-step-size per gene)
that mutate with it, so the step sizes evolve. Offspring come from
mutation (probability `mutpb`) or otherwise from one- or two-point crossover of two parents;
parents and offspring compete for the `mu` places. Parents are re-evaluated every generation by
default, as in the predecessor, because fitness is noisy when episode seeds change.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field, model_validator

from evo_core.authoring.gene_limits import gene_limit, sampling_problem
from evo_core.contract.config_models import OptimizerConfig

__all__ = ["MuLambdaConfig", "MuLambda"]

FloatArray = NDArray[np.float64]

#: Two-gene scheme: [log2 of the mutation probability + 3, log2 sigma], clipped to this range.
TWO_GENE_RANGE = (-5.0, 3.0)
#: Per-gene scheme: each log2 sigma is clipped to this range.
PER_GENE_RANGE = (-6.0, 0.0)


class MuLambdaConfig(OptimizerConfig):
    """(mu + lambda) ES: self-adaptive mutation, crossover, tournament or truncation selection."""

    type: Literal["mu-lambda"] = "mu-lambda"
    population_size: int = Field(..., ge=2, description="lambda: offspring per generation.")
    mu: int | None = Field(None, ge=2, description="Parents kept per generation; unset: "
                           "population_size // 2.")
    mutpb: float = Field(0.8, ge=0, le=1, description="Probability that an offspring is a mutated "
                         "copy; otherwise it is a crossover child.")
    initial_gene_range: float = Field(1.0, gt=0, description="All genes, strategy genes "
                                      "included, start uniform in [-r, r].")
    tournsize: int = Field(0, ge=0, description="Tournament size for selection; 0: truncation "
                           "(the best mu).")
    strategy_parameter_per_gene: bool = Field(False, description="One step size per gene instead "
                                              "of two strategy genes for the whole genome.")
    reevaluate_parents: bool = Field(True, description="Evaluate parents again each generation "
                                     "(with that generation's episode seeds).")

    @model_validator(mode="after")
    def _mu_fits(self) -> MuLambdaConfig:
        if self.mu is not None and self.mu > self.population_size * 4:
            raise ValueError(f"mu ({self.mu}) is more than four times population_size "
                             f"({self.population_size}); raise population_size or lower mu")
        # genes start uniform in [-r, r]
        problem = sampling_problem("initial_gene_range", self.initial_gene_range, np.float64,
                                   deviations=1)
        if problem is not None:
            raise ValueError(problem)
        return self


class MuLambda:
    """Genomes internally carry strategy genes; `ask` hands out the brain genes only."""

    config_model: ClassVar[type[OptimizerConfig]] = MuLambdaConfig

    def __init__(self, config: MuLambdaConfig, genome_size: int, rng: np.random.Generator) -> None:
        self.config = config
        self.rng = rng
        self.genome_size = genome_size
        self.mu = config.mu or max(2, config.population_size // 2)
        self.lam = config.population_size
        strategy = genome_size if config.strategy_parameter_per_gene else 2
        r = config.initial_gene_range
        self.parents = rng.uniform(-r, r, size=(self.mu, genome_size + strategy))
        self.parent_fitness: FloatArray | None = None
        self._candidates: FloatArray | None = None

    def ask(self) -> FloatArray:
        offspring = self._offspring()
        with_parents = self.config.reevaluate_parents or self.parent_fitness is None
        self._candidates = np.concatenate([self.parents, offspring]) if with_parents else offspring
        return np.ascontiguousarray(self._candidates[:, :self.genome_size])

    def tell(self, fitnesses: FloatArray) -> None:
        if self._candidates is None:
            raise RuntimeError("tell() without ask()")
        fitness = np.asarray(fitnesses, dtype=np.float64)
        candidates = self._candidates
        if not (self.config.reevaluate_parents or len(candidates) > self.lam):
            assert self.parent_fitness is not None
            candidates = np.concatenate([self.parents, candidates])
            fitness = np.concatenate([self.parent_fitness, fitness])
        chosen = self._select(fitness)
        self.parents = candidates[chosen]
        self.parent_fitness = fitness[chosen]
        self._candidates = None

    def state(self) -> dict[str, Any]:
        state: dict[str, Any] = {"parents": self.parents}
        if self.parent_fitness is not None:
            state["parent_fitness"] = self.parent_fitness
        return state

    def load_state(self, state: dict[str, Any]) -> None:
        """Raises KeyError or ValueError (naming the field) on anything `state` did not write:
        parents of another shape than (mu, genes + strategy genes), or with genes beyond the
        gene limit (the config's bound on `initial_gene_range`; a mutation moves a gene by a
        few units); parent fitness of another length, or NaN."""
        parents = np.asarray(state["parents"])
        limit = gene_limit(np.float64)
        if parents.shape != self.parents.shape or parents.dtype.kind not in "fiu" or \
                not (np.abs(parents) <= limit).all():
            raise ValueError(f"optimizer.parents: {parents.shape} {parents.dtype}, not the "
                             f"{self.parents.shape} float64 matrix of {self.mu} parents "
                             f"within ±{limit:.3g} this optimizer keeps")
        fitness = state.get("parent_fitness")
        if fitness is not None:
            fitness = np.asarray(fitness)
            if fitness.shape != (self.mu,) or fitness.dtype.kind not in "fiu" or \
                    np.isnan(fitness).any():
                raise ValueError(f"optimizer.parent_fitness: {fitness.shape} {fitness.dtype}, "
                                 f"not {self.mu} fitness values")
        self.parents = np.array(parents, dtype=np.float64)
        self.parent_fitness = None if fitness is None else np.array(fitness, dtype=np.float64)
        self._candidates = None

    # ------------------------------------------------------------------ variation

    def _offspring(self) -> FloatArray:
        rng, lam, mu = self.rng, self.lam, self.mu
        first = rng.integers(mu, size=lam)
        second = (first + rng.integers(1, mu, size=lam)) % mu  # a different parent
        children = self.parents[first].copy()
        mutate = rng.random(lam) < self.config.mutpb
        if (~mutate).any():
            crossed = np.flatnonzero(~mutate)
            take = self._crossover_masks(len(crossed), children.shape[1])
            children[crossed] = np.where(take, self.parents[second[crossed]], children[crossed])
        if mutate.any():
            children[mutate] = self._mutate(children[mutate])
        return children

    def _crossover_masks(self, count: int, length: int) -> NDArray[np.bool_]:
        """Which genes each first child takes from its second parent (DEAP cxOnePoint and
        cxTwoPoint, chosen with equal probability)."""
        rng = self.rng
        positions = np.arange(length)
        one_point = rng.integers(1, length, size=count)
        a = rng.integers(1, length + 1, size=count)
        b = rng.integers(1, length, size=count)
        b = np.where(b >= a, b + 1, b)
        low, high = np.minimum(a, b), np.maximum(a, b)
        two = rng.random(count) < 0.5
        start = np.where(two, low, one_point)[:, None]
        stop = np.where(two, high, length)[:, None]
        result: NDArray[np.bool_] = (positions >= start) & (positions < stop)
        return result

    def _mutate(self, genomes: FloatArray) -> FloatArray:
        rng, n = self.rng, self.genome_size
        genomes = genomes.copy()
        if self.config.strategy_parameter_per_gene:
            genomes[:, n:] = np.clip(genomes[:, n:], *PER_GENE_RANGE)
            sigma = np.exp2(np.concatenate([genomes[:, n:], genomes[:, n:]], axis=1))
            mutated: FloatArray = genomes + rng.standard_normal(genomes.shape) * sigma
            return mutated
        genomes[:, -2:] = np.clip(genomes[:, -2:], *TWO_GENE_RANGE)
        indpb = np.exp2(genomes[:, -2] - 3.0)[:, None]
        sigma = np.exp2(genomes[:, -1])[:, None]
        hit = rng.random(genomes.shape) < indpb
        result: FloatArray = genomes + np.where(hit, rng.standard_normal(genomes.shape) * sigma,
                                                0.0)
        return result

    # ------------------------------------------------------------------ selection

    def _select(self, fitness: FloatArray) -> NDArray[np.intp]:
        order = np.argsort(-fitness, kind="stable")
        if self.config.tournsize == 0:
            return order[:self.mu]
        entrants = self.rng.integers(len(fitness), size=(self.mu, self.config.tournsize))
        winners = np.argmax(fitness[entrants], axis=1)
        chosen: NDArray[np.intp] = entrants[np.arange(self.mu), winners]
        return chosen
