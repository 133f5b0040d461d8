"""The entry point module: the `map-elites` and `cma-me` optimizers and the archive heatmap."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

from evo_core import UserError, hookimpl
from evo_core.contract.protocols import IOptimizerClass
from evo_qd.config import QDConfig
from evo_qd.optimizer import CMAME, MapElites

if TYPE_CHECKING:
    from evo_core.api import Run


@hookimpl
def evo_optimizers() -> list[IOptimizerClass]:
    return [MapElites, CMAME]


@hookimpl
def evo_run_finished(run: Run) -> None:
    if not isinstance(run.config.optimizer, QDConfig):
        return
    from evo_qd.heatmap import heatmap_from_checkpoint

    run_id = (run.config.provenance or {}).get("run_id")
    if not isinstance(run_id, str):
        return
    try:
        heatmap_from_checkpoint(run.path, run_id)
    except UserError as exc:  # an unreadable checkpoint is resume's to report, not a crash here
        warnings.warn(f"{run.path}: no archive.png ({exc})", RuntimeWarning, stacklevel=2)
