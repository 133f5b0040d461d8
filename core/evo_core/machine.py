"""The machine's memory, and saying in one line that a size exceeds it.

What a process may hold is the machine's memory, lowered to a cgroup limit, and to what its
address-space limit (`ulimit -v`, RLIMIT_AS) leaves: under such a limit an archive the machine
could hold failed to allocate with a MemoryError traceback after the run had begun.

In the base layer because the hosts of sizes are everywhere: a brain template estimates its
arrays (`authoring.memory`), the engine its population, and the readers of a run folder what
a received file would expand to (`results.reading`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["machine_memory", "address_space_left", "memory_available", "format_bytes",
           "memory_shortfall"]

_CGROUP_LIMIT = Path("/sys/fs/cgroup/memory.max")
_STATM = Path("/proc/self/statm")


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


def address_space_left() -> int | None:
    """Bytes this process may still map under its address-space limit (RLIMIT_AS), or None
    without one."""
    if sys.platform == "win32":
        return None
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    try:  # Linux: the first field is the mapped size in pages
        mapped = int(_STATM.read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        mapped = 0
    return max(0, soft - mapped)


def _limit() -> tuple[int, str] | None:
    """What this process may allocate, and how a message says so; None if unknown."""
    machine, left = machine_memory(), address_space_left()
    if left is not None and (machine is None or left < machine):
        return left, (f"this process may allocate {format_bytes(left)} more (its address-space "
                      "limit, ulimit -v)")
    if machine is not None:
        return machine, f"this machine has {format_bytes(machine)}"
    return None


def memory_available() -> int | None:
    """Bytes this process may allocate: the machine's memory, lowered to a cgroup limit and to
    what its address-space limit leaves; None if unknown."""
    limit = _limit()
    return None if limit is None else limit[0]


def format_bytes(count: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if count < 1024:
            return f"{count:.1f} {unit}" if unit != "B" else f"{count:.0f} B"
        count /= 1024
    return f"{count:.1f} EiB"


def memory_shortfall(needed: int, purpose: str = "",
                     available: int | None = None) -> str | None:
    """"needs about X `purpose`; this machine has Y" when `needed` bytes exceed what this
    process may allocate (`memory_available`, or `available`), else None."""
    limit = _limit() if available is None else (
        available, f"this machine has {format_bytes(available)}")
    if limit is None or needed <= limit[0]:
        return None
    purpose = f" {purpose}" if purpose else ""
    return f"needs about {format_bytes(needed)}{purpose}; {limit[1]}"
