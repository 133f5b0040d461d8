"""The entry point module: registers the CTRNN template with evo."""

from __future__ import annotations

from typing import Any

from brain_ctrnn.template import CTRNNTemplate
from evo_core import hookimpl


@hookimpl
def evo_brain_templates() -> list[type[Any]]:
    return [CTRNNTemplate]
