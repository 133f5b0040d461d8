"""Speed-up of `evo sweep` on a process pool over the same runs one after another.

    python bench/sweep.py [--parallel 2] [--generations 6] [--repeats 1]

A 2 x 4 sweep (a CTRNN of 4 or 8 neurons on CartPole-v1, 4 seeds each, 24 genomes x 2
episodes of up to 500 steps per generation) runs once as a sweep with `parallel` processes, and
once as the same 8 runs trained one after another in this process with `evo_core.api.train`
(what one would do without sweeps). The ratio is the sequential wall time over the sweep's;
the sweep's includes starting its processes and writing summary.csv and fitness.png. The runs
of both must be identical. Goal: >= 1.8x with 2 processes on 2 cores.
"""

from __future__ import annotations

import argparse
import csv
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from evo_core import api
from evo_core.sweeps.sweeping import prepare_sweep, run_sweep

SEEDS = 4
NEURONS = [4, 8]


def sweep_config(generations: int, parallel: int) -> dict[str, Any]:
    return {"environment": "CartPole-v1", "generations": generations,
            "brain": {"type": "ctrnn", "number_neurons": NEURONS[0]},
            "optimizer": {"type": "cma-es", "population_size": 24, "sigma": 0.5},
            "episodes": {"runs": 2, "max_steps": 500},
            "sweep": {"seeds": SEEDS, "parallel": parallel,
                      "grid": {"brain.number_neurons": NEURONS}}}


def fitness(run: Path) -> list[list[str]]:
    with open(run / "log.csv", newline="") as handle:
        return [[row["best"], row["mean"]] for row in csv.DictReader(handle)]


def one_after_another(folder: Path, config: dict[str, Any]) -> float:
    base = {key: value for key, value in config.items() if key != "sweep"}
    start = time.perf_counter()
    for neurons in NEURONS:
        for seed in range(SEEDS):
            api.train(base, out=folder / f"number_neurons={neurons}_seed={seed}",
                      overrides={"brain.number_neurons": neurons, "seed": seed})
    return time.perf_counter() - start


def as_sweep(folder: Path, config: dict[str, Any]) -> float:
    file = folder / "bench.json"
    file.write_text(json.dumps(config))
    start = time.perf_counter()
    plan = prepare_sweep(file)
    run_sweep(plan, folder / "sweep")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--generations", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    config = sweep_config(args.generations, args.parallel)
    sequential, pooled = [], []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="evo-bench-sweep-") as name:
            folder = Path(name)
            sequential.append(one_after_another(folder / "sequential", config))
            pooled.append(as_sweep(folder, config))
            names = sorted(p.name for p in (folder / "sequential").iterdir())
            same = all(fitness(folder / "sequential" / n) == fitness(folder / "sweep" / n)
                       for n in names)
            if not same:
                raise SystemExit("the sweep's runs differ from the same runs trained alone")
    print(f"8 runs one after another: {min(sequential):7.2f} s")
    print(f"sweep, parallel = {args.parallel}:     {min(pooled):7.2f} s")
    print(f"speed-up: {min(sequential) / min(pooled):.2f}x (goal >= 1.8x with 2 processes on "
          "2 cores); the runs are identical")


if __name__ == "__main__":
    main()
