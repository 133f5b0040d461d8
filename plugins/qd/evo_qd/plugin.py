"""The entry point module: the `map-elites` and `cma-me` optimizers and the archive heatmap."""

from __future__ import annotations

import warnings

from evo_core import IOptimizerClass, IRun, UserError, hookimpl
from evo_qd.config import QDConfig
from evo_qd.optimizer import CMAME, MapElites


@hookimpl
def evo_optimizers() -> list[IOptimizerClass]:
    return [MapElites, CMAME]


@hookimpl
def evo_run_finished(run: IRun) -> None:
    if not isinstance(run.config.optimizer, QDConfig):
        return
    from evo_qd.heatmap import heatmap_from_checkpoint

    try:
        heatmap_from_checkpoint(run)
    except UserError as exc:  # an unreadable checkpoint is resume's to report, not a crash here
        warnings.warn(f"{run.path}: no archive.png ({exc})", RuntimeWarning, stacklevel=2)
