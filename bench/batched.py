"""Batched evaluation against one genome at a time, side by side in one run: environment steps
per second of "off", "sync", "native" and "envpool", and the vector environment's own
throughput as the floor.

    python bench/batched.py [--population 256] [--rows 64] [--repeats 2]
                            [--sweep-rows 16,32,64,128,256] [--solve-generations 60]
                            [--skip-mujoco] [--mujoco-population 64]

Everything runs in this one process, one BLAS thread, for two brains, FFNN [8] and CTRNN (N = 6),
on CartPole-v1, population 256, two populations each:

- random genomes: most episodes are short and a few are long, the case where a batch used to
  wait for its slowest episode (the rows now refill: episodes.batch_rows = `--rows`);
- a solved population: the last population of a CMA-ES run (native, population 256) whose mean
  return reached 475, so nearly every episode lasts 500 steps.

The floor is CartPoleVectorEnv's own throughput with a constant action at the number of rows
the batched modes use. Only the steps of counted episodes count; best of `--repeats`. The rows
sweep shows native's throughput for other `episodes.batch_rows` (the default's measurement).
HalfCheetah-v5 (MuJoCo, `--mujoco-population` random CTRNN genomes): envpool evaluation against
envpool's own pool stepped with random actions at the same number of environments.

Goals: random genomes, native >= 10x off; solved, native >= 0.6 of the floor; HalfCheetah,
envpool >= 0.9 of envpool's own throughput.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from typing import Any

import gymnasium as gym
import numpy as np
from threadpoolctl import threadpool_limits

from brain_ctrnn import CTRNNConfig, CTRNNTemplate
from brain_ffnn import FFNNConfig, FFNNTemplate
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


def steps_per_second(template: IBrainTemplate, environment: str, mode: str, rows: int,
                     genomes: np.ndarray, repeats: int) -> tuple[float, float]:
    """(environment steps per second, mean episode length), best of `repeats`."""
    evaluator = runner(template, environment, mode, rows)
    seeds = np.full(len(genomes), 12345, dtype=np.int64)
    best, steps = np.inf, 0
    try:
        for _ in range(repeats):
            start = time.perf_counter()
            if isinstance(evaluator, BatchedEpisodeRunner):
                results = evaluator.evaluate_many(genomes, seeds)
            else:
                results = [evaluator.evaluate(g, int(s)) for g, s in zip(genomes, seeds)]
            best = min(best, time.perf_counter() - start)
            steps = sum(r.steps for r in results)
    finally:
        evaluator.close()
    return steps / best, steps / len(genomes)


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
    best = np.inf
    try:
        for _ in range(repeats):
            pool.reset()
            start = time.perf_counter()
            for t in range(steps):
                pool.step(actions[t])
            best = min(best, time.perf_counter() - start)
    finally:
        pool.close()
    return envs * steps / best


def solved_population(brain: dict[str, Any], population: int, generations: int
                      ) -> tuple[np.ndarray, int, float]:
    """The last population of a CMA-ES run (native) whose mean reached THRESHOLD, the
    generation, and the population's mean return."""
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
          genomes: np.ndarray, repeats: int, floor: float) -> dict[str, float]:
    print(f"  {label} ({len(genomes)} genomes)", flush=True)
    rates: dict[str, float] = {}
    for mode in modes:
        rate, length = steps_per_second(template, "CartPole-v1", mode, rows, genomes, repeats)
        rates[mode] = rate
        versus = f"{rate / rates['off']:7.1f}x off" if "off" in rates else ""
        print(f"    {mode:8s} {rate:12,.0f} steps/s  mean episode {length:6.1f}  {versus}"
              f"  {rate / floor:5.2f} of the floor", flush=True)
    return rates


def rows_sweep(template: IBrainTemplate, populations: dict[str, np.ndarray],
               sweep: list[int], repeats: int) -> None:
    print("  native for other episodes.batch_rows (steps/s):", flush=True)
    for label, genomes in populations.items():
        rates = [steps_per_second(template, "CartPole-v1", "native", rows, genomes, repeats)[0]
                 for rows in sweep]
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
    off = steps_per_second(template, "HalfCheetah-v5", "off", rows, genomes, repeats)[0]
    print(f"    off      {off:12,.0f} steps/s", flush=True)
    if not envpool:
        return
    used = min(rows, population)
    own = envpool_floor("HalfCheetah-v5", used, repeats)
    rate = steps_per_second(template, "HalfCheetah-v5", "envpool", rows, genomes, repeats)[0]
    print(f"    envpool  {rate:12,.0f} steps/s  {rate / off:5.1f}x off; envpool's own pool "
          f"at {used} environments, random actions: {own:,.0f} steps/s; ratio "
          f"{rate / own:.2f} (goal >= 0.9)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--population", type=int, default=256)
    parser.add_argument("--rows", type=int, default=EpisodesConfig().batch_rows,
                        help="episodes.batch_rows of the batched modes")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--sweep-rows", default="16,32,64,128,256",
                        help="batch_rows values for native's sweep ('' for none)")
    parser.add_argument("--solve-generations", type=int, default=60)
    parser.add_argument("--mujoco-population", type=int, default=64)
    parser.add_argument("--skip-mujoco", action="store_true")
    args = parser.parse_args()
    envpool = importlib.util.find_spec("envpool") is not None
    modes = ["off", "sync", "native"] + (["envpool"] if envpool else [])
    if not envpool:
        print("envpool is not installed (pip install 'evo-core[envpool]'): its rows are skipped")
    sweep = [int(rows) for rows in args.sweep_rows.split(",") if rows]
    with threadpool_limits(1):
        used = min(args.rows, args.population)
        floor = cartpole_floor(used, args.repeats)
        print(f"CartPole-v1, population {args.population}, episodes.batch_rows = {args.rows}; "
              f"floor: CartPoleVectorEnv at {used} environments, constant action, "
              f"{floor:,.0f} steps/s", flush=True)
        for name, brain in BRAINS.items():
            template = template_for(brain, "CartPole-v1")
            rng = np.random.default_rng(0)
            random = rng.normal(0, 1, (args.population, template.genome_size))
            solved, generation, mean = solved_population(brain, args.population,
                                                         args.solve_generations)
            print(f"\n{name}", flush=True)
            short = table("random genomes", template, modes, args.rows, random, args.repeats,
                          floor)
            long = table(f"solved population (generation {generation} of a native CMA-ES run, "
                         f"mean return {mean:.0f})", template, modes, args.rows, solved,
                         args.repeats, floor)
            print(f"  goals: random native / off = {short['native'] / short['off']:.1f} "
                  f"(>= 10); solved native / floor = {long['native'] / floor:.2f} (>= 0.6)",
                  flush=True)
            if sweep:
                rows_sweep(template, {"random genomes": random, "solved": solved}, sweep,
                           args.repeats)
    if not args.skip_mujoco:
        with threadpool_limits(1):
            cheetah(args.mujoco_population, args.rows, max(1, args.repeats - 1), envpool)


if __name__ == "__main__":
    main()
