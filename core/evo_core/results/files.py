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
checkpoint that counts them is written (`results/log_file.py` says why). Reading never
unpickles (`allow_pickle=False`), and never allocates more than the file holds: numpy allocates
an array of the shape a member's header declares before it reads the data, so a 1 KB best.npz
declaring 1.5e9 genes would ask for 11 GiB. Each member's header is read first and refused when
it declares more bytes than the member holds (or than deflate could expand its compressed bytes
to). Whether the shapes suit the run (a genome of the brain's size) is the reader's to check,
once the brain's saved state is restored.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, BinaryIO

import numpy as np
from numpy.typing import NDArray

from evo_core.errors import UserError, WriteFailed

__all__ = ["atomic_file", "cannot_write", "write_atomic", "write_json", "write_npz", "load_npz",
           "refuse_link", "new_exclusive_file", "prefixed", "unprefixed"]


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


#: deflate expands its input at most about 1032-fold
_MOST_DEFLATED = 1032


def _declared(member: IO[bytes]) -> tuple[tuple[int, ...], np.dtype[Any]]:
    """The shape and dtype an .npy member's header declares, its data unread."""
    version = np.lib.format.read_magic(member)
    reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
        np.lib.format.read_array_header_2_0
    shape, _, dtype = reader(member)
    return tuple(shape), np.dtype(dtype)


def _check_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> str | None:
    """Why the member `info` must not be loaded, or None."""
    name = info.filename.removesuffix(".npy")
    if info.compress_type != zipfile.ZIP_STORED and \
            info.file_size > _MOST_DEFLATED * info.compress_size + 1024:
        return f"{name}: declares {info.file_size} bytes from {info.compress_size} compressed"
    with archive.open(info) as member:
        shape, dtype = _declared(member)
        declared = math.prod(shape) * dtype.itemsize
        if declared > info.file_size - member.tell():
            return (f"{name}: its header declares shape {shape} ({declared} bytes) but the "
                    f"file holds {info.file_size - member.tell()} bytes of it; the file was "
                    "edited or damaged")
    return None


def load_npz(path: Path, missing_hint: str) -> dict[str, NDArray[Any]]:
    """All arrays of an `.npz`, never unpickling, never allocating more than the file holds
    (see the module's docstring); errors name the file."""
    if not path.is_file():
        raise UserError(f"{path}: missing; {missing_hint}")
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                problem = _check_member(archive, info)
                if problem is not None:
                    raise UserError(f"{path}: {problem}")
        with np.load(path, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise UserError(f"{path}: unreadable ({exc}); the file is truncated or not an .npz") \
            from None


def prefixed(prefix: str, arrays: dict[str, Any]) -> dict[str, Any]:
    """`arrays` under `prefix.<name>` keys, so several groups share one `.npz`."""
    return {f"{prefix}.{name}": value for name, value in arrays.items()}


def unprefixed(prefix: str, arrays: dict[str, NDArray[Any]]) -> dict[str, NDArray[Any]]:
    """The group `prefixed(prefix, ...)` stored, with the prefix taken off again."""
    start = prefix + "."
    return {key[len(start):]: value for key, value in arrays.items() if key.startswith(start)}
