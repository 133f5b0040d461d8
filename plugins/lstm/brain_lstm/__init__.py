"""brain-lstm: a multi-layer LSTM brain, as an evo plugin."""

from brain_lstm.config import LSTMConfig
from brain_lstm.template import LSTMTemplate

__all__ = ["LSTMConfig", "LSTMTemplate"]
