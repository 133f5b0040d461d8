"""Lehman and Stanley's maze table: runs that solve the published mazes within the published
budget, NEAT with novelty search beside NEAT on fitness, CMA-ES and MAP-Elites on a fixed
network, in the same invocation.

    OPENBLAS_NUM_THREADS=1 python bench/deceptive_maze.py [--mazes hard medium]
        [--methods novelty fitness cma-es map-elites] [--seeds 40] [--first-seed 1]
        [--workers 2] [--budget 500000] [--out DIR] [--report] [--speed-only]

Each method is an example config on `evo/HardMaze-v1` (examples/hard_maze_neat_novelty.toml,
hard_maze_neat_fitness.toml, hard_maze_cma_es.toml, hard_maze_map_elites.toml); the medium maze
is the same config with `environment.id = "evo/MediumMaze-v1"` (and MAP-Elites' ranges over
that maze's extent). Every run is trained through `evo_core.api.train` (bench/_seeds.py: one
process per run, `--workers` at a time), until its `[stop]` table says solved (a robot within 5
units of the goal: a return of at least 295) or `--budget` evaluations are spent. Runs are
handed out seed by seed, each seed's rows together, so an interrupted table has as many runs
in every row. With `--out DIR` every run keeps its folder (DIR/<maze>-<method>/seed-N) and the
same command continues the table: finished runs are read back, unfinished ones resumed exactly
where they stopped (`evo resume`); a long table can be filled over several sessions, and
`--report` prints the table of the runs finished so far without training (while another
invocation fills it: several may, each with its own `--mazes` and `--methods`).

It first prints the simulator's own speed (`--speed-only`: nothing else): process milliseconds
of one core per 400-step evaluation, random actions and no brain, of evo/HardMaze-v1's vector
environment at 250 robots (goal: at most 1 ms) and of its single environment, against evo's own
v0 hard maze measured in the same run.

Printed per maze and method: runs solved of runs with the share's 95 % Wilson interval, the
same within the paper's budget of 250,000 evaluations, the mean evaluations to solve of the
solved runs with its 95 % t-interval, and process milliseconds per evaluation of the runs made
in this invocation (evolution and evaluation, in the process that trains; runs read back add
nothing). The published figures (Lehman & Stanley 2011, 40
runs each, 250,000 evaluations; their release's budget is 500,000) stand beside them:
hard maze, novelty search 39 of 40 (mean 35,109 evaluations, sd 30,236), fitness-based NEAT
3 of 40; medium maze, both 40 of 40, novelty search in 18,274 evaluations (sd 20,447), fitness
in 56,334 (sd 48,705).
Goals (the hard maze, room for chance): novelty search at least 36 of 40, fitness at most 6.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from _seeds import Job, Outcome, evo_run, interval, kept_outcome, run_jobs

from evo_core.environments.maze import MazeEnv
from evo_core.environments.published_maze import (
    HARD_MAZE,
    MAX_EPISODE_STEPS,
    MEDIUM_MAZE,
    PublishedMazeEnv,
    PublishedMazeVectorEnv,
)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@dataclass(frozen=True)
class Method:
    """A row: its example config and what the paper reports for it (None: not in the paper)."""

    name: str
    example: str
    published: dict[str, str]


METHODS = {
    "novelty": Method("NEAT, novelty search", "hard_maze_neat_novelty.toml",
                      {"hard": "39 of 40 (35,109, sd 30,236)",
                       "medium": "40 of 40 (18,274, sd 20,447)"}),
    "fitness": Method("NEAT, fitness", "hard_maze_neat_fitness.toml",
                      {"hard": "3 of 40", "medium": "40 of 40 (56,334, sd 48,705)"}),
    "cma-es": Method("CMA-ES, fixed network", "hard_maze_cma_es.toml", {}),
    "map-elites": Method("MAP-Elites, fixed network", "hard_maze_map_elites.toml", {}),
}
#: the settings that move a hard-maze example to each maze
MAZES: dict[str, dict[str, Any]] = {
    "hard": {},
    "medium": {"environment.id": MEDIUM_MAZE},
}
#: MAP-Elites' grid over each maze's extent (its walls: hard x 3-195, y 5-202; medium x 6-293,
#: y 5-134)
RANGES = {"hard": [[0, 200], [0, 205]], "medium": [[0, 300], [0, 140]]}


def row_key(maze: str, method: str) -> str:
    return f"{maze}-{method}"


def jobs(mazes: Sequence[str], methods: Sequence[str], seeds: range, budget: int,
         out: Path | None) -> list[Job]:
    """Seed by seed, every maze and method of a seed together."""
    made: list[Job] = []
    for seed in seeds:
        for maze in mazes:
            for method in methods:
                overrides = dict(MAZES[maze])
                if method == "map-elites":
                    overrides["optimizer.ranges"] = RANGES[maze]
                made.append((evo_run, (row_key(maze, method), EXAMPLES / METHODS[method].example,
                                       overrides, seed, budget, out)))
    return made


def wilson(solved: int, runs: int) -> str:
    """The 95 % Wilson score interval of the share solved/runs, as counts of `runs`."""
    if runs == 0:
        return "-"
    z = 1.959963984540054
    share = solved / runs
    centre = (share + z * z / (2 * runs)) / (1 + z * z / runs)
    half = z * math.sqrt(share * (1 - share) / runs + z * z / (4 * runs * runs)) / (
        1 + z * z / runs)
    return f"{runs * max(0.0, centre - half):.1f}-{runs * min(1.0, centre + half):.1f}"


#: the paper's budget (its release's, the table's, is 500,000)
PAPER_BUDGET = 250_000


def cell(outcomes: Sequence[Outcome]) -> tuple[str, str, str]:
    """(solved of runs with its interval, the same within the paper's budget, mean evaluations
    to solve with its interval)."""
    errors = [outcome.error for outcome in outcomes if outcome.error is not None]
    if errors:
        return f"not run: {errors[0]}", "-", "-"
    solved = [outcome.solved for outcome in outcomes if outcome.solved is not None]
    early = sum(value <= PAPER_BUDGET for value in solved)
    runs = len(outcomes)
    share = f"{len(solved)} of {runs} ({wilson(len(solved), runs)})"
    paper = f"{early} of {runs} ({wilson(early, runs)})"
    if not solved:
        return share, paper, "-"
    mean, within = interval(solved)
    return share, paper, f"{mean:,.0f} ({within})"


def per_evaluation(outcomes: Sequence[Outcome]) -> str:
    evaluations = sum(outcome.cpu_evaluations for outcome in outcomes)
    if not evaluations:
        return "-"
    return f"{1e3 * sum(outcome.cpu for outcome in outcomes) / evaluations:.3g}"


def table(outcomes: Sequence[Outcome], mazes: Sequence[str], methods: Sequence[str]) -> str:
    lines = ["| maze | method | solved of runs (95 % interval) | solved within 250,000 | "
             "evaluations to solve, mean of the solved (95 % interval) | published (Lehman & "
             "Stanley 2011, 250,000) | process ms per evaluation |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for maze in mazes:
        for method in methods:
            mine = [outcome for outcome in outcomes if outcome.name == row_key(maze, method)]
            mine.sort(key=lambda outcome: outcome.seed)
            share, paper, evaluations = cell(mine)
            published = METHODS[method].published.get(maze, "not in the paper")
            lines.append(f"| {maze} | {METHODS[method].name} | {share} | {paper} | "
                         f"{evaluations} | {published} | {per_evaluation(mine)} |")
    return "\n".join(lines)


def simulator_speed(robots: int = 250, repeats: int = 3) -> str:
    """Process milliseconds of one core per 400-step evaluation of the maze alone (random
    actions, no brain): the published hard maze's vector environment at `robots` robots and
    its single environment, against evo's own v0 hard maze (its single environment, the only
    form it has), measured here and now; the best of `repeats`."""
    rng = np.random.default_rng(0)
    actions = rng.uniform(0.0, 1.0, (MAX_EPISODE_STEPS, robots, 2)).astype(np.float32)

    def vector() -> None:
        env = PublishedMazeVectorEnv(robots, "hard")
        env.reset()
        for step in actions:
            env.step(step)

    def single(make: Callable[[], gym.Env[Any, Any]], count: int) -> Callable[[], None]:
        def play() -> None:
            env = make()
            for episode in range(count):
                env.reset()
                for step in actions[:, episode]:
                    env.step(step)
        return play

    def best(function: Callable[[], None], evaluations: int) -> float:
        times = []
        for _ in range(repeats):
            started = time.process_time()
            function()
            times.append((time.process_time() - started) / evaluations)
        return 1e3 * min(times)

    v1 = best(vector, robots)
    v1_single = best(single(lambda: PublishedMazeEnv("hard"), 10), 10)
    # v0 in [-1, 1]: the same random actions moved onto its range
    v0 = best(single(lambda: MazeEnv("hard"), 10), 10)
    return (f"simulator, process ms of one core per 400-step evaluation (goal <= 1): "
            f"evo/HardMaze-v1 vector environment at {robots} robots {v1:.3f}, its single "
            f"environment {v1_single:.2f}; evo/HardMaze-v0 (single) {v0:.2f}: the v1 vector "
            f"environment {v0 / v1:.1f}x faster than v0")


def report(mazes: Sequence[str], methods: Sequence[str], seeds: range, budget: int,
           out: Path) -> str:
    """The table of the finished runs kept under `out`, and how many of each row's seeds are
    not finished (running, or not started)."""
    outcomes, unfinished = [], []
    for _, arguments in jobs(mazes, methods, seeds, budget, out):
        name, seed = arguments[0], arguments[3]
        kept = kept_outcome(name, seed, budget, out)
        if kept is None:
            unfinished.append(name)
        else:
            outcomes.append(kept)
    waiting = [f"{name}: {unfinished.count(name)}" for name in dict.fromkeys(unfinished)]
    return (table(outcomes, mazes, methods) + "\n" +
            f"seeds {seeds.start}-{seeds.stop - 1}; not finished (running or not started): "
            f"{', '.join(waiting) or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--mazes", nargs="+", choices=sorted(MAZES), default=["hard", "medium"])
    parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(METHODS))
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--budget", type=int, default=500_000)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--speed-only", action="store_true",
                        help="measure the simulator's speed and stop")
    parser.add_argument("--report", action="store_true",
                        help="with --out: the table of the runs kept there that have finished, "
                             "training nothing (another invocation may be filling it)")
    args = parser.parse_args()
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    if args.report:
        if args.out is None:
            parser.error("--report reads the runs kept under --out DIR")
        print(report(args.mazes, args.methods, seeds, args.budget, args.out))
        return
    print(simulator_speed(), flush=True)
    if args.speed_only:
        return
    print(f"{HARD_MAZE} and {MEDIUM_MAZE}: seeds {seeds.start}-{seeds.stop - 1}, budget "
          f"{args.budget:,} evaluations", flush=True)
    outcomes = list(run_jobs(jobs(args.mazes, args.methods, seeds, args.budget, args.out),
                             args.workers))
    print(table(outcomes, args.mazes, args.methods))


if __name__ == "__main__":
    main()
