"""The sweep folder: one ordinary run folder per point, and `sweep.json` saying what made them.

`sweep.json` records the sweep file's config and `[sweep]` table (after `--set`), the points
and the keys they vary. Running a sweep into an existing folder continues it only when that
record matches: another sweep file's runs would otherwise be mixed into this one's summary. The
keys that say only where runs execute (`parallel`, `address`) may differ, so a sweep started on
this machine can be continued on a cluster.

The folder is locked while a sweep runs in it (the run folders' own lock, `.lock`), so two
sweeps never start the same run twice. What a killed sweep leaves is what a killed `evo train`
leaves, in each run folder: a run with a checkpoint continues from it, a run folder without one
starts again, and a run folder killed before its config.json was written is removed and made
again (it holds nothing else: `evo train` writes config.json first).
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any, Literal

from evo_core.dotted import flatten
from evo_core.errors import UserError
from evo_core.results.checkpoint import read_checkpoint
from evo_core.results.files import write_json
from evo_core.results.reading import JSON_BYTES, read_whole
from evo_core.results.run_folder import LOCK_NAME, RunFolder
from evo_core.sweeps.plan import PlannedRun
from evo_core.sweeps.points import is_run_name

__all__ = ["SweepFolder", "RECORD_NAME", "RunState", "is_sweep_folder", "read_record"]

RECORD_NAME = "sweep.json"
RunState = Literal["new", "resume", "finished"]


def is_sweep_folder(path: Path) -> bool:
    """Whether `path` is a folder `evo sweep` made (as opposed to a run folder)."""
    return (path / RECORD_NAME).is_file()


def read_record(path: Path) -> dict[str, Any]:
    """The sweep.json of the sweep folder `path`; a UserError if it is missing or damaged."""
    file = path / RECORD_NAME
    text = read_whole(file, JSON_BYTES, RECORD_NAME, f"{path}: not a sweep folder (no "
                      f"{RECORD_NAME}); give a folder made by `evo sweep`")
    try:
        record = json.loads(text.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise UserError(f"{file}: unreadable ({exc}); the sweep folder is damaged") from None
    if not (isinstance(record, dict) and isinstance(record.get("points"), list)
            and isinstance(record.get("varied"), list)):
        raise UserError(f"{file}: not a sweep record (no list of points); the sweep folder is "
                        "damaged")
    return record


def _difference(recorded: dict[str, Any], current: dict[str, Any]) -> str:
    before, after = flatten(recorded), flatten(current)
    for key in sorted(before.keys() | after.keys()):
        if before.get(key, ...) != after.get(key, ...):
            was = json.dumps(before[key]) if key in before else "absent"
            now = json.dumps(after[key]) if key in after else "absent"
            return f"{key} is {now} here but {was} there"
    return "they differ"


class SweepFolder:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = RunFolder(path)

    record_file = property(lambda self: self.path / RECORD_NAME)
    plot_file = property(lambda self: self.path / "fitness.png")

    def run_dir(self, run: PlannedRun) -> Path:
        """The run's folder, always directly inside the sweep folder (points make safe names;
        this refuses any other rather than write outside)."""
        name = run.point.name
        if not is_run_name(name):
            raise UserError(f"{self.path}: the point {name!r} is not a safe folder name; "
                            "rename the key or value it comes from")
        return self.path / name

    @classmethod
    def open(cls, path: Path, record: dict[str, Any]) -> SweepFolder:
        """The sweep folder at `path`, made if new, locked; refused if another sweep made it."""
        if path.exists() and not path.is_dir():
            raise UserError(f"{path}: is a file, not a sweep folder; choose another --out")
        existing = path.is_dir() and any(p.name != LOCK_NAME for p in path.iterdir())
        if existing:
            cls._refuse_other(path, record)
        created = not path.exists()
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"{path}: cannot create the sweep folder: {exc.strerror}") from None
        folder = cls(path)
        try:
            folder._lock.lock()
            if not existing:
                write_json(folder.record_file, record)
        except BaseException:
            folder.unlock()
            if created:
                with contextlib.suppress(OSError):
                    path.rmdir()
            raise
        return folder

    @staticmethod
    def _refuse_other(path: Path, record: dict[str, Any]) -> None:
        if not is_sweep_folder(path):
            raise UserError(f"{path}: already exists and is not a sweep folder (no "
                            f"{RECORD_NAME}); choose another --out")
        recorded = read_record(path)
        if recorded.get("identity") != record["identity"]:
            source = recorded.get("sweep_file", "another sweep file")
            raise UserError(f"{path}: was made from another sweep ({source}): "
                            f"{_difference(recorded.get('identity') or {}, record['identity'])};"
                            " choose another --out for this one")

    def unlock(self) -> None:
        self._lock.unlock()

    def state(self, run: PlannedRun) -> RunState:
        """What the run of `run` needs: to start, to continue from its folder, or nothing."""
        run_dir = self.run_dir(run)
        if not run_dir.exists():
            return "new"
        folder = RunFolder(run_dir)
        if not os.path.lexists(folder.config_file):  # anything else there: read_config says
            self._remove_unborn(run_dir)
            return "new"
        if not folder.checkpoint_file.is_file():
            return "resume"
        run_id = (folder.read_config().get("provenance") or {}).get("run_id")
        if not isinstance(run_id, str):
            return "resume"  # resuming names the problem
        checkpoint = read_checkpoint(folder.checkpoint_file, run_id)
        return "finished" if checkpoint.generation >= run.generations else "resume"

    @staticmethod
    def _remove_unborn(run_dir: Path) -> None:
        """Remove a run folder killed before it had a config.json: only its lock file and a
        temporary config.json can be in it, anything else is not evo's and stops the sweep."""
        if run_dir.is_symlink() or not run_dir.is_dir():
            raise UserError(f"{run_dir}: is not a run folder; move it away and run the sweep "
                            "again")
        leftovers = list(run_dir.iterdir())
        for entry in leftovers:
            unborn = entry.name == LOCK_NAME or (entry.name.startswith(".config.json.")
                                                 and entry.name.endswith(".tmp"))
            if not unborn or entry.is_symlink() or not entry.is_file():
                raise UserError(f"{run_dir}: holds {entry.name} but no config.json, so evo did "
                                "not make it; move it away and run the sweep again")
        for entry in leftovers:
            entry.unlink()
        run_dir.rmdir()
