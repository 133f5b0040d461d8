"""The machine's memory, and saying in one line that a size exceeds it.

In the base layer because the hosts of sizes are everywhere: a brain template estimates its
arrays (`authoring.memory`), the engine its population, and the readers of a run folder what
a received file would expand to (`results.reading`).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["machine_memory", "format_bytes", "memory_shortfall"]

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
