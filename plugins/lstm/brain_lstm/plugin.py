"""The entry point module: registers the LSTM template with evo."""

from __future__ import annotations

from typing import Any

from evo_core import hookimpl

from brain_lstm.network import LSTMTemplate


@hookimpl
def evo_brain_templates() -> list[type[Any]]:
    return [LSTMTemplate]
