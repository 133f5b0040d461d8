"""The entry point module: registers the CNN template with evo."""

from __future__ import annotations

from typing import Any

from brain_cnn.template import CNNTemplate
from evo_core import hookimpl


@hookimpl
def evo_brain_templates() -> list[type[Any]]:
    return [CNNTemplate]
