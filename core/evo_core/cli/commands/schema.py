"""`evo schema`: the JSON Schema of a config file for this installation, plugins included."""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["add_parser"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "schema", help="print the JSON Schema of config files",
        description="Print the JSON Schema of an experiment config for the installed brains, "
        "optimizers, handlers, trackers and environment wrappers; editors use it for completion "
        "and checking.")
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from evo_core.config.schema import experiment_model
    from evo_core.hooks.discovery import get_registry

    schema = experiment_model(get_registry()).model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "evo experiment config"
    print(json.dumps(schema, indent=2))
    return 0
