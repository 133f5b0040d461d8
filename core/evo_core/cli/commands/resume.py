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

from evo_core.cli.running import run_generations
from evo_core.config import apply_overrides, override_sources, validate_config
from evo_core.engine.experiment import build_experiment
from evo_core.engine.training import resume_state
from evo_core.errors import UserError
from evo_core.plugins.discovery import get_registry
from evo_core.results.checkpoint import RESUMABLE
from evo_core.results.provenance import provenance, reload_local_plugins
from evo_core.results.run_folder import RunFolder

__all__ = ["add_parser", "RESUMABLE"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "resume", help="continue a run from its checkpoint",
        description="Continue RUN_DIR from its last checkpoint; the result equals an "
        "uninterrupted run. --set may change only: " + ", ".join(RESUMABLE) + " (and the "
        "keys below processing).")
    parser.add_argument("run_dir", type=Path, help="a run folder made by `evo train`")
    parser.add_argument("--generations", type=int, help="run up to this many generations")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="change an allowed value, e.g. --set processing.type=mp")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(run=_run)


def _check_allowed(assignments: list[str]) -> None:
    for assignment in assignments:
        key = assignment.partition("=")[0].strip()
        if not any(key == allowed or key.startswith(allowed + ".") for allowed in RESUMABLE):
            raise UserError(f"--set {key}: cannot change when resuming (allowed: "
                            f"{', '.join(RESUMABLE)}, processing.*); start a new run with "
                            "`evo train` instead")


def _run(args: argparse.Namespace) -> int:
    folder = RunFolder.open(args.run_dir)
    folder.lock()
    try:
        return _resume(folder, args)
    finally:
        folder.unlock()


def _resume(folder: RunFolder, args: argparse.Namespace) -> int:
    folder.refuse_links()
    folder.remove_stale_temporaries()
    stored = folder.read_config()
    reload_local_plugins(stored, folder.config_file, "resume")
    registry = get_registry()
    record_provenance = stored.pop("provenance", None) or {}
    run_id = record_provenance.get("run_id")
    if not isinstance(run_id, str):
        raise UserError(f"{folder.config_file}: has no provenance.run_id; was it written by "
                        "`evo train`?")
    _check_allowed(args.set)
    changes = list(args.set)
    if args.generations is not None:
        changes.append(f"generations={args.generations}")
    data = apply_overrides(stored, changes)
    config = validate_config(data, registry, source=f"{folder.config_file} (resumed)",
                             overrides=override_sources(changes))
    experiment = build_experiment(config, registry, str(folder.config_file))
    state = resume_state(experiment, folder, run_id)
    if state.generation >= config.generations:
        raise UserError(f"{folder.path}: already has {state.generation} generation(s); pass "
                        f"--generations N with N > {state.generation} to continue")
    if state.generation == 0:
        print("evo: no checkpoint yet; the run starts again from generation 1", file=sys.stderr)
    handler = experiment.make_handler()
    try:
        record = config.model_dump(mode="json")
        record["provenance"] = dict(record_provenance)
        resumed = list(record_provenance.get("resumed", []))
        resumed.append({"from_generation": state.generation, **provenance(registry, None)})
        record["provenance"]["resumed"] = resumed
        folder.write_config(record)
    except BaseException:
        handler.close()
        raise
    return run_generations(experiment, handler, folder, state, args.quiet)
