"""Reading the files of a run folder as hostile input: regular files only, every read bounded.

A run folder may come from anyone (README.md, "The run folder"): any of its files can be a
FIFO, a device, a link, a sparse file claiming gigabytes it does not hold on disk, or an .npz
whose zip directory lies. So every reader of config.json, log.csv, best.npz, hall_of_fame.npz,
checkpoint.npz, a replay trace, the lock, a sweep's sweep.json and the signing secret opens it
here (`open_regular`, `opened`, `read_whole`, `load_npz`):

- with O_NOFOLLOW where evo refuses links (the names it writes: `files.refuse_link`), so that
  the check and the open are one step; a trace the user names may be a link;
- with O_NONBLOCK, so that opening a FIFO returns at once instead of waiting for a writer, and
  then `fstat` must say a regular file: a FIFO, a device, a socket or a folder is refused in
  one line that says what it is;
- with every read bounded: a whole-file read (`read_whole`) refuses a file longer than any evo
  writes before reading it and reads at most that limit; log.csv is read a row at a time, each
  row bounded (`results/log_file.py`); an .npz's claims are checked against its real length
  and bounded by what evo writes and by the machine's memory before numpy allocates (below).

A file's length is what `fstat` says, not the blocks it takes on disk: compressing file systems
(ZFS, btrfs) hold fewer blocks than bytes and ZFS stores runs of zeros as holes, so few blocks
prove nothing against a file; what is read of it is bounded instead.

Reading an .npz never unpickles (`allow_pickle=False`), and never allocates more than the file
can really hold. numpy allocates an array of the shape a member's header declares before it
reads the data, and the sizes in the zip directory are the writer's word, so each is checked
against what is really there before any array is read: a member's compressed bytes must lie
inside the file (its real length, from `fstat`); a stored member (evo writes only those,
`np.savez`) holds exactly its compressed bytes; a deflated one (a file recompressed with
`np.savez_compressed`) expands at most 1032-fold (deflate's limit); its header may declare no
more than the member holds. The whole archive may expand to at most `RECOMPRESSED` times its
length (evo's arrays, genomes and 0/1 masks, recompressed, expand far less: a CTRNN's best.npz
1.05-fold) and to no more than the machine's memory. Whether the shapes suit the run (a genome
of the brain's size) is the reader's to check.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import stat
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, BinaryIO

import numpy as np
from numpy.typing import NDArray

from evo_core.errors import UserError
from evo_core.machine import format_bytes, memory_shortfall

__all__ = ["opened", "open_regular", "read_whole", "load_npz", "RECOMPRESSED", "JSON_BYTES"]

#: The longest config.json or sweep.json read: evo writes a few kilobytes (the resolved config
#: and its provenance, which grows by less than a kilobyte per resume).
JSON_BYTES = 64 * 2**20
#: How far the arrays of an .npz may expand beyond its length: evo writes them uncompressed
#: (1-fold); recompressed, a CTRNN's best.npz expands 1.05-fold (its 0/1 masks alone 288-fold,
#: but its genes, which hardly compress, outweigh them), and only a brain of masks with hardly a
#: gene would come near this.
RECOMPRESSED = 128
#: deflate expands its input at most about 1032-fold
_MOST_DEFLATED = 1032
#: a zip member's local header: 30 bytes, then its name (and an extra field, not counted)
_LOCAL_HEADER = 30

_KINDS = {stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}


def open_regular(path: Path, flags: int = os.O_RDONLY, mode: int = 0o644, *,
                 follow_links: bool = False, fix: str = "put the file itself there") -> int:
    """A descriptor of the regular file `path`, opened with `flags` (and `mode`, should they
    create it); a link (unless `follow_links`) or anything but a regular file is a UserError
    that ends with `fix`, and opening a FIFO does not wait. Other failures are the OSError, for
    the caller to word (a missing file is often no mistake)."""
    no_follow = 0 if follow_links else os.O_NOFOLLOW
    try:
        descriptor = os.open(path, flags | no_follow | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_links and path.is_symlink():
            raise UserError(f"{path}: is a symbolic link (to {os.readlink(path)}), which evo "
                            f"did not make and will not follow; {fix}") from None
        raise
    try:
        kind = stat.S_IFMT(os.fstat(descriptor).st_mode)
        if kind != stat.S_IFREG:
            raise UserError(f"{path}: is {_KINDS.get(kind, 'not a file')}, not a regular file; "
                            f"{fix}")
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


@contextlib.contextmanager
def opened(path: Path, missing: str, *, follow_links: bool = False
           ) -> Iterator[tuple[BinaryIO, int]]:
    """The regular file `path` open for reading, and its length; UserErrors: `missing` when
    there is nothing at `path`, and one naming it when it is a link, not a regular file or
    cannot be opened."""
    try:
        descriptor = open_regular(path, follow_links=follow_links)
    except FileNotFoundError:
        raise UserError(missing) from None
    except OSError as exc:
        raise UserError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    with open(descriptor, "rb") as handle:
        yield handle, os.fstat(descriptor).st_size


def read_whole(path: Path, limit: int, what: str, missing: str) -> bytes:
    """The bytes of `path`, a `what` of at most `limit` bytes: a longer file is refused before
    it is read (a sparse file claims any length), and no more than `limit` bytes are read."""
    with opened(path, missing) as (handle, length):
        if length > limit:
            raise UserError(f"{path}: {format_bytes(length)}, longer than any {what} evo writes "
                            f"(at most {format_bytes(limit)}); it is damaged or not evo's")
        try:
            return handle.read(limit)
        except OSError as exc:
            raise UserError(f"{path}: cannot be read ({exc.strerror or exc})") from None


def _declared(member: IO[bytes]) -> tuple[tuple[int, ...], np.dtype[Any]]:
    """The shape and dtype an .npy member's header declares, its data unread."""
    version = np.lib.format.read_magic(member)
    reader = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
        np.lib.format.read_array_header_2_0
    shape, _, dtype = reader(member)
    return tuple(shape), np.dtype(dtype)


def _claims(info: zipfile.ZipInfo, length: int) -> str | None:
    """Why the zip directory's sizes of the member `info` cannot be true of a file of `length`
    bytes, or None."""
    problem = _false_claim(info, length)
    return None if problem is None else f"{problem}; the file was edited or damaged"


def _false_claim(info: zipfile.ZipInfo, length: int) -> str | None:
    name = info.filename.removesuffix(".npy")
    end = info.header_offset + _LOCAL_HEADER + len(info.filename.encode()) + info.compress_size
    if end > length:
        return (f"{name}: its {info.compress_size} compressed bytes would end at byte {end}, "
                f"but the file has {length}")
    if info.compress_type == zipfile.ZIP_STORED:
        if info.file_size != info.compress_size:
            return (f"{name}: stored uncompressed, but declares {info.file_size} bytes from "
                    f"{info.compress_size}")
    elif info.compress_type == zipfile.ZIP_DEFLATED:
        if info.file_size > _MOST_DEFLATED * info.compress_size + 1024:
            return f"{name}: declares {info.file_size} bytes from {info.compress_size} compressed"
    else:
        return (f"{name}: compressed with method {info.compress_type}, where evo reads members "
                "stored (np.savez) or deflated (np.savez_compressed)")
    return None


def _header(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> str | None:
    """Why the .npy header of the member `info` declares more than the member holds, or
    None."""
    with archive.open(info) as member:
        shape, dtype = _declared(member)
        declared = math.prod(shape) * dtype.itemsize
        held = info.file_size - member.tell()
    if declared > held:
        return (f"{info.filename.removesuffix('.npy')}: its header declares shape {shape} "
                f"({declared} bytes) but the file holds {held} bytes of it; the file was edited "
                "or damaged")
    return None


def _problem(archive: zipfile.ZipFile, length: int) -> str | None:
    """Why the arrays of `archive` (a file of `length` bytes) must not be loaded, or None."""
    members = archive.infolist()
    for info in members:
        problem = _claims(info, length)
        if problem is not None:
            return problem
    expanded = sum(info.file_size for info in members)
    if expanded > RECOMPRESSED * length + 2**20:
        return (f"its arrays would expand to {format_bytes(expanded)}, {expanded // length}-fold "
                f"its length; evo's arrays expand at most {RECOMPRESSED}-fold even recompressed "
                "(were it evo's, saved again uncompressed with numpy.savez it would load)")
    shortfall = memory_shortfall(expanded, "for its arrays")
    if shortfall is not None:
        return f"{shortfall}; load it on a machine with more memory"
    for info in members:
        problem = _header(archive, info)
        if problem is not None:
            return problem
    return None


def load_npz(path: Path, missing_hint: str, *, follow_links: bool = False
             ) -> dict[str, NDArray[Any]]:
    """All arrays of an `.npz`, never unpickling, never allocating more than the file can hold
    (see the module's docstring); errors name the file. `follow_links`: for a file the user
    names (a trace), not one of a run folder."""
    with opened(path, f"{path}: missing; {missing_hint}", follow_links=follow_links) \
            as (handle, length):
        try:
            with zipfile.ZipFile(handle) as archive:
                problem = _problem(archive, length)
                if problem is not None:
                    raise UserError(f"{path}: {problem}")
                arrays = {}
                for info in archive.infolist():
                    with archive.open(info) as member:
                        arrays[info.filename.removesuffix(".npy")] = \
                            np.lib.format.read_array(member, allow_pickle=False)
                return arrays
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            raise UserError(f"{path}: unreadable ({exc}); the file is truncated or not an .npz") \
                from None
