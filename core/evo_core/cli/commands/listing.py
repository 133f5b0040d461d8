"""`evo list-brains` (and the listings of the other component kinds: optimizers, handlers,
trackers, wrappers) and `evo --version`."""

from __future__ import annotations

import argparse
import json
from typing import Any

from evo_core._version import __version__
from evo_core.hooks.registry import KINDS, Kind, Registry

__all__ = ["add_parser", "print_versions", "rows"]


def add_parser(subparsers: Any) -> None:
    for kind, info in KINDS.items():
        what = info.plural
        parser = subparsers.add_parser(
            info.command, help=f"list installed {what} and plugins that failed to load",
            description=f"List the installed {what} (name, distribution, version, status, "
            "description), and every plugin that is broken or incompatible, with the reason.")
        parser.add_argument("--json", action="store_true", help="print a JSON list for scripts")
        parser.set_defaults(run=lambda args, kind=kind: _run(args, kind))


def rows(registry: Registry, kind: Kind) -> list[dict[str, str]]:
    """One row per component (the core's own first: they are discovered first), then one per
    plugin that failed to load."""
    result = [{"name": c.name, "distribution": c.distribution, "version": c.version,
               "status": "ok", "description": c.description}
              for c in registry.components[kind].values()]
    for problem in registry.problems():
        result.append({"name": problem.plugin, "distribution": problem.distribution,
                       "version": problem.version, "status": problem.status,
                       "description": problem.reason})
    return result


def _run(args: argparse.Namespace, kind: Kind) -> int:
    from evo_core.hooks.discovery import get_registry

    table = rows(get_registry(), kind)
    if args.json:
        print(json.dumps(table, indent=2))
        return 0
    if not table:
        print(f"no {KINDS[kind].plural} installed")
        return 0
    columns = ["name", "distribution", "version", "status", "description"]
    widths = {c: max(len(c), *(len(r[c]) for r in table)) for c in columns[:-1]}
    print("  ".join(c.upper().ljust(widths.get(c, 0)) for c in columns).rstrip())
    for row in table:
        print("  ".join(row[c].ljust(widths.get(c, 0)) for c in columns).rstrip())
    return 0


def print_versions() -> int:
    from evo_core.hooks.discovery import get_registry

    registry = get_registry()
    print(f"evo-core {__version__}")
    seen = set()
    for plugin in registry.plugins:
        if plugin.distribution == "evo-core" or plugin.distribution in seen:
            continue
        seen.add(plugin.distribution)
        note = "" if plugin.status == "ok" else f" ({plugin.status}: {plugin.reason})"
        print(f"{plugin.label}{note}")
    return 0
