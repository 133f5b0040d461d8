"""ARS, augmented random search (Mania, Guy and Recht 2018, "Simple random search provides a
competitive approach to reinforcement learning", algorithm 2): N mirrored directions, the best
b of them, and a step scaled by the spread of their rewards.

With directions delta_k, genomes centre +- sigma delta_k (population 2N) and rewards r+_k and
r-_k, the b directions of the largest max(r+_k, r-_k) make the step
  alpha / (b sigma_R) sum over them of (r+_k - r-_k) delta_k,
sigma_R the standard deviation of the 2b rewards used. The rewards are used as they are (no
ranks): sigma_R sets the scale. V2 differs from V1 only by normalising the observations with
running statistics, which is the episodes' job (`episodes.observation_normalization`), not the
optimizer's: the two versions take the same step here.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field, model_validator

from evo_core.contract.config_models import OptimizerConfig
from evo_core.optimizers.decaying_search import DecayingCentre, DecayingSearchConfig
from evo_core.optimizers.distribution_state import told_fitness
from evo_core.optimizers.gaussian_sampling import (
    NoiseArray,
    mirrored_pairs,
    noise_sum,
    sampled_population,
    standard_noise,
)

__all__ = ["ARSConfig", "ARS", "ars_weights"]

FloatArray = NDArray[np.float64]


class ARSConfig(DecayingSearchConfig):
    """Augmented random search (Mania et al. 2018): the best of N mirrored directions, a step
    scaled by their rewards' spread; for linear and small policies, with few hyperparameters.

    V2 adds observation normalisation by running statistics, which is set in the episodes
    table: see `version`.
    """

    type: Literal["ars"] = "ars"
    population_size: int = Field(..., ge=2, description="Genomes per generation: 2N for N "
                                 "directions, each added and subtracted (EvoJAX: pop_size).")
    version: Literal["v1", "v2"] = Field(
        "v1", description="The paper's V1 or V2: the same step; V2 also normalises "
        "observations by running statistics, which needs episodes.observation_normalization "
        '= "running" in the config.')
    top_directions: int | None = Field(
        None, ge=1, description="b, the directions of the best rewards that make the step; "
        "unset: all N = population_size / 2 (EvoJAX: elite_ratio r gives "
        "b = max(1, floor(r N))).")

    @property
    def needs_running_observations(self) -> str:
        """V2 is V1 on normalised observations: without the normaliser it would be V1 under
        another name (`IObservationNormalizationConfig`)."""
        return 'optimizer.version = "v2"' if self.version == "v2" else ""

    @model_validator(mode="after")
    def _directions_fit(self) -> ARSConfig:
        directions = self.population_size // 2
        if self.top_directions is not None and self.top_directions > directions:
            raise ValueError(f"top_directions = {self.top_directions} is more than the "
                             f"{directions} directions of population_size = "
                             f"{self.population_size}; lower it to {directions} at most, or "
                             f"raise population_size to {2 * self.top_directions}")
        return self


def ars_weights(plus: FloatArray, minus: FloatArray, top: int) -> FloatArray:
    """Each direction's weight in the step, before alpha: (r+ - r-) / (b sigma_R) for the `top`
    directions of the largest max(r+, r-) (of equal ones the earlier), 0 for the others; all 0
    when the rewards used are all equal (sigma_R = 0: nothing to learn from them).

    A non-finite reward is read as the worst (NaN, -inf) or best (+inf) finite reward of the
    generation, and the rewards are divided by their largest magnitude before sigma_R: the step
    does not change (it is invariant to the rewards' scale), but no square overflows."""
    rewards = np.concatenate([plus, minus])
    finite = rewards[np.isfinite(rewards)]
    low, high = (float(np.min(finite)), float(np.max(finite))) if finite.size else (0.0, 0.0)
    rewards = np.where(np.isposinf(rewards), high, np.where(np.isfinite(rewards), rewards, low))
    n = len(plus)
    plus, minus = rewards[:n], rewards[n:]
    chosen = np.argsort(-np.maximum(plus, minus), kind="stable")[:top]
    used = np.concatenate([plus[chosen], minus[chosen]])
    scale = float(np.max(np.abs(used)))
    weights = np.zeros(n)
    if scale == 0:
        return weights
    spread = float(np.std(used / scale))
    if spread == 0:
        return weights
    weights[chosen] = (plus[chosen] - minus[chosen]) / scale / (top * spread)
    return weights


class ARS:
    """`IOptimizer` and `IRewindableOptimizer`: the distribution is the centre and the
    generation count (sigma and the learning rate follow from it); `ask` only draws."""

    config_model: ClassVar[type[OptimizerConfig]] = ARSConfig

    def __init__(self, config: ARSConfig, genome_size: int, rng: np.random.Generator) -> None:
        self.config = config
        self.rng = rng
        self.genome_size = genome_size
        self.directions = config.population_size // 2
        self.top = config.top_directions or self.directions
        self.centre = DecayingCentre(config, genome_size)
        self._noise: NoiseArray | None = None

    def ask(self) -> FloatArray:
        self._noise = standard_noise(self.rng, self.directions, self.genome_size)
        return sampled_population(self.centre.mean, self.centre.sigma, self._noise,
                                  mirrored=True)

    def tell(self, fitnesses: FloatArray) -> None:
        if self._noise is None:
            raise RuntimeError("tell() without ask()")
        plus, minus = mirrored_pairs(told_fitness(fitnesses, self.config.population_size),
                                     self.directions)
        weights = ars_weights(plus, minus, self.top)
        self.centre.advance(self.centre.learning_rate * noise_sum(weights, self._noise))
        self._noise = None

    def state(self) -> dict[str, Any]:
        return self.centre.state()

    def state_before_ask(self) -> dict[str, Any]:
        """`ask` changes nothing but the Generator's state, which the run's streams keep."""
        return self.state()

    def load_state(self, state: dict[str, Any]) -> None:
        """Raises ValueError naming `optimizer.<key>` on anything `state` did not write: a
        missing key, another shape, NaN, a centre beyond the gene limit; changes nothing
        then."""
        self.centre.load_state(state)
        self._noise = None
