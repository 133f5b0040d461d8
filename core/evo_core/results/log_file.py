"""log.csv: one row per generation, flushed as it is written, so a crash keeps every line.

A resume must drop the rows written after its checkpoint (they are written again) without ever
risking the rows before it. The log is therefore never rewritten in place: the kept bytes go to a
new file created exclusively beside it, which is renamed over log.csv and then appended to. A kill
at any instant leaves either the old log, whole, or the new one, whole; never a cut.

Which bytes to keep is not guessed from the text. Each checkpoint records a `LogMark`: the
length of the log when that generation's row was written and the SHA-256 of those bytes. A
resume keeps exactly that prefix, so a half-written row (a kill in the middle of a write) is
dropped with the other rows after the checkpoint.

Ordering. The rows a checkpoint counts reach the disk before the checkpoint does: training calls
`LogFile.sync()` (flush, then fsync) right before every checkpoint is written, so a crash of the
machine cannot leave a checkpoint that vouches for rows the disk never got. Should the log still
come back short (a disk that lied about fsync, a copy cut off), the checkpoint can rebuild it:
its mark also keeps the text of the rows written since the previous checkpoint (`tail`) and the
hash of the log before them (`base_length`, `base_sha256`). A log whose bytes are the base
followed by any beginning of the tail, torn mid-row or short of whole rows, is completed from
the tail. A log whose prefix differs, or that is shorter than the base, was changed outside evo:
the resume refuses in one line rather than carry on with a hole.

Reading. The log is data from anyone (`results/reading.py`): it is read a row at a time, and a
row longer than any evo writes (`ROW_BYTES`) is refused where it starts, so a log padded with a
sparse hole of gigabytes costs a row's memory, not the hole's. Its rows are held as dicts, about
`PARSED` times their bytes: a log whose rows this machine's memory cannot hold is refused before
the first is read. A resume reads no more of it than its checkpoint vouches for.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import os
import reprlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, BinaryIO

from evo_core.errors import UserError
from evo_core.machine import format_bytes, memory_shortfall
from evo_core.results.files import new_exclusive_file, refuse_link
from evo_core.results.reading import opened

__all__ = ["LOG_COLUMNS", "NOVELTY_COLUMNS", "THRESHOLD_COLUMNS", "STOP_COLUMNS",
           "CHAMPION_COLUMNS", "LogFile", "LogMark", "kept_log", "last_row", "read_log"]

#: `seconds` is wall time since the run started; the fitness columns are raw mean returns
#: (never a shaped score). A run with novelty search appends its own columns after these.
LOG_COLUMNS = ["generation", "evaluations", "best", "mean", "std", "worst", "best_ever", "steps",
               "seconds"]
#: Appended when the run has novelty search: the generation's highest and mean novelty (before
#: its candidates join the archive) and the archive's size after they joined.
NOVELTY_COLUMNS = ["novelty_best", "novelty_mean", "archive_size"]
#: Appended after them when the threshold adapts (`[novelty.adaptive_threshold]`): the threshold
#: this generation's candidates had to exceed to join.
THRESHOLD_COLUMNS = ["novelty_threshold"]
#: Appended (last) when the run has a `[stop]` table: 1 once the run is solved, and the champion
#: test episodes played so far (not counted in `evaluations`).
STOP_COLUMNS = ["solved", "test_episodes"]
#: Appended (before the stop columns) when the run chooses its champion on fresh episodes
#: (`[champion]`): the best fresh score of the generation's candidates that played them, and the
#: fresh score of the champion (best.npz) after it.
CHAMPION_COLUMNS = ["fresh_best", "champion_fresh"]
#: The longest row read: evo's rows are at most 17 numbers of at most 24 characters (425 bytes)
ROW_BYTES = 4096
#: How many times its bytes a log takes in memory, read as dicts of text (measured: 7 for evo's
#: rows, 16 for rows of one-digit numbers)
PARSED = 16


@dataclass(frozen=True)
class LogMark:
    """The first `length` bytes of log.csv, holding `rows` generations, hash to `sha256`; the
    last `len(tail)` of them are `tail`, and the `base_length` bytes before it hash to
    `base_sha256` (no tail: a checkpoint written before marks kept one)."""

    length: int
    sha256: str
    rows: int
    base_length: int = 0
    base_sha256: str = ""
    tail: bytes | None = None

    def as_json(self) -> dict[str, Any]:
        record: dict[str, Any] = {"length": self.length, "sha256": self.sha256, "rows": self.rows}
        if self.tail is not None:
            record.update(base_length=self.base_length, base_sha256=self.base_sha256,
                          tail=self.tail.decode("utf-8"))
        return record

    @classmethod
    def from_json(cls, value: Any) -> LogMark:
        """Raises KeyError, TypeError or ValueError on anything but what `as_json` wrote."""
        if not isinstance(value, dict):
            raise TypeError(f"{_short.repr(value)} is not a table")
        tail = value.get("tail")
        if tail is not None and not isinstance(tail, str):
            raise TypeError("the log tail must be text")
        mark = cls(_whole(value["length"]), _digest(value["sha256"]), _whole(value["rows"]),
                   _whole(value.get("base_length", 0)), _digest(value.get("base_sha256", "")),
                   None if tail is None else tail.encode("utf-8"))
        if mark.length < 0 or mark.rows < 0 or (
                mark.tail is not None and mark.base_length + len(mark.tail) != mark.length):
            raise ValueError("its length, rows and tail do not add up")
        return mark

    def rebuilt(self, data: bytes) -> bytes | None:
        """The log this mark vouches for, from `data` holding its base and any beginning of its
        tail; None when `data` is not that (changed, or shorter than the base)."""
        if self.tail is None or len(data) < self.base_length:
            return None
        base, rest = data[:self.base_length], data[self.base_length:]
        if hashlib.sha256(base).hexdigest() != self.base_sha256 or \
                not self.tail.startswith(rest):
            return None
        whole = base + self.tail
        return whole if hashlib.sha256(whole).hexdigest() == self.sha256 else None


def _whole(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{_short.repr(value)} is not an integer")
    return value


def _digest(value: Any) -> str:
    """A SHA-256 as hex, or "" (a mark without a tail has no base)."""
    if not isinstance(value, str) or (value and not (
            len(value) == 64 and all(c in "0123456789abcdef" for c in value))):
        raise TypeError(f"{_short.repr(value)} is not a SHA-256")
    return value


_short = reprlib.Repr()
_short.maxstring = _short.maxother = 40


def _line(values: list[Any] | dict[str, Any], columns: list[str] = LOG_COLUMNS) -> bytes:
    text = io.StringIO()
    if isinstance(values, dict):
        csv.DictWriter(text, columns).writerow(values)
    else:
        csv.writer(text).writerow(values)
    return text.getvalue().encode("utf-8")


def kept_log(path: Path, mark: LogMark | None, columns: list[str] = LOG_COLUMNS) -> bytes:
    """The bytes of log.csv a resume keeps (just the header of `columns` without a mark), or a
    UserError saying why the log cannot be continued."""
    if mark is None:
        return _line(columns)
    fix = ("it was cut or changed outside evo; put back a whole copy of log.csv, or start a new "
           "run with `evo train`")
    with _log(path, f"{path}: missing, but the checkpoint has {mark.rows} generation(s); {fix}"
              ) as (handle, length):
        try:
            data = handle.read(min(length, mark.length))  # what the mark vouches for, no more
        except OSError as exc:
            raise UserError(f"{path}: unreadable ({exc.strerror})") from None
    if len(data) == mark.length and hashlib.sha256(data).hexdigest() == mark.sha256:
        return data
    rebuilt = mark.rebuilt(data)
    if rebuilt is not None:  # torn or short after the checkpoint: its own rows complete it
        return rebuilt
    complete = max(data.count(b"\n") - 1, 0)
    if len(data) < mark.length and complete < mark.rows:
        raise UserError(f"{path}: holds {complete} whole generation row(s), but the checkpoint "
                        f"has {mark.rows}; {fix}")
    raise UserError(f"{path}: its first {mark.rows} generation row(s) differ from those the "
                    f"checkpoint recorded; {fix}")


def last_row(kept: bytes, path: Path) -> tuple[int, dict[str, str]] | None:
    """The last row of `kept`, the bytes of log.csv (`path`) that a checkpoint's mark vouches
    for (`kept_log`), with its line number; None when they hold no row. A resume reads what it
    continues from in these bytes, never in the file again: the file may have changed since
    they were checked, and a log completed from the mark's tail is not the file's text."""
    last = None
    try:
        reader = csv.DictReader(io.StringIO(kept.decode("utf-8"), newline=""))
        for row in reader:
            last = (reader.line_num, row)
    except (UnicodeDecodeError, csv.Error) as exc:
        raise UserError(f"{path}: unreadable ({exc}); the run folder is damaged") from None
    return last


class LogFile:
    def __init__(self, path: Path, mark: LogMark | None = None,
                 columns: list[str] = LOG_COLUMNS) -> None:
        """log.csv holding the rows `mark` vouches for (none: a new log), open for appending
        rows of `columns` (LOG_COLUMNS, then any a run adds: novelty search's)."""
        self.path = path
        self.columns = columns
        kept = kept_log(path, mark, columns)
        refuse_link(path)
        descriptor, temporary = new_exclusive_file(path)
        self._handle: IO[bytes] = open(descriptor, "wb")  # noqa: SIM115 - open until close()
        try:
            self._handle.write(kept)
            self._handle.flush()
            os.fsync(self._handle.fileno())  # the rows the checkpoint vouches for, durable
            os.replace(temporary, path)
        except BaseException:
            self._handle.close()
            temporary.unlink(missing_ok=True)
            raise
        self._hash = hashlib.sha256(kept)
        self._length = len(kept)
        self._rows = mark.rows if mark else 0
        self._base = (self._length, self._hash.hexdigest())
        self._tail = bytearray()  # the rows since the last sync: the next checkpoint's tail

    def write(self, row: dict[str, Any]) -> None:
        line = _line({k: (repr(v) if isinstance(v, float) else v) for k, v in row.items()},
                     self.columns)
        self._handle.write(line)
        self._handle.flush()
        self._hash.update(line)
        self._length += len(line)
        self._rows += 1
        self._tail += line

    def mark(self) -> LogMark:
        """What a checkpoint written now records about the log: its length and hash, and the
        rows since the previous checkpoint (those `sync` made durable last) to rebuild them."""
        base_length, base_sha256 = self._base
        return LogMark(self._length, self._hash.hexdigest(), self._rows, base_length,
                       base_sha256, bytes(self._tail))

    def sync(self) -> None:
        """Make every row written so far durable (flush, fsync): call it before writing the
        checkpoint that counts them. The next mark's tail starts here."""
        if self._handle.closed:
            return
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._base = (self._length, self._hash.hexdigest())
        self._tail.clear()

    def close(self) -> None:
        """Close the log, its rows made durable first (a checkpoint may follow)."""
        if not self._handle.closed:
            self.sync()
        self._handle.close()


@contextlib.contextmanager
def _log(path: Path, missing: str) -> Iterator[tuple[BinaryIO, int]]:
    """log.csv open for reading, and its length; refused when its rows would not fit in this
    machine's memory."""
    with opened(path, missing) as (handle, length):
        shortfall = memory_shortfall(PARSED * length, "to read")
        if shortfall is not None:
            raise UserError(f"{path}: {format_bytes(length)} of rows {shortfall} (evo writes "
                            "about 150 bytes a generation: is the file damaged?)")
        yield handle, length


def _whole_lines(handle: BinaryIO, path: Path) -> Iterator[str]:
    """The log's lines, each read with a bound; a last line cut by a kill mid-write (no line
    end) is left out, a line longer than any row evo writes is refused."""
    number = 0
    while line := handle.readline(ROW_BYTES + 1):
        number += 1
        if not line.endswith(b"\n"):
            if len(line) > ROW_BYTES:
                raise UserError(f"{path}: line {number} is longer than any row evo writes "
                                f"({ROW_BYTES} bytes); the run folder is damaged")
            return
        yield line.decode("utf-8")


def read_log(path: Path, missing: str | None = None) -> list[dict[str, str]]:
    """The rows, each checked to be a row evo wrote (numbers under its columns); a damaged log
    is a UserError naming the file and the line. A last row cut by a kill mid-write is left
    out. `missing`: the message when there is no log."""
    try:
        with _log(path, missing or f"{path}: missing; the run folder is damaged") as (handle, _):
            rows = list(csv.DictReader(_whole_lines(handle, path)))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise UserError(f"{path}: unreadable ({exc}); the run folder is damaged") from None
    for line, row in enumerate(rows, 2):
        try:
            if None in row or any(row.get(column) is None for column in LOG_COLUMNS):
                raise ValueError("not the columns of evo's log")
            int(row["generation"])
            for column in LOG_COLUMNS[2:7]:
                float(row[column])
        except ValueError as exc:
            raise UserError(f"{path}: line {line} is not a log row ({exc}); the run folder is "
                            "damaged") from None
    return rows
