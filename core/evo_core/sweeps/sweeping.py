"""A sweep from file to summary: read, validate every point, run what is not done, summarise.

Running the same sweep again is how a sweep continues: finished runs are skipped, interrupted
ones continue from their checkpoints, and summary.csv and fitness.png are written again once
every run has finished (or failed), from all the run folders.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evo_core.hooks.discovery import get_registry
from evo_core.results.plot import plot_runs
from evo_core.results.plot_style import PlotStyle
from evo_core.sweeps.cluster import run_on_cluster
from evo_core.sweeps.folder import SweepFolder, read_record
from evo_core.sweeps.local_pool import run_locally
from evo_core.sweeps.plan import PlannedRun, plan_runs
from evo_core.sweeps.plot import plot_sweep
from evo_core.sweeps.run_one import Outcome, RunJob
from evo_core.sweeps.summary import settings_in, write_summary
from evo_core.sweeps.sweep_file import SweepFile, read_sweep_file

__all__ = ["SweepPlan", "prepare_sweep", "default_sweep_dir", "run_sweep", "SweepResult",
           "summarise", "plot_sweep_folder"]


def default_sweep_dir(sweep_file: Path) -> Path:
    """sweeps/<the sweep file's name>: the same folder every time, so a re-run continues."""
    return Path("sweeps") / sweep_file.stem


@dataclass(frozen=True)
class SweepPlan:
    sweep: SweepFile
    runs: list[PlannedRun]

    def record(self) -> dict[str, Any]:
        """What sweep.json holds."""
        table = self.sweep.table
        return {"sweep_file": str(self.sweep.path), "identity": self.sweep.identity,
                "varied": [*table.grid, *table.sample], "target": table.target,
                "points": [{"name": run.point.name, "setting": run.point.setting.label,
                            "values": dict(run.point.setting.values), "seed": run.point.seed}
                           for run in self.runs]}


def prepare_sweep(path: Path, overrides: Sequence[tuple[str, Any]] = (),
                  override_texts: Mapping[str, str] | None = None) -> SweepPlan:
    """The sweep file at `path`, `--set` applied, every point validated."""
    registry = get_registry()
    sweep = read_sweep_file(path, registry, list(overrides), dict(override_texts or {}))
    return SweepPlan(sweep, plan_runs(sweep, registry))


@dataclass
class SweepResult:
    folder: Path
    #: runs finished by an earlier invocation, left alone
    skipped: int = 0
    #: runs an earlier invocation started, continued from their folders
    resumed: int = 0
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def failed(self) -> list[Outcome]:
        return [outcome for outcome in self.outcomes if outcome.status != "finished"]


def summarise(folder: Path) -> tuple[Path, Path | None]:
    """Write summary.csv and fitness.png of the sweep folder from its run folders; the plot is
    None when no run has finished a generation."""
    record = read_record(folder)
    settings = settings_in(folder, record)
    varied = [str(key) for key in record["varied"]]
    target = record.get("target")
    summary = write_summary(folder, settings, varied,
                            float(target) if isinstance(target, (int, float)) else None)
    if not any((run_dir / "log.csv").is_file() for s in settings for run_dir in s.run_dirs):
        return summary, None
    return summary, plot_sweep(folder, settings, varied, folder / "fitness.png")


def plot_sweep_folder(folder: Path, output: Path | None = None, title: str | None = None,
                      style: PlotStyle | None = None) -> Path:
    """Draw the sweep folder's settings into `output` (default: its fitness.png)."""
    record = read_record(folder)
    return plot_sweep(folder, settings_in(folder, record), [str(k) for k in record["varied"]],
                      output or folder / "fitness.png", title, style)


def run_sweep(plan: SweepPlan, out: Path | None = None,
              on_outcome: Callable[[Outcome, int, int], None] | None = None) -> SweepResult:
    """Run the plan's points into the sweep folder `out` (default: sweeps/<file name>), skipping
    the finished ones; `on_outcome(outcome, done, total)` hears of each run as it ends. A
    KeyboardInterrupt stops the runs resumably and propagates."""
    folder = SweepFolder.open(out or default_sweep_dir(plan.sweep.path), plan.record())
    try:
        states = [(run, folder.state(run)) for run in plan.runs]
        jobs = [RunJob(run.point.name, folder.run_dir(run),
                       run.config if state == "new" else None, run.source, plan.sweep.path,
                       run.processing)
                for run, state in states if state != "finished"]
        result = SweepResult(folder.path, skipped=len(plan.runs) - len(jobs),
                             resumed=sum(state == "resume" for _, state in states))
        for run, state in states:  # a run killed while drawing its last plot
            plot = folder.run_dir(run) / "fitness.png"
            if state == "finished" and not plot.exists():
                plot_runs([folder.run_dir(run)], plot)

        def heard(outcome: Outcome) -> None:
            result.outcomes.append(outcome)
            if on_outcome is not None:
                on_outcome(outcome, result.skipped + len(result.outcomes), len(plan.runs))

        table = plan.sweep.table
        if jobs and table.address is not None:
            run_on_cluster(jobs, table.address, heard)
        elif jobs:
            run_locally(jobs, table.parallel or 1, heard)
        if not any(outcome.user_error for outcome in result.outcomes):
            summarise(folder.path)
        return result
    finally:
        folder.unlock()
