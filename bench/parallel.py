"""Speed-up of the mp and dask handlers over sequential, and their per-task overhead.

    python bench/parallel.py [--workers 2] [--generations 4] [--repeats 3]

An evaluation-heavy experiment (Pendulum-v1, fixed 200-step episodes, a CTRNN of 20 neurons,
64 genomes x 4 episodes per generation) runs once per handler in this process; the ratio is
sequential wall time over the handler's. The overhead is measured with one-step episodes, so
nearly all the time is the handler's own: (wall time - sequential wall time / workers) / tasks.
Goals: mp >= 1.8x and dask >= 1.6x with 2 workers on 2 cores.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

from brain_ctrnn import CTRNNConfig, CTRNNTemplate
from evo_core.config.schema import EpisodesConfig
from evo_core.contract.protocols import IBrainTemplate, IHandler
from evo_core.evaluation.episodes import RunnerSpec
from evo_core.handlers.dask import DaskConfig, DaskHandler
from evo_core.handlers.mp import MPConfig, MPHandler
from evo_core.handlers.sequential import SequentialConfig, SequentialHandler
from evo_core.processes.blas_threads import blas_threads

POPULATION = 64


def make_handler(name: str, spec: RunnerSpec, workers: int) -> IHandler:
    if name == "mp":
        return MPHandler(MPConfig(workers=workers), spec)
    if name == "dask":
        return DaskHandler(DaskConfig(workers=workers), spec)
    return SequentialHandler(SequentialConfig(), spec)


def timed(handler: IHandler, template: IBrainTemplate, generations: int,
          repeats: int) -> tuple[float, list[float]]:
    """Best of `repeats` passes over the same generations (start-up is not measured)."""
    rng = np.random.default_rng(0)
    batches = [(rng.normal(0, 0.5, (POPULATION, template.genome_size)),
                rng.integers(0, 2**31, POPULATION)) for _ in range(generations)]
    handler.evaluate(template, *batches[0])  # start-up and template shipping are not measured
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fitness = []
        for genomes, seeds in batches:
            fitness += [r.fitness for r in handler.evaluate(template, genomes, seeds)]
        times.append(time.perf_counter() - start)
    return min(times), fitness


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--generations", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    env = gym.make("Pendulum-v1")
    template = CTRNNTemplate(CTRNNConfig(number_neurons=20), env.observation_space,
                             env.action_space, np.random.default_rng(0))
    rows = []
    for label, episodes in (("heavy", EpisodesConfig(runs=4)),
                            ("1-step", EpisodesConfig(runs=1, max_steps=1))):
        spec = RunnerSpec("Pendulum-v1", episodes)
        times = {}
        reference = None
        for name in ("sequential", "mp", "dask"):
            handler = make_handler(name, spec, args.workers)
            try:
                seconds, fitness = timed(handler, template, args.generations, args.repeats)
            finally:
                handler.close()
            reference = fitness if reference is None else reference
            assert fitness == reference, f"{name} disagrees with sequential"
            times[name] = seconds
        rows.append((label, times))
    tasks = args.generations * args.workers * 2  # chunks_per_worker = 2
    print(f"{args.generations} generations x {POPULATION} genomes, {args.workers} workers, best "
          f"of {args.repeats}, fitnesses identical across handlers")
    heavy, light = rows[0][1], rows[1][1]
    for name in ("sequential", "mp", "dask"):
        ideal = light["sequential"] / args.workers  # the same work split perfectly
        overhead = (light[name] - ideal) / tasks * 1e3 if name != "sequential" else 0.0
        speed_up = heavy["sequential"] / heavy[name]
        print(f"{name:<10} {heavy[name]:7.2f} s   speed-up {speed_up:5.2f}x"
              f"   per-task overhead {overhead:6.2f} ms")


if __name__ == "__main__":
    with blas_threads(1):
        main()
