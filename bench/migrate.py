"""How `evo migrate`'s time grows with the length of a design space's list.

    python bench/migrate.py [--values 2000] [--factor 10] [--repeats 1]

A predecessor CTRNN + CMA-ES config whose `brain.delta_t` is a list of N distinct alternatives
is migrated (each alternative migrated and validated on its own, the distinct choices found)
for N = values and N = values x factor. The figure is the time per value of the long list over
that of the short one: about 1 when migration is linear in the list's length, about `factor`
when it is quadratic (as it was: 20,000 values took 8.4 s and 200,000 values 684 s and 1.9 GB).
CPU time is measured, not wall time, so the figure holds on a loaded machine.
"""

from __future__ import annotations

import argparse
import copy
import time
from typing import Any

from evo_core.config.migrate import migrate_config

BASE: dict[str, Any] = {
    "environment": "CartPole-v1", "random_seed": 1, "number_generations": 5,
    "optimizer": {"type": "CMA_ES", "population_size": 20, "sigma": 1.0, "mu": 5},
    "brain": {"type": "CTRNN", "number_neurons": 5, "delta_t": 0.05},
    "episode_runner": {"number_fitness_runs": 1},
}


def per_value(values: int, repeats: int) -> float:
    """CPU seconds per alternative (the best of `repeats`)."""
    old = copy.deepcopy(BASE)
    old["brain"]["delta_t"] = [0.001 * (i + 1) for i in range(values)]
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        migration = migrate_config(old)
        best = min(best, time.process_time() - start)
        assert len(migration.config["sweep"]["sample"]["brain.delta_t"]) == values
    return best / values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, default=2000)
    parser.add_argument("--factor", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    migrate_config(copy.deepcopy(BASE))  # imports and the registry, outside the timing
    short = per_value(args.values, args.repeats)
    long = per_value(args.values * args.factor, args.repeats)
    print(f"{args.values} values: {short * 1e3:.3f} ms CPU per value")
    print(f"{args.values * args.factor} values: {long * 1e3:.3f} ms CPU per value")
    print(f"ratio (1 = linear, {args.factor} = quadratic): {long / short:.2f}")


if __name__ == "__main__":
    main()
