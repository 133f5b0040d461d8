"""Timing helpers shared by the benchmarks."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(repeats: int, function: Callable[[], object]) -> float:
    """The fastest of `repeats` runs in seconds: the least disturbed by the machine."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)
