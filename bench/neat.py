"""Evaluations to solve with NEAT: evo-neat beside the published NEAT figures and neat-python
2.0 on the same tasks, in the same run.

    OPENBLAS_NUM_THREADS=1 python bench/neat.py [--seeds 20] [--first-seed 1] [--workers 2]
        [--only with without xor] [--sides evo neat-python] [--budget 100000]
        [--population-without N] [--evo-config TASK=PATH ...] [--out DIR]

Tasks (`--only`), each an example config that both sides read:

- `with`: double pole with velocities, `examples/neat_double_pole.toml` (published: 3,600);
- `without`: double pole without velocities on Gruau's damping fitness,
  `examples/neat_double_pole_no_velocity.toml` (published: 6,929 in Gomez et al. 2008's table,
  the issue's goal; 33,184 in the NEAT paper with populations of 1,000). `--population-without`
  sets a smaller population on both sides;
- `xor`: `examples/neat_xor.toml` on evo/XOR-v0 (published: 4,755).

**evo-neat** trains the example through `evo_core.api.train` over seeds first-seed ..
first-seed + seeds - 1 (bench/_seeds.py, shared with bench/pole_balancing.py: its `[stop]`
table decides when a run is solved, evaluations counted to the end of the solving generation,
test episodes not counted; `--out DIR` keeps the runs, and running the command again continues
them exactly). `--evo-config TASK=PATH` trains another config for a task's evo side (a CMA-ES
one tests the harness before the NEAT optimizer exists).

**neat-python 2.0** (bench-only: `pip install -r requirements/bench.txt`) evolves with the
example's parameters (`[optimizer]` population_size, compatibility_threshold, add_node,
add_connection; `[brain]` network: feed_forward for "feedforward") and the paper's others
(below), each genome playing the example's environment (`evo_core.environments.make_environment`
of its `environment`: the same `evo/` episodes), its output o in [0, 1] mapped linearly onto
the action's bounds (2o - 1 for the double pole, o for XOR), its fitness the return. It is
solved by the example's `[stop]` table read the way evo reads it: a genome of the generation
reaching `fitness` (where set), and then, where there are `champion_tests`, the generation's
best genome passing them in order (episode i reset with seed i, the network rebuilt before each:
without velocities, 100,000 decisions from the standard start and 1,000 decisions from at least
200 of the 625 generalization starts). For XOR it also records the paper's criterion, the first
generation where a genome had all four outputs right (`info["solved"]`), which evo's `[stop]`
cannot see: the table's second XOR row. Evaluations: every genome of every generation up to the
end of the solving one; a run that has spent `--budget` unsolved fails. Python's `random`, from
which neat-python draws everything, is seeded with the seed. A run is cheap enough to be run
whole; with `--out` its outcome is kept in DIR/neat-python-<task>/seed-N.json and read back
(the budget it was run with kept, as evo's).

Seconds per evaluation, both sides: process time of the run (evolution, evaluations and test
episodes) over its evaluations, in the worker that ran it (the examples' processing is
sequential); runs read back from `--out` add nothing.

neat-python's configuration, as the paper's (Stanley and Miikkulainen 2002, and the NEAT C++
release's .ne files): the disjoint (c1 = c2) and weight coefficients, threshold, population
and structural rates as evo-neat reads them from the example (its defaults the paper's: 1.0,
0.4); weights and biases initialised
N(0, 1) within ±30, perturbed by N(0, 0.5) with probability 0.72 and replaced with 0.08 per gene
(the paper's 80 % of genomes times 90 % perturbed / 10 % replaced); response 1, not mutated;
sigmoid only (neat-python's is 1/(1 + e^(-5z)), the paper's 4.9 steepness up to 2 %); sum
aggregation; no deletions, no enable toggling; every input connected to the output at the start
(`full_direct`); species by the threshold, species fitness their maximum, stagnant after 15
generations without improvement, the best 2 species never removed (`species_elitism`), the top
20 % of a species parents (`survival_threshold`), its best genome copied unchanged (`elitism`
1).

Where neat-python 2.0's algorithm differs from the paper and cannot be configured:

- Compatibility distance: connection genes are matched by their (input, output) key, not by
  innovation number, and disjoint and excess genes are counted alike (one coefficient); the
  weight term is the summed, not the mean, difference of matching genes divided by the larger
  genome's gene count (N is never 1 for small genomes); node genes add a second term of their
  own (disjoint nodes, bias and response differences).
- Add-node keys: a node's key comes from a counter shared by the population, and its two links'
  innovation numbers are keyed by that node, so the same connection split in two genomes of
  one generation gets two nodes and four innovation numbers (the paper: one of each).
- Add-node may split a disabled connection (the paper splits enabled ones); add-connection
  makes one attempt, which fails when the pair exists (the C++ release tries 20 times).
- Recurrent genomes (`feed_forward = False`) start with a self-connection on every output as
  well, from `full_direct`; the paper's start is the inputs connected to the outputs only.
- Biases are node attributes, not links from a bias input.
- Weight mutation is drawn per gene, not per genome (the same per-gene rates: the paper
  mutates all or none of a genome's weights).
- Every offspring is a crossover of two parents drawn from the species' top 20 % (the same
  parent twice gives a clone) and is then mutated: no 25 % of mutation-only offspring, no
  crossover-only offspring, no mating across species (the paper's 0.001).
- Offspring per species in proportion to its mean fitness shifted by the population's minimum
  and scaled by its range, moved only half way from the species' previous size each
  generation, at least one per species; the paper's shared fitness gives them in proportion to
  the species' summed shared fitness, with no smoothing.
- Champion elitism copies each species' best whatever its size (the paper: species of more than
  5); a stagnant species is removed (the C++ release penalises its fitness), and there is no
  rule for a population stagnant for 20 generations (the paper keeps its best two species).
- A recurrent network (`RecurrentNetwork`) updates every node once a step from the previous
  step's values; the C++ release's `activate` also relaxes the network at its first step until
  the outputs are reached.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import gymnasium as gym
import numpy as np
from _seeds import Job, Outcome, evo_run, interval, run_jobs, slug

from evo_core.contract.config_models import EnvironmentConfig
from evo_core.environments import make_environment
from evo_neat.config import NEATOptimizerConfig

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@dataclass(frozen=True)
class Task:
    """A row: the example both sides read and the published NEAT figure."""

    name: str
    example: str
    published: str


TASKS: dict[str, Task] = {
    "with": Task("double pole with velocities", "neat_double_pole.toml", "3,600"),
    "without": Task("double pole without velocities (damping)",
                    "neat_double_pole_no_velocity.toml",
                    "6,929 (Gomez et al.; 33,184 in the paper, population 1,000)"),
    "xor": Task("XOR", "neat_xor.toml", "4,755"),
}
#: neat-python's second XOR row: the paper's criterion, which evo's [stop] cannot see
XOR_RIGHT = "XOR, all four outputs right (the paper's criterion)"
EVO, NEAT_PYTHON = "evo-neat", "neat-python"


@dataclass(frozen=True)
class ChampionTest:
    """One test of the example's `[stop] champion_tests`."""

    environment: EnvironmentConfig
    episodes: int
    min_return: float
    min_passes: int


@dataclass(frozen=True)
class Example:
    """What neat-python takes from an example config: the task, the criteria and NEAT's
    parameters."""

    environment: EnvironmentConfig
    population: int
    threshold: float
    add_node: float
    add_connection: float
    #: c3 (neat-python has one coefficient for disjoint and excess genes: c1 = c2 here)
    weight_coefficient: float
    disjoint_coefficient: float
    feed_forward: bool
    fitness: float | None
    tests: tuple[ChampionTest, ...] = field(default=())


def read_example(path: Path, population: int | None = None) -> Example:
    """The example at `path` (its population replaced by `population` where given)."""
    config = tomllib.loads(path.read_text())
    # the settings as evo-neat reads them, its defaults included: one source for both sides
    optimizer, stop = NEATOptimizerConfig.model_validate(config["optimizer"]), config.get(
        "stop", {})
    tests = tuple(ChampionTest(EnvironmentConfig.model_validate(test["environment"]),
                               int(test["episodes"]), float(test["min_return"]),
                               int(test.get("min_passes", test["episodes"])))
                  for test in stop.get("champion_tests", ()))
    fitness = stop.get("fitness")
    return Example(EnvironmentConfig.model_validate(config["environment"]),
                   population or optimizer.population_size,
                   optimizer.compatibility_threshold, optimizer.add_node,
                   optimizer.add_connection, optimizer.weight_coefficient,
                   optimizer.disjoint_coefficient,
                   config["brain"].get("network", "recurrent") == "feedforward",
                   None if fitness is None else float(fitness), tests)


def neat_python() -> ModuleType:
    """neat-python's package `neat`: this script's folder (whose neat.py is this script) is left
    off the path while it is imported."""
    here = Path(__file__).resolve().parent
    saved = sys.path[:]
    sys.path[:] = [entry for entry in saved if Path(entry or ".").resolve() != here]
    try:
        return importlib.import_module("neat")
    finally:
        sys.path[:] = saved


def neat_python_config(example: Example, inputs: int, outputs: int, folder: Path) -> str:
    """The text of neat-python's config file for `example` (the module docstring's values)."""
    rates = {"init_mean": 0.0, "init_stdev": 1.0, "init_type": "gaussian", "max_value": 30.0,
             "min_value": -30.0, "mutate_power": 0.5, "mutate_rate": 0.72,
             "replace_rate": 0.08}
    genome = {
        "num_inputs": inputs, "num_outputs": outputs, "num_hidden": 0,
        "feed_forward": example.feed_forward, "initial_connection": "full_direct",
        "compatibility_disjoint_coefficient": example.disjoint_coefficient,
        "compatibility_weight_coefficient": example.weight_coefficient,
        "conn_add_prob": example.add_connection, "conn_delete_prob": 0.0,
        "node_add_prob": example.add_node, "node_delete_prob": 0.0,
        "single_structural_mutation": False, "structural_mutation_surer": "false",
        "activation_default": "sigmoid", "activation_options": "sigmoid",
        "activation_mutate_rate": 0.0, "aggregation_default": "sum",
        "aggregation_options": "sum", "aggregation_mutate_rate": 0.0,
        **{f"weight_{key}": value for key, value in rates.items()},
        **{f"bias_{key}": value for key, value in rates.items()},
        "response_init_mean": 1.0, "response_init_stdev": 0.0, "response_max_value": 30.0,
        "response_min_value": -30.0, "response_mutate_power": 0.0,
        "response_mutate_rate": 0.0, "response_replace_rate": 0.0,
        "enabled_default": True, "enabled_mutate_rate": 0.0,
    }
    sections: dict[str, dict[str, object]] = {
        "NEAT": {"fitness_criterion": "max", "fitness_threshold": 1e300,
                 "no_fitness_termination": True, "pop_size": example.population,
                 "reset_on_extinction": True},
        "DefaultGenome": genome,
        "DefaultSpeciesSet": {"compatibility_threshold": example.threshold},
        "DefaultStagnation": {"species_fitness_func": "max", "max_stagnation": 15,
                              "species_elitism": 2},
        "DefaultReproduction": {"elitism": 1, "survival_threshold": 0.2,
                                "min_species_size": 1},
    }
    text = "".join(f"[{name}]\n" + "".join(f"{key} = {value}\n" for key, value in table.items())
                   + "\n" for name, table in sections.items())
    path = folder / "neat-python.cfg"
    path.write_text(text)
    return str(path)


class Player:
    """Plays neat-python networks in an environment made from a config's `environment`."""

    def __init__(self, environment: EnvironmentConfig, feed_forward: bool) -> None:
        self.env = make_environment(environment)
        space = self.env.action_space
        assert isinstance(space, gym.spaces.Box)
        self.low = np.asarray(space.low, dtype=np.float64)
        self.width = np.asarray(space.high, dtype=np.float64) - self.low
        self.feed_forward = feed_forward

    def play(self, network: Any, seed: int | None = None) -> tuple[float, dict[str, Any]]:
        """The return of one episode and the last step's info."""
        observation, _ = self.env.reset(seed=seed)
        total = 0.0
        while True:
            output = np.asarray(network.activate(observation.tolist()), dtype=np.float64)
            observation, reward, terminated, truncated, info = self.env.step(
                self.low + output * self.width)
            total += float(reward)
            if terminated or truncated:
                return total, info


def _passes(neat: ModuleType, config: Any, genome: Any, tests: Sequence[ChampionTest],
            players: Sequence[Player]) -> bool:
    """Whether `genome` passes every test, played as evo plays them (module docstring),
    stopping once the outcome is certain."""
    kind = neat.nn.FeedForwardNetwork if config.genome_config.feed_forward else \
        neat.nn.RecurrentNetwork
    for test, player in zip(tests, players):
        passed = 0
        for episode in range(test.episodes):
            total, _ = player.play(kind.create(genome, config), seed=episode)
            passed += math.isfinite(total) and total >= test.min_return
            if passed >= test.min_passes:
                break
            if passed + test.episodes - episode - 1 < test.min_passes:
                return False
        else:
            return False
    return True


def row_name(side: str, task: str) -> str:
    """The name of a side's row of a task in the outcomes (`task`: TASKS' key, or "xor-right",
    neat-python's XOR row by the paper's criterion)."""
    return f"{side}/{task}"


def neat_python_run(task: str, seed: int, budget: int, out: Path | None = None,
                    population: int | None = None) -> tuple[Outcome, ...]:
    """One neat-python run of `task` (TASKS' key) with `seed`, or its outcome kept under
    `out`; XOR gives a second outcome, by the paper's criterion."""
    kept = None if out is None else \
        out / slug(f"neat-python-{task}-{population or 'example'}") / f"seed-{seed}.json"
    if kept is not None and kept.is_file():
        stored = json.loads(kept.read_text())
        if stored["solved"] is not None or stored["spent"] >= stored["budget"]:
            return tuple(Outcome(**{**outcome, "cpu": 0.0, "cpu_evaluations": 0})
                         for outcome in stored["outcomes"])
    outcomes = _evolve(task, seed, budget, population)
    if kept is not None:
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_text(json.dumps({"solved": outcomes[0].solved, "spent": outcomes[0].spent,
                                    "budget": budget,
                                    "outcomes": [vars(outcome) for outcome in outcomes]}))
    return outcomes


@dataclass
class Generation:
    """What the evaluation of a generation found: its best genome, and whether a genome had
    every output right (XOR's `info["solved"]`)."""

    best: Any = None
    right: bool = False


def _evolve(task: str, seed: int, budget: int, population: int | None) -> tuple[Outcome, ...]:
    """Evolve until solved by the example's [stop] or `budget` is spent: that outcome, and for
    XOR the outcome by the paper's criterion."""
    neat = neat_python()
    example = read_example(EXAMPLES / TASKS[task].example, population)
    started, cpu = time.perf_counter(), time.process_time()
    player = Player(example.environment, example.feed_forward)
    testers = [Player(test.environment, example.feed_forward) for test in example.tests]
    inputs, outputs = (gym.spaces.flatdim(space) for space in
                       (player.env.observation_space, player.env.action_space))
    with tempfile.TemporaryDirectory() as folder:
        config = neat.Config(neat.DefaultGenome, neat.DefaultReproduction,
                             neat.DefaultSpeciesSet, neat.DefaultStagnation,
                             neat_python_config(example, inputs, outputs, Path(folder)))
    kind = neat.nn.FeedForwardNetwork if example.feed_forward else neat.nn.RecurrentNetwork
    generation = Generation()

    def evaluate(genomes: list[tuple[int, Any]], config: Any) -> None:
        generation.best, generation.right = None, False
        for _, genome in genomes:
            genome.fitness, info = player.play(kind.create(genome, config))
            generation.right |= bool(info.get("solved", False))
            if generation.best is None or genome.fitness > generation.best.fitness:
                generation.best = genome

    evolution = neat.Population(config, seed=seed)  # seeds Python's `random` with it
    evaluations, solved, right = 0, None, None
    tested: dict[int, bool] = {}
    while solved is None and evaluations < budget:
        size = len(evolution.population)
        evolution.run(evaluate, 1)  # evaluates, then breeds the next generation
        evaluations += size
        if generation.right and right is None:
            right = evaluations
        best = generation.best
        reached = example.fitness is None or best.fitness >= example.fitness
        if reached and example.tests and best.key not in tested:
            # an elite keeps its key: its seeded tests are played once, as evo plays them
            tested[best.key] = _passes(neat, config, best, example.tests, testers)
        if reached and (not example.tests or tested[best.key]):
            solved = evaluations
    seconds, spent_cpu = time.perf_counter() - started, time.process_time() - cpu
    outcome = Outcome(row_name(NEAT_PYTHON, task), seed, solved, evaluations, seconds,
                      spent_cpu, evaluations)
    if task != "xor":
        return (outcome,)
    # the same run: its time is counted once, with the first row
    return outcome, Outcome(row_name(NEAT_PYTHON, "xor-right"), seed, right, evaluations,
                            seconds)


def _cell(outcomes: Sequence[Outcome]) -> str:
    """`mean (n of N, interval)` of one side's runs of one row."""
    if not outcomes:
        return "not run"
    errors = [outcome.error for outcome in outcomes if outcome.error is not None]
    if errors:
        return f"not run: {errors[0]}"
    solved = [outcome.solved for outcome in outcomes if outcome.solved is not None]
    if not solved:
        return f"none solved (0 of {len(outcomes)})"
    mean, within = interval(solved)
    return f"{mean:,.0f} ({len(solved)} of {len(outcomes)}, {within})"


def _per_evaluation(outcomes: Sequence[Outcome]) -> str:
    """Process milliseconds per evaluation over the runs made in this invocation."""
    evaluations = sum(outcome.cpu_evaluations for outcome in outcomes)
    if not evaluations:
        return "-"
    return f"{1e3 * sum(outcome.cpu for outcome in outcomes) / evaluations:.3g}"


def table(outcomes: Sequence[Outcome], tasks: Sequence[str]) -> str:
    """The markdown table of `outcomes` for `tasks` (TASKS' keys, in order)."""
    rows: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        rows.setdefault(outcome.name, []).append(outcome)
    lines = ["| task | published NEAT | evo-neat: mean (solved of runs, 95 % interval) | "
             "neat-python: mean (solved of runs, 95 % interval) | process ms per evaluation, "
             "evo-neat / neat-python |", "| --- | --- | --- | --- | --- |"]
    named = [(TASKS[task].name, TASKS[task].published, task) for task in tasks]
    if "xor" in tasks:
        named.append((XOR_RIGHT, TASKS["xor"].published, "xor-right"))
    for name, published, task in named:
        evo = rows.get(row_name(EVO, task), [])
        ours = "- ([stop] sees the fitness only)" if task == "xor-right" else _cell(evo)
        theirs = rows.get(row_name(NEAT_PYTHON, task), [])
        seconds = rows.get(row_name(NEAT_PYTHON, "xor" if task == "xor-right" else task), [])
        lines.append(f"| {name} | {published} | {ours} | {_cell(theirs)} | "
                     f"{_per_evaluation(evo)} / {_per_evaluation(seconds)} |")
    return "\n".join(lines)


def _evo_configs(values: Sequence[str]) -> dict[str, Path]:
    """`--evo-config TASK=PATH` values, each task's example by default."""
    configs = {task: EXAMPLES / spec.example for task, spec in TASKS.items()}
    for value in values:
        task, _, path = value.partition("=")
        if task not in TASKS or not path:
            raise SystemExit(f"--evo-config {value}: give TASK=PATH, TASK one of "
                             f"{', '.join(TASKS)}")
        configs[task] = Path(path)
    return configs


def jobs(args: argparse.Namespace) -> Iterator[Job]:
    """Seed by seed, every task and side, so that all rows advance together."""
    configs = _evo_configs(args.evo_config)
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        for task in args.only:
            population = args.population_without if task == "without" else None
            if EVO in args.sides:
                overrides = {} if population is None else \
                    {"optimizer.population_size": population}
                key = f"evo-{task}-{configs[task].stem}-{population or 'example'}"
                yield evo_run, (row_name(EVO, task), configs[task], overrides, seed,
                                args.budget, args.out, key)
            if NEAT_PYTHON in args.sides:
                yield neat_python_run, (task, seed, args.budget, args.out, population)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--budget", type=int, default=100_000)
    parser.add_argument("--only", nargs="*", choices=list(TASKS), default=list(TASKS))
    parser.add_argument("--sides", nargs="*", choices=[EVO, NEAT_PYTHON],
                        default=[EVO, NEAT_PYTHON])
    parser.add_argument("--population-without", type=int, default=None,
                        help="population of both sides without velocities (default: the "
                        "example's)")
    parser.add_argument("--evo-config", action="append", default=[], metavar="TASK=PATH",
                        help="train this config for TASK's evo side")
    parser.add_argument("--out", type=Path, default=None,
                        help="keep the runs here; run again to continue them")
    args = parser.parse_args()
    if NEAT_PYTHON in args.sides:
        try:
            neat_python()
        except ImportError:
            raise SystemExit("neat-python is not installed: pip install -r "
                             "requirements/bench.txt, or --sides evo-neat") from None
    started = time.perf_counter()
    outcomes = list(run_jobs(list(jobs(args)), args.workers))
    print(f"\nseeds {args.first_seed}-{args.first_seed + args.seeds - 1}, budget "
          f"{args.budget:,} evaluations; evaluations to solve over the solved runs\n")
    print(table(outcomes, args.only))
    print(f"\n{len(outcomes)} outcomes in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
