"""brain-lstm: a multi-layer LSTM brain, as an evo plugin."""

from brain_lstm.config import LSTMConfig
from brain_lstm.network import LSTM, LSTMTemplate

__all__ = ["LSTM", "LSTMConfig", "LSTMTemplate"]
