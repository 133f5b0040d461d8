"""Batched evaluation against one genome at a time: environment steps per second, and the time a
whole run takes to solve CartPole.

    python bench/batched.py [--population 256] [--generations 150] [--budget 1800]
                            [--repeats 2] [--skip-mujoco] [--mujoco-population 64]

Everything runs in this one process (the sequential handler), with a CTRNN (N = 6):

1. Throughput: one population of 256 genomes evaluated by `EpisodeRunner` ("off") and by the
   batched runner in "sync", "native" and "envpool" mode, on CartPole-v1 for two populations
   (random genomes, whose episodes are short, so a batch mostly waits for its longest episode;
   and the last population of the native run, whose episodes mostly last 500 steps), and on
   HalfCheetah-v5 (MuJoCo; `--mujoco-population` random genomes) for off, sync and envpool.
   Only the steps of running episodes count; best of `--repeats`. Goal: native >= 15x off.
2. Time to solve: the generation loop of `evo train` (CMA-ES, population 256, sequential
   handler, no run folder) until the population's mean return reaches 475 on CartPole-v1, with
   vectorize = native, then off; a run that has not reached it after `--budget` seconds stops
   (the ratio is then an upper bound). Goal: native <= 0.2 of off.
"""

from __future__ import annotations

import argparse
import importlib.util
import time

import gymnasium as gym
import numpy as np
from threadpoolctl import threadpool_limits

from brain_ctrnn import CTRNNConfig, CTRNNTemplate
from evo_core.config import validate_config
from evo_core.config.schema import EpisodesConfig
from evo_core.contract.protocols import IEvaluator
from evo_core.evaluation.batched_episodes import BatchedEpisodeRunner
from evo_core.evaluation.episodes import EpisodeRunner
from evo_core.hooks.discovery import get_registry
from evo_core.running.experiment import build_experiment

NEURONS, SEED, THRESHOLD = 6, 1, 475.0


def template_for(environment: str) -> CTRNNTemplate:
    env = gym.make(environment)
    try:
        return CTRNNTemplate(CTRNNConfig(number_neurons=NEURONS), env.observation_space,
                             env.action_space, np.random.default_rng(0))
    finally:
        env.close()


def runner(template: CTRNNTemplate, environment: str, mode: str) -> IEvaluator:
    if mode == "off":
        return EpisodeRunner(template, environment, EpisodesConfig())
    return BatchedEpisodeRunner(template, environment, EpisodesConfig(vectorize=mode))


def steps_per_second(template: CTRNNTemplate, environment: str, mode: str,
                     genomes: np.ndarray, repeats: int) -> tuple[float, float]:
    """(environment steps per second, mean episode length), best of `repeats`."""
    evaluator = runner(template, environment, mode)
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


def throughput(label: str, template: CTRNNTemplate, environment: str, modes: list[str],
               genomes: np.ndarray, repeats: int) -> None:
    print(f"\n{label}: {environment}, {len(genomes)} genomes")
    off: float | None = None
    for mode in modes:
        rate, length = steps_per_second(template, environment, mode, genomes, repeats)
        off = rate if mode == "off" else off
        ratio = f"{rate / off:6.1f}x off" if off else ""
        print(f"  {mode:8s} {rate:12,.0f} steps/s  (mean episode {length:6.1f} steps)  {ratio}",
              flush=True)


def solve(vectorize: str, population: int, generations: int, budget: float
          ) -> tuple[int, float, bool, np.ndarray]:
    """(generation, seconds, whether the population mean reached THRESHOLD there) and the last
    population; gives up after `budget` seconds. The generation loop of `evo train` without its
    run folder: ask, evaluate through the sequential handler, tell."""
    config = validate_config({
        "environment": "CartPole-v1", "seed": SEED, "generations": generations,
        "brain": {"type": "ctrnn", "number_neurons": NEURONS},
        "optimizer": {"type": "cma-es", "population_size": population, "sigma": 0.5},
        "episodes": {"vectorize": vectorize}}, get_registry(), "bench")
    experiment = build_experiment(config, get_registry())
    handler = experiment.make_handler()
    genomes = np.empty((0, experiment.template.genome_size))
    generation, seconds = 0, 0.0
    try:
        start = time.perf_counter()
        for generation in range(1, generations + 1):
            genomes = experiment.optimizer.ask()
            seeds = experiment.streams.evaluation_seeds(len(genomes), per_candidate=False)
            results = handler.evaluate(experiment.template, genomes, seeds)
            fitnesses = np.array([result.fitness for result in results])
            experiment.optimizer.tell(fitnesses)
            seconds = time.perf_counter() - start
            if fitnesses.mean() >= THRESHOLD:
                return generation, seconds, True, genomes
            if seconds > budget:
                break
    finally:
        handler.close()
    return generation, seconds, False, genomes


def report(mode: str, outcome: tuple[int, float, bool, np.ndarray]) -> None:
    generation, seconds, reached, _ = outcome
    state = "reached" if reached else "NOT reached, stopped"
    print(f"  {mode:8s} {state} at generation {generation}, {seconds:.1f} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--population", type=int, default=256)
    parser.add_argument("--generations", type=int, default=150)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--budget", type=float, default=1800.0,
                        help="seconds after which a run to the threshold gives up")
    parser.add_argument("--mujoco-population", type=int, default=64)
    parser.add_argument("--skip-mujoco", action="store_true")
    args = parser.parse_args()
    envpool = importlib.util.find_spec("envpool") is not None
    modes = ["off", "sync", "native"] + (["envpool"] if envpool else [])
    if not envpool:
        print("envpool is not installed (pip install 'evo-core[envpool]'): its rows are skipped")
    with threadpool_limits(1):
        print(f"time until the population mean >= {THRESHOLD:g} on CartPole-v1 "
              f"(CMA-ES, population {args.population}, at most {args.generations} generations "
              f"or {args.budget:g} s)", flush=True)
        native = solve("native", args.population, args.generations, args.budget)
        report("native", native)
        cartpole = template_for("CartPole-v1")
        rng = np.random.default_rng(0)
        throughput("random genomes", cartpole, "CartPole-v1", modes,
                   rng.normal(0, 1, (args.population, cartpole.genome_size)), args.repeats)
        throughput("the last population of the native run", cartpole, "CartPole-v1", modes,
                   native[3], args.repeats)
        off = solve("off", args.population, args.generations, args.budget)
        report("off", off)
        ratio = native[1] / off[1]
        bound = "" if off[2] else " at most (off stopped before reaching it)"
        print(f"  native / off = {ratio:.3f}{bound} (goal <= 0.2)", flush=True)
    if args.skip_mujoco:
        return
    try:
        cheetah = template_for("HalfCheetah-v5")
    except gym.error.DependencyNotInstalled as exc:
        print(f"\nHalfCheetah-v5 skipped: {exc}")
        return
    cheetah_modes = ["off", "sync"] + (["envpool"] if envpool else [])
    with threadpool_limits(1):
        throughput("random genomes", cheetah, "HalfCheetah-v5", cheetah_modes,
                   np.random.default_rng(0).normal(0, 1, (args.mujoco_population,
                                                          cheetah.genome_size)),
                   max(1, args.repeats - 1))


if __name__ == "__main__":
    main()
