"""Output into a closed pipe (`evo schema | head`) ends the command quietly, with status 141.

Python ignores SIGPIPE, so a write into a pipe whose reader has gone raises BrokenPipeError:
at the write, or at the flush when the interpreter shuts down ("Exception ignored ...").
Either is caught here; the stream is then pointed at the null device so that the shutdown flush
of what is still buffered succeeds, and the status is the shell's for a death by SIGPIPE
(128 + 13), which `set -o pipefail` scripts know. Nothing else is silenced: an OSError that is
not a broken pipe stays an error.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Callable
from typing import TextIO

__all__ = ["BROKEN_PIPE", "quiet_on_broken_pipe"]

#: the exit status of a command whose output pipe closed (128 + SIGPIPE)
BROKEN_PIPE = 141


def quiet_on_broken_pipe(command: Callable[[], int]) -> int:
    """`command()`'s status, its output flushed; BROKEN_PIPE if a reader went away."""
    try:
        try:
            status = command()
        finally:  # argparse's --help exits through SystemExit: flush on that way out too
            sys.stdout.flush()
    except BrokenPipeError:
        _to_null(sys.stdout)
        _flush_or_null(sys.stderr)
        return BROKEN_PIPE
    _flush_or_null(sys.stderr)
    return status


def _flush_or_null(stream: TextIO) -> None:
    try:
        stream.flush()
    except BrokenPipeError:
        _to_null(stream)


def _to_null(stream: TextIO) -> None:
    """Point the stream's file descriptor at the null device (a stream without one, such as a
    test's StringIO, has nothing left to flush into a pipe)."""
    with contextlib.suppress(io.UnsupportedOperation, ValueError, OSError):
        descriptor = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, descriptor)
        finally:
            os.close(null)
