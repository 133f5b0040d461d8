"""Registers the chain brain through the same hook as a plugin's brains."""

from __future__ import annotations

from typing import Any

from evo_core.composition.template import ChainTemplate
from evo_core.contract.hookspecs import hookimpl


@hookimpl
def evo_brain_templates() -> list[type[Any]]:
    return [ChainTemplate]
