"""summary.csv: one row per setting, each result as a mean over seeds with its 95 % interval.

Columns: `setting` (the run folders' name without the seed), one column per varied key (its
value as a config file writes it; strings bare), `runs` (finished runs of the setting), then
for each result `<result>_mean` and `<result>_ci95`, the half-width of the t-interval (the
interval is mean ± ci95; empty with a single run, see `statistics`):

- `final_best`: the best fitness of the last generation;
- `best_ever`: the best fitness of any generation;
- with a `target`: `target_reached` (how many runs reached it) and `generations_to_target`
  (the first generation whose best reached it, over the runs that reached it);
- when the runs have a `[stop]` table: `solved` (how many runs were solved) and
  `evaluations_to_solve` (the evaluations up to the solving generation, over the solved runs;
  champion test episodes are not counted).

Only finished runs count (log.csv holds every generation, or the run stopped as its `[stop]`
table says: solved, or its budget spent); a setting none of whose runs finished has a row with
empty results. Written with the csv module (pandas is not needed), to a
temporary file renamed into place, so a reader never sees half a summary.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evo_core.errors import UserError
from evo_core.results.files import write_atomic
from evo_core.results.log_file import read_log
from evo_core.results.run_folder import RunFolder
from evo_core.sweeps.points import is_run_name
from evo_core.sweeps.statistics import Estimate, estimate

__all__ = ["SettingRuns", "settings_in", "finished_log", "summary_rows", "write_summary"]


@dataclass(frozen=True)
class SettingRuns:
    """A setting of a sweep folder: its varied values and its run folders, one per seed."""

    label: str
    values: dict[str, Any]
    run_dirs: list[Path]


def settings_in(path: Path, record: dict[str, Any]) -> list[SettingRuns]:
    """The settings of the sweep folder `path` (with its sweep.json `record`), in order."""
    settings: dict[str, SettingRuns] = {}
    try:
        for point in record["points"]:
            label, name = str(point["setting"]), str(point["name"])
            if not is_run_name(name):
                raise UserError(f"{path / 'sweep.json'}: the point name {name!r} is not a "
                                "folder inside the sweep folder; the sweep folder is damaged")
            setting = settings.setdefault(label, SettingRuns(label, dict(point["values"]), []))
            setting.run_dirs.append(path / name)
    except (KeyError, TypeError, ValueError):
        raise UserError(f"{path / 'sweep.json'}: its points lack names, settings or values; "
                        "the sweep folder is damaged") from None
    return list(settings.values())


def finished_log(run_dir: Path) -> list[dict[str, str]] | None:
    """The log rows of a run that finished all its generations or stopped by its `[stop]`
    table; None for any other run."""
    folder = RunFolder(run_dir)
    try:
        config = folder.read_config()
        generations = config["generations"]
        stop = config.get("stop")
    except (UserError, KeyError):
        return None
    if not folder.log_file.is_file() or not isinstance(generations, int):
        return None
    rows = read_log(folder.log_file)
    return rows if len(rows) >= generations or _stopped(rows, stop) else None


def _stopped(rows: list[dict[str, str]], stop: Any) -> bool:
    """Whether the last row is where the run's `[stop]` table ended it."""
    if not rows or not isinstance(stop, dict):
        return False
    budget = stop.get("evaluations")
    try:
        return rows[-1].get("solved") == "1" or (
            isinstance(budget, int) and int(rows[-1]["evaluations"]) >= budget)
    except ValueError:
        return False


def _solved_at(rows: list[dict[str, str]]) -> int | None:
    """The evaluations of a run solved at its last row (None: not solved)."""
    return int(rows[-1]["evaluations"]) if rows[-1].get("solved") == "1" else None


def _first_reaching(rows: list[dict[str, str]], target: float) -> int | None:
    for row in rows:
        if float(row["best_ever"]) >= target:
            return int(row["generation"])
    return None


def _columns(result: str, value: Estimate | None) -> dict[str, float | None]:
    return {f"{result}_mean": value.mean if value else None,
            f"{result}_ci95": value.half_width if value else None}


def summary_rows(settings: list[SettingRuns], varied: list[str],
                 target: float | None) -> list[dict[str, Any]]:
    """One dict per setting: its varied values, the number of finished runs and the results."""
    all_logs = [[rows for rows in map(finished_log, setting.run_dirs) if rows]
                for setting in settings]
    stopping = any("solved" in rows[-1] for logs in all_logs for rows in logs)
    table = []
    for setting, logs in zip(settings, all_logs):
        row: dict[str, Any] = {"setting": setting.label}
        row.update({key: setting.values.get(key) for key in varied})
        row["runs"] = len(logs)
        row.update(_columns("final_best", estimate([float(r[-1]["best"]) for r in logs])))
        row.update(_columns("best_ever", estimate([float(r[-1]["best_ever"]) for r in logs])))
        if target is not None:
            reached = [g for g in (_first_reaching(r, target) for r in logs) if g is not None]
            row["target_reached"] = len(reached)
            row.update(_columns("generations_to_target", estimate([float(g) for g in reached])))
        if stopping:
            solved = [e for e in map(_solved_at, logs) if e is not None]
            row["solved"] = len(solved)
            row.update(_columns("evaluations_to_solve", estimate([float(e) for e in solved])))
        table.append(row)
    return table


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return repr(value)
    return json.dumps(value, sort_keys=True)


def _lines(rows: list[dict[str, Any]]) -> Iterator[list[str]]:
    header = list(rows[0]) if rows else ["setting"]
    yield header
    for row in rows:
        yield [_cell(row[column]) for column in header]


def write_summary(path: Path, settings: list[SettingRuns], varied: list[str],
                  target: float | None) -> Path:
    """Write summary.csv into the sweep folder `path`; its path."""
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows(
        _lines(summary_rows(settings, varied, target)))
    file = path / "summary.csv"
    write_atomic(file, text.getvalue().encode("utf-8"))
    return file
