"""Worker processes that die with the process that started them.

A worker outliving its parent (the parent killed with SIGKILL, or crashed) would wait for tasks
forever, holding its memory. Two mechanisms, because neither covers every case alone: on Linux
the kernel sends SIGKILL when the parent dies (`PR_SET_PDEATHSIG`), which works even while the
worker is stuck in C code; everywhere, a daemon thread polls the parent's pid and exits the
process when the worker has been handed to another parent. The kernel's signal is tied to the
parent *thread* that started the worker, so it is asked for only when that was the main thread
(a pool started from a helper thread would otherwise lose its workers when the thread ends).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

__all__ = ["die_with_parent"]

PR_SET_PDEATHSIG = 1
#: Seconds between two looks at the parent's pid.
POLL_SECONDS = 0.5


def _set_parent_death_signal() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):  # no libc.prctl (musl without it, sandboxes): the thread
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # the pid now belongs to another user's process
        return False
    try:  # a killed process stays a zombie until its own parent reaps it
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def _watch(parent: int, main: int) -> None:
    while True:
        time.sleep(POLL_SECONDS)
        if os.getppid() != parent or not _alive(main):
            os._exit(1)


def die_with_parent(main: int, from_main_thread: bool) -> None:
    """Make this process exit when its parent, or `main` (the process that wants the work; the
    parent itself unless a fork server started this one), is gone. `from_main_thread`: the
    process was started by the parent's main thread, whose end is the parent's end."""
    parent = os.getppid()
    if from_main_thread:
        _set_parent_death_signal()
    if not _alive(main):  # it died before the kernel was told to watch it
        os._exit(1)
    threading.Thread(target=_watch, args=(parent, main), name="evo-parent-watch",
                     daemon=True).start()
