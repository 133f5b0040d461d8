"""The entry point module: registers the NEAT brain template with evo."""

from __future__ import annotations

from typing import Any

from evo_core import hookimpl
from evo_neat.template import NEATTemplate


@hookimpl
def evo_brain_templates() -> list[type[Any]]:
    return [NEATTemplate]
