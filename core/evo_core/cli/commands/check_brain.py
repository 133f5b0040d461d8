"""`evo check-brain NAME`: the conformance checks on an installed brain."""

from __future__ import annotations

import argparse
from typing import Any

from evo_core import check_brain
from evo_core.plugins.discovery import get_registry

__all__ = ["add_parser"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "check-brain", help="check an installed brain against the plugin contract",
        description="Build the brain NAME for several observation and action spaces and check "
        "the contract: config defaults, genome_size, make() length check, valid actions, "
        "reset() (after use_rng for brains that draw random numbers), pickling, "
        "restore(saved_state()), immutability, no global RNG. Space pairs the brain declines "
        "(TypeError or ValueError when built) are listed as not supported; at least one must "
        "build. Prints µs per make() and step(). Exit status 1 if a check fails. Also "
        "importable: evo_core.check_brain.")
    parser.add_argument("name", help="a brain type listed by `evo list-brains`")
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    component = get_registry().get("brain", args.name)
    report = check_brain(component.cls)
    origin = f"{component.distribution} {component.version}".strip()
    origin = f"{origin}: {report.template}" if origin else report.template
    print(report.render(f"brain {args.name!r} ({origin})"))
    return 0 if report.ok else 1
