"""Temporary folders removed even when the main process is killed.

Parallel evaluation needs folders this process cannot always remove itself: multiprocessing's
fork server listens on a socket in a `pymp-*` folder that only an exit handler removes, and Dask
workers keep their scratch space in a folder of their own. After `kill -9` no exit handler runs,
and every run left such folders in the temporary directory. A tiny guard process, in its own
session (a terminal's Ctrl-C does not reach it), collects the folders' paths from a pipe and
removes them when the pipe closes without a goodbye, which is how a killed process ends.
"""

from __future__ import annotations

import atexit
import contextlib
import subprocess
import sys
from multiprocessing import forkserver, util

__all__ = ["remove_at_exit", "guard_forkserver_folder"]

#: Reads folder paths until the pipe closes, then removes them, unless the last line is empty:
#: the sign of an ordinary exit, where their owners remove them (multiprocessing would complain
#: about a fork server folder removed before its own exit handler ran).
_GUARD = ("import shutil, sys\n"
          "paths = [line.rstrip('\\n') for line in sys.stdin]\n"
          "if paths[-1:] != ['']:\n"
          "    for path in paths:\n"
          "        shutil.rmtree(path, ignore_errors=True)\n")
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
        atexit.register(_release, _guard)
    assert _guard.stdin is not None
    _guard.stdin.write(path + "\n")
    _guard.stdin.flush()
    _guarded.add(path)


def _release(guard: subprocess.Popen[str]) -> None:
    """At an ordinary exit: tell the guard to leave the folders to their owners, and reap it."""
    if guard.stdin is not None:
        try:
            guard.stdin.write("\n")
            guard.stdin.close()
        except OSError:  # the guard is gone already
            pass
    with contextlib.suppress(subprocess.TimeoutExpired):
        guard.wait(timeout=10)


def guard_forkserver_folder() -> None:
    """Start the fork server now, and have its folder removed however this process ends."""
    forkserver.ensure_running()
    remove_at_exit(util.get_temp_dir())
