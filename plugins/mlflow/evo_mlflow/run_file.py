"""The MLflow run an evo run is tracked in, remembered in the run folder.

`RUN/mlflow-run.json` holds the MLflow run's id (and its experiment's), so that `evo resume`
continues that MLflow run. It holds no tracking URI: one may carry a password, and the store is
the config's (or the environment's) to name. A run folder is data, so the file is read as
hostile input: a regular file, not through a link, small, and a run id of MLflow's form.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

__all__ = ["NAME", "read_run_id", "run_file_bytes"]

#: the file's name in the run folder
NAME = "mlflow-run.json"
#: far more than the file ever holds
_MOST_BYTES = 4096
#: MLflow's run ids are 32 hex digits; other stores' are of letters, digits, - and _
_RUN_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")
_FIX = "remove it to track this run in a new MLflow run"


def read_run_id(run_path: Path) -> str | None:
    """The MLflow run id the run folder `run_path` remembers (None: it remembers none); a
    `ValueError` of one line for a file that is not one evo wrote."""
    path = run_path / NAME
    if not os.path.lexists(path):
        return None
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        why = "is a symbolic link" if path.is_symlink() else f"cannot be read ({exc.strerror})"
        raise ValueError(f"{path} {why}; {_FIX}") from None
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ValueError(f"{path} is not a regular file; {_FIX}")
        data = handle.read(_MOST_BYTES + 1)
    try:
        content = json.loads(data.decode("utf-8")) if len(data) <= _MOST_BYTES else None
    except (UnicodeDecodeError, ValueError, RecursionError):
        content = None
    run_id = content.get("run_id") if isinstance(content, dict) else None
    if not isinstance(run_id, str) or not _RUN_ID.fullmatch(run_id):
        raise ValueError(f"{path} names no MLflow run id; {_FIX}")
    return run_id


def run_file_bytes(run_id: str, experiment_id: str) -> bytes:
    """The file's content for the MLflow run `run_id` of the experiment `experiment_id`."""
    return (json.dumps({"run_id": run_id, "experiment_id": experiment_id}, indent=2)
            + "\n").encode("utf-8")
