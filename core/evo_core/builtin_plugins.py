"""The core's own optimizers and handlers, registered through the same hooks as any plugin."""

from __future__ import annotations

from typing import Any

from evo_core.handlers.dask import DaskHandler
from evo_core.handlers.mp import MPHandler
from evo_core.handlers.sequential import SequentialHandler
from evo_core.hookspecs import hookimpl
from evo_core.optimizers.cma_es import CMAES
from evo_core.optimizers.mu_lambda import MuLambda


@hookimpl
def evo_optimizers() -> list[type[Any]]:
    return [CMAES, MuLambda]


@hookimpl
def evo_processing_handlers() -> list[type[Any]]:
    return [SequentialHandler, MPHandler, DaskHandler]
