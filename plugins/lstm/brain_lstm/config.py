"""The `[brain]` table of an LSTM."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from evo_core import BrainConfig

__all__ = ["LSTMConfig"]


class LSTMConfig(BrainConfig):
    """Multi-layer LSTM; optionally a wider hidden state with a tanh output layer."""

    type: Literal["lstm"] = "lstm"
    lstm_num_layers: int = Field(1, ge=1, le=64, description="Stacked LSTM layers.")
    use_bias: bool = Field(True, description="Input and recurrent bias vectors per layer.")
    hidden_size: int | None = Field(
        None, ge=1, description="Hidden units per layer, followed by a tanh output layer; unset: "
        "the hidden size is the output size and h is the output (the predecessor's design).")
