"""The `[champion]` table: the run's champion chosen on episodes it did not train on.

A candidate's training fitness is the mean of `episodes.runs` episodes, and the best of a
generation is the maximum of such noisy means: with one episode per evaluation the champion is
the luckiest candidate, not the best one (docs/jax.md's example: 500 in training, 157.5 on
replay, while the hall of fame's second and third replayed at 500). So each generation's best
`candidates` (by training fitness) also play `episodes` fresh episodes, with seeds outside the
range training draws from, and `best.npz` keeps the candidate with the best fresh score.
"""

from __future__ import annotations

from pydantic import Field

from evo_core.contract.config_models import StrictModel

__all__ = ["ChampionConfig", "FRESH_BELOW"]

#: A run whose evaluations have fewer episodes than this gets the default `[champion]` table
#: when it starts (`evo train` writes it into config.json); with this many, a candidate's
#: training fitness is already a mean of several episodes.
FRESH_BELOW = 5


class ChampionConfig(StrictModel):
    """Each generation, the best `candidates` by training fitness play `episodes` episodes they
    never trained on; the champion (best.npz) is the candidate with the best mean of those.
    These episodes are not counted in `evaluations`. `episodes = 0` turns this off."""

    candidates: int = Field(3, ge=1, le=10_000, description="The generation's best candidates "
                            "by training fitness that play the fresh episodes.")
    episodes: int = Field(
        10, ge=0, le=1_000_000, description="Fresh episodes each of them plays (rounded up to a "
        "multiple of episodes.runs); 0: off, best.npz is the best training fitness ever.")

    @property
    def enabled(self) -> bool:
        return self.episodes > 0
