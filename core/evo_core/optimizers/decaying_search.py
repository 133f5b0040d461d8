"""What the mirrored evolution strategies with one step size share (`openai-es`, `ars`): the
config fields of the centre's start, the step size and the learning rate, each optionally
decaying every generation towards a floor, as EvoJAX's OpenES and ARS configure them
(`init_stdev`, `decay_stdev`, `limit_stdev`; `lrate_init`, `lrate_decay`, `lrate_limit`); and
the centre with its generation count, from which the step size and the learning rate follow, so
that the count is all of the schedules a checkpoint holds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from pydantic import Field, model_validator

from evo_core.authoring.gene_limits import sampling_problem
from evo_core.contract.config_models import OptimizerConfig
from evo_core.optimizers.distribution_state import (
    MAX_GENERATIONS,
    check_distribution,
    state_array,
    state_number,
    within_limits,
)

__all__ = ["DecayingSearchConfig", "DecayingCentre", "scheduled", "even_population_problem"]

FloatArray = NDArray[np.float64]


def scheduled(initial: float, decay: float, limit: float, generations: int) -> float:
    """A value that decays by `decay` every generation and stops at `limit`:
    max(initial * decay^generations, limit); `decay` 1 keeps it at `initial`."""
    return initial if decay == 1 else max(initial * decay**generations, limit)


def even_population_problem(population_size: int) -> str | None:
    """Mirrored sampling evaluates each noise row twice, added and subtracted."""
    if population_size % 2:
        return (f"population_size = {population_size} is odd, but mirrored sampling evaluates "
                f"pairs of genomes; use {population_size + 1}")
    return None


class DecayingSearchConfig(OptimizerConfig):
    """The fields of a mirrored search with one step size and a learning rate, both decaying
    optionally (a base of `openai-es` and `ars`, registered as neither)."""

    initial_mean: float = Field(0.0, description="Every gene of the initial centre "
                                "(EvoJAX: init_min = init_max, 0).")
    sigma: float = Field(0.02, gt=0, description="The step size: genomes are centre +- sigma "
                         "x noise (EvoJAX: init_stdev).")
    sigma_decay: float = Field(1.0, gt=0, le=1, description="sigma is multiplied by this "
                               "after every generation, down to sigma_limit; 1: fixed "
                               "(EvoJAX: decay_stdev).")
    sigma_limit: float = Field(0.0, ge=0, description="The smallest sigma the decay reaches "
                               "(EvoJAX: limit_stdev).")
    learning_rate: float = Field(0.01, gt=0, description="The centre's learning rate "
                                 "(EvoJAX: optimizer_config.lrate_init).")
    learning_rate_decay: float = Field(1.0, gt=0, le=1, description="learning_rate is "
                                       "multiplied by this after every generation, down to "
                                       "learning_rate_limit; 1: fixed (EvoJAX: "
                                       "optimizer_config.lrate_decay).")
    learning_rate_limit: float = Field(0.0, ge=0, description="The smallest learning rate the "
                                       "decay reaches (EvoJAX: optimizer_config.lrate_limit).")

    @model_validator(mode="after")
    def _schedules_fit(self) -> DecayingSearchConfig:
        problem = (even_population_problem(self.population_size)
                   or sampling_problem("sigma", self.sigma, np.float64,
                                       center_field="initial_mean", center=self.initial_mean))
        if problem is None and self.sigma_decay < 1:
            problem = sampling_problem("sigma_limit", self.sigma_limit, np.float64,
                                       center_field="initial_mean", center=self.initial_mean)
            if problem is not None:
                problem += " (sigma_decay < 1 lowers sigma towards it)"
        if problem is not None:
            raise ValueError(problem)
        for name in ("sigma", "learning_rate"):
            initial, limit = getattr(self, name), getattr(self, f"{name}_limit")
            if limit > initial:
                raise ValueError(f"{name}_limit = {limit:g} is above {name} = {initial:g}: "
                                 f"the decay lowers {name} towards its limit; lower "
                                 f"{name}_limit")
        return self

    def smallest_sigma(self) -> float:
        """The smallest step size the run reaches: sigma, or sigma_limit when it decays."""
        return self.sigma if self.sigma_decay == 1 else self.sigma_limit


class DecayingCentre:
    """The centre of a `DecayingSearchConfig` search and its generation count; the step size and
    the learning rate are the config's schedules at that count."""

    def __init__(self, config: DecayingSearchConfig, genome_size: int) -> None:
        self.config = config
        self.genome_size = genome_size
        self.mean: FloatArray = np.full(genome_size, config.initial_mean)
        self.generations = 0

    @property
    def sigma(self) -> float:
        return self._sigma(self.generations)

    @property
    def learning_rate(self) -> float:
        c = self.config
        return scheduled(c.learning_rate, c.learning_rate_decay, c.learning_rate_limit,
                         self.generations)

    def advance(self, step: FloatArray) -> None:
        """The centre moved by `step` (kept within the gene limit), one generation later."""
        self.mean, _ = within_limits(self.mean + step, np.asarray(self.sigma))
        self.generations += 1

    def state(self) -> dict[str, Any]:
        return {"mean": self.mean.copy(), "generations": np.int64(self.generations)}

    def load_state(self, state: dict[str, Any]) -> None:
        """Raises ValueError naming `optimizer.<key>`: a missing key, another shape, NaN, a
        count that is no count, a centre beyond the gene limit; changes nothing then."""
        mean = state_array(state, "mean", (self.genome_size,))
        generations = int(state_number(state, "generations", 0, MAX_GENERATIONS, integer=True))
        check_distribution(mean, self._sigma(generations), "mean", "generations")
        self.mean, self.generations = mean, generations

    def _sigma(self, generations: int) -> float:
        c = self.config
        return scheduled(c.sigma, c.sigma_decay, c.sigma_limit, generations)
