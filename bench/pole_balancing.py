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

With `--out DIR` every run keeps its folder (DIR/<brain>/seed-N, checkpointed every 10
generations), so hours of runs survive the end of a session: run the same command again and a
finished run is read from its log.csv, an unfinished one continues with `evo_core.api.resume`
(exactly: the same evaluations as one uninterrupted run). A kept run's budget is the one it
started with (config.json's `stop.evaluations`); one that has spent `--budget` unsolved counts
as failed. Without it, runs live in temporary folders.

Goals: with velocities, a mean of at most 300 with an FFNN; without velocities, at most 1,000
with a recurrent brain (the CTRNN's figure is reported whatever it is).
"""

from __future__ import annotations

import argparse
import contextlib
import re
import statistics
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np

from evo_core.api import Run, resume, train
from evo_core.environments.double_pole import DoublePole
from evo_core.sweeps.statistics import estimate

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


@contextlib.contextmanager
def _run_folder(out: Path | None, name: str, seed: int) -> Iterator[Path]:
    """Where the run of `name` and `seed` lives: under `out`, kept, or in a temporary folder."""
    if out is None:
        with tempfile.TemporaryDirectory() as folder:
            yield Path(folder) / "run"
        return
    yield out / re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") / f"seed-{seed}"


def _finished(run: Run, budget: int) -> bool:
    log = run.log
    return bool(log) and (log[-1]["solved"] == 1 or log[-1]["evaluations"] >= budget)


def one_run(name: str, seed: int, budget: int, out: Path | None = None
            ) -> tuple[str, int, int | None, int, float]:
    """(brain, seed, evaluations to solve or None, evaluations spent, seconds): trained, or
    continued or read from its folder under `out`."""
    example, overrides = BRAINS[name]
    started = time.perf_counter()
    with _run_folder(out, name, seed) as folder:
        if (folder / "config.json").is_file():
            run = Run.open(folder)
            if not _finished(run, budget):
                run = resume(folder)
        else:
            run = train(EXAMPLES / example, out=folder,
                        overrides={**overrides, "seed": seed, "stop.evaluations": budget,
                                   "generations": 1_000_000, "checkpoint_every": 10})
        last = run.log[-1]
    spent = int(last["evaluations"])
    return name, seed, spent if last["solved"] == 1 else None, spent, \
        time.perf_counter() - started


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
    found = estimate([float(value) for value in solved])
    assert found is not None
    interval = ("-" if found.half_width is None else
                f"{found.mean - found.half_width:.0f}-{found.mean + found.half_width:.0f}")
    spread = f"{min(solved)}-{max(solved)}, sd {statistics.pstdev(solved):.0f}"
    return (f"| {name} | {len(solved)} | {found.mean:.0f} | {statistics.median(solved):.0f} | "
            f"{spread} | {interval} | {failed} |")


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
    jobs = [(name, args.first_seed + index) for index in range(max(counts.values()))
            for name in args.only if index < counts[name]]  # seed by seed: all brains advance
    with ProcessPoolExecutor(args.workers) as pool:
        futures = [pool.submit(one_run, name, seed, args.budget, args.out)
                   for name, seed in jobs]
        for future in as_completed(futures):
            name, seed, solved, spent, seconds = future.result()
            if solved is None:
                failures[name] += 1
            else:
                results[name].append(solved)
            outcome = f"solved after {solved}" if solved is not None else \
                f"NOT solved within {spent}"
            print(f"  {name:24s} seed {seed:3d}: {outcome} evaluations ({seconds:.0f} s)",
                  flush=True)
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
