"""Evaluations to solve double-pole balancing, with and without velocities, beside the
published table.

    OPENBLAS_NUM_THREADS=1 python bench/pole_balancing.py [--seeds 20] [--seeds-without N]
        [--first-seed 1] [--workers 2] [--only NAME ...] [--budget 100000] [--out DIR]

Each brain trains `examples/double_pole.toml` (with velocities) or
`examples/double_pole_no_velocity.toml` (without) through `evo_core.api.train`, seeds
first-seed .. first-seed + seeds - 1 (`--seeds-without` for the brains without velocities,
default the same), the example's `[stop]` table deciding when it is solved
(the published criteria; the test episodes are not counted). A run is "evaluations to solve" of
its solving generation (log.csv's `evaluations` there), counted up to the end of that generation;
a run that spends `--budget` evaluations unsolved is listed as failed and left out of the mean.
Evaluations do not depend on the machine's load, so the figures are load-free; seconds are
printed for orientation only. The environment's own cost is measured first: microseconds a
decision (process time, gymnasium's wrappers bypassed) and one 100,000-decision episode.

With `--out DIR` every run keeps its folder (DIR/<brain>/seed-N), so hours of runs survive the
end of a session: run the same command again and a finished run is read from its log.csv, an
unfinished one continues with `evo_core.api.resume` (exactly: the same evaluations as one
uninterrupted run); bench/_seeds.py has the runs over seeds, shared with bench/neat.py. A kept
run's budget is the one it started with (config.json's `stop.evaluations`); one that has spent
`--budget` unsolved counts as failed. Without it, runs live in temporary folders.

Goals: with velocities, a mean of at most 300 with an FFNN; without velocities, at most 1,000
with a recurrent brain (the CTRNN's figure is reported whatever it is).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
from _seeds import Job, evo_run, interval, run_jobs, spread

from evo_core.environments.double_pole import DoublePole

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
WITH, WITHOUT = "double_pole.toml", "double_pole_no_velocity.toml"

#: name -> (example, overrides of its config)
BRAINS: dict[str, tuple[str, dict[str, Any]]] = {
    "FFNN 6-1, no bias": (WITH, {}),
    "FFNN 6-1, biases": (WITH, {"brain.use_bias": True}),
    "CTRNN (no velocities)": (WITHOUT, {}),
    "LSTM (no velocities)": (WITHOUT, {"brain": {"type": "lstm", "hidden_size": 3,
                                                 "use_bias": False}}),
}

PUBLISHED = [
    ("CMA-ES (Igel 2003)", 895, 6061), ("CoSyNE", 954, 3416), ("NEAT", 3600, 6929),
    ("ESP", 3800, 26342), ("plain pycma, linear / 6-6-1 (today)", "172 / 271", 812),
]


def environment_cost() -> tuple[float, float]:
    """(µs a decision, seconds of a 100,000-decision episode), process time, the poles held
    up by a linear controller so that the episode is not cut short."""
    env = DoublePole()
    env.reset()
    gains = np.array([0.26, 0.56, 9.95, 2.62, -6.52, -0.59])  # balances the standard start
    action = np.zeros(1)
    started = time.process_time()
    for _ in range(100_000):
        action[0] = -float(gains @ np.array(env.state))
        _, _, terminated, _, _ = env.step(action)
        if terminated:
            raise RuntimeError("the controller dropped the poles")
    episode = time.process_time() - started
    env.reset()
    zero = np.zeros(1)
    started, decisions = time.process_time(), 0
    while decisions < 100_000:
        _, _, terminated, _, _ = env.step(zero)
        decisions += 1
        if terminated:
            env.reset()
    return (time.process_time() - started) / decisions * 1e6, episode


def _row(name: str, solved: list[int], failed: int) -> str:
    if not solved:
        return f"| {name} | 0 | - | - | - | - | {failed} |"
    mean, within = interval(solved)
    return (f"| {name} | {len(solved)} | {mean:.0f} | {statistics.median(solved):.0f} | "
            f"{spread(solved)} | {within} | {failed} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--seeds-without", type=int, default=None)
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--budget", type=int, default=100_000)
    parser.add_argument("--only", nargs="*", choices=sorted(BRAINS), default=sorted(BRAINS))
    parser.add_argument("--out", type=Path, default=None,
                        help="keep the runs here; run again to continue them")
    args = parser.parse_args()
    per_decision, episode = environment_cost()
    print(f"evo/DoublePole-v0: {per_decision:.1f} µs a decision (step alone), "
          f"{episode:.2f} s for 100,000 decisions with a linear controller (process time)")
    started = time.perf_counter()
    results: dict[str, list[int]] = {name: [] for name in args.only}
    failures = dict.fromkeys(args.only, 0)
    without = args.seeds if args.seeds_without is None else args.seeds_without
    counts = {name: without if BRAINS[name][0] == WITHOUT else args.seeds for name in args.only}
    order = [(name, args.first_seed + index) for index in range(max(counts.values()))
             for name in args.only if index < counts[name]]  # seed by seed: all brains advance
    jobs: list[Job] = [(evo_run, (name, EXAMPLES / BRAINS[name][0], BRAINS[name][1], seed,
                                  args.budget, args.out)) for name, seed in order]
    for outcome in run_jobs(jobs, args.workers):
        if outcome.solved is None:
            failures[outcome.name] += 1
        else:
            results[outcome.name].append(outcome.solved)
    print(f"\n{args.seeds} seeds with velocities, {without} without; evaluations to solve over "
          "the solved runs\n")
    print("| evo brain (CMA-ES) | solved | mean | median | range, sd | 95 % t-interval | failed |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in args.only:
        print(_row(name, results[name], failures[name]))
    print("\n| published method | with velocities | without velocities |")
    print("| --- | --- | --- |")
    for method, with_velocities, without in PUBLISHED:
        print(f"| {method} | {with_velocities} | {without} |")
    print(f"\n{sum(map(len, results.values())) + sum(failures.values())} runs in "
          f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
