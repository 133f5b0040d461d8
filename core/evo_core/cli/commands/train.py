"""`evo train CONFIG`: validate, build, run, and print the run folder last."""

from __future__ import annotations

import argparse
import datetime
import re
import shutil
from pathlib import Path
from typing import Any

from evo_core.cli.running import run_generations
from evo_core.config import apply_overrides, override_sources, read_config_file, validate_config
from evo_core.engine.experiment import build_experiment
from evo_core.engine.training import TrainingState, new_run_id
from evo_core.plugins.discovery import get_registry
from evo_core.results.provenance import provenance
from evo_core.results.run_folder import RunFolder

__all__ = ["add_parser", "default_run_dir"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "train", help="evolve a brain as a config file describes",
        description="Validate CONFIG (TOML or JSON), run the experiment and write a run folder "
        "(config.json, log.csv, best.npz, hall_of_fame.npz, checkpoint.npz, fitness.png). "
        "The folder's path is printed last. Ctrl-C stops it resumably (`evo resume`).")
    parser.add_argument("config", type=Path, help="experiment config, .toml or .json")
    parser.add_argument("--out", type=Path, help="run folder (new or empty); default "
                        "runs/<time>-<environment>-<brain>")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config value, e.g. --set generations=50 "
                        "--set brain.number_neurons=20 (repeatable)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(run=_run)


def default_run_dir(environment: str, brain: str, root: Path = Path("runs")) -> Path:
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{environment}-{brain}")
    path = root / f"{stamp}-{slug}"
    suffix = 2
    while path.exists():
        path = root / f"{stamp}-{slug}-{suffix}"
        suffix += 1
    return path


def _run(args: argparse.Namespace) -> int:
    registry = get_registry()
    data = apply_overrides(read_config_file(args.config), args.set)
    data.pop("provenance", None)  # a run's config.json may be trained again
    config = validate_config(data, registry, source=str(args.config),
                             overrides=override_sources(args.set))
    experiment = build_experiment(config, registry, str(args.config))
    handler = experiment.make_handler()
    path = args.out or default_run_dir(config.environment, config.brain.type)
    created = not path.exists()
    folder: RunFolder | None = None
    try:
        # locked from creation to the end of the run: a second `--out` here is refused
        folder = RunFolder.create(path)
        run_id = new_run_id()
        record = config.model_dump(mode="json")
        record["provenance"] = {"run_id": run_id, **provenance(registry, args.config)}
        folder.write_config(record)
    except BaseException:
        handler.close()
        if folder is not None:
            folder.unlock()
        if created and path.is_dir():  # a run that never started leaves no folder
            shutil.rmtree(path, ignore_errors=True)
        raise
    try:
        return run_generations(experiment, handler, folder,
                               TrainingState.fresh(experiment, run_id), args.quiet)
    finally:
        folder.unlock()
