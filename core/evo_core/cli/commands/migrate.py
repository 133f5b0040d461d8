"""`evo migrate OLD.json`: a predecessor config as an evo TOML file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from evo_core.config import read_config_file, validate_config
from evo_core.config.migrate import migrate_config
from evo_core.config.toml_writer import to_toml
from evo_core.errors import UserError
from evo_core.hooks.discovery import get_registry
from evo_core.results.files import refuse_link, write_atomic
from evo_core.sweeps.plan import plan_runs
from evo_core.sweeps.sweep_file import sweep_from_data

__all__ = ["add_parser"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "migrate", help="convert a NeuroEvolution-CTRNN JSON config to an evo TOML config",
        description="Convert a predecessor config (NeuroEvolution-CTRNN's JSON) into an evo "
        "TOML config, validate it, and say on stderr what was dropped or changed. A design "
        "space (lists of alternatives) becomes a sweep file for `evo sweep`.")
    parser.add_argument("old", type=Path, metavar="OLD.json")
    parser.add_argument("--out", type=Path, help="TOML file to write (default: OLD.toml)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing file")
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    migration = migrate_config(read_config_file(args.old))
    out: Path = args.out or args.old.with_suffix(".toml")
    if out.exists() and not args.force:
        raise UserError(f"{out}: already exists; give --out or --force")
    refuse_link(out)  # before the dropped lines: they would explain nothing about a link
    # what was dropped explains a validation error that follows, so it comes first
    for line in migration.dropped:
        print(f"dropped: {line}", file=sys.stderr)
    for line in migration.notes:
        print(f"note: {line}", file=sys.stderr)
    source = Path(f"{args.old} (migrated)")
    if "sweep" in migration.config:  # a design space: every point must be a valid config
        plan_runs(sweep_from_data(migration.config, source, get_registry()), get_registry())
    else:
        validate_config(migration.config, get_registry(), source=str(source))
    header = {"environment": f"migrated from {args.old} by `evo migrate`",
              "sweep": "the design space's lists: run with `evo sweep` (--dry-run lists them)"}
    try:
        text = to_toml(migration.config, header)
    except TypeError as exc:  # a value TOML cannot hold, deep in a table validation lets pass
        raise UserError(f"{args.old} (migrated): cannot be written as TOML ({exc}); fix that "
                        "value in the JSON and migrate again") from None
    write_atomic(out, text.encode())
    print(out)
    return 0
