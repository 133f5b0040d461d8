"""Timing helpers shared by the benchmarks."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def best_of(repeats: int, function: Callable[[], object]) -> float:
    """The fastest of `repeats` runs in seconds: the least disturbed by the machine."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def step_benchmark_setup(description: str) -> tuple[Any, Any, Any, list[Any]]:
    """Arguments, a CartPole env, a seeded Generator and CartPole-sized random observations:
    the common start of the step/make benchmarks."""
    import argparse

    import gymnasium as gym
    import numpy as np

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    observations = list(rng.uniform(-1, 1, (args.steps, 4)).astype(np.float32))
    return args, gym.make("CartPole-v1"), rng, observations
