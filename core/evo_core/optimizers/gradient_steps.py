"""The steps that turn an estimated gradient into a move of a search distribution's centre.

Each is a pure function: the gradient (of the fitness, to be climbed) and the step's own state in,
the step to add to the centre and the new state out, all float64 arrays of the genome's length,
so that an optimizer's checkpoint is its arrays and a resumed run steps exactly as the
uninterrupted one. `decayed` is the exponential schedule with a floor that learning rates and
step sizes share.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["adam_step", "momentum_step", "clipup_step", "decayed"]

FloatArray = NDArray[np.float64]


def adam_step(gradient: FloatArray, m: FloatArray, v: FloatArray, steps: int,
              learning_rate: float, beta1: float, beta2: float, epsilon: float
              ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Adam (Kingma and Ba 2015), bias-corrected: (step, m, v). `steps` counts the earlier
    steps (0 at the first): the bias correction divides by 1 - beta^(steps + 1). The inputs are
    not changed; the arithmetic is done in place on the new arrays (at a million genes each
    temporary is 8 MB)."""
    t = steps + 1
    m = beta1 * m
    m += (1 - beta1) * gradient
    squared = np.square(gradient)
    squared *= 1 - beta2
    v = beta2 * v
    v += squared
    denominator = np.multiply(v, 1 / (1 - beta2**t), out=squared)  # v-hat
    np.sqrt(denominator, out=denominator)
    denominator += epsilon
    step: FloatArray = m * (learning_rate / (1 - beta1**t))  # learning rate x m-hat
    step /= denominator
    return step, m, v


def momentum_step(gradient: FloatArray, velocity: FloatArray, learning_rate: float,
                  momentum: float) -> tuple[FloatArray, FloatArray]:
    """Gradient ascent with momentum, as optax's `sgd` and evosax write it: (step, velocity),
    velocity = gradient + momentum * velocity, step = learning_rate * velocity; momentum 0 is
    plain gradient ascent."""
    velocity = gradient + momentum * velocity
    step: FloatArray = learning_rate * velocity
    return step, velocity


def clipup_step(gradient: FloatArray, velocity: FloatArray, learning_rate: float,
                momentum: float, max_speed: float) -> tuple[FloatArray, FloatArray]:
    """ClipUp (Toklu et al. 2020): (step, velocity). The gradient is normalised to length 1,
    so `learning_rate` is the length of the push each generation whatever the fitness scale;
    velocity = momentum * velocity + learning_rate * gradient / |gradient|, shortened to
    `max_speed` when longer; the step is the velocity. A zero gradient pushes nothing."""
    length = float(np.sqrt(np.dot(gradient, gradient)))
    push = gradient * (learning_rate / length) if length > 0 else np.zeros_like(gradient)
    velocity = momentum * velocity + push
    speed = float(np.sqrt(np.dot(velocity, velocity)))
    if speed > max_speed:
        velocity = velocity * (max_speed / speed)
    return velocity, velocity


def decayed(value: float, decay: float, limit: float) -> float:
    """One generation of exponential decay that stops at `limit`: max(value * decay, limit)."""
    return max(value * decay, limit)
