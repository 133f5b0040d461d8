"""An optional base class for brain templates: the plumbing every brain would otherwise repeat.

It keeps the config and the spaces, builds the observation encoder (with the config's input
normalisation) and the action decoder, checks genome length and layout, and freezes the template
when construction ends. A brain without shared state needs only `genome_size` and `build`.
"""

from __future__ import annotations

from typing import Any, ClassVar, Generic, TypeVar

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core.authoring.freezing import Frozen
from evo_core.authoring.spaces import action_decoder, observation_encoder
from evo_core.contract.config_models import BrainConfig
from evo_core.contract.protocols import IBrain

__all__ = ["BrainTemplateBase", "ConfigT"]

ConfigT = TypeVar("ConfigT", bound=BrainConfig)


class BrainTemplateBase(Frozen, Generic[ConfigT]):
    """Subclass it, set `config_model`, and implement `genome_size` and `build`."""

    config_model: ClassVar[type[BrainConfig]]

    def __init__(self, config: ConfigT, observation_space: gym.Space[Any],
                 action_space: gym.Space[Any], rng: np.random.Generator) -> None:
        if not isinstance(config, self.config_model):
            raise TypeError(f"{type(self).__name__} needs a {self.config_model.__name__}, "
                            f"got {type(config).__name__}")
        self.config: ConfigT = config
        self.observation_space = observation_space
        self.action_space = action_space
        target = config.normalize_input_target if config.normalize_input else None
        self.encoder = observation_encoder(observation_space, target)
        self.decoder = action_decoder(action_space)

    @property
    def input_size(self) -> int:
        """Length of the encoded observation vector."""
        return self.encoder.size

    @property
    def output_size(self) -> int:
        """Length of the output vector the action decoder expects."""
        return self.decoder.size

    @property
    def genome_size(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define genome_size")

    def make(self, genome: NDArray[np.float64]) -> IBrain:
        """Check the genome, then build a brain from it."""
        return self.build(self.check_genome(genome))

    def build(self, genome: NDArray[np.float64]) -> IBrain:
        """Build a brain from a checked, contiguous float64 genome."""
        raise NotImplementedError(f"{type(self).__name__} must define build(genome)")

    def check_genome(self, genome: NDArray[Any]) -> NDArray[np.float64]:
        """A contiguous float64 view or copy of `genome`, or a ValueError naming the size.

        Contiguity matters beyond speed: a brain built from a strided view rounds `W @ x`
        differently from one built from a contiguous copy, so handlers would disagree.
        """
        array = np.ascontiguousarray(genome, dtype=np.float64)
        if array.ndim != 1 or array.shape[0] != self.genome_size:
            raise ValueError(
                f"{type(self).__name__}: genome has shape {array.shape}, expected "
                f"({self.genome_size},) for this config and these spaces")
        return array
