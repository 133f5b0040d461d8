"""brain-ctrnn: a continuous-time RNN brain with sparse masks, as an evo plugin."""

from brain_ctrnn.brain import CTRNN, NoisyCTRNN
from brain_ctrnn.config import CTRNNConfig
from brain_ctrnn.masks import make_mask
from brain_ctrnn.template import CTRNNTemplate

__all__ = ["CTRNN", "CTRNNConfig", "CTRNNTemplate", "NoisyCTRNN", "make_mask"]
