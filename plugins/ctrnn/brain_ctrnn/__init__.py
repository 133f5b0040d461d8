"""brain-ctrnn: a continuous-time RNN with sparse masks, as an evo plugin."""

from brain_ctrnn.config import CTRNNConfig
from brain_ctrnn.masks import make_mask
from brain_ctrnn.template import CTRNNTemplate

__all__ = ["CTRNNConfig", "CTRNNTemplate", "make_mask"]
