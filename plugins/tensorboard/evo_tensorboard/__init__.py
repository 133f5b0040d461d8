"""TensorBoard event files for evo runs, written through evo's run events."""

from evo_tensorboard.config import TensorBoardConfig

__all__ = ["TensorBoardConfig"]
