"""Atomic writes: a reader, or a killed process, never leaves or sees half a file.

Write to a temporary name, then rename over the target: the rename is atomic, so the old file
stays whole until the new one is complete. There is no fsync: it guards against power loss, not
process kills, and costs milliseconds per file on every generation.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from evo_core.errors import UserError

__all__ = ["write_atomic", "write_json", "write_npz"]


def write_atomic(path: Path, data: bytes | Callable[[BinaryIO], None]) -> None:
    """Write `data`, or let the callable write into the open file, then rename into place."""
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        with open(temporary, "wb") as handle:
            if callable(data):
                data(handle)
            else:
                handle.write(data)
        os.replace(temporary, path)
    except OSError as exc:  # disk full, read-only, quota: the old file stays, no stray temporary
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise UserError(f"{path}: cannot write ({exc.strerror or exc}); free space or fix the "
                        "permissions (a run stopped by this continues with `evo resume`)") \
            from None
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def write_json(path: Path, value: Any) -> None:
    write_atomic(path, (json.dumps(value, indent=2) + "\n").encode())


def write_npz(path: Path, arrays: dict[str, Any]) -> None:
    """An `.npz` loadable with `allow_pickle=False`: object arrays are refused here, not later."""
    clean = {name: np.asarray(value) for name, value in arrays.items()}
    for name, value in clean.items():
        if value.dtype == object:
            raise TypeError(f"{path.name}: {name} is an object array and would need pickle")
    write_atomic(path, lambda handle: np.savez(handle, **clean))  # type: ignore[arg-type]
