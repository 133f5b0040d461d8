"""`evo migrate OLD.json`: a predecessor config as an evo TOML file."""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path
from typing import Any

from evo_core.contract.config_models import EnvironmentConfig
from evo_core.errors import UserError

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
    from evo_core.config import read_config_file
    from evo_core.config.migrate import migrate_config
    from evo_core.config.toml_writer import to_toml
    from evo_core.results.files import write_atomic

    old = read_config_file(args.old)
    try:
        migration = migrate_config(old)
    except UserError as exc:
        raise UserError(f"{args.old}: {exc}") from None
    out: Path = args.out or args.old.with_suffix(".toml")
    _check_out(out, args.force)
    # what was dropped explains a validation error that follows, so it comes first
    for line in migration.dropped:
        print(f"dropped: {line}", file=sys.stderr)
    for line in migration.notes:
        print(f"note: {line}", file=sys.stderr)
    _validate(migration.config, Path(f"{args.old} (migrated)"))
    header = {"environment": f"migrated from {args.old} by `evo migrate`",
              "sweep": "the design space's lists: run with `evo sweep` (--dry-run lists them)"}
    try:
        text = to_toml(migration.config, header)
        tomllib.loads(text)  # what is written must read back
    except (TypeError, ValueError) as exc:  # a value TOML cannot hold (a lone surrogate)
        raise UserError(f"{args.old} (migrated): cannot be written as TOML ({exc}); fix that "
                        "value in the JSON and migrate again") from None
    write_atomic(out, text.encode())
    print(out)
    return 0


def _check_out(out: Path, force: bool) -> None:
    """Refuse an `--out` that exists (without --force), is a link, or is anything but a
    regular file: replacing a FIFO or a device (`/dev/null`) with a file is never meant."""
    from evo_core.results.files import refuse_link

    if out.exists() and not force:
        raise UserError(f"{out}: already exists; give --out or --force")
    refuse_link(out)  # before the dropped lines: they would explain nothing about a link
    if out.exists() and not out.is_file():
        raise UserError(f"{out}: is not a regular file (a folder, a FIFO or a device); evo "
                        "migrate writes a new file or replaces a regular one: choose another "
                        "--out")


def _validate(config: dict[str, Any], source: Path) -> None:
    """Validate the migrated config as `evo train` does before it starts: the config, and its
    environment made once (an unknown id, kwargs it refuses, a missing extra); a design space's
    every point."""
    from evo_core.config import validate_config
    from evo_core.hooks.discovery import get_registry
    from evo_core.sweeps.plan import plan_runs
    from evo_core.sweeps.sweep_file import sweep_from_data

    registry = get_registry()
    if "sweep" in config:  # a design space: every point must be a valid config
        runs = plan_runs(sweep_from_data(config, source, registry), registry)
        configs = [validate_config(run.config, registry, source=run.source) for run in runs]
    else:
        configs = [validate_config(config, registry, source=str(source))]
    probed: set[str] = set()
    for model in configs:
        environment = model.environment.model_dump_json()
        if environment not in probed:
            probed.add(environment)
            _check_environment(model.environment, str(source))


def _check_environment(environment: EnvironmentConfig, source: str) -> None:
    """Make the environment once, as `evo train` does first: an unknown id, kwargs it refuses
    or a wrapper that does not fit is an error; one that needs a package this machine lacks
    (an extra, procgen) is a note, since the config may be meant for another machine."""
    import gymnasium as gym

    from evo_core.environments.extras import MissingExtra
    from evo_core.environments.making import make_environment, probe_spaces

    try:
        env = make_environment(environment)
    except (MissingExtra, gym.error.DependencyNotInstalled, ImportError) as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"note: environment {environment.id!r} cannot be made on this machine ({detail});"
              " `evo train` needs what it names installed", file=sys.stderr)
        return
    except (UserError, gym.error.Error, TypeError, ValueError, AssertionError):
        probe_spaces(environment, source)  # says what is wrong in evo train's words
        return
    env.close()
