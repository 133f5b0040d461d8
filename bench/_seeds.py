"""Runs over seeds for the benchmarks that count evaluations to solve (bench/pole_balancing.py,
bench/neat.py): one evo run per (config, seed) through `evo_core.api.train`, kept under `--out`
and continued with `evo_core.api.resume`; runs in a process pool; a row's mean and 95 %
interval over its solved runs.

A run is "evaluations to solve" of its solving generation (log.csv's `evaluations` there),
counted up to the end of that generation; a run that spends its budget unsolved is failed and
left out of the mean. With an out folder every run keeps its folder (OUT/<key>/seed-N,
checkpointed every 10 generations): run the same command again and a finished run is read from
its log.csv, an unfinished one continues exactly where it stopped. A kept run's budget is the one
it started with (config.json's `stop.evaluations`). Without one, runs live in temporary folders.

Process time is measured in the process that trains (the configs' `processing` is sequential):
`cpu` and `cpu_evaluations` are this invocation's, so a run read back from its folder adds
nothing to a row's seconds per evaluation.
"""

from __future__ import annotations

import contextlib
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evo_core.api import Run, resume, train
from evo_core.errors import UserError
from evo_core.sweeps.statistics import estimate

__all__ = ["Job", "Outcome", "evo_run", "interval", "kept_outcome", "run_folder", "run_jobs",
           "slug", "spread"]


@dataclass(frozen=True)
class Outcome:
    """One run of one row: `solved` its evaluations to solve (None: failed, or not run when
    `error` says why), `spent` the evaluations it made in all, `seconds` this invocation's wall
    time, `cpu` its process seconds over `cpu_evaluations` evaluations made in it."""

    name: str
    seed: int
    solved: int | None
    spent: int
    seconds: float
    cpu: float = 0.0
    cpu_evaluations: int = 0
    error: str | None = None

    def line(self) -> str:
        """The progress line printed when the run ends."""
        if self.error is not None:
            outcome = f"not run: {self.error}"
        elif self.solved is not None:
            outcome = f"solved after {self.solved} evaluations"
        else:
            outcome = f"NOT solved within {self.spent} evaluations"
        return f"  {self.name:32s} seed {self.seed:3d}: {outcome} ({self.seconds:.0f} s)"


#: a function run in a worker and its arguments; it returns the outcomes of one seed's run
#: (more than one where a run measures several rows, as neat-python's XOR does)
Job = tuple[Callable[..., Sequence[Outcome]], tuple[Any, ...]]


def slug(name: str) -> str:
    """A folder name for a row's name."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


@contextlib.contextmanager
def run_folder(out: Path | None, key: str, seed: int) -> Iterator[Path]:
    """Where the run of `key` and `seed` lives: under `out`, kept, or in a temporary folder."""
    if out is None:
        with tempfile.TemporaryDirectory() as folder:
            yield Path(folder) / "run"
        return
    yield out / slug(key) / f"seed-{seed}"


def _finished(run: Run, budget: int) -> bool:
    log = run.log
    return bool(log) and (log[-1]["solved"] == 1 or log[-1]["evaluations"] >= budget)


def kept_outcome(name: str, seed: int, budget: int, out: Path,
                 key: str | None = None) -> Outcome | None:
    """The outcome of the run of `name` (or `key`) and `seed` kept under `out` if it has
    finished (solved, or `budget` spent), else None (not started, or still running); nothing is
    trained: a table of a long benchmark can be read while its runs go on."""
    folder = out / slug(key or name) / f"seed-{seed}"
    if not (folder / "config.json").is_file():
        return None
    run = Run.open(folder)
    if not _finished(run, budget):
        return None
    last = run.log[-1]
    spent = int(last["evaluations"])
    return Outcome(name, seed, spent if last["solved"] == 1 else None, spent, 0.0)


def evo_run(name: str, config: Path, overrides: Mapping[str, Any], seed: int, budget: int,
            out: Path | None = None, key: str | None = None) -> tuple[Outcome]:
    """Train `config` with `overrides` and `seed` until solved or `budget` evaluations are
    spent, or continue or read its run kept under `out` (in OUT/<key or name>/seed-N); a config
    evo refuses is an outcome with its one line as `error`."""
    started, cpu = time.perf_counter(), time.process_time()
    before = 0
    try:
        with run_folder(out, key or name, seed) as folder:
            if (folder / "config.json").is_file():
                run = Run.open(folder)
                before = int(run.log[-1]["evaluations"]) if run.log else 0
                if not _finished(run, budget):
                    run = resume(folder)
            else:
                run = train(config, out=folder,
                            overrides={**overrides, "seed": seed, "stop.evaluations": budget,
                                       "generations": 1_000_000, "checkpoint_every": 10})
            last = run.log[-1]
    except UserError as error:
        return (Outcome(name, seed, None, 0, time.perf_counter() - started,
                        error=str(error).splitlines()[0]),)
    spent = int(last["evaluations"])
    return (Outcome(name, seed, spent if last["solved"] == 1 else None, spent,
                    time.perf_counter() - started, time.process_time() - cpu, spent - before),)


def run_jobs(jobs: Sequence[Job], workers: int) -> Iterator[Outcome]:
    """Every job's outcomes as its run ends (each printed as it comes), `workers` at a time."""
    with ProcessPoolExecutor(workers) as pool:
        futures = [pool.submit(function, *arguments) for function, arguments in jobs]
        for future in as_completed(futures):
            for outcome in future.result():
                print(outcome.line(), flush=True)
                yield outcome


def interval(solved: Sequence[int]) -> tuple[float, str]:
    """The mean of `solved` and its 95 % t-interval as "low-high" ("-" for one value)."""
    found = estimate([float(value) for value in solved])
    assert found is not None
    if found.half_width is None:
        return found.mean, "-"
    return found.mean, (f"{found.mean - found.half_width:,.0f}-"
                        f"{found.mean + found.half_width:,.0f}")


def spread(solved: Sequence[int]) -> str:
    """Range and standard deviation of `solved`."""
    return f"{min(solved)}-{max(solved)}, sd {statistics.pstdev(solved):.0f}"
