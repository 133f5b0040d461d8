"""The gradient step a config chose for the centre, with its arrays: what `openai-es` and `pgpe`
share between their gradient estimate and their centre.

`gradient_steps.py` holds the steps as pure functions; this keeps the chosen one's state (Adam's
two moments, or a velocity), names it in the optimizer's checkpoint (`adam_m`, `adam_v`,
`velocity`) and reads it back as hostile input.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from evo_core.optimizers.distribution_state import state_array
from evo_core.optimizers.gradient_steps import adam_step, clipup_step, momentum_step

__all__ = ["StepKind", "CentreStep"]

FloatArray = NDArray[np.float64]
StepKind = Literal["adam", "sgd", "clipup"]


class CentreStep:
    """One of Adam, gradient ascent with momentum ("sgd") and ClipUp, and its arrays."""

    def __init__(self, kind: StepKind, genome_size: int, *, momentum: float = 0.0,
                 beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-8,
                 max_speed: float = np.inf) -> None:
        self.kind = kind
        self.genome_size = genome_size
        self.momentum, self.max_speed = momentum, max_speed
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.keys = ("adam_m", "adam_v") if kind == "adam" else ("velocity",)
        self.arrays = tuple(np.zeros(genome_size) for _ in self.keys)

    def step(self, gradient: FloatArray, steps_taken: int, learning_rate: float) -> FloatArray:
        """What to add to the centre for this ascent `gradient`; `steps_taken` before it."""
        if self.kind == "adam":
            m, v = self.arrays
            step, m, v = adam_step(gradient, m, v, steps_taken, learning_rate, self.beta1,
                                   self.beta2, self.epsilon)
            self.arrays = (m, v)
        elif self.kind == "sgd":
            step, velocity = momentum_step(gradient, self.arrays[0], learning_rate,
                                           self.momentum)
            self.arrays = (velocity,)
        else:
            step, velocity = clipup_step(gradient, self.arrays[0], learning_rate, self.momentum,
                                         self.max_speed)
            self.arrays = (velocity,)
        return step

    def state(self) -> dict[str, FloatArray]:
        return {key: array.copy() for key, array in zip(self.keys, self.arrays, strict=True)}

    def load_state(self, state: dict[str, Any]) -> None:
        """Raises ValueError naming `optimizer.<key>`: missing, another shape, NaN, Adam's
        second moment negative; changes nothing then."""
        arrays = tuple(state_array(state, key, (self.genome_size,)) for key in self.keys)
        if self.kind == "adam" and bool(np.any(arrays[1] < 0)):
            raise ValueError("optimizer.adam_v: negative values (a mean of squares)")
        self.arrays = arrays
