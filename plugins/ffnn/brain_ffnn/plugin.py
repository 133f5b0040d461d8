"""The entry point module: registers the FFNN template with evo."""

from __future__ import annotations

from typing import Any

from evo_core import hookimpl

from brain_ffnn.network import FFNNTemplate


@hookimpl
def evo_brain_templates() -> list[type[Any]]:
    return [FFNNTemplate]
