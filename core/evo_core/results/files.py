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
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from numpy.typing import NDArray

from evo_core.errors import UserError, WriteFailed

__all__ = ["write_atomic", "write_json", "write_npz", "refuse_link", "new_exclusive_file",
           "prefixed", "unprefixed"]


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
    umask), since it becomes a result file others may be meant to read.
    """
    descriptor, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp",
                                        dir=path.parent)
    try:
        os.fchmod(descriptor, 0o666 & ~_umask())
    except BaseException:
        os.close(descriptor)
        os.unlink(name)
        raise
    return descriptor, Path(name)


def write_atomic(path: Path, data: bytes | Callable[[BinaryIO], None]) -> None:
    """Write `data`, or let the callable write into the open file, then rename into place."""
    refuse_link(path)
    try:
        descriptor, temporary = new_exclusive_file(path)
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    try:
        with open(descriptor, "wb") as handle:
            if callable(data):
                data(handle)
            else:
                handle.write(data)
        os.replace(temporary, path)
    except OSError as exc:  # disk full, read-only, quota: the old file stays, no stray temporary
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise _cannot_write(path, exc) from None
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def _cannot_write(path: Path, exc: OSError) -> WriteFailed:
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
