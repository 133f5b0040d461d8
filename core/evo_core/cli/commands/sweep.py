"""`evo sweep SWEEP_FILE`: one run per setting and seed, then summary.csv and fitness.png.

The same command continues a sweep that was stopped (Ctrl-C, SIGTERM, a crash, kill -9):
finished runs are skipped and interrupted ones continue from their checkpoints.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evo_core.sweeps.run_one import Outcome

__all__ = ["add_parser"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "sweep", help="run a config for every setting and seed of a [sweep] table",
        description="Run SWEEP_FILE (a config plus a [sweep] table of seeds, grid and sample "
        "values) as one run folder per point inside the sweep folder, then write summary.csv "
        "(mean and 95 % interval over seeds per setting) and fitness.png. Every point is "
        "validated before anything runs. Run the same command again to continue a stopped "
        "sweep. The sweep folder's path is printed last.")
    parser.add_argument("sweep_file", type=Path, metavar="SWEEP_FILE",
                        help="a config (.toml or .json) with a [sweep] table")
    parser.add_argument("--out", type=Path, help="sweep folder (default: sweeps/<the sweep "
                        "file's name>); a folder of the same sweep is continued")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a value of the sweep file, e.g. --set generations=50 "
                        "--set sweep.parallel=4 (repeatable)")
    parser.add_argument("--dry-run", action="store_true",
                        help="validate every point and print them, one per line; run nothing")
    parser.set_defaults(run=_run)


def _say(outcome: Outcome, done: int, total: int) -> None:
    if outcome.status == "failed":
        if outcome.details:
            print(outcome.details.rstrip(), file=sys.stderr)
        print(f"evo: error: run {outcome.name}: {outcome.message}", file=sys.stderr)
    else:
        about = f" ({outcome.message})" if outcome.message else ""
        print(f"evo: sweep [{done}/{total}]: {outcome.name} {outcome.status}{about}",
              file=sys.stderr)


def _command(args: argparse.Namespace, out: Path) -> str:
    """The command that continues this sweep, as the user would type it."""
    words = ["evo", "sweep", str(args.sweep_file), "--out", str(out)]
    for assignment in args.set:
        words += ["--set", assignment]
    return shlex.join(words)


def _run(args: argparse.Namespace) -> int:
    from evo_core.cli.running import Terminated, sigterm_as_interrupt
    from evo_core.config.loading import override_sources, parse_assignments
    from evo_core.sweeps.sweeping import default_sweep_dir, prepare_sweep, run_sweep

    plan = prepare_sweep(args.sweep_file, parse_assignments(args.set),
                         override_sources(args.set))
    if args.dry_run:
        for run in plan.runs:
            print(f"{run.point.name}: {run.point.describe()}")
        return 0
    out: Path = args.out or default_sweep_dir(args.sweep_file)
    try:
        with sigterm_as_interrupt():
            result = run_sweep(plan, out, _say)
    except KeyboardInterrupt as interrupt:
        terminated = isinstance(interrupt, Terminated)
        print(f"evo: {'terminated (SIGTERM)' if terminated else 'interrupted (SIGINT)'}; the "
              f"runs in {out} stopped at their last checkpoint; continue with: "
              f"{_command(args, out)}", file=sys.stderr)
        return 143 if terminated else 130
    if result.skipped or result.resumed:
        runs = "run" if len(plan.runs) == 1 else "runs"
        were = "was" if result.skipped == 1 else "were"
        print(f"evo: sweep: of {len(plan.runs)} {runs}, {result.skipped} {were} complete "
              f"(skipped), {result.resumed} continued from their folders, "
              f"{len(plan.runs) - result.skipped - result.resumed} started", file=sys.stderr)
    failed = result.failed
    if any(outcome.user_error for outcome in failed):
        return 2
    if failed:
        print(f"evo: {len(failed)} of {len(plan.runs)} runs failed (see above); summary.csv "
              f"counts the others; run the same command again to retry them",
              file=sys.stderr)
        return 1
    sys.stdout.flush()
    print(result.folder)
    return 0
