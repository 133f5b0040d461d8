"""`evo new-brain NAME`: write a ready brain package to start from."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_parser"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "new-brain", help="write a ready brain package (brain-NAME) to start from",
        description="Write the package brain-NAME: pyproject.toml with the entry point; the "
        "modules config.py (config model), template.py (the brain, written once as array "
        "functions over rows) and plugin.py (the hook), as in evo's own brain plugins, already "
        "working in every episodes.vectorize mode; a test that runs evo's "
        "conformance checker; and a README. `pip install -e brain-NAME` makes it appear in "
        "`evo list-brains`.")
    parser.add_argument("name", help="the brain's type name: lowercase letters, digits, _")
    parser.add_argument("--dir", type=Path, default=Path("."),
                        help="where to create brain-NAME (default: here)")
    parser.add_argument("--from", dest="base", metavar="BRAIN",
                        help="subclass this installed brain's config and template instead "
                        "(for the CTRNN: override generate_masks and params)")
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from evo_core.cli.scaffold import write_brain_package
    from evo_core.hooks.discovery import get_registry

    base = get_registry().get("brain", args.base) if args.base else None
    root = write_brain_package(args.name, args.dir, base)
    print(f"next: pip install -e {root} && evo check-brain {args.name}", file=sys.stderr)
    print(root)
    return 0
