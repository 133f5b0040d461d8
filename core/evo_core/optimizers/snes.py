"""SNES, separable natural evolution strategies (Schaul, Glasmachers and Schmidhuber 2011,
"High dimensions and heavy tails for natural evolution strategies"; Wierstra et al. 2014,
algorithm 6): a Gaussian with one standard deviation per gene, moved along the natural gradient.

With standard normal samples s_k, genomes z_k = mu + sigma s_k and the rank-based utilities u_k
(`rank_shaping.nes_utilities`), the natural gradients are
  mu:    sum_k u_k s_k,          mu    <- mu + eta_mu sigma (sum_k u_k s_k),
  sigma: sum_k u_k (s_k^2 - 1),  sigma <- sigma exp(eta_sigma / 2 sum_k u_k (s_k^2 - 1)),
with the paper's learning rates eta_mu = 1 and eta_sigma = (3 + ln n) / (5 sqrt n) for n genes.
Every step is O(population x genes).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field, model_validator

from evo_core.authoring.gene_limits import sampling_problem
from evo_core.contract.config_models import OptimizerConfig
from evo_core.optimizers.distribution_state import (
    check_distribution,
    state_array,
    told_fitness,
    within_limits,
)
from evo_core.optimizers.gaussian_sampling import (
    NoiseArray,
    noise_sum,
    sampled_population,
    standard_noise,
)
from evo_core.optimizers.rank_shaping import nes_utilities

__all__ = ["SNESConfig", "SNES", "paper_population_size", "paper_sigma_learning_rate"]

FloatArray = NDArray[np.float64]


def paper_population_size(genes: int) -> int:
    """The paper's population size: 4 + floor(3 ln n) (38 at 10^5 genes, 45 at 10^6)."""
    return 4 + math.floor(3 * math.log(genes))


def paper_sigma_learning_rate(genes: int) -> float:
    """The paper's learning rate of the standard deviations: (3 + ln n) / (5 sqrt n)."""
    return (3 + math.log(genes)) / (5 * math.sqrt(genes))


class SNESConfig(OptimizerConfig):
    """Separable NES (Schaul et al. 2011): the natural gradient of a Gaussian with one standard
    deviation per gene, with rank-based utilities; for large genomes, little tuning.

    Its learning rates default to the paper's, which depend only on the genome's length; the
    paper's population size, 4 + floor(3 ln n), is small (38 at 10^5 genes): set
    population_size to it or larger.
    """

    type: Literal["snes"] = "snes"
    population_size: int = Field(..., ge=2, description="Genomes per generation; the "
                                 "paper's default is 4 + floor(3 ln genes): 24 at 1,000 genes, "
                                 "38 at 10^5, 45 at 10^6.")
    initial_mean: float = Field(0.0, description="Every gene of the initial centre.")
    initial_sigma: float = Field(1.0, gt=0, description="Every gene's initial standard "
                                 "deviation (the paper's 1).")
    center_learning_rate: float = Field(1.0, gt=0, le=1, description="eta_mu, the centre's "
                                        "learning rate (the paper's 1).")
    sigma_learning_rate: float | None = Field(
        None, gt=0, le=1, description="eta_sigma, the standard deviations' learning rate; "
        "unset: the paper's (3 + ln genes) / (5 sqrt genes), 0.6 at one gene, 0.063 at 1,000.")

    @model_validator(mode="after")
    def _sampling_fits(self) -> SNESConfig:
        problem = sampling_problem("initial_sigma", self.initial_sigma, np.float64,
                                   center_field="initial_mean", center=self.initial_mean)
        if problem is not None:
            raise ValueError(problem)
        return self


class SNES:
    """`IOptimizer` and `IRewindableOptimizer`: the distribution is its centre and standard
    deviations; `ask` only draws."""

    config_model: ClassVar[type[OptimizerConfig]] = SNESConfig

    def __init__(self, config: SNESConfig, genome_size: int, rng: np.random.Generator) -> None:
        self.config = config
        self.rng = rng
        self.genome_size = genome_size
        self.mean: FloatArray = np.full(genome_size, config.initial_mean)
        self.sigma: FloatArray = np.full(genome_size, config.initial_sigma)
        self.sigma_learning_rate = (config.sigma_learning_rate
                                    or paper_sigma_learning_rate(genome_size))
        self._noise: NoiseArray | None = None

    def ask(self) -> FloatArray:
        self._noise = standard_noise(self.rng, self.config.population_size, self.genome_size)
        return sampled_population(self.mean, self.sigma, self._noise, mirrored=False)

    def tell(self, fitnesses: FloatArray) -> None:
        if self._noise is None:
            raise RuntimeError("tell() without ask()")
        utilities = nes_utilities(told_fitness(fitnesses, self.config.population_size))
        mean_gradient = noise_sum(utilities, self._noise)
        # sum_k u_k (s_k^2 - 1) = sum_k u_k s_k^2 - sum_k u_k
        sigma_gradient = noise_sum(utilities, self._noise, squared=True) - np.sum(utilities)
        mean = self.mean + self.config.center_learning_rate * self.sigma * mean_gradient
        sigma = self.sigma * np.exp(self.sigma_learning_rate / 2 * sigma_gradient)
        self.mean, self.sigma = within_limits(mean, sigma)
        self._noise = None

    def state(self) -> dict[str, Any]:
        return {"mean": self.mean.copy(), "sigma": self.sigma.copy()}

    def state_before_ask(self) -> dict[str, Any]:
        """`ask` changes nothing but the Generator's state, which the run's streams keep."""
        return self.state()

    def load_state(self, state: dict[str, Any]) -> None:
        """Raises ValueError naming `optimizer.<key>` on anything `state` did not write: a
        missing key, another shape, NaN, standard deviations that are not positive or that put
        genes beyond the gene limit; changes nothing then."""
        shape = (self.genome_size,)
        mean, sigma = state_array(state, "mean", shape), state_array(state, "sigma", shape)
        check_distribution(mean, sigma, "mean", "sigma")
        self.mean, self.sigma, self._noise = mean, sigma, None
