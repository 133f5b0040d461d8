"""What the framework costs over a hand-written loop doing the same evaluations.

    python bench/overhead.py [--generations 30] [--repeats 3]

Both sides run CMA-ES (pycma, same population, same seeded sampler) on a CTRNN (N = 10) in
CartPole-v1, 3 episodes per evaluation, with the same episode seeds, so they evaluate the very
same genomes on the very same episodes (the script checks that the fitnesses agree). The bare
loop is pycma ask/tell + a numpy CTRNN + gymnasium, nothing else; evo is `evo train` with the
sequential handler, run folder, checkpoints and plot included. Goal: ratio <= 1.10.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
import time
from pathlib import Path

import cma
import gymnasium as gym
import numpy as np
from threadpoolctl import threadpool_limits

from evo_core.cli.main import main as evo_main

SEED, POPULATION, NEURONS, RUNS, DT = 3, 24, 10, 3, 0.05


def bare_loop(generations: int) -> tuple[list[float], int]:
    _template_ss, optimizer_ss, evaluation_ss = np.random.SeedSequence(SEED).spawn(3)
    optimizer_rng = np.random.Generator(np.random.PCG64(optimizer_ss))
    evaluation_rng = np.random.Generator(np.random.PCG64(evaluation_ss))
    n, inputs, outputs = NEURONS, 4 + 1, 2
    sizes = [n * inputs, n * n, n * outputs, n, 2]
    cut = np.cumsum(sizes)[:-1]
    es = cma.CMAEvolutionStrategy(np.zeros(sum(sizes)), 0.5, {
        "popsize": POPULATION, "randn": lambda *s: optimizer_rng.standard_normal(s),
        "verbose": -9, "tolfun": 0, "tolfunhist": 0, "tolflatfitness": 10**9,
        "tolstagnation": 10**9, "tolx": 0, "tolconditioncov": np.inf})
    env = gym.make("CartPole-v1")
    bests, steps = [], 0
    for _ in range(generations):
        solutions = es.ask()
        seed = int(evaluation_rng.integers(0, 2**31, dtype=np.int64))
        fitness = []
        for genome in solutions:
            genome = np.ascontiguousarray(genome)
            v, w, t, y0, bounds = np.split(genome, cut)
            v, w = v.reshape(n, inputs).copy(), w.reshape(n, n).copy()
            d = np.diag_indices(n)
            w[d] = np.where(w[d] != 0, -np.abs(w[d]), w[d])
            tt = np.ascontiguousarray(t.reshape(n, outputs).T)
            low, high = -abs(bounds[0]), abs(bounds[1])
            sequence = np.random.SeedSequence(seed)
            env_seed = int(sequence.generate_state(1)[0])
            total = 0.0
            u = np.ones(inputs)
            for episode in range(RUNS):
                observation, _ = env.reset(seed=env_seed if episode == 0 else None)
                y = y0.copy()
                while True:
                    u[:-1] = observation
                    dy = w @ np.tanh(y)
                    dy += v @ u
                    dy *= DT
                    y = y + dy
                    np.maximum(y, low, out=y)
                    np.minimum(y, high, out=y)
                    action = int(np.argmax(np.tanh(tt @ y)))
                    observation, reward, terminated, truncated, _ = env.step(action)
                    total += float(reward)
                    steps += 1
                    if terminated or truncated:
                        break
            fitness.append(total / RUNS)
        es.tell(solutions, [-f for f in fitness])
        bests.append(max(fitness))
    return bests, steps


def evo_run(generations: int, folder: Path) -> tuple[list[float], int]:
    config = folder / "config.json"
    config.write_text(json.dumps({
        "environment": "CartPole-v1", "seed": SEED, "generations": generations,
        "brain": {"type": "ctrnn", "number_neurons": NEURONS, "delta_t": DT},
        "optimizer": {"type": "cma-es", "population_size": POPULATION, "sigma": 0.5},
        "episodes": {"runs": RUNS},
        # the same evaluations as the bare loop: no fresh episodes for the champion (which
        # `evo train` adds by default when an evaluation has fewer than 5 episodes)
        "champion": {"episodes": 0}}))
    out = folder / "run"
    with contextlib.redirect_stdout(io.StringIO()):  # the run folder's path
        assert evo_main(["train", str(config), "--out", str(out), "--quiet"]) == 0
    lines = (out / "log.csv").read_text().splitlines()[1:]
    return [float(line.split(",")[2]) for line in lines], int(lines[-1].split(",")[7])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generations", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    bare_times, evo_times = [], []
    for _ in range(args.repeats):  # interleaved, so drifts of the machine hit both
        start = time.perf_counter()
        bare_bests, bare_steps = bare_loop(args.generations)
        bare_times.append(time.perf_counter() - start)
        with tempfile.TemporaryDirectory() as folder:
            start = time.perf_counter()
            evo_bests, evo_steps = evo_run(args.generations, Path(folder))
            evo_times.append(time.perf_counter() - start)
    same = bare_bests == evo_bests and bare_steps == evo_steps
    print(f"evaluations: {args.generations * POPULATION}, environment steps: {evo_steps}, "
          f"same fitnesses on both sides: {same}")
    print(f"bare loop  {min(bare_times):7.2f} s (best of {args.repeats})")
    print(f"evo        {min(evo_times):7.2f} s (best of {args.repeats})")
    print(f"ratio      {min(evo_times) / min(bare_times):7.3f}   (goal <= 1.10)")


if __name__ == "__main__":
    with threadpool_limits(1):
        main()
