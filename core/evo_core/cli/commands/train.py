"""`evo train CONFIG`: validate, build, run, and print the run folder last."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["add_parser"]


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


def _run(args: argparse.Namespace) -> int:
    from evo_core.cli.running import run_generations
    from evo_core.config.loading import override_sources, parse_assignments
    from evo_core.running.session import prepare_train

    session = prepare_train(args.config, out=args.out, overrides=parse_assignments(args.set),
                            override_texts=override_sources(args.set))
    return run_generations(session, args.quiet)
