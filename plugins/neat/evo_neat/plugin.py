"""The entry point module: registers the NEAT brain and the NEAT optimizer with evo."""

from __future__ import annotations

from typing import Any

from evo_core import hookimpl
from evo_neat.optimizer import NEAT
from evo_neat.template import NEATTemplate


@hookimpl
def evo_brain_templates() -> list[type[Any]]:
    return [NEATTemplate]


@hookimpl
def evo_optimizers() -> list[type[Any]]:
    return [NEAT]
