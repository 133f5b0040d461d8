"""The core's optimizers, registered through the same hook as any plugin's."""

from __future__ import annotations

from evo_core.contract.hookspecs import hookimpl
from evo_core.contract.protocols import IOptimizerClass
from evo_core.optimizers.cma_es import CMAES
from evo_core.optimizers.mu_lambda import MuLambda


@hookimpl
def evo_optimizers() -> list[IOptimizerClass]:
    return [CMAES, MuLambda]
