"""brain-ffnn: a feed-forward network brain, as an evo plugin."""

from brain_ffnn.config import FFNNConfig
from brain_ffnn.template import FFNNTemplate

__all__ = ["FFNNConfig", "FFNNTemplate"]
