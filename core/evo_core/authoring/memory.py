"""Refusing sizes this machine cannot hold, before anything is allocated or written.

A population of a billion genomes, or a brain of a hundred thousand neurons, validates as a
number, then grows memory for minutes until the kernel kills the process or numpy gives up; the
user learns nothing. The engine estimates the population's genomes up front
(`check_population_fits`); a brain template estimates its own large arrays before it allocates
them (`memory_shortfall`) and raises `ValueError` with the estimate, which the engine reports as
one line naming the brain.
"""

from __future__ import annotations

import os
from pathlib import Path

from evo_core.errors import UserError

__all__ = ["machine_memory", "format_bytes", "memory_shortfall", "check_population_fits"]

#: How many population-sized float64 arrays a generation holds at once (samples, the optimizer's
#: working copies, the evaluated batch): a deliberately rough, generous factor.
GENOME_COPIES = 3
_CGROUP_LIMIT = Path("/sys/fs/cgroup/memory.max")


def machine_memory() -> int | None:
    """Bytes of physical memory, lowered to a cgroup limit when one is set; None if unknown."""
    try:
        total: int | None = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        total = None
    try:
        limit = _CGROUP_LIMIT.read_text().strip()
    except OSError:
        limit = "max"
    if limit.isdigit():
        total = min(int(limit), total) if total else int(limit)
    return total


def format_bytes(count: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if count < 1024:
            return f"{count:.1f} {unit}" if unit != "B" else f"{count:.0f} B"
        count /= 1024
    return f"{count:.1f} EiB"


def memory_shortfall(needed: int, purpose: str = "",
                     available: int | None = None) -> str | None:
    """"needs about X `purpose`; this machine has Y" when `needed` bytes exceed the machine's
    memory, else None."""
    available = machine_memory() if available is None else available
    if available is None or needed <= available:
        return None
    purpose = f" {purpose}" if purpose else ""
    return (f"needs about {format_bytes(needed)}{purpose}; this machine has "
            f"{format_bytes(available)}")


def check_population_fits(population: int, genome_size: int,
                          available: int | None = None) -> None:
    """Raise a `UserError` with the estimate when `population` genomes of `genome_size` genes
    would need more memory than the machine has."""
    needed = GENOME_COPIES * 8 * population * genome_size
    shortfall = memory_shortfall(needed, f"for genomes of {genome_size} genes", available)
    if shortfall is not None:
        raise UserError(f"optimizer.population_size = {population} {shortfall}; lower "
                        "optimizer.population_size or the brain's size")
