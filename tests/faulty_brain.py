"""A brain plugin for tests that raises for genomes whose first gene exceeds a threshold."""

from __future__ import annotations

import os
import signal
from typing import Any, Literal

import numpy as np

from evo_core import BrainConfig, BrainTemplateBase, hookimpl


class FaultyConfig(BrainConfig):
    """Raises in step() when genome[0] > threshold (or kills its own process)."""

    type: Literal["faulty"] = "faulty"
    threshold: float = 1.0
    kill_process: bool = False


class Faulty:
    def __init__(self, genome: np.ndarray, template: FaultyTemplate) -> None:
        self.genome, self.template = genome, template

    def reset(self) -> None:
        pass

    def step(self, observation: Any) -> Any:
        if self.genome[0] > self.template.config.threshold:
            if self.template.config.kill_process:
                os.kill(os.getpid(), signal.SIGKILL)
            raise ValueError(f"genome too large ({self.genome[0]:.3f})")
        t = self.template
        weights = self.genome[1:].reshape(t.output_size, t.input_size)
        return t.decoder(np.tanh(weights @ t.encoder(observation)))


class FaultyTemplate(BrainTemplateBase[FaultyConfig]):
    config_model = FaultyConfig

    @property
    def genome_size(self) -> int:
        return 1 + self.output_size * self.input_size

    def build(self, genome: np.ndarray) -> Faulty:
        return Faulty(genome, self)


@hookimpl
def evo_brain_templates() -> list[type[Any]]:
    return [FaultyTemplate]
