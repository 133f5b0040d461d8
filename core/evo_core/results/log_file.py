"""log.csv: one row per generation, flushed as it is written, so a crash keeps every line."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import IO, Any

from evo_core.errors import UserError

__all__ = ["LOG_COLUMNS", "LogFile", "read_log"]

#: `seconds` is wall time since the run started; the fitness columns are raw mean returns.
LOG_COLUMNS = ["generation", "evaluations", "best", "mean", "std", "worst", "best_ever", "steps",
               "seconds"]


class LogFile:
    def __init__(self, path: Path, keep_rows: int = 0) -> None:
        """Open for appending after the first `keep_rows` data rows (0: a new log); rows beyond
        them are dropped, as a resumed run writes them again."""
        self.path = path
        rows = read_log(path)[:keep_rows] if keep_rows and path.exists() else []
        self._handle: IO[str] = open(path, "w", newline="", encoding="utf-8")
        self._writer = csv.DictWriter(self._handle, LOG_COLUMNS)
        self._writer.writeheader()
        self._writer.writerows(rows)
        self._handle.flush()

    def write(self, row: dict[str, Any]) -> None:
        self._writer.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in row.items()})
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()


def read_log(path: Path) -> list[dict[str, str]]:
    """The rows, each checked to be a row evo wrote (numbers under its columns); a damaged log
    is a UserError naming the file and the line."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
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
