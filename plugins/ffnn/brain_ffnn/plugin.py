"""The entry point module: registers the FFNN template with evo."""

from __future__ import annotations

from typing import Any

from brain_ffnn.template import FFNNTemplate
from evo_core import hookimpl


@hookimpl
def evo_brain_templates() -> list[type[Any]]:
    return [FFNNTemplate]
