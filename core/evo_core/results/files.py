"""Every file evo writes goes through here: atomic, exclusive, and never through a planted link.

A file is written to a temporary file created exclusively (`mkstemp`: `O_CREAT | O_EXCL`, an
unpredictable name, in the target's own folder so the rename stays on one file system), then
renamed over the target with `os.replace`. So:

- a reader, or a process killed at any instant, sees the old file or the new one, never half;
- nobody can plant a symbolic link at the temporary name in advance: the name is unguessable and
  `O_EXCL` refuses to open anything that already exists, links included;
- a symbolic link at the *final* name is refused with one line (`UserError`) before anything is
  written. `os.replace` would only swap the link itself, never touch what it points to, so even
  a link planted between that check and the rename leaves its target untouched; refusing says
  plainly that the folder holds something evo did not make.

There is no fsync here: it guards against power loss, not process kills, and costs milliseconds
per file on every generation. The one exception is log.csv, whose rows are fsynced before the
checkpoint that counts them is written (`results/log_file.py` says why). Reading is
`results/reading.py`'s: a run folder's files are hostile input there.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import json
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from numpy.typing import NDArray

from evo_core.errors import UserError, WriteFailed

__all__ = ["atomic_file", "cannot_write", "write_atomic", "write_json", "write_npz", "refuse_link",
           "new_exclusive_file", "remove_abandoned_temporaries", "prefixed", "unprefixed"]


def refuse_link(path: Path) -> None:
    """A UserError if `path` is a symbolic link: evo replaces its own files, never links."""
    if path.is_symlink():
        raise UserError(f"{path}: is a symbolic link (to {os.readlink(path)}), which evo did not "
                        "make and will not write through; remove it or choose another name")


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def new_exclusive_file(path: Path) -> tuple[int, Path]:
    """A new file beside `path`, opened exclusively under an unpredictable name: (fd, name).

    `mkstemp` makes it 0600; it gets the permissions an ordinary new file would (0666 less the
    umask), since it becomes a result file others may be meant to read. Its writer holds an
    exclusive `flock` on it until the descriptor is closed, which tells
    `remove_abandoned_temporaries` that the writer is alive (on a file system without `flock`
    no one can take that lock either, and the temporary is never taken for abandoned).
    """
    descriptor, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp",
                                        dir=path.parent)
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.fchmod(descriptor, 0o666 & ~_umask())
    except BaseException:
        os.close(descriptor)
        os.unlink(name)
        raise
    return descriptor, Path(name)


#: How old (last modified) a temporary must be before it can be taken for abandoned: its writer
#: locks it a moment after creating it, and one caught between the two is left alone.
ABANDONED_AFTER = 60.0


def remove_abandoned_temporaries(path: Path) -> None:
    """Remove the temporaries of `path` (`.NAME.*.tmp` beside it) that no live process writes.

    Safe while another process writes `path` right now (another `evo plot` of the same run):
    every writer holds an exclusive `flock` on its temporary from `new_exclusive_file` until it
    closes it, just before the rename (the age check below covers that moment), and the kernel
    drops the lock when the writer ends however it
    ends, `kill -9` included. A temporary whose lock this process can take has no live writer,
    so removing it cannot break a write; one modified in the last ABANDONED_AFTER seconds is
    left alone too, as its writer may not have locked it yet. `flock`, not `lockf`: its lock
    belongs to the open file, so a writer in this same process (two threads plotting) still
    holds its temporary against us, where a POSIX record lock would not, and would even be
    dropped by our closing the file. The name is unlinked only while it is still the file we
    locked. Anything at such a name that is not a regular file was planted (evo makes regular
    files): the name alone is removed, never what a link points to."""
    now = time.time()
    for stale in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        with contextlib.suppress(OSError):
            status = stale.lstat()
            if now - status.st_mtime < ABANDONED_AFTER:
                continue
            if not stat.S_ISREG(status.st_mode):
                stale.unlink()
                continue
            descriptor = os.open(stale, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)  # OSError: a live writer
                if os.fstat(descriptor).st_ino == stale.lstat().st_ino:
                    stale.unlink()
            finally:
                os.close(descriptor)


def write_atomic(path: Path, data: bytes | Callable[[BinaryIO], None]) -> None:
    """Write `data`, or let the callable write into the open file, then rename into place."""
    with atomic_file(path) as (handle, _):
        try:
            if callable(data):
                data(handle)
            else:
                handle.write(data)
        except OSError as exc:  # disk full, read-only, quota: the old file stays
            raise cannot_write(path, exc) from None


@contextlib.contextmanager
def atomic_file(path: Path) -> Iterator[tuple[BinaryIO, Path]]:
    """The exclusive temporary of `path` (module docstring), open, and its name: renamed over
    `path` when the block ends, removed when it raises. `write_atomic` writes through it at
    once; a video is written into it frame by frame while the episodes run, and ffmpeg writes
    into it by its name. What the block raises passes as it is (its own writes say
    `cannot_write`); failing to make, close or rename the temporary is a `WriteFailed`."""
    refuse_link(path)
    try:
        descriptor, temporary = new_exclusive_file(path)
    except OSError as exc:
        raise cannot_write(path, exc) from None
    written = False
    try:
        with open(descriptor, "wb") as handle:
            yield handle, temporary
            written = True
        os.replace(temporary, path)
    except OSError as exc:  # disk full, read-only, quota: the old file stays, no stray temporary
        with contextlib.suppress(OSError):
            temporary.unlink()
        if not written:
            raise
        raise cannot_write(path, exc) from None
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def cannot_write(path: Path, exc: OSError) -> WriteFailed:
    """What failed and what to do; how to go on after it depends on the command, so training
    adds its own (`evo resume`)."""
    return WriteFailed(f"{path}: cannot write ({exc.strerror or exc}); free space or fix the "
                       "permissions, then run the command again")


def write_json(path: Path, value: Any) -> None:
    write_atomic(path, (json.dumps(value, indent=2) + "\n").encode())


def write_npz(path: Path, arrays: dict[str, Any]) -> None:
    """An `.npz` loadable with `allow_pickle=False`: object arrays are refused here, not later."""
    clean = {name: np.asarray(value) for name, value in arrays.items()}
    for name, value in clean.items():
        if value.dtype == object:
            raise TypeError(f"{path.name}: {name} is an object array and would need pickle")
    write_atomic(path, lambda handle: np.savez(handle, **clean))  # type: ignore[arg-type]


def prefixed(prefix: str, arrays: dict[str, Any]) -> dict[str, Any]:
    """`arrays` under `prefix.<name>` keys, so several groups share one `.npz`."""
    return {f"{prefix}.{name}": value for name, value in arrays.items()}


def unprefixed(prefix: str, arrays: dict[str, NDArray[Any]]) -> dict[str, NDArray[Any]]:
    """The group `prefixed(prefix, ...)` stored, with the prefix taken off again."""
    start = prefix + "."
    return {key[len(start):]: value for key, value in arrays.items() if key.startswith(start)}
