"""The event files a run left behind: where they may be written, and their torn ends cut off.

An event file is a sequence of TFRecords: an 8-byte little-endian length, the masked CRC-32C of
those 8 bytes, the record, the masked CRC-32C of the record. A process killed while writing
(`kill -9`, a power cut) leaves a file whose last record is cut short; TensorBoard's reader
stops at it, and a strict reader refuses the file. A resume therefore cuts every event file of
the run back to its last whole record before it writes its own. Only regular files are touched:
a symbolic link in the event folder is left alone, and the event folder itself must not be a
link (a link planted at `RUN/tensorboard` would have the tracker write wherever it points).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

__all__ = ["PATTERN", "check_folder", "cut_torn_ends", "whole_length"]

#: the names tensorboardX gives event files
PATTERN = "events.out.tfevents.*"
_HEADER = 12  # length (8 bytes) and its CRC (4)
_FOOTER = 4  # the record's CRC


def check_folder(folder: Path) -> None:
    """Refuse (`ValueError`, one line) an event folder that is a symbolic link or not a folder."""
    if folder.is_symlink():
        raise ValueError(f"{folder} is a symbolic link, which evo did not make; the event files "
                         "are not written through it (remove it to track this run)")
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{folder} is not a folder; move it away to track this run")


def _masked_crc(data: bytes) -> int:
    from tensorboardX.crc32c import crc32c

    crc = int(crc32c(data))
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def whole_length(path: Path) -> int:
    """How many leading bytes of the event file `path` are whole records with matching CRCs."""
    size = path.stat().st_size
    position = 0
    with path.open("rb") as handle:
        while position + _HEADER <= size:
            header = handle.read(_HEADER)
            (length,) = struct.unpack("<Q", header[:8])
            end = position + _HEADER + length + _FOOTER
            if struct.unpack("<I", header[8:])[0] != _masked_crc(header[:8]) or end > size:
                break
            body = handle.read(length + _FOOTER)
            if struct.unpack("<I", body[length:])[0] != _masked_crc(body[:length]):
                break
            position = end
    return position


def cut_torn_ends(folder: Path) -> list[Path]:
    """Cut each regular event file in `folder` back to its last whole record; the files cut."""
    cut = []
    for path in sorted(folder.glob(PATTERN)):
        if path.is_symlink() or not path.is_file():
            continue
        keep = whole_length(path)
        if keep < path.stat().st_size:
            descriptor = os.open(path, os.O_WRONLY | os.O_NOFOLLOW)
            try:
                os.ftruncate(descriptor, keep)
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
            cut.append(path)
    return cut
