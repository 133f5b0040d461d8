"""The core's processing handlers, registered through the same hook as any plugin's."""

from __future__ import annotations

from evo_core.contract.hookspecs import hookimpl
from evo_core.contract.protocols import IHandlerClass
from evo_core.handlers.dask import DaskHandler
from evo_core.handlers.mp import MPHandler
from evo_core.handlers.sequential import SequentialHandler


@hookimpl
def evo_processing_handlers() -> list[IHandlerClass]:
    return [SequentialHandler, MPHandler, DaskHandler]
