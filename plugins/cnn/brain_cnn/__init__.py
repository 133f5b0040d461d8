"""brain-cnn: a convolutional front end for pixel observations, written once over rows in numpy
or `jax.numpy`, as an evo plugin."""

from brain_cnn.config import CNNConfig, ConvLayerConfig
from brain_cnn.template import CNNTemplate

__all__ = ["CNNConfig", "ConvLayerConfig", "CNNTemplate"]
