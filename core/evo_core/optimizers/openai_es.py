"""OpenAI-ES (Salimans et al. 2017, "Evolution Strategies as a Scalable Alternative to
Reinforcement Learning"): the centre follows a gradient estimated from mirrored Gaussian samples
whose fitnesses are replaced by centred ranks, through Adam or gradient ascent with momentum.

With noise eps_i and centred ranks F_i of the N genomes centre + sigma eps_i, the estimate is
g = sum_i F_i eps_i / (N sigma); mirrored pairs (eps, -eps) make it sum over the N / 2 noise
rows of (F+ - F-) eps. L2 weight decay, as the paper's code applies it, subtracts
weight_decay x centre from g before the step. Its cost per generation is O(N n): no matrix of
genes by genes, so it scales to genomes of a million genes.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field, model_validator

from evo_core.contract.config_models import OptimizerConfig
from evo_core.optimizers.centre_steps import CentreStep
from evo_core.optimizers.decaying_search import DecayingCentre, DecayingSearchConfig
from evo_core.optimizers.distribution_state import gradient_sigma_problem, told_fitness
from evo_core.optimizers.gaussian_sampling import (
    NoiseArray,
    mirrored_pairs,
    noise_sum,
    sampled_population,
    standard_noise,
)
from evo_core.optimizers.rank_shaping import centered_ranks

__all__ = ["OpenAIESConfig", "OpenAIES"]

FloatArray = NDArray[np.float64]

class OpenAIESConfig(DecayingSearchConfig):
    """OpenAI-ES (Salimans et al. 2017): a gradient estimate from mirrored samples and centred
    ranks, stepped by Adam; for large genomes (10^4 to 10^6 genes) and large populations.

    Its cost is linear in the genes: use it where CMA-ES's covariance does not fit. sigma
    stays fixed unless sigma_decay < 1.
    """

    type: Literal["openai-es"] = "openai-es"
    population_size: int = Field(..., ge=2, description="Genomes per generation, even: "
                                 "population_size / 2 noise rows, each added and subtracted "
                                 "(EvoJAX: pop_size).")
    gradient_optimizer: Literal["adam", "sgd"] = Field(
        "adam", description="How the gradient estimate moves the centre: Adam, or gradient "
        "ascent with momentum (EvoJAX: optimizer).")
    momentum: float = Field(0.9, ge=0, lt=1, description="sgd's momentum: velocity = "
                            "gradient + momentum x velocity; 0: plain gradient ascent "
                            "(EvoJAX: optimizer_config.momentum).")
    adam_beta1: float = Field(0.99, ge=0, lt=1, description="Adam's decay of the gradient's "
                              "mean; 0.99 as in the paper's code and EvoJAX "
                              "(optimizer_config.beta_1).")
    adam_beta2: float = Field(0.999, ge=0, lt=1, description="Adam's decay of the gradient's "
                              "square (EvoJAX: optimizer_config.beta_2).")
    adam_epsilon: float = Field(1e-8, gt=0, description="Added to Adam's denominator "
                                "(EvoJAX: optimizer_config.eps).")
    weight_decay: float = Field(0.0, ge=0, description="L2 coefficient: weight_decay x centre "
                                "is subtracted from the gradient estimate, as in the paper's "
                                "code (EvoJAX's w_decay differs: it is a fitness penalty before "
                                "ranking).")

    @model_validator(mode="after")
    def _gradient_fits(self) -> OpenAIESConfig:
        field = "sigma" if self.sigma_decay == 1 else "sigma_limit"
        problem = gradient_sigma_problem(field, self.smallest_sigma())
        if problem is not None:
            raise ValueError(problem)
        return self


class OpenAIES:
    """`IOptimizer` and `IRewindableOptimizer`: the distribution is the centre and the
    generation count (sigma and the learning rate follow from it), with the centre's step
    state; `ask` only draws."""

    config_model: ClassVar[type[OptimizerConfig]] = OpenAIESConfig

    def __init__(self, config: OpenAIESConfig, genome_size: int, rng: np.random.Generator
                 ) -> None:
        self.config = config
        self.rng = rng
        self.genome_size = genome_size
        self.directions = config.population_size // 2
        self.centre = DecayingCentre(config, genome_size)
        self.centre_step = CentreStep(config.gradient_optimizer, genome_size,
                                      momentum=config.momentum, beta1=config.adam_beta1,
                                      beta2=config.adam_beta2, epsilon=config.adam_epsilon)
        self._noise: NoiseArray | None = None

    def ask(self) -> FloatArray:
        self._noise = standard_noise(self.rng, self.directions, self.genome_size)
        return sampled_population(self.centre.mean, self.centre.sigma, self._noise,
                                  mirrored=True)

    def tell(self, fitnesses: FloatArray) -> None:
        if self._noise is None:
            raise RuntimeError("tell() without ask()")
        c, centre = self.config, self.centre
        fitness = told_fitness(fitnesses, c.population_size)
        plus, minus = mirrored_pairs(centered_ranks(fitness), self.directions)
        gradient = noise_sum(plus - minus, self._noise) / (c.population_size * centre.sigma)
        if c.weight_decay:
            gradient = gradient - c.weight_decay * centre.mean
        centre.advance(self.centre_step.step(gradient, centre.generations,
                                             centre.learning_rate))
        self._noise = None

    def state(self) -> dict[str, Any]:
        return {**self.centre.state(), **self.centre_step.state()}

    def state_before_ask(self) -> dict[str, Any]:
        """`ask` changes nothing but the Generator's state, which the run's streams keep."""
        return self.state()

    def load_state(self, state: dict[str, Any]) -> None:
        """Raises ValueError naming `optimizer.<key>` on anything `state` did not write: a
        missing key, another shape, NaN, a centre beyond the gene limit, a negative second
        moment; changes nothing then."""
        centre = DecayingCentre(self.config, self.genome_size)
        centre.load_state(state)
        self.centre_step.load_state(state)
        self.centre, self._noise = centre, None
