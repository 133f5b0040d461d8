"""Batched evaluation against one genome at a time, side by side in one run: environment steps
per second of "off", "sync", "native" and "envpool", and the vector environment's own
throughput as the floor.

    python bench/batched.py [--population 256] [--rows 256] [--repeats 2]
                            [--sweep-rows 16,32,64,128,256] [--solve-generations 150]
                            [--skip-mujoco] [--mujoco-population 64]

Everything runs in this one process, one BLAS thread, for two brains, FFNN [8] and CTRNN (N = 6),
on CartPole-v1, population 256, two populations each:

- random genomes: most episodes are short and a few are long, the case where a batch used to
  wait for its slowest episode (the rows now refill: episodes.batch_rows = `--rows`);
- a solved population: the first population of a CMA-ES run (native, population 256) whose mean
  return reached 475, so nearly every episode lasts 500 steps.

The floor is CartPoleVectorEnv's own throughput with a constant action at the number of rows
the batched modes use, measured once per brain, just before its tables; every "of the floor"
of that brain divides by it. Only the steps of counted episodes count; best of `--repeats`.

Beside each goal the script prints the bound that this population and this vector environment
set, whatever the engine does, from figures it measures:

- random genomes: a generation lasts at least as many vector steps as its longest episode, and a
  vector step costs at least what the vector environment's own step costs (at the rows used, and
  at one environment, the least any number of rows could cost); "off" plays all the
  population's steps at its own rate. native / off <= off's time / (longest episode x one
  vector step). envpool steps only the running rows at the end of a chunk, so its bound is the
  pool's step of one environment.
- solved: native / floor <= (counted share of the row-steps) x env / (env + brain), with the
  brain batch's own step at the same rows (the engine's own work only lowers it).

The rows sweep shows native's throughput for other `episodes.batch_rows` (the default's
measurement). HalfCheetah-v5 (MuJoCo, `--mujoco-population` random CTRNN genomes): envpool
evaluation against envpool's own pool stepped with random actions at the same number of
environments.

Goals: random genomes, native >= 10x off; solved, native >= 0.6 of the floor; HalfCheetah,
envpool >= 0.9 of envpool's own throughput.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from threadpoolctl import threadpool_limits

from brain_ctrnn import CTRNNConfig, CTRNNTemplate
from brain_ffnn import FFNNConfig, FFNNTemplate
from evo_core.authoring.batching import make_batch
from evo_core.config import validate_config
from evo_core.config.schema import EpisodesConfig
from evo_core.contract.protocols import IBrainTemplate, IEvaluator
from evo_core.evaluation.batched_episodes import BatchedEpisodeRunner
from evo_core.evaluation.episodes import EpisodeRunner
from evo_core.hooks.discovery import get_registry
from evo_core.running.experiment import build_experiment

SEED, THRESHOLD = 1, 475.0
BRAINS: dict[str, dict[str, Any]] = {
    "FFNN [8]": {"type": "ffnn", "hidden_layers": [8]},
    "CTRNN N=6": {"type": "ctrnn", "number_neurons": 6},
}


def template_for(brain: dict[str, Any], environment: str) -> IBrainTemplate:
    env = gym.make(environment)
    try:
        if brain["type"] == "ffnn":
            return FFNNTemplate(FFNNConfig(hidden_layers=brain["hidden_layers"]),
                                env.observation_space, env.action_space,
                                np.random.default_rng(0))
        return CTRNNTemplate(CTRNNConfig(number_neurons=brain["number_neurons"]),
                             env.observation_space, env.action_space, np.random.default_rng(0))
    finally:
        env.close()


def runner(template: IBrainTemplate, environment: str, mode: str, rows: int) -> IEvaluator:
    if mode == "off":
        return EpisodeRunner(template, environment, EpisodesConfig())
    return BatchedEpisodeRunner(template, environment,
                                EpisodesConfig(vectorize=mode, batch_rows=rows))


class Rate:
    """A mode's measurement: environment steps per second, and the episodes' lengths."""

    def __init__(self, rate: float, steps: list[int]) -> None:
        self.rate = rate
        self.total = sum(steps)
        self.mean = self.total / len(steps)
        self.longest = max(steps)


def steps_per_second(template: IBrainTemplate, environment: str, mode: str, rows: int,
                     genomes: np.ndarray, repeats: int) -> Rate:
    """Environment steps per second, best of `repeats`, and each candidate's steps (one
    episode each: its episode's length)."""
    evaluator = runner(template, environment, mode, rows)
    seeds = np.full(len(genomes), 12345, dtype=np.int64)
    best, steps = np.inf, [0]
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            if isinstance(evaluator, BatchedEpisodeRunner):
                results = evaluator.evaluate_many(genomes, seeds)
            else:
                results = [evaluator.evaluate(g, int(s)) for g, s in zip(genomes, seeds)]
            best = min(best, time.perf_counter() - start)
            steps = [r.steps for r in results]
    finally:
        evaluator.close()
    return Rate(sum(steps) / best, steps)


def cartpole_floor(envs: int, repeats: int, steps: int = 2000) -> float:
    """CartPoleVectorEnv's own steps per second at `envs` environments, constant action."""
    vector = gym.make_vec("CartPole-v1", num_envs=envs, vectorization_mode="vector_entry_point")
    actions = np.zeros(envs, dtype=np.int64)
    best = np.inf
    try:
        for _ in range(repeats):
            vector.reset(seed=0)
            start = time.perf_counter()
            for _ in range(steps):
                vector.step(actions)
            best = min(best, time.perf_counter() - start)
    finally:
        vector.close()
    return envs * steps / best


def envpool_floor(env_id: str, envs: int, repeats: int, steps: int = 300) -> float:
    """envpool's own steps per second at `envs` environments, uniformly random actions."""
    import envpool

    pool = envpool.make(env_id, env_type="gymnasium", num_envs=envs, seed=0)
    space = pool.action_space
    rng = np.random.default_rng(0)
    actions = rng.uniform(space.low, space.high, (steps, envs, *space.shape))
    return envs * steps / _best_seconds(pool, repeats, lambda: [pool.step(a) for a in actions])


def envpool_one_step(envs: int, repeats: int, steps: int = 1000) -> float:
    """Seconds of one step of one environment of envpool's CartPole pool of `envs` (how
    envpool mode steps a chunk's last running row)."""
    import envpool

    pool = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=envs, seed=0)
    action, env_id = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int32)
    return _best_seconds(pool, repeats,
                         lambda: [pool.step(action, env_id) for _ in range(steps)]) / steps


def _best_seconds(pool: Any, repeats: int, play: Callable[[], object]) -> float:
    """The fastest of `repeats` runs of `play` on a freshly reset envpool pool, which is then
    closed."""
    best = np.inf
    try:
        for _ in range(repeats):
            pool.reset()
            start = time.perf_counter()
            play()
            best = min(best, time.perf_counter() - start)
    finally:
        pool.close()
    return float(best)


def brain_step(template: IBrainTemplate, genomes: np.ndarray, rows: int, repeats: int,
               steps: int = 1000) -> float:
    """Seconds of one step of the brain batch of `genomes`' first `rows` on CartPole
    observations (what a vector step costs beyond the environment, the engine aside)."""
    env = gym.make("CartPole-v1")
    batch = make_batch(template, genomes[:rows], env.observation_space, env.action_space)
    vector = gym.make_vec("CartPole-v1", num_envs=rows, vectorization_mode="vector_entry_point")
    observations, _ = vector.reset(seed=0)
    vector.close()
    env.close()
    best = np.inf
    for _ in range(repeats):
        batch.reset()
        start = time.perf_counter()
        for _ in range(steps):
            batch.step(observations)
        best = min(best, time.perf_counter() - start)
    return best / steps


def solved_population(brain: dict[str, Any], population: int, generations: int
                      ) -> tuple[np.ndarray, int, float]:
    """The first population of a CMA-ES run (native) whose mean reached THRESHOLD (the last
    one if none did within `generations`), its generation, and its mean return."""
    config = validate_config({
        "environment": "CartPole-v1", "seed": SEED, "generations": generations, "brain": brain,
        "optimizer": {"type": "cma-es", "population_size": population, "sigma": 0.5},
        "episodes": {"vectorize": "native"}}, get_registry(), "bench")
    experiment = build_experiment(config, get_registry())
    handler = experiment.make_handler()
    genomes = np.empty((0, experiment.template.genome_size))
    mean = 0.0
    try:
        for generation in range(1, generations + 1):
            genomes = experiment.optimizer.ask()
            seeds = experiment.streams.evaluation_seeds(len(genomes), per_candidate=False)
            results = handler.evaluate(experiment.template, genomes, seeds)
            fitnesses = np.array([result.fitness for result in results])
            mean = float(fitnesses.mean())
            if mean >= THRESHOLD:
                return genomes, generation, mean
            experiment.optimizer.tell(fitnesses)
    finally:
        handler.close()
    return genomes, generations, mean


def table(label: str, template: IBrainTemplate, modes: list[str], rows: int,
          genomes: np.ndarray, repeats: int, floor: float) -> dict[str, Rate]:
    rates: dict[str, Rate] = {}
    for mode in modes:
        rate = rates[mode] = steps_per_second(template, "CartPole-v1", mode, rows, genomes,
                                              repeats)
        if mode == modes[0]:
            print(f"  {label} ({len(genomes)} genomes; {mode}'s episodes: mean "
                  f"{rate.mean:.1f} steps, longest {rate.longest}, {rate.total:,} in all)",
                  flush=True)
        versus = f"{rate.rate / rates['off'].rate:7.2f}x off" if "off" in rates else ""
        print(f"    {mode:8s} {rate.rate:12,.0f} steps/s  {versus}  {rate.rate / floor:5.2f} "
              f"of the floor", flush=True)
    return rates


class Costs:
    """What a vector step costs at least, measured in this run (seconds)."""

    def __init__(self, template: IBrainTemplate, solved: np.ndarray, rows: int, repeats: int,
                 envpool: bool) -> None:
        self.rows = rows
        self.floor = cartpole_floor(rows, repeats)
        self.env = rows / self.floor  # CartPoleVectorEnv's step at `rows` environments
        self.env_one = 1 / cartpole_floor(1, repeats)  # ... at one environment
        self.pool_one = envpool_one_step(rows, repeats) if envpool else None
        self.brain = brain_step(template, solved, rows, repeats)


def random_bound(short: dict[str, Rate], costs: Costs) -> None:
    """native / off for random genomes cannot beat off's time over the longest episode's vector
    steps, each at least one step of the vector environment."""
    off = short["off"]
    off_time = off.total / off.rate
    longest = short["native"].longest
    vector_steps = max(longest, -(-short["native"].total // costs.rows))
    at_rows = off_time / (vector_steps * costs.env)
    at_one = off_time / (longest * costs.env_one)
    print(f"  bound for these random genomes: native's longest episode ({longest} steps) "
          f"alone takes {vector_steps} vector steps; CartPoleVectorEnv costs "
          f"{costs.env * 1e6:.1f} us a "
          f"step at {costs.rows} environments, {costs.env_one * 1e6:.1f} us at one; off plays "
          f"all {off.total:,} steps in {off_time * 1e3:.1f} ms: native <= {at_rows:.1f}x off "
          f"at {costs.rows} rows, <= {at_one:.1f}x with any number of rows, whatever the "
          "engine does", flush=True)
    if costs.pool_one is not None and "envpool" in short:
        print(f"    envpool steps only the running rows at a chunk's end: one environment "
              f"costs {costs.pool_one * 1e6:.1f} us a step, so envpool <= "
              f"{off_time / (longest * costs.pool_one):.1f}x off", flush=True)


def solved_bound(long: dict[str, Rate], costs: Costs) -> float:
    """native / floor for the solved population cannot beat the counted share of the row-steps
    times env / (env + brain)."""
    native = long["native"]
    vector_steps = max(native.longest, -(-native.total // costs.rows))
    share = native.total / (vector_steps * costs.rows)
    bound = share * costs.env / (costs.env + costs.brain)
    print(f"  bound for the solved population: {share:.3f} of the row-steps count (episodes "
          f"end before the longest); the brain batch's own step costs "
          f"{costs.brain * 1e6:.1f} us at {costs.rows} rows, the environment's "
          f"{costs.env * 1e6:.1f} us: native <= {bound:.2f} of the floor, whatever the engine "
          "does", flush=True)
    return bound


def rows_sweep(template: IBrainTemplate, populations: dict[str, np.ndarray],
               sweep: list[int], repeats: int) -> None:
    print("  native for other episodes.batch_rows (steps/s):", flush=True)
    for label, genomes in populations.items():
        rates = [steps_per_second(template, "CartPole-v1", "native", rows, genomes,
                                  repeats).rate for rows in sweep]
        cells = "  ".join(f"{rows}: {rate:,.0f}" for rows, rate in zip(sweep, rates))
        print(f"    {label:15s} {cells}", flush=True)


def cheetah(population: int, rows: int, repeats: int, envpool: bool) -> None:
    try:
        template = template_for(BRAINS["CTRNN N=6"], "HalfCheetah-v5")
    except gym.error.DependencyNotInstalled as exc:
        print(f"\nHalfCheetah-v5 skipped: {exc}")
        return
    genomes = np.random.default_rng(0).normal(0, 1, (population, template.genome_size))
    print(f"\nHalfCheetah-v5, CTRNN N=6, {population} random genomes", flush=True)
    off = steps_per_second(template, "HalfCheetah-v5", "off", rows, genomes, repeats).rate
    print(f"    off      {off:12,.0f} steps/s", flush=True)
    if not envpool:
        return
    used = min(rows, population)
    own = envpool_floor("HalfCheetah-v5", used, repeats)
    rate = steps_per_second(template, "HalfCheetah-v5", "envpool", rows, genomes,
                            repeats).rate
    print(f"    envpool  {rate:12,.0f} steps/s  {rate / off:5.1f}x off; envpool's own pool "
          f"at {used} environments, random actions: {own:,.0f} steps/s; ratio "
          f"{rate / own:.2f} (goal >= 0.9)", flush=True)


def brain_tables(name: str, brain: dict[str, Any], args: argparse.Namespace,
                 modes: list[str], sweep: list[int]) -> None:
    template = template_for(brain, "CartPole-v1")
    random = np.random.default_rng(0).normal(0, 1, (args.population, template.genome_size))
    solved, generation, mean = solved_population(brain, args.population,
                                                 args.solve_generations)
    used = min(args.rows, args.population)
    costs = Costs(template, solved, used, args.repeats, "envpool" in modes)
    print(f"\n{name}: floor: CartPoleVectorEnv at {used} environments, constant action, "
          f"{costs.floor:,.0f} steps/s", flush=True)
    short = table("random genomes", template, modes, args.rows, random, args.repeats,
                  costs.floor)
    random_bound(short, costs)
    reached = "" if mean >= THRESHOLD else f"; NOT solved: {THRESHOLD:.0f} not reached"
    long = table(f"solved population (generation {generation} of a native CMA-ES run, mean "
                 f"return {mean:.0f}{reached})", template, modes, args.rows, solved,
                 args.repeats, costs.floor)
    bound = solved_bound(long, costs)
    random_ratio = short["native"].rate / short["off"].rate
    solved_ratio = long["native"].rate / costs.floor
    print(f"  goals: random native / off = {random_ratio:.2f} (>= 10); solved native / floor "
          f"= {solved_ratio:.2f} (>= 0.6; {solved_ratio / bound:.2f} of its bound)", flush=True)
    if sweep:
        rows_sweep(template, {"random genomes": random, "solved": solved}, sweep, args.repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--population", type=int, default=256)
    parser.add_argument("--rows", type=int, default=EpisodesConfig().batch_rows,
                        help="episodes.batch_rows of the batched modes")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--sweep-rows", default="16,32,64,128,256",
                        help="batch_rows values for native's sweep ('' for none)")
    parser.add_argument("--solve-generations", type=int, default=150)
    parser.add_argument("--mujoco-population", type=int, default=64)
    parser.add_argument("--skip-mujoco", action="store_true")
    args = parser.parse_args()
    envpool = importlib.util.find_spec("envpool") is not None
    modes = ["off", "sync", "native"] + (["envpool"] if envpool else [])
    if not envpool:
        print("envpool is not installed (pip install 'evo-core[envpool]'): its rows are skipped")
    sweep = [int(rows) for rows in args.sweep_rows.split(",") if rows]
    print(f"CartPole-v1, population {args.population}, episodes.batch_rows = {args.rows}, "
          f"one BLAS thread, load average {os.getloadavg()[0]:.1f} at the start", flush=True)
    with threadpool_limits(1):
        for name, brain in BRAINS.items():
            brain_tables(name, brain, args, modes, sweep)
    if not args.skip_mujoco:
        with threadpool_limits(1):
            cheetah(args.mujoco_population, args.rows, max(1, args.repeats - 1), envpool)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end", flush=True)


if __name__ == "__main__":
    main()
