"""Share of runs that reach the goal of a deceptive maze: fitness only, novelty search and
MAP-Elites, each from its example config over the same seeds.

    python bench/deceptive_maze.py [--maze hard] [--seeds 10] [--first-seed 1] [--workers 2]
                                   [--generations 30] [--max-steps 250] [--population 30]

Each run trains `examples/maze_*.toml` (with the given maze, generations, step limit and
population) through `evo_core.api.train` in a temporary folder; a run reached the goal if its
best return (best_ever) is at least the start's distance to the goal minus the goal's radius.
Runs go to a process pool, and each prints a line as it ends. The ratio is a method's share over
fitness only's, measured in the same invocation (fitness only is the baseline; "inf" when it
reached the goal in no run).
Goal: novelty search and MAP-Elites beat fitness only.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from evo_core.api import train
from evo_core.environments.maze import HARD_MAZE, LAYOUTS, MEDIUM_MAZE, reached_goal

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
METHODS = {"fitness only": "maze_fitness.toml", "novelty search": "maze_novelty.toml",
           "MAP-Elites": "maze_map_elites.toml"}


ENVIRONMENTS = {"medium": MEDIUM_MAZE, "hard": HARD_MAZE}


def one_run(method: str, maze: str, seed: int, generations: int, max_steps: int,
            population: int) -> tuple[str, int, float, int | None, float]:
    """(method, seed, best return, first generation that reached the goal or None, seconds)
    of one training run."""
    overrides: dict[str, object] = {"environment.id": ENVIRONMENTS[maze], "seed": seed,
                                    "generations": generations,
                                    "episodes.max_steps": max_steps,
                                    "optimizer.population_size": population,
                                    "checkpoint_every": 0}
    if method == "novelty search":
        overrides["optimizer.mu"] = population // 2
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        run = train(EXAMPLES / METHODS[method], out=Path(folder) / "run", overrides=overrides)
        best = float(run.log[-1]["best_ever"])
        first = next((int(row["generation"]) for row in run.log
                      if reached_goal(float(row["best_ever"]), LAYOUTS[maze])), None)
    return method, seed, best, first, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--maze", choices=sorted(ENVIRONMENTS), default="hard")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--generations", type=int, default=30)
    parser.add_argument("--max-steps", type=int, default=250)
    parser.add_argument("--population", type=int, default=30)
    args = parser.parse_args()
    started = time.perf_counter()
    layout = LAYOUTS[args.maze]
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    jobs = [(method, seed) for seed in seeds for method in METHODS]
    results = []
    with ProcessPoolExecutor(args.workers) as pool:
        futures = [pool.submit(one_run, method, args.maze, seed, args.generations,
                               args.max_steps, args.population) for method, seed in jobs]
        for future in as_completed(futures):
            method, seed, best, first, seconds = future.result()
            results.append((method, seed, best, seconds))
            outcome = ("missed the goal" if first is None
                       else f"reached the goal in generation {first}")
            print(f"  {method:15s} seed {seed:3d}: best return {best:7.1f}, {outcome} "
                  f"({seconds:.0f} s)", flush=True)
    print(f"{args.maze} maze: {args.seeds} seeds, {args.generations} generations x "
          f"{args.population} genomes, {args.max_steps} steps; goal reached at a return >= "
          f"{layout.start_distance - 10:g}")
    shares: dict[str, float] = {}
    for method in METHODS:
        bests = [best for name, _, best, _ in results if name == method]
        reached = sum(reached_goal(best, layout) for best in bests)
        shares[method] = reached / len(bests)
        baseline = shares["fitness only"]
        ratio = "baseline" if method == "fitness only" else (
            f"{shares[method] / baseline:.2f}x" if baseline else
            ("inf" if shares[method] else "-"))
        print(f"{method:15s} reached {reached:2d}/{len(bests)} ({shares[method]:.0%})  "
              f"median best return {sorted(bests)[len(bests) // 2]:7.1f}  {ratio}")
    print(f"{len(results)} runs in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
