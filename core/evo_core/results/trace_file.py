"""The trace file of `evo replay --trace FILE.npz` (its keys: running/tracing.py): writing it
atomically, and reading it back for `evo plot --trace` with one-line errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from numpy.typing import NDArray

from evo_core.errors import UserError
from evo_core.results.files import write_npz
from evo_core.results.reading import load_npz

__all__ = ["REQUIRED", "STATE_PREFIX", "read_trace", "write_trace_file"]

#: a brain state array `NAME` is stored as `state.NAME`
STATE_PREFIX = "state."
REQUIRED = ("reward", "episode", "step")


def write_trace_file(arrays: dict[str, NDArray[Any]], path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"--trace {path}: cannot write the trace ({exc.strerror or exc})") \
            from None
    write_npz(path, arrays)


def read_trace(path: Path) -> dict[str, NDArray[Any]]:
    """A trace file's arrays; a UserError for a file that is not one."""
    arrays = load_npz(path, "write one with `evo replay RUN --trace FILE.npz`",
                      follow_links=True)
    missing = [key for key in REQUIRED if key not in arrays]
    if missing:
        raise UserError(f"--trace {path}: lacks {', '.join(missing)}; write a trace with "
                        "`evo replay RUN --trace FILE.npz`")
    rows = len(arrays["reward"])
    uneven = [key for key, value in arrays.items()
              if key != "return" and (value.ndim == 0 or len(value) != rows)]
    if uneven:
        raise UserError(f"--trace {path}: {', '.join(uneven)} do not have one row per step "
                        f"({rows}); the file is damaged")
    return arrays
