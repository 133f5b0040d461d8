"""checkpoint.npz: everything needed to continue a run exactly where it stopped.

Arrays are stored as arrays; everything else (generation counter, RNG states, counters, the run's
identity) as one JSON document in the `meta` entry. The file is replaced atomically, so a kill at
any moment leaves the previous checkpoint intact, and it is read with `allow_pickle=False`.

Two records tie the checkpoint to the rest of the folder. The resolved config it was written
under (with its SHA-256 digest), so that a resume can refuse a config.json edited into another
experiment, naming the field; and the `LogMark` of log.csv, so that a resume keeps exactly the
rows the checkpoint covers. An optimizer whose state is not plain arrays must protect it itself
(CMA-ES signs its pickled strategy, see `results/signing.py`).

A run with a `[stop]` table records its stop columns after the checkpoint's generation
(`stop`: whether it was solved, the champion test episodes played), so a resume continues from
what evo wrote here rather than from log.csv's text; `running/checkpoint_checks.py` checks them
against the config, the other values and log.csv's last kept row. A meta entry that lacks a
field or holds the wrong type is one line naming the field.
"""

from __future__ import annotations

import hashlib
import json
import os
import reprlib
from collections.abc import Callable
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
from evo_core.results.run_folder import RunFolder

__all__ = ["Checkpoint", "write_checkpoint", "read_checkpoint", "read_run_checkpoint", "FORMAT",
           "RESUMABLE",
           "config_digest", "changed_setting", "run_binding"]

FORMAT = 2

#: What a resume may change: how long, where and how often it checkpoints, the step limit, and
#: the trackers that watch it.
#: Anything else would make the continued run a different experiment.
RESUMABLE = ("generations", "checkpoint_every", "processing", "episodes.max_steps", "trackers")

_GROUPS = ("optimizer", "hall_of_fame", "best", "template", "novelty", "champion",
           "observations")


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
    #: novelty search's archive (`archive`: descriptors, oldest first; `threshold` and `idle`
    #: with an adaptive threshold); empty without novelty, and in checkpoints written before
    #: novelty search existed
    novelty: dict[str, NDArray[Any]] = field(default_factory=dict)
    #: the `[stop]` columns after `generation` (`solved`: 0 or 1, `test_episodes`), as log.csv
    #: has them; None without a `[stop]` table, and in checkpoints written before they were
    #: recorded (log.csv's last kept row, which `log` vouches for, has them then)
    stop: dict[str, Any] | None = None
    #: the champion chosen on fresh episodes (`[champion]`: genome, fitness, generation,
    #: fresh), best.npz's; empty before one was chosen, without `[champion]`, and in checkpoints
    #: written before it existed
    champion: dict[str, NDArray[Any]] = field(default_factory=dict)
    #: `observation_normalization = "running"`'s statistics of every observation so far
    #: (`count`, `mean`, `m2`: results/observation_arrays.py); empty when it is off
    observations: dict[str, NDArray[Any]] = field(default_factory=dict)


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
            "log": checkpoint.log.as_json(), "stop": checkpoint.stop}
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    write_npz(path, arrays)


def read_checkpoint(path: Path, run_id: str) -> Checkpoint:
    """The checkpoint, or a UserError saying why it cannot be used."""
    arrays = load_npz(path, "this run has no checkpoint to resume from")
    meta = _meta(arrays, path, run_id)

    def take(name: str, parse: Callable[[Any], Any], optional: bool = False) -> Any:
        return _field(meta, path, name, parse, optional)

    config = take("config", _table)
    if config_digest(config) != meta.get("config_sha256"):
        raise UserError(f"{path}: damaged: its config does not match its digest "
                        f"(config_sha256); {_WHOLE_COPY}")
    optimizer = dict(take("optimizer", _table))
    optimizer.update(unprefixed("optimizer", arrays))
    return Checkpoint(
        generation=take("generation", _count), evaluations=take("evaluations", _count),
        steps=take("steps", _count), seconds=take("seconds", _number), run_id=run_id,
        streams=take("streams", _table), optimizer=optimizer,
        hall_of_fame=unprefixed("hall_of_fame", arrays), best=unprefixed("best", arrays),
        template=unprefixed("template", arrays), config=config,
        log=take("log", LogMark.from_json), novelty=unprefixed("novelty", arrays),
        stop=take("stop", _optional_table, optional=True),
        champion=unprefixed("champion", arrays),
        observations=unprefixed("observations", arrays))


def read_run_checkpoint(folder: RunFolder, provenance: dict[str, Any] | None
                        ) -> Checkpoint | None:
    """The last checkpoint of the run in `folder`, or None before the first one: for what
    reads a run rather than resuming it (the API, `evo plot --maze`'s archive). `provenance`
    is the folder's validated config's, whose run id the checkpoint must carry."""
    file = folder.checkpoint_file
    if not os.path.lexists(file):  # anything else there: read_checkpoint says what it is
        return None
    run_id = (provenance or {}).get("run_id")
    if not isinstance(run_id, str):
        raise UserError(f"{folder.config_file}: has no provenance.run_id; was it written by "
                        "`evo train`?")
    return read_checkpoint(file, run_id)


def _meta(arrays: dict[str, NDArray[Any]], path: Path, run_id: str) -> dict[str, Any]:
    """The meta entry of an evo checkpoint of this format and of the run `run_id`."""
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
    return meta


def _field(meta: dict[str, Any], path: Path, name: str, parse: Callable[[Any], Any],
           optional: bool) -> Any:
    """The meta entry's field `name`, parsed; one line naming it when it is missing (and not
    `optional`) or not what evo writes."""
    if name not in meta:
        if optional:
            return None
        raise UserError(f"{path}: damaged: its meta entry lacks {name}; {_WHOLE_COPY}")
    try:
        return parse(meta[name])
    except KeyError as exc:
        raise UserError(f"{path}: damaged: its meta entry's {name} lacks {exc}; "
                        f"{_WHOLE_COPY}") from None
    except (TypeError, ValueError, OverflowError) as exc:
        raise UserError(f"{path}: damaged: its meta entry's {name}: {exc}; {_WHOLE_COPY}") \
            from None


_WHOLE_COPY = "resume from a whole copy of the run folder"


def _table(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"{_shown(value)} is not a table")
    return value


def _optional_table(value: Any) -> dict[str, Any] | None:
    return None if value is None else _table(value)


def _number(value: Any) -> float:
    """A JSON number (NaN and infinities too: check_checkpoint says why they cannot be)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"{_shown(value)} is not a number")
    return float(value)


def _shown(value: Any) -> str:
    return _short.repr(value)


_short = reprlib.Repr()
_short.maxstring = _short.maxother = 40


def _count(value: Any) -> int:
    """A counter of the meta entry: a JSON integer (3.7, true or 1e999 are not)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{_shown(value)} is not an integer")
    return value
