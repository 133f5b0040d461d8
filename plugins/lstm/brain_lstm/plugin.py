"""The entry point module: registers the LSTM template with evo."""

from __future__ import annotations

from typing import Any

from brain_lstm.template import LSTMTemplate
from evo_core import hookimpl


@hookimpl
def evo_brain_templates() -> list[type[Any]]:
    return [LSTMTemplate]
