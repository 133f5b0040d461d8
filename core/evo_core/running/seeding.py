"""Independent random streams derived from the experiment seed, one per purpose.

Separate streams mean that, for example, choosing a different mask type (more or fewer draws
from the template's stream) does not change the episodes the candidates face. Every stream is a
`numpy.random.Generator`; its state goes into checkpoints as JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["Streams", "TRAINING_SEED_LIMIT", "REPLAY_SEED", "FRESH_SEED_LOW"]

#: Evaluation seeds during training are drawn from [0, TRAINING_SEED_LIMIT).
TRAINING_SEED_LIMIT = 2**31
#: Default replay seed: outside the training range, so replays face episodes training never saw.
REPLAY_SEED = TRAINING_SEED_LIMIT + 1
#: The champion's fresh episodes ([champion]) draw their seeds from [FRESH_SEED_LOW, 2**32):
#: outside the training range, and above the seeds a replay of up to 65,536 episodes uses.
FRESH_SEED_LOW = TRAINING_SEED_LIMIT + 2**16


@dataclass
class Streams:
    template: np.random.Generator
    optimizer: np.random.Generator
    evaluation: np.random.Generator
    #: novelty search's random insertion rule; the fourth child of the seed, so adding it left
    #: the first three (and every run made before it) unchanged
    novelty: np.random.Generator
    #: the seeds of the champion's fresh episodes ([champion]); the fifth child, likewise
    champion: np.random.Generator

    @classmethod
    def from_seed(cls, seed: int) -> Streams:
        template, optimizer, evaluation, novelty, champion = (
            np.random.Generator(np.random.PCG64(child))
            for child in np.random.SeedSequence(seed).spawn(5))
        return cls(template, optimizer, evaluation, novelty, champion)

    def fresh_seeds(self, count: int) -> NDArray[np.int64]:
        """Seeds of episodes training never draws ([champion])."""
        return self.champion.integers(FRESH_SEED_LOW, 2**32, size=count, dtype=np.int64)

    def evaluation_seeds(self, count: int, per_candidate: bool) -> NDArray[np.int64]:
        """One seed per candidate, or the same seed for all of this generation's candidates."""
        if per_candidate:
            return self.evaluation.integers(0, TRAINING_SEED_LIMIT, size=count, dtype=np.int64)
        seed = self.evaluation.integers(0, TRAINING_SEED_LIMIT, dtype=np.int64)
        return np.full(count, seed, dtype=np.int64)

    def state(self) -> dict[str, Any]:
        return {"optimizer": self.optimizer.bit_generator.state,
                "evaluation": self.evaluation.bit_generator.state,
                "novelty": self.novelty.bit_generator.state,
                "champion": self.champion.bit_generator.state}

    def load_state(self, state: dict[str, Any]) -> None:
        """Raises ValueError naming the stream when its state is not one numpy can take back
        (an edited checkpoint); no stream is changed then."""
        names = ["optimizer", "evaluation"]
        # checkpoints written before a stream existed lack it (and their runs never drew from it)
        names += [name for name in ("novelty", "champion") if name in state]
        for name in names:  # all checked on copies before any is set
            _checked_state(getattr(self, name), state[name], name)
        for name in names:
            getattr(self, name).bit_generator.state = state[name]


def _checked_state(generator: np.random.Generator, state: Any, name: str) -> None:
    """numpy's own check of a bit generator state, on a copy of `generator`; its OverflowError
    (a negative counter) and TypeError become a ValueError naming the stream."""
    trial = type(generator.bit_generator)()
    try:
        trial.state = state
    except (TypeError, ValueError, OverflowError, KeyError) as exc:
        raise ValueError(f"streams.{name}: not a {type(trial).__name__} state "
                         f"({type(exc).__name__}: {exc})") from None
