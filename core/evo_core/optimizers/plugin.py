"""The core's optimizers, registered through the same hook as any plugin's."""

from __future__ import annotations

from evo_core.contract.hookspecs import hookimpl
from evo_core.contract.protocols import IOptimizerClass
from evo_core.optimizers.ars import ARS
from evo_core.optimizers.cma_es import CMAES
from evo_core.optimizers.mu_lambda import MuLambda
from evo_core.optimizers.openai_es import OpenAIES
from evo_core.optimizers.pgpe import PGPE
from evo_core.optimizers.snes import SNES


@hookimpl
def evo_optimizers() -> list[IOptimizerClass]:
    return [CMAES, MuLambda, OpenAIES, PGPE, SNES, ARS]
