"""brain-cnn: a numpy convolutional front end for pixel observations, as an evo plugin."""

from brain_cnn.brain import CNN
from brain_cnn.config import CNNConfig, ConvLayerConfig
from brain_cnn.template import CNNTemplate

__all__ = ["CNN", "CNNConfig", "ConvLayerConfig", "CNNTemplate"]
