"""Temporary folders removed even when the main process is killed.

Parallel evaluation needs folders this process cannot always remove itself: multiprocessing's
fork server listens on a socket in a `pymp-*` folder that only an exit handler removes, and Dask
workers keep their scratch space in a folder of their own. After `kill -9` no exit handler runs,
and every run left such folders in the temporary directory. A tiny guard process, in its own
session (a terminal's Ctrl-C does not reach it), collects the folders' paths from a pipe and
removes them when the pipe closes, which happens when this process ends, however it ends.
"""

from __future__ import annotations

import subprocess
import sys
from multiprocessing import forkserver, util

__all__ = ["remove_at_exit", "guard_forkserver_folder"]

_GUARD = ("import shutil, sys\n"
          "paths = [line.rstrip('\\n') for line in sys.stdin]\n"
          "for path in paths:\n"
          "    shutil.rmtree(path, ignore_errors=True)\n")
_guard: subprocess.Popen[str] | None = None
_guarded: set[str] = set()


def remove_at_exit(path: str) -> None:
    """Have `path` (a folder) removed when this process ends, even by SIGKILL."""
    global _guard
    if path in _guarded and _guard is not None and _guard.poll() is None:
        return
    if _guard is None or _guard.poll() is not None:
        _guarded.clear()
        _guard = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _GUARD], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
            start_new_session=True)
    assert _guard.stdin is not None
    _guard.stdin.write(path + "\n")
    _guard.stdin.flush()
    _guarded.add(path)


def guard_forkserver_folder() -> None:
    """Start the fork server now, and have its folder removed however this process ends."""
    forkserver.ensure_running()
    remove_at_exit(util.get_temp_dir())
