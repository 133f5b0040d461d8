"""`evo resume RUN_DIR`: continue a stopped (or finished) run exactly where it left off.

The folder is locked first (one process trains in a folder at a time), then checked: no planted
symbolic links, a checkpoint that belongs to it, a config equal to the checkpoint's outside
RESUMABLE, and a log that holds every row the checkpoint covers. Only then is anything written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from evo_core.results.checkpoint import RESUMABLE

__all__ = ["add_parser"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "resume", help="continue a run from its checkpoint",
        description="Continue RUN_DIR from its last checkpoint; the result equals an "
        "uninterrupted run. --set may change only: " + ", ".join(RESUMABLE) + " (and the "
        "keys below processing and trackers).")
    parser.add_argument("run_dir", type=Path, help="a run folder made by `evo train`")
    parser.add_argument("--generations", type=int, help="run up to this many generations")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="change an allowed value, e.g. --set processing.type=mp")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from evo_core.cli.running import run_generations
    from evo_core.config.loading import override_sources, parse_assignments
    from evo_core.running.session import NO_CHECKPOINT, prepare_resume

    session = prepare_resume(args.run_dir, generations=args.generations,
                             overrides=parse_assignments(args.set),
                             override_texts=override_sources(args.set))
    if session.state.generation == 0:
        print(f"evo: {NO_CHECKPOINT}", file=sys.stderr)
    return run_generations(session, args.quiet)
