"""The NEAT optimizer (`type = "neat"`, Stanley & Miikkulainen 2002): ask hands out the
population, tell speciates, shares fitness and breeds the next one.

It reads the brain's genome layout (`evo_neat.genome.NEATLayout`) through the core's
`ILayoutOptimizerClass`/`IGenomeLayoutTemplate` pairing, which refuses it with any other brain
and the NEAT brain with any other optimizer. Its whole state is arrays and integers (the
population, each genome's species, the species' records, the historical counters and the
threshold), so a checkpoint holds nothing pickled and a resumed run breeds exactly the
generations an uninterrupted one would: its random draws come only from the run's optimizer
stream, which evo checkpoints with it.

One generation's `tell`, in order (each step a function of arrays; loops are over species):
1. each species' best fitness and stagnation (no improvement for `stagnation` generations; the
   `species_elitism` best species exempt); when the population's best has not improved for
   `population_stagnation` generations, only the two best species breed, once;
2. explicit fitness sharing: a genome's adjusted fitness is its fitness over its species' size
   (fitness shifted to start at 0 when some are negative), and each breeding species gets
   children in proportion to its adjusted fitnesses' sum (`species.allocate`);
3. per species: the champion copied unchanged when the species has more than
   `elitism_species_size` members, and the population's champion always; the other children
   from the best `survival_threshold` share: `mutate_only` of them mutated copies, the rest
   crossovers (the second parent from any species with probability `interspecies`), of which
   `mate_only` are not mutated;
4. mutation (`evo_neat.mutation`): add-node, add-connection, weights and biases;
5. speciation of the children against a random member of each species of this generation
   (`species.speciate`), and the threshold's step towards `target_species` when it is set.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from evo_core import OptimizerConfig, memory_shortfall
from evo_neat.config import NEATOptimizerConfig
from evo_neat.crossover import crossover
from evo_neat.distance import compatibility
from evo_neat.genome import NEATLayout, Tables
from evo_neat.mutation import Counters, grow, mutate_values
from evo_neat.species import Distances, allocate, speciate

__all__ = ["NEAT"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: The integer and float counters of the state
SCALARS = ("generation", "node_counter", "innovation_counter", "next_species",
           "best_improved")


class NEAT:
    """NEAT over the genome tables of the NEAT brain."""

    config_model: ClassVar[type[OptimizerConfig]] = NEATOptimizerConfig
    layout_type: ClassVar[type[Any]] = NEATLayout

    def __init__(self, config: NEATOptimizerConfig, genome_size: int, rng: np.random.Generator,
                 /, *, layout: NEATLayout) -> None:
        if layout.tables.size != genome_size:
            raise ValueError(f"the brain's genome has {genome_size} genes and its layout "
                             f"{layout.tables.size}: a bug in the brain plugin")
        count, nodes = config.population_size, layout.tables.max_nodes
        # the population, its children and their tables, and the batch's weight matrices
        needed = count * (4 * 8 * genome_size + 8 * nodes * nodes)
        shortfall = memory_shortfall(needed, f"for {count} genomes of {genome_size} genes "
                                     f"and their {nodes} x {nodes} weight matrices")
        if shortfall is not None:
            raise ValueError(f"population_size = {count} {shortfall}; lower population_size "
                             "or brain.max_nodes / brain.max_conns")
        self.config, self.layout, self.rng = config, layout, rng
        tables = layout.first_generation(count)
        links = tables.connections["innovation"] >= 0
        spread = config.initial_weight_range
        tables.connections["weight"] = np.where(
            links, rng.uniform(-spread, spread, links.shape), 0.0)
        outputs = slice(layout.inputs, layout.inputs + layout.outputs)
        tables.nodes["bias"][:, outputs] = rng.uniform(-spread, spread, (count, layout.outputs))
        self.population = layout.tables.encode(tables)
        self.generation = 0
        self.node_counter = layout.inputs + layout.outputs
        self.innovation_counter = layout.inputs * layout.outputs
        self.threshold = config.compatibility_threshold
        self.best_ever = -np.inf
        self.best_improved = 0
        connections = layout.tables.decode(np, self.population).connections
        first = speciate(count, [], lambda row: self._distances(connections, connections, row),
                         self.threshold, 0)
        self.species = first.species
        self.next_species = first.next_id
        self.species_ids = np.unique(self.species)
        self.species_best = np.full(len(self.species_ids), -np.inf)
        self.species_improved = np.zeros(len(self.species_ids), dtype=np.int64)

    # -- ask / tell ---------------------------------------------------------------------------

    def ask(self) -> FloatArray:
        return self.population.copy()

    def tell(self, fitnesses: FloatArray) -> None:
        fitness = _finite(np.asarray(fitnesses, dtype=np.float64))
        config, count = self.config, self.config.population_size
        members = np.searchsorted(self.species_ids, self.species)   # each genome's record
        best = np.full(len(self.species_ids), -np.inf)
        np.maximum.at(best, members, fitness)
        improved = best > self.species_best
        self.species_best = np.where(improved, best, self.species_best)
        self.species_improved = np.where(improved, self.generation, self.species_improved)
        breeding = self._breeding(best)
        sizes = np.bincount(members, minlength=len(self.species_ids))
        shifted = fitness - min(float(np.min(fitness)), 0.0)
        adjusted = np.bincount(members, shifted / sizes[members], len(self.species_ids))
        champion = int(np.argmax(fitness))
        children = allocate(np.where(breeding, adjusted, 0.0), count)
        children = _at_least_one(children, members[champion])

        order = np.lexsort((np.arange(count), -fitness, members))  # by species, best first
        starts = np.searchsorted(members[order], np.arange(len(self.species_ids)))
        elites = (children > 0) & (sizes > config.elitism_species_size)
        elites[members[champion]] = children[members[champion]] > 0
        elite_rows = order[starts[elites]]
        bred = children - elites
        pools = np.minimum(sizes, np.maximum(np.ceil(config.survival_threshold * sizes),
                                             np.minimum(2, sizes))).astype(np.int64)
        tables, mutated = self._breed(fitness, order, starts, pools, bred)
        tables, counters = grow(self.layout, config, tables, mutated,
                                Counters(self.node_counter, self.innovation_counter), self.rng)
        tables = mutate_values(self.layout, config, tables, mutated, self.rng)
        children_genomes = self.layout.tables.encode(tables)
        population = np.concatenate([self.population[elite_rows], children_genomes])
        self.node_counter, self.innovation_counter = counters
        self._speciate(population, members, sizes)
        self.population = np.ascontiguousarray(population)
        self.generation += 1

    def _breeding(self, best: FloatArray) -> NDArray[np.bool_]:
        """The species that have children this generation: not stagnant (the best
        `species_elitism` exempt), or only the best two after the population stagnated."""
        config = self.config
        ranked = np.argsort(-best, kind="stable")
        protected = np.zeros(len(best), dtype=bool)
        protected[ranked[:config.species_elitism]] = True
        breeding = (self.generation - self.species_improved < config.stagnation) | protected
        if np.max(best) > self.best_ever:
            self.best_ever, self.best_improved = float(np.max(best)), self.generation
        if (config.population_stagnation
                and self.generation - self.best_improved >= config.population_stagnation):
            breeding = np.zeros(len(best), dtype=bool)
            breeding[ranked[:2]] = True
            self.best_improved = self.generation
        if not breeding.any():
            breeding[ranked[0]] = True
        return breeding

    def _breed(self, fitness: FloatArray, order: IntArray, starts: IntArray, pools: IntArray,
               bred: IntArray) -> tuple[Tables, NDArray[np.bool_]]:
        """The children that are not elites: their tables and which of them to mutate."""
        config, layout = self.config, self.layout.tables
        species = np.repeat(np.arange(len(bred)), bred)
        total = len(species)
        # every draw is made for every child, whatever it turns out to be
        clone = self.rng.random(total) < config.mutate_only
        mate_only = self.rng.random(total) < config.mate_only
        anywhere = self.rng.random(total) < config.interspecies
        first = order[starts[species] + (self.rng.random(total) * pools[species]).astype(
            np.int64)]
        second = order[starts[species] + (self.rng.random(total) * pools[species]).astype(
            np.int64)]
        # a second parent from any species: from the whole population's parent pools
        in_pool = np.concatenate([order[start:start + pool] for start, pool
                                  in zip(starts, pools, strict=True)])
        second = np.where(anywhere, in_pool[self.rng.integers(0, len(in_pool), total)], second)
        clone |= first == second
        fitter = np.where(fitness[second] > fitness[first], second, first)
        other = np.where(fitter == first, second, first)
        parents = layout.decode(np, self.population)
        mated = crossover(layout, parents, fitter, other, self.rng, config.disabled_rate)
        copied = Tables({name: column[first] for name, column in parents.nodes.items()},
                        {name: column[first] for name, column in parents.connections.items()})
        tables = Tables(
            {name: np.where(clone[:, None], copied.nodes[name], mated.nodes[name])
             for name in mated.nodes},
            {name: np.where(clone[:, None], copied.connections[name], mated.connections[name])
             for name in mated.connections})
        return tables, clone | ~mate_only

    def _speciate(self, population: FloatArray, members: IntArray, sizes: IntArray) -> None:
        """The new population's species: each living species represented by a random member
        of this generation, in id order; the records of species left empty dropped, new ones
        started; then the threshold's step towards `target_species`."""
        picks = (self.rng.random(len(sizes)) * sizes).astype(np.int64)
        order = np.argsort(members, kind="stable")
        starts = np.searchsorted(members[order], np.arange(len(sizes)))
        old = self.layout.tables.decode(np, self.population).connections
        new = self.layout.tables.decode(np, population).connections

        representatives = [(int(identity), self._distances(new, old, int(order[start + pick])))
                           for identity, start, pick
                           in zip(self.species_ids, starts, picks, strict=True)]
        result = speciate(len(population), representatives,
                          lambda row: self._distances(new, new, row), self.threshold,
                          self.next_species)
        ids = np.unique(result.species)
        known = np.isin(ids, self.species_ids)
        record = np.searchsorted(self.species_ids, ids).clip(0, len(self.species_ids) - 1)
        self.species_best = np.where(known, self.species_best[record], -np.inf)
        self.species_improved = np.where(known, self.species_improved[record],
                                         self.generation + 1)
        self.species_ids, self.species, self.next_species = ids, result.species, result.next_id
        target = self.config.target_species
        if target:
            step = self.config.threshold_step * np.sign(len(ids) - target)
            self.threshold = max(self.config.threshold_floor, self.threshold + step)

    def _distances(self, genomes: dict[str, Any], others: dict[str, Any], row: int
                   ) -> Distances:
        """The distances of some of `genomes` (connection columns) to row `row` of
        `others`: `species.speciate`'s measure."""
        config = self.config
        innovation, weight = others["innovation"][row:row + 1], others["weight"][row:row + 1]

        def measured(rows: IntArray) -> FloatArray:
            return compatibility(genomes["innovation"][rows], genomes["weight"][rows],
                                 innovation, weight, excess=config.excess_coefficient,
                                 disjoint=config.disjoint_coefficient,
                                 weight=config.weight_coefficient,
                                 small_genome=config.small_genome)
        return measured

    # -- checkpoints --------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        # a species that never scored (-inf) is kept as the lowest finite float: checkpoints
        # hold finite arrays
        state: dict[str, Any] = {"population": self.population.copy(),
                                 "species": self.species.copy(),
                                 "species_ids": self.species_ids.copy(),
                                 "species_best": np.where(np.isfinite(self.species_best),
                                                          self.species_best,
                                                          np.finfo(np.float64).min),
                                 "species_improved": self.species_improved.copy(),
                                 "threshold": float(self.threshold),
                                 "best_ever": float(self.best_ever)
                                 if np.isfinite(self.best_ever) else None}
        for name in SCALARS:
            state[name] = int(getattr(self, name))
        return state

    def load_state(self, state: dict[str, Any]) -> None:
        """Raises KeyError or ValueError (naming the field) on anything `state` did not
        write: a population of another shape or with non-finite genes, species that are not
        the records' ids, counters that are not non-negative integers."""
        population = np.asarray(state["population"])
        if population.shape != self.population.shape or population.dtype.kind != "f" or \
                not np.isfinite(population).all():
            raise ValueError(f"optimizer.population: {population.shape} {population.dtype}, "
                             f"not the finite {self.population.shape} float64 population")
        ids = _integers(state["species_ids"], "species_ids", None)
        if len(ids) == 0 or (np.diff(ids) <= 0).any():
            raise ValueError("optimizer.species_ids: not increasing species ids")
        species = _integers(state["species"], "species", len(population))
        if not np.isin(species, ids).all() or not np.isin(ids, species).all():
            raise ValueError("optimizer.species: genomes of species without a record, or "
                             "records without genomes")
        best = np.asarray(state["species_best"])
        improved = _integers(state["species_improved"], "species_improved", len(ids))
        if best.shape != ids.shape or best.dtype.kind != "f" or not np.isfinite(best).all():
            raise ValueError("optimizer.species_best: not one finite value per species")
        scalars = {name: state[name] for name in SCALARS}
        for name, value in scalars.items():
            if not isinstance(value, int | np.integer) or isinstance(value, bool) or value < 0:
                raise ValueError(f"optimizer.{name}: {value!r} is not a non-negative integer")
        threshold, best_ever = state["threshold"], state["best_ever"]
        if not isinstance(threshold, float | int) or not np.isfinite(threshold) or threshold <= 0:
            raise ValueError(f"optimizer.threshold: {threshold!r} is not a positive number")
        if best_ever is not None and (not isinstance(best_ever, float | int)
                                      or not np.isfinite(best_ever)):
            raise ValueError(f"optimizer.best_ever: {best_ever!r} is not a number")
        self.population = np.ascontiguousarray(population, dtype=np.float64)
        self.species, self.species_ids, self.species_improved = species, ids, improved
        self.species_best = np.where(best <= np.finfo(np.float64).min, -np.inf, best)
        for name, value in scalars.items():
            setattr(self, name, int(value))
        self.threshold = float(threshold)
        self.best_ever = -np.inf if best_ever is None else float(best_ever)


def _integers(values: Any, name: str, length: int | None) -> IntArray:
    array = np.asarray(values)
    if array.ndim != 1 or (length is not None and len(array) != length) or \
            array.dtype.kind not in "iu" or (array < 0).any():
        raise ValueError(f"optimizer.{name}: not {length or 'a list of'} non-negative integers")
    return array.astype(np.int64)


def _finite(fitness: FloatArray) -> FloatArray:
    """NaN and -inf as the worst finite fitness told (a genome evo could not score breeds
    last); +inf as the best finite one."""
    finite = np.isfinite(fitness)
    if not finite.any():
        return np.zeros_like(fitness)
    return np.nan_to_num(fitness, nan=np.min(fitness[finite]), neginf=np.min(fitness[finite]),
                         posinf=np.max(fitness[finite]))


def _at_least_one(children: IntArray, species: int) -> IntArray:
    """The champion's species gets a child (its champion, copied), taken from the species
    with the most."""
    if children[species] > 0:
        return children
    children = children.copy()
    children[int(np.argmax(children))] -= 1
    children[species] += 1
    return children
