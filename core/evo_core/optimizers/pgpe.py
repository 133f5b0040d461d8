"""PGPE (Sehnke et al. 2010, "Parameter-exploring policy gradients"), with the centre stepped by
ClipUp (Toklu et al. 2020) or Adam, as EvoJAX and EvoTorch implement it: symmetric (mirrored)
samples around a centre with one learned standard deviation per gene.

With noise rows eps_i, stdev s, and the (ranked) fitnesses f+ and f- of centre +- s eps_i over
D = population_size / 2 rows, the gradients are
  centre: s * sum_i (f+_i - f-_i) eps_i / (2 D),
  stdev:  s * sum_i ((f+_i + f-_i) / 2 - b) (eps_i^2 - 1) / D,   b the mean fitness;
the stdev takes stdev_learning_rate times its gradient, the change bounded by
stdev_max_change x stdev either way. All of it is O(population x genes).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field, model_validator

from evo_core.authoring.gene_limits import sampling_problem
from evo_core.contract.config_models import OptimizerConfig
from evo_core.optimizers.centre_steps import CentreStep
from evo_core.optimizers.decaying_search import even_population_problem
from evo_core.optimizers.distribution_state import (
    MAX_GENERATIONS,
    check_distribution,
    state_array,
    state_number,
    told_fitness,
    within_limits,
)
from evo_core.optimizers.gaussian_sampling import (
    NoiseArray,
    mirrored_pairs,
    noise_sum,
    sampled_population,
    standard_noise,
)
from evo_core.optimizers.rank_shaping import centered_ranks

__all__ = ["PGPEConfig", "PGPE"]

FloatArray = NDArray[np.float64]


class PGPEConfig(OptimizerConfig):
    """PGPE (Sehnke et al. 2010) with ClipUp: mirrored samples, a learned standard deviation per
    gene; for large genomes (10^4 to 10^6 genes) whose genes need different step sizes.

    The centre moves by at most max_speed a generation whatever the fitness scale (ClipUp),
    which makes its learning rates easy to carry from one task to another.
    """

    type: Literal["pgpe"] = "pgpe"
    population_size: int = Field(..., ge=2, description="Genomes per generation, even: "
                                 "population_size / 2 noise rows, each added and subtracted "
                                 "(EvoJAX: pop_size).")
    initial_mean: float = Field(0.0, description="Every gene of the initial centre "
                                "(EvoJAX: init_params, zeros).")
    initial_stdev: float = Field(0.1, gt=0, description="Every gene's initial standard "
                                 "deviation (EvoJAX: init_stdev).")
    center_learning_rate: float = Field(0.15, gt=0, description="The centre's learning rate: "
                                        "ClipUp's push per generation, or Adam's step "
                                        "(EvoJAX: center_learning_rate).")
    stdev_learning_rate: float = Field(0.1, ge=0, description="The standard deviations' "
                                       "learning rate; 0 keeps them fixed (EvoJAX: "
                                       "stdev_learning_rate).")
    stdev_max_change: float = Field(0.2, gt=0, lt=1, description="The largest change of a "
                                    "standard deviation in one generation, as a fraction of "
                                    "it (EvoJAX: stdev_max_change).")
    gradient_optimizer: Literal["clipup", "adam"] = Field(
        "clipup", description="How the centre's gradient moves it: ClipUp (normalised "
        "gradient, momentum, speed clipped to max_speed) or Adam (EvoJAX: optimizer).")
    max_speed: float | None = Field(None, gt=0, description="ClipUp's largest step length; "
                                    "unset: twice center_learning_rate, as Toklu et al. "
                                    "advise (EvoJAX: optimizer_config.max_speed, default "
                                    "0.15).")
    momentum: float = Field(0.9, ge=0, lt=1, description="ClipUp's momentum (EvoJAX: "
                            "optimizer_config.momentum).")
    adam_beta1: float = Field(0.9, ge=0, lt=1, description="Adam's decay of the gradient's "
                              "mean (EvoJAX: optimizer_config.beta1).")
    adam_beta2: float = Field(0.999, ge=0, lt=1, description="Adam's decay of the gradient's "
                              "square (EvoJAX: optimizer_config.beta2).")
    adam_epsilon: float = Field(1e-8, gt=0, description="Added to Adam's denominator "
                                "(EvoJAX: optimizer_config.epsilon).")
    solution_ranking: bool = Field(True, description="Replace the fitnesses by centred ranks "
                                   "in [-0.5, 0.5] before the gradients; false: raw fitness "
                                   "(EvoJAX: solution_ranking).")

    @model_validator(mode="after")
    def _sampling_fits(self) -> PGPEConfig:
        problem = (even_population_problem(self.population_size)
                   or sampling_problem("initial_stdev", self.initial_stdev, np.float64,
                                       center_field="initial_mean", center=self.initial_mean))
        if problem is not None:
            raise ValueError(problem)
        return self

    def clipup_speed(self) -> float:
        return self.max_speed if self.max_speed is not None else 2 * self.center_learning_rate


class PGPE:
    """`IOptimizer` and `IRewindableOptimizer`: the distribution is the centre and the stdev
    per gene, with the centre's step state; `ask` only draws."""

    config_model: ClassVar[type[OptimizerConfig]] = PGPEConfig

    def __init__(self, config: PGPEConfig, genome_size: int, rng: np.random.Generator) -> None:
        self.config = config
        self.rng = rng
        self.genome_size = genome_size
        self.directions = config.population_size // 2
        self.mean: FloatArray = np.full(genome_size, config.initial_mean)
        self.stdev: FloatArray = np.full(genome_size, config.initial_stdev)
        self.generations = 0
        self.centre_step = CentreStep(config.gradient_optimizer, genome_size,
                                      momentum=config.momentum, beta1=config.adam_beta1,
                                      beta2=config.adam_beta2, epsilon=config.adam_epsilon,
                                      max_speed=config.clipup_speed())
        self._noise: NoiseArray | None = None

    def ask(self) -> FloatArray:
        self._noise = standard_noise(self.rng, self.directions, self.genome_size)
        return sampled_population(self.mean, self.stdev, self._noise, mirrored=True)

    def tell(self, fitnesses: FloatArray) -> None:
        if self._noise is None:
            raise RuntimeError("tell() without ask()")
        c = self.config
        fitness = told_fitness(fitnesses, c.population_size)
        noise, d = self._noise, self.directions
        scores = centered_ranks(fitness) if c.solution_ranking else fitness
        plus, minus = mirrored_pairs(scores, d)
        center_gradient = self.stdev * noise_sum(plus - minus, noise) / (2 * d)
        spread = (plus + minus) / 2 - np.mean(scores)
        # sum_i a_i (eps_i^2 - 1) = sum_i a_i eps_i^2 - sum_i a_i
        stdev_gradient = self.stdev * (noise_sum(spread, noise, squared=True)
                                       - np.sum(spread)) / d
        step = self.centre_step.step(center_gradient, self.generations, c.center_learning_rate)
        bound = c.stdev_max_change * self.stdev
        stdev = np.clip(self.stdev + c.stdev_learning_rate * stdev_gradient,
                        self.stdev - bound, self.stdev + bound)
        self.mean, self.stdev = within_limits(self.mean + step, stdev)
        self.generations += 1
        self._noise = None

    def state(self) -> dict[str, Any]:
        return {"mean": self.mean.copy(), "stdev": self.stdev.copy(),
                "generations": np.int64(self.generations), **self.centre_step.state()}

    def state_before_ask(self) -> dict[str, Any]:
        """`ask` changes nothing but the Generator's state, which the run's streams keep."""
        return self.state()

    def load_state(self, state: dict[str, Any]) -> None:
        """Raises ValueError naming `optimizer.<key>` on anything `state` did not write: a
        missing key, another shape, NaN, step sizes that are not positive or that put genes
        beyond the gene limit, a negative second moment; changes nothing then."""
        shape = (self.genome_size,)
        mean, stdev = state_array(state, "mean", shape), state_array(state, "stdev", shape)
        check_distribution(mean, stdev, "mean", "stdev")
        generations = int(state_number(state, "generations", 0, MAX_GENERATIONS, integer=True))
        self.centre_step.load_state(state)
        self.mean, self.stdev, self.generations, self._noise = mean, stdev, generations, None
