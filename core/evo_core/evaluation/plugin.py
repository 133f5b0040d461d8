"""The core's `episodes.vectorize` modes, registered through the same hook as any plugin's."""

from __future__ import annotations

from evo_core.contract.hookspecs import hookimpl
from evo_core.contract.protocols import IChunkEvaluatorClass
from evo_core.evaluation.vectorizers import Envpool, Native, Off, Sync


@hookimpl
def evo_chunk_evaluators() -> list[IChunkEvaluatorClass]:
    return [Off, Sync, Native, Envpool]
