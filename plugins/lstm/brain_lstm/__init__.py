"""brain-lstm: a multi-layer LSTM brain, as an evo plugin."""

from brain_lstm.brain import LSTM
from brain_lstm.config import LSTMConfig
from brain_lstm.template import LSTMTemplate

__all__ = ["LSTM", "LSTMConfig", "LSTMTemplate"]
