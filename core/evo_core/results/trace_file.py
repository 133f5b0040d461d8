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
    """A trace file's arrays; a UserError for a file that is not one. Every array is checked
    here, before anything draws it: numbers (or booleans) only, the step columns one value a
    step, each brain state one row a step (`_problem`)."""
    arrays = load_npz(path, "write one with `evo replay RUN --trace FILE.npz`",
                      follow_links=True)
    missing = [key for key in REQUIRED if key not in arrays]
    if missing:
        raise UserError(f"--trace {path}: lacks {', '.join(missing)}; write a trace with "
                        "`evo replay RUN --trace FILE.npz`")
    for key, value in arrays.items():
        problem = _problem(key, value)
        if problem is not None:
            raise UserError(f"--trace {path}: {key} {problem}; the file is damaged or not a "
                            "trace of `evo replay --trace`")
    rows = len(arrays["reward"])
    uneven = [key for key, value in arrays.items() if key != "return" and len(value) != rows]
    if uneven:
        raise UserError(f"--trace {path}: {', '.join(uneven)} do not have one row per step "
                        f"({rows}); the file is damaged")
    return arrays


#: the number of dimensions of the arrays whose shape the file format fixes (running/tracing.py)
_DIMENSIONS = {"reward": 1, "episode": 1, "step": 1, "done": 1, "return": 1, "action": 2}


def _problem(key: str, value: NDArray[Any]) -> str | None:
    """What is wrong with the array `key` of a trace (a string, object, structured or complex
    array; a shape the format does not have), or None."""
    if value.dtype.kind not in "biuf":
        return f"holds {value.dtype} values, not numbers"
    if key in ("episode", "step") and value.dtype.kind not in "iu":
        return f"holds {value.dtype} values, not whole numbers"
    dimensions = 2 if key.startswith(STATE_PREFIX) else _DIMENSIONS.get(key)
    if dimensions is not None and value.ndim != dimensions:
        return f"has shape {value.shape}, not {dimensions}-dimensional"
    if value.ndim == 0:
        return "is a single value, not one row per step"
    return None
