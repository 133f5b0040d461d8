"""evo-jax against evosax + gymnax, side by side in one process: seconds to solve CartPole-v1 and
environment steps per second once solved. (Not named jax.py: a script's folder comes first on
sys.path, and mypy checks bench/ as top-level modules, so that name would shadow jax itself.)

    python bench/jax_bench.py [--seeds 1 2 3] [--population 256] [--generations 200] [--after 20]

Needs evosax, a bench-only dependency (not in any extra): `pip install evosax==0.3.2` (with
`evo-core[jax]` installed, which brings jax, gymnax and evo-jax). Runs unchanged on a GPU: JAX
uses the device it sees (`JAX_PLATFORMS=cpu` forces the CPU, `JAX_PLATFORMS=cuda` the GPU).

The three sides evolve the same policy class with CMA-ES, population 256, on gymnax's
CartPole-v1, one episode per candidate, until the population's mean return reaches 475:

- **evosax**: `CMA_ES` and its `GymnaxProblem` (gymnax's `step` with automatic resets, a
  `lax.scan` over 500 steps), one jitted generation (ask, rollout, tell), the policy a flax
  MLP 4 -> 8 tanh -> 1, action = output > 0 (49 parameters), `std_init` 0.5.
- **evo (cma-es, pycma)**: the generation loop of `evo train` without its run folder (as
  bench/batched.py): the core's pycma CMA-ES (`sigma` 0.5) asks in numpy, the sequential handler
  evaluates the chunk with `episodes.vectorize = "jax"` (one compiled rollout), the optimizer is
  told. The brain is evo's FFNN 4 -> 8 tanh -> 2 linear: evo's Discrete decoder takes the argmax
  of one output per action, and argmax(o0, o1) = (o1 - o0 > 0), the same policy with 58 genes.
- **evo (cma-es-jax)**: the same loop, handler, rollout and brain, with evo-jax's CMA-ES (`sigma`
  0.5): its ask and tell are jitted JAX functions, called through the core's optimizer protocol
  (genomes come back to the host as float64, the fitness is ranked on the host), so it is three
  compiled calls a generation (ask, rollout, tell) where evosax makes one.

Seconds to solve count from building the optimizer and problem to the generation that reached
475, compiling included (each side compiles its own functions in this process; the evo sides
share nothing compiled: each builds its own rollout). Steps per second once solved, counting the
steps of the episodes (CartPole's reward is 1 a step, so evosax's returns are its steps), three
ways, each the fastest of `--after` turns in which the sides alternate: a whole generation (ask,
evaluate, tell: pycma's in numpy, evo-jax's and evosax's compiled; timed until the device has
finished everything the generation dispatched); the evaluation of one fixed
population (evo's sequential handler with the compiled rollout, evosax's `GymnaxProblem.eval`
jitted without its stacked states); and the compiled rollout alone (evo's on arrays already on
the device, without the handler and the results; evosax's evaluation is that already). Ratios
are each evo side / evosax; goals: steps/s >= 1.0x, seconds to solve <= 0.8x.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import jax
import jax.numpy as jnp
import numpy as np

from evo_core.config import validate_config
from evo_core.hooks.discovery import get_registry
from evo_core.running.experiment import build_experiment
from evo_jax.keys import environment_seeds

THRESHOLD = 475.0
SIGMA = 0.5
#: the two evo sides: the core's pycma CMA-ES, and evo-jax's compiled one
PYCMA = "evo (cma-es, pycma)"
COMPILED = "evo (cma-es-jax)"
SIDES = ("evosax", PYCMA, COMPILED)


class Solved:
    """A side once solved: the generation, the seconds it took, and closures that run one more
    generation and one evaluation of a fixed population, each returning its episodes' steps."""

    def __init__(self, generation: int, seconds: float, step: Any, evaluate: Any,
                 compiled: Any, close: Any = None) -> None:
        self.generation, self.seconds = generation, seconds
        self.step, self.evaluate, self.compiled = step, evaluate, compiled
        self.close = close or (lambda: None)


def evosax_run(seed: int, population: int, generations: int) -> Solved | None:
    """evosax's CMA-ES on gymnax until solved (None if not within `generations`)."""
    import flax.linen as nn
    from evosax.algorithms import CMA_ES
    from evosax.problems.rl.gymnax import GymnaxProblem

    class Policy(nn.Module):
        @nn.compact
        def __call__(self, observation: Any, key: Any) -> Any:
            hidden = jnp.tanh(nn.Dense(8)(observation))
            return (nn.Dense(1)(hidden)[0] > 0).astype(jnp.int32)

    start = time.perf_counter()
    problem = GymnaxProblem("CartPole-v1", policy=Policy(), use_normalize_obs=False)
    key = jax.random.key(seed)
    key, init_key, sample_key = jax.random.split(key, 3)
    solution = problem.sample(sample_key)
    strategy = CMA_ES(population_size=population, solution=solution)
    params = strategy.default_params.replace(std_init=SIGMA)
    key, es_key = jax.random.split(key)
    carry = {"key": key, "state": strategy.init(es_key, jax.tree.map(jnp.zeros_like, solution),
                                                params),
             "problem": problem.init(init_key)}

    @jax.jit
    def generation(key: Any, state: Any, problem_state: Any) -> tuple[Any, Any, Any]:
        ask_key, eval_key, tell_key = jax.random.split(key, 3)
        candidates, state = strategy.ask(ask_key, state, params)
        fitness, problem_state, _ = problem.eval(eval_key, candidates, problem_state)
        state, _ = strategy.tell(tell_key, candidates, -fitness, state, params)  # minimises
        return state, problem_state, fitness

    def step() -> float:
        carry["key"], step_key = jax.random.split(carry["key"])
        carry["state"], carry["problem"], fitness = generation(step_key, carry["state"],
                                                               carry["problem"])
        return float(fitness.sum())

    for number in range(1, generations + 1):
        if step() / population >= THRESHOLD:
            solved = time.perf_counter() - start
            candidates, _ = strategy.ask(jax.random.key(seed + 1), carry["state"], params)
            evaluate_only = jax.jit(lambda k, c, s: problem.eval(k, c, s)[0])
            eval_key = jax.random.key(seed + 2)

            def evaluate(run: Any = evaluate_only, key: Any = eval_key,
                         candidates: Any = candidates) -> float:
                return float(run(key, candidates, carry["problem"]).sum())

            return Solved(number, solved, step, evaluate, evaluate)  # compiled already
    return None


def evo_run(seed: int, population: int, generations: int, optimizer: str = "cma-es"
            ) -> Solved | None:
    """evo with vectorize = "jax" and `optimizer` until solved (None if not within
    `generations`)."""
    registry = get_registry()
    start = time.perf_counter()
    config = validate_config({
        "environment": "gymnax/CartPole-v1", "seed": seed, "generations": generations,
        "brain": {"type": "ffnn", "hidden_layers": [8], "non_linearity": "tanh",
                  "output_activation": "linear"},
        "optimizer": {"type": optimizer, "population_size": population, "sigma": SIGMA},
        "episodes": {"vectorize": "jax"}}, registry, "bench")
    experiment = build_experiment(config, registry)
    handler = experiment.make_handler()

    def step() -> float:
        genomes = experiment.optimizer.ask()
        seeds = experiment.streams.evaluation_seeds(len(genomes), per_candidate=False)
        results = handler.evaluate(experiment.template, genomes, seeds)
        experiment.optimizer.tell(np.array([result.fitness for result in results]))
        # cma-es-jax's tell is dispatched without waiting (it overlaps the host's recording of
        # a generation in `evo train`); here nothing follows it, so the generation is timed
        # until the device finished all of it, as evosax's ends with its fitness on the host
        device_idle()
        return float(sum(result.steps for result in results))

    for number in range(1, generations + 1):
        genomes = experiment.optimizer.ask()
        seeds = experiment.streams.evaluation_seeds(len(genomes), per_candidate=False)
        results = handler.evaluate(experiment.template, genomes, seeds)
        fitnesses = np.array([result.fitness for result in results])
        experiment.optimizer.tell(fitnesses)
        if fitnesses.mean() >= THRESHOLD:
            solved = time.perf_counter() - start
            fixed = experiment.optimizer.ask()
            fixed_seeds = experiment.streams.evaluation_seeds(len(fixed), per_candidate=False)
            experiment.optimizer.tell(np.zeros(len(fixed)))  # the loop asks again in `step`

            def evaluate(fixed: Any = fixed, fixed_seeds: Any = fixed_seeds) -> float:
                results = handler.evaluate(experiment.template, fixed, fixed_seeds)
                return float(sum(result.steps for result in results))

            evaluator: Any = experiment.runner_spec.build(experiment.template)
            arguments = (jnp.asarray(fixed, dtype=jnp.float32),
                         jnp.asarray(environment_seeds(fixed_seeds)))

            def compiled(run: Any = evaluator.rollout, arguments: Any = arguments) -> float:
                return float(run(*arguments)[1].sum())

            return Solved(number, solved, step, evaluate, compiled, handler.close)
    handler.close()
    return None


def device_idle() -> None:
    """Wait for every computation JAX has dispatched (jax's `live_arrays` and
    `block_until_ready` carry no annotations, hence the untyped name)."""
    untyped: Any = jax
    untyped.block_until_ready(untyped.live_arrays())


def interleaved_rates(sides: dict[str, Solved], repeats: int
                      ) -> dict[str, tuple[float, float, float]]:
    """Steps/s of a whole generation and of the evaluation alone for every side, the fastest of
    `repeats` calls, the sides taking turns (the load of a shared machine changes by the
    second: turns expose both to the same load), after three untimed turns."""
    best = {name: [float("inf")] * 3 for name in sides}
    steps = {name: [0.0] * 3 for name in sides}
    for turn in range(repeats + 3):
        for name, side in sides.items():
            for index, call in enumerate((side.step, side.evaluate, side.compiled)):
                began = time.perf_counter()
                counted = call()
                elapsed = time.perf_counter() - began
                if turn >= 3 and elapsed < best[name][index]:
                    best[name][index], steps[name][index] = elapsed, counted
    return {name: (steps[name][0] / best[name][0], steps[name][1] / best[name][1],
                   steps[name][2] / best[name][2]) for name in sides}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--population", type=int, default=256)
    parser.add_argument("--generations", type=int, default=200)
    parser.add_argument("--after", type=int, default=20,
                        help="timed turns (generations and evaluations) once solved")
    args = parser.parse_args()
    # libraries imported and JAX's backend started before either side is timed
    import evosax.problems.rl.gymnax  # noqa: F401
    import gymnax  # noqa: F401

    jnp.zeros(1).block_until_ready()
    print(f"JAX {jax.__version__} on {jax.devices()[0].platform}, {os.cpu_count()} cores "
          f"(load average {os.getloadavg()[0]:.1f})", flush=True)
    rows: dict[str, list[tuple[int, float, float, float, float]]] = {name: [] for name in SIDES}
    for seed in args.seeds:
        sides: dict[str, Solved | None] = {
            "evosax": evosax_run(seed, args.population, args.generations),
            PYCMA: evo_run(seed, args.population, args.generations, "cma-es"),
            COMPILED: evo_run(seed, args.population, args.generations, "cma-es-jax")}
        solved = {name: side for name, side in sides.items() if side is not None}
        try:
            rates = interleaved_rates(solved, args.after)
        finally:
            for each in solved.values():
                each.close()
        for name, side in sides.items():
            if side is None:
                print(f"  seed {seed} {name} did not solve within {args.generations} "
                      "generations", flush=True)
                continue
            outcome = (side.generation, side.seconds, *rates[name])
            rows[name].append(outcome)
            print(f"  seed {seed} {name} solved at generation {outcome[0]} in "
                  f"{outcome[1]:.2f} s; once solved {outcome[2]:.3g} steps/s a generation, "
                  f"{outcome[3]:.3g} evaluating, {outcome[4]:.3g} compiled rollout", flush=True)
    print("\n| | seconds to solve | generations | env steps/s once solved: whole generation "
          "| evaluation | compiled rollout alone |")
    print("| --- | --- | --- | --- | --- | --- |")
    medians: dict[str, list[float]] = {}
    for name, outcomes in rows.items():
        if not outcomes:
            print(f"| {name} | not solved | | | | |")
            medians[name] = [float("nan")] * 4
            continue
        values = [statistics.median(o[i] for o in outcomes) for i in (1, 2, 3, 4)]
        medians[name] = values
        print(f"| {name} | {values[0]:.2f} ({', '.join(f'{o[1]:.2f}' for o in outcomes)}) | "
              f"{', '.join(str(o[0]) for o in outcomes)} | {values[1]:.3g} | {values[2]:.3g} | "
              f"{values[3]:.3g} |")
    sax = medians["evosax"]
    for name in (PYCMA, COMPILED):
        evo = medians[name]
        print(f"\n{name} / evosax (medians): seconds to solve {evo[0] / sax[0]:.2f}x "
              f"(goal <= 0.8x); steps/s (goal >= 1.0x) {evo[1] / sax[1]:.2f}x a generation, "
              f"{evo[2] / sax[2]:.2f}x evaluating, {evo[3] / sax[3]:.2f}x compiled rollout")
    print(f"load average now {os.getloadavg()[0]:.1f}")

if __name__ == "__main__":
    main()
