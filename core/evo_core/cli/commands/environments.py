"""`evo list-environments`: the environment ids that installed chunk evaluators run.

Any gymnasium id works with the core's own evaluation; a plugin's chunk evaluator (evo-jax's
`episodes.vectorize = "jax"`) runs only the environments it lists, so those are what a user
needs to see: the id to put in a config, the vectorize value that evaluates it, and the plugin.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from evo_core.hooks.registry import Registry

__all__ = ["add_parser", "environment_rows"]

_COLUMNS = ["id", "vectorize", "distribution", "description"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "list-environments", help="list the environment ids of installed chunk evaluators",
        description="List the environment ids that installed chunk evaluators run (evo-jax: "
        "gymnax/... and brax/... with episodes.vectorize = \"jax\"), with the vectorize value, "
        "the plugin and a description. Every gymnasium id works with vectorize = off/sync too.")
    parser.add_argument("--json", action="store_true", help="print a JSON list for scripts")
    parser.set_defaults(run=_run)


def environment_rows(registry: Registry) -> list[dict[str, str]]:
    """One row per environment id of every registered chunk evaluator, in discovery order."""
    return [{"id": env_id, "vectorize": component.name,
             "distribution": f"{component.distribution} {component.version}".strip(),
             "description": description}
            for component in registry.components["vectorizer"].values()
            for env_id, description in component.cls.environments.items()]


def _run(args: argparse.Namespace) -> int:
    from evo_core.hooks.discovery import get_registry

    registry = get_registry()
    table = environment_rows(registry)
    if args.json:
        print(json.dumps(table, indent=2))
        return 0
    if not table:
        print("no chunk evaluator with environments of its own is installed (evo-jax: pip "
              "install 'evo-core[jax]'); every gymnasium id works with episodes.vectorize = off"
              f"{registry.broken_hint()}")
        return 0
    widths = {c: max(len(c), *(len(r[c]) for r in table)) for c in _COLUMNS[:-1]}
    print("  ".join(c.upper().ljust(widths.get(c, 0)) for c in _COLUMNS).rstrip())
    for row in table:
        print("  ".join(row[c].ljust(widths.get(c, 0)) for c in _COLUMNS).rstrip())
    return 0
