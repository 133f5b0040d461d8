"""checkpoint.npz: everything needed to continue a run exactly where it stopped.

Arrays are stored as arrays; everything else (generation counter, RNG states, counters, the run's
identity) as one JSON document in the `meta` entry. The file is replaced atomically, so a kill at
any moment leaves the previous checkpoint intact. pycma's strategy object has no array form and is
stored as pickled bytes inside a uint8 array; it is unpickled only from the run's own folder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core._version import __version__
from evo_core.errors import UserError
from evo_core.results.files import write_npz
from evo_core.results.run_folder import load_npz

__all__ = ["Checkpoint", "write_checkpoint", "read_checkpoint", "FORMAT"]

FORMAT = 1


@dataclass
class Checkpoint:
    generation: int
    evaluations: int
    steps: int
    seconds: float
    run_id: str
    streams: dict[str, Any]
    optimizer: dict[str, Any]
    hall_of_fame: dict[str, NDArray[Any]]
    best: dict[str, NDArray[Any]]
    template: dict[str, NDArray[Any]]


def _split(prefix: str, state: dict[str, Any], arrays: dict[str, Any],
           meta: dict[str, Any]) -> None:
    for key, value in state.items():
        if isinstance(value, (np.ndarray, np.generic)):
            arrays[f"{prefix}.{key}"] = np.asarray(value)
        else:
            meta[key] = value


def write_checkpoint(path: Path, checkpoint: Checkpoint) -> None:
    arrays: dict[str, Any] = {}
    optimizer_meta: dict[str, Any] = {}
    _split("optimizer", checkpoint.optimizer, arrays, optimizer_meta)
    _split("hall_of_fame", checkpoint.hall_of_fame, arrays, {})
    _split("best", checkpoint.best, arrays, {})
    _split("template", checkpoint.template, arrays, {})
    meta = {"format": FORMAT, "evo_core": __version__, "generation": checkpoint.generation,
            "evaluations": checkpoint.evaluations, "steps": checkpoint.steps,
            "seconds": checkpoint.seconds, "run_id": checkpoint.run_id,
            "streams": checkpoint.streams, "optimizer": optimizer_meta}
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    write_npz(path, arrays)


def _unsplit(prefix: str, arrays: dict[str, NDArray[Any]]) -> dict[str, NDArray[Any]]:
    start = prefix + "."
    return {k[len(start):]: v for k, v in arrays.items() if k.startswith(start)}


def read_checkpoint(path: Path, run_id: str) -> Checkpoint:
    """The checkpoint, or a UserError saying why it cannot be used."""
    arrays = load_npz(path, "this run has no checkpoint to resume from")
    try:
        meta = json.loads(arrays["meta"].tobytes().decode())
    except (KeyError, ValueError, UnicodeDecodeError, RecursionError):
        raise UserError(f"{path}: not an evo checkpoint (no readable meta entry)") from None
    if not isinstance(meta, dict):
        raise UserError(f"{path}: not an evo checkpoint (its meta entry is not a table)")
    if meta.get("format") != FORMAT:
        raise UserError(f"{path}: written by evo-core {meta.get('evo_core', '?')} in checkpoint "
                        f"format {meta.get('format')}; this evo-core {__version__} reads format "
                        f"{FORMAT}")
    if meta.get("run_id") != run_id:
        raise UserError(f"{path}: belongs to another run ({meta.get('run_id')}, this folder's "
                        f"config.json says {run_id}); copy run folders whole")
    try:
        if not isinstance(meta["optimizer"], dict) or not isinstance(meta["streams"], dict):
            raise TypeError("optimizer and streams must be tables")
        optimizer = dict(meta["optimizer"])
        optimizer.update(_unsplit("optimizer", arrays))
        return Checkpoint(generation=int(meta["generation"]),
                          evaluations=int(meta["evaluations"]), steps=int(meta["steps"]),
                          seconds=float(meta["seconds"]), run_id=str(meta["run_id"]),
                          streams=meta["streams"], optimizer=optimizer,
                          hall_of_fame=_unsplit("hall_of_fame", arrays),
                          best=_unsplit("best", arrays), template=_unsplit("template", arrays))
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(f"{path}: its meta entry is damaged ({type(exc).__name__}: {exc}); "
                        "the run cannot continue from it") from None
