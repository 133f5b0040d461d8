"""`evo/XOR-v0`: the XOR task of the NEAT paper (Stanley and Miikkulainen 2002) as an episode.

Four steps, one input pattern each, always in the order (0, 0), (0, 1), (1, 0), (1, 1); the
observation is the pattern's two inputs, the action the network's output in [0, 1] (a Box of
one value; an action outside is clipped into it, and a NaN counts as the worst output, an
error of 1). The paper's fitness needs all four errors: (4 - sum |output - target|)^2, so the
reward is 0 at the first three steps and that fitness at the last, and the episode's return is
the paper's fitness, 16 for a perfect network, 4 for one that answers 0.5 to everything.

The paper's criterion, "solved" (every output on the right side of 0.5: below it for target 0,
above it for target 1), is `info["solved"]` at the last step, with `info["errors"]` the four
errors. A fitness above 12.25 implies it (one output on the wrong side errs by at least 0.5, so
its network scores at most 3.5^2 = 12.25), but a solving network may score anywhere in (4, 16]:
a `[stop]` fitness above 12.25 stops a run only on solving networks, not on every one
(examples/neat_xor.toml).

The episode is deterministic: `reset(seed=...)` changes nothing.
"""

from __future__ import annotations

import math
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

__all__ = ["PATTERNS", "TARGETS", "XOR", "Xor", "register"]

XOR = "evo/XOR-v0"

#: the four input patterns in the order of the episode's steps, and the output each should give
PATTERNS: tuple[tuple[float, float], ...] = ((0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0))
TARGETS: tuple[float, ...] = (0.0, 1.0, 1.0, 0.0)

Observation = NDArray[np.float64]


class Xor(gym.Env[Observation, Observation]):
    """XOR as four steps (the module docstring)."""

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 - gymnasium's own type

    def __init__(self) -> None:
        self.observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float64)
        self.action_space = gym.spaces.Box(0.0, 1.0, (1,), np.float64)
        self.step_index = 0
        self.errors: list[float] = []
        self.correct: list[bool] = []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[Observation, dict[str, Any]]:
        super().reset(seed=seed)
        self.step_index = 0
        self.errors = []
        self.correct = []
        return np.array(PATTERNS[0]), {}

    def step(self, action: Any) -> tuple[Observation, SupportsFloat, bool, bool, dict[str, Any]]:
        output = float(np.asarray(action, dtype=np.float64).reshape(-1)[0])
        target = TARGETS[self.step_index]
        if math.isnan(output):
            self.errors.append(1.0)
            self.correct.append(False)
        else:
            output = min(max(output, 0.0), 1.0)
            self.errors.append(abs(output - target))
            self.correct.append(output > 0.5 if target == 1.0 else output < 0.5)
        self.step_index += 1
        if self.step_index < len(PATTERNS):
            return np.array(PATTERNS[self.step_index]), 0.0, False, False, {}
        fitness = (len(PATTERNS) - sum(self.errors)) ** 2
        info = {"solved": all(self.correct), "errors": tuple(self.errors)}
        # nothing follows the last pattern: the final observation repeats it
        return np.array(PATTERNS[-1]), fitness, True, False, info


def register() -> None:
    if XOR not in gym.registry:
        gym.register(XOR, entry_point=f"{__name__}:Xor")
