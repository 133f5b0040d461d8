"""`evo export RUN_DIR --out FILE.onnx`: the champion as an ONNX model (docs/export.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from evo_core.api_arguments import output_argument
from evo_core.cli.commands.replay import hof_rank

__all__ = ["add_parser"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "export", help="write a run's best brain as an ONNX model",
        description="Write the best brain of RUN_DIR as an ONNX model that onnxruntime (or "
        "any ONNX runtime) runs one call per step: it takes the observation as the run's "
        "environment gives it (the observation normaliser of the run in the model) and gives "
        "the action; a recurrent brain's state is an input and an output, its initial state "
        "in the model's metadata (docs/export.md). Needs evo-core[onnx]. Prints the model's "
        "inputs and outputs to stderr and the file's path last.")
    parser.add_argument("run_dir", type=Path, help="a run folder made by `evo train`")
    parser.add_argument("--out", type=Path, required=True, metavar="FILE.onnx",
                        help="the model file to write")
    parser.add_argument("--hof", type=hof_rank, metavar="N",
                        help="export the hall of fame's member of rank N (1 is the best) "
                        "instead of the best genome")
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from evo_core.hooks.discovery import get_registry
    from evo_core.results.run_folder import RunFolder
    from evo_core.running.export import export_run

    out = output_argument(args.out, "--out", (".onnx",))
    folder = RunFolder.open(args.run_dir)
    exported = export_run(folder, get_registry(), out, args.hof, f"export {folder.path}",
                          hof_option="--hof")
    print(f"exported the {exported.genome} (fitness {exported.fitness:.6g}): inputs "
          f"{exported.inputs}; outputs {exported.outputs}", file=sys.stderr)
    print(exported.path)
    return 0
