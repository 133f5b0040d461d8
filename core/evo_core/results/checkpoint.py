"""checkpoint.npz: everything needed to continue a run exactly where it stopped.

Arrays are stored as arrays; everything else (generation counter, RNG states, counters, the run's
identity) as one JSON document in the `meta` entry. The file is replaced atomically, so a kill at
any moment leaves the previous checkpoint intact, and it is read with `allow_pickle=False`.

Two records tie the checkpoint to the rest of the folder. The resolved config it was written
under (with its SHA-256 digest), so that a resume can refuse a config.json edited into another
experiment, naming the field; and the `LogMark` of log.csv, so that a resume keeps exactly the
rows the checkpoint covers. An optimizer whose state is not plain arrays must protect it itself
(CMA-ES signs its pickled strategy, see `results/signing.py`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core._version import __version__
from evo_core.dotted import flatten
from evo_core.errors import UserError
from evo_core.results.files import prefixed, unprefixed, write_npz
from evo_core.results.log_file import LogMark
from evo_core.results.reading import load_npz

__all__ = ["Checkpoint", "write_checkpoint", "read_checkpoint", "FORMAT", "RESUMABLE",
           "config_digest", "changed_setting", "run_binding"]

FORMAT = 2

#: What a resume may change: how long, where and how often it checkpoints, the step limit, and
#: the trackers that watch it.
#: Anything else would make the continued run a different experiment.
RESUMABLE = ("generations", "checkpoint_every", "processing", "episodes.max_steps", "trackers")

_GROUPS = ("optimizer", "hall_of_fame", "best", "template", "novelty")


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
    #: the resolved config (`model_dump(mode="json")`) the run was trained under
    config: dict[str, Any]
    #: how much of log.csv this checkpoint covers
    log: LogMark
    #: novelty search's archive (`archive`: descriptors, oldest first); empty without novelty,
    #: and in checkpoints written before novelty search existed
    novelty: dict[str, NDArray[Any]] = field(default_factory=dict)


def config_digest(config: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()


def run_binding(run_id: str, config: dict[str, Any]) -> str:
    """What the signed state of a checkpoint is bound to (`results.signing.signing_for`): the
    run, and the config the checkpoint records."""
    return f"run {run_id} config {config_digest(config)}"


def changed_setting(recorded: dict[str, Any], current: dict[str, Any]) -> str | None:
    """The first setting outside RESUMABLE whose value differs, described; None if none."""
    before, after = flatten(recorded), flatten(current)
    for key in sorted(before.keys() | after.keys()):
        if any(key == allowed or key.startswith(allowed + ".") for allowed in RESUMABLE):
            continue
        if key not in before or key not in after or before[key] != after[key]:
            was = json.dumps(before[key]) if key in before else "absent"
            now = json.dumps(after[key]) if key in after else "absent"
            return f"{key} is {now} but the run was trained with {was}"
    return None


def write_checkpoint(path: Path, checkpoint: Checkpoint) -> None:
    arrays: dict[str, Any] = {}
    for group in _GROUPS:
        arrays.update(prefixed(group, {k: v for k, v in getattr(checkpoint, group).items()
                                       if isinstance(v, (np.ndarray, np.generic))}))
    optimizer_meta = {k: v for k, v in checkpoint.optimizer.items()
                      if not isinstance(v, (np.ndarray, np.generic))}
    meta = {"format": FORMAT, "evo_core": __version__, "generation": checkpoint.generation,
            "evaluations": checkpoint.evaluations, "steps": checkpoint.steps,
            "seconds": checkpoint.seconds, "run_id": checkpoint.run_id,
            "streams": checkpoint.streams, "optimizer": optimizer_meta,
            "config": checkpoint.config, "config_sha256": config_digest(checkpoint.config),
            "log": checkpoint.log.as_json()}
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    write_npz(path, arrays)


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
        config = meta["config"]
        if not isinstance(config, dict) or config_digest(config) != meta["config_sha256"]:
            raise ValueError("config digest")
        if not isinstance(meta["optimizer"], dict) or not isinstance(meta["streams"], dict):
            raise TypeError("optimizer and streams must be tables")
        optimizer = dict(meta["optimizer"])
        optimizer.update(unprefixed("optimizer", arrays))
        return Checkpoint(
            generation=_count(meta["generation"]), evaluations=_count(meta["evaluations"]),
            steps=_count(meta["steps"]), seconds=float(meta["seconds"]),
            run_id=str(meta["run_id"]), streams=meta["streams"], optimizer=optimizer,
            hall_of_fame=unprefixed("hall_of_fame", arrays), best=unprefixed("best", arrays),
            template=unprefixed("template", arrays), config=config,
            log=LogMark.from_json(meta["log"]), novelty=unprefixed("novelty", arrays))
    except (KeyError, TypeError, ValueError, OverflowError):
        raise UserError(f"{path}: damaged (its meta entry is incomplete or its config does not "
                        "match its digest); resume from a whole copy of the run folder") from None



def _count(value: Any) -> int:
    """A counter of the meta entry: a JSON integer (3.7, true or 1e999 are not)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{value!r} is not an integer")
    return value
