"""CMA-ES's restarts: IPOP (Auger and Hansen 2005) and BIPOP (Hansen 2009), as pycma's
`fmin2(restarts=..., bipop=...)` runs them; the core's `cma-es` and evo-jax's `cma-es-jax` share
them (their configs derive from `RestartsConfig`), each with its own termination criteria.

A run of CMA-ES converges to one optimum; on a multimodal function (Rastrigin's) that is a local
one unless the population is large enough to smooth the landscape. So when the termination
criteria say a run is over (pycma's `es.stop()`: tolfun, tolx, tolflatfitness, stagnation, a
condition number past 1e14, no effect of an axis...; evo_jax.termination's for `cma-es-jax`), a
new run begins, from a mean drawn uniformly within `initial_mean ± 2 sigma` (the box of which
`sigma` is a quarter, Hansen's advice for the initial step size):

- IPOP: every restart doubles the population: lambda_0 2^k for the k-th restart, the initial
  sigma each time.
- BIPOP: two regimes take turns by their budget. The large regime is IPOP's (lambda_0 2^k,
  k counting its restarts, with the initial sigma); the small regime runs
  lambda_s = floor(lambda_0 (lambda_l / lambda_0)^(U^2)) with sigma_s = sigma 10^(-2 U')
  (U, U' uniform on [0, 1), lambda_l the last large population) for at most half the
  evaluations the large regime has used (a generation limit of
  0.5 evaluations_large / lambda_s). The next run is small while the small regime has used
  fewer evaluations than the large one, the first run counted as small (pycma's and the
  paper's accounting).

Only large-regime restarts count towards `max_restarts` (pycma's `maxrestarts`; BIPOP's small
runs do not), so the largest population is lambda_0 2^max_restarts, which the memory check
holds the machine to (`largest_population`). Once the last restart's run is over, it goes on
(evo's run ends at `generations` or by `[stop]`, not by the criteria). The restart's draws come
from the Generator the optimizer hands over, in a fixed order (the regime's, then the mean):
`cma-es`'s is the run's seeded optimizer stream, `cma-es-jax`'s one seeded from its JAX key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field, model_validator

from evo_core.authoring.gene_limits import DEVIATIONS
from evo_core.contract.config_models import OptimizerConfig

__all__ = ["RestartsConfig", "RestartRule", "Restarts", "NextRun", "largest_population",
           "next_run", "run_budget", "restarts_state", "restored_restarts", "RESTART_BOX",
           "DEFAULT_MAX_RESTARTS"]

#: a restart's mean is drawn uniformly within initial_mean ± RESTART_BOX sigma
RESTART_BOX = 2.0
#: the fields of the state a checkpoint carries
_FIELDS = ("restart_regime", "large_restarts", "small_restarts", "evaluations_large",
           "evaluations_small", "population")
#: counts above this are no JSON integer a float64 holds exactly (and no run's)
_COUNT_LIMIT = 2**53
#: pycma's `maxrestarts` default, and the most Hansen recommends for BIPOP
DEFAULT_MAX_RESTARTS = 9


class RestartsConfig(OptimizerConfig):
    """The config fields a CMA-ES shares: `mu`, and the restarts (`restarts`, `max_restarts`),
    checked together; `largest_population` and `population_growth` make a config an
    `IVaryingPopulationConfig`, which the memory check holds the machine to."""

    mu: int | None = Field(None, ge=1,
                           description="Parents per update; unset: population_size // 2.")
    restarts: Literal["none", "ipop", "bipop"] = Field(
        "none", description="When the termination criteria end a run, start another from a "
        "random mean within initial_mean ± 2 sigma: ipop doubles the population each restart; "
        "bipop alternates those with small-population runs of a random smaller sigma.")
    max_restarts: int | None = Field(
        None, ge=1, description="Restarts with a doubled population (BIPOP's small runs do not "
        "count); the largest population is population_size x 2^max_restarts. Unset: "
        f"{DEFAULT_MAX_RESTARTS} with restarts, none without.")

    @model_validator(mode="after")
    def _restarts_fit(self) -> RestartsConfig:
        if self.mu is not None and self.mu > self.population_size:
            raise ValueError(f"mu ({self.mu}) must not exceed population_size "
                             f"({self.population_size})")
        if self.restarts == "none" and self.max_restarts is not None:
            raise ValueError('max_restarts is set but restarts = "none"; set restarts = '
                             '"ipop" or "bipop", or remove max_restarts')
        if self.restarts != "none" and self.mu is not None:
            raise ValueError(f"mu ({self.mu}) is fixed but restarts = {self.restarts!r} change "
                             "the population; remove mu (each run takes half its population)")
        return self

    def restart_rule(self, sigma: float, initial_mean: float) -> RestartRule | None:
        """The rule of `next_run` for a run from `sigma` and `initial_mean`; None without
        restarts."""
        if self.restarts == "none":
            return None
        return RestartRule(self.restarts, self.population_size, sigma, initial_mean,
                           self.max_restarts or DEFAULT_MAX_RESTARTS)

    @property
    def sample_deviations(self) -> float:
        """How many step sizes from `initial_mean` a sample may lie (`sampling_problem`'s
        `deviations`): a restart's mean lies up to RESTART_BOX of them away."""
        return DEVIATIONS + (RESTART_BOX if self.restarts != "none" else 0.0)

    @property
    def largest_population(self) -> int:
        """`IVaryingPopulationConfig`: the last large restart's population."""
        if self.restarts == "none":
            return self.population_size
        return largest_population(self.population_size,
                                  self.max_restarts or DEFAULT_MAX_RESTARTS)

    @property
    def population_growth(self) -> str:
        """`IVaryingPopulationConfig`: what makes the population grow."""
        if self.restarts == "none":
            return ""
        return (f"optimizer.restarts = {self.restarts!r} with max_restarts = "
                f"{self.max_restarts or DEFAULT_MAX_RESTARTS}")


@dataclass(frozen=True)
class RestartRule:
    """The configured restarts: which scheme, from what population and step size, how many."""

    kind: Literal["ipop", "bipop"]
    population: int  # lambda_0
    sigma: float
    initial_mean: float
    max_restarts: int


Regime = Literal["first", "large", "small"]


@dataclass(frozen=True)
class Restarts:
    """Where the run's restarts stand (CMA-ES's state beside pycma's strategy)."""

    population: int  # the current run's
    regime: Regime = "first"
    large: int = 0  # large-regime (IPOP) restarts begun
    small: int = 0  # BIPOP's small-regime runs begun
    evaluations_large: int = 0  # the finished runs' evaluations, per regime (the first: small)
    evaluations_small: int = 0


@dataclass(frozen=True)
class NextRun:
    """What the next run starts with."""

    mean: NDArray[np.float64]
    sigma: float
    population: int
    max_generations: float | None  # a small run's limit; None: pycma's default


def largest_population(population: int, max_restarts: int) -> int:
    """The most genomes a generation may ask for: the last large restart's."""
    return int(population * 2**max_restarts)


def next_run(rule: RestartRule, restarts: Restarts, evaluations: int, genome_size: int,
             rng: np.random.Generator) -> tuple[Restarts, NextRun] | None:
    """The restarts after the current run ended having used `evaluations`, and the next run;
    None when no restart is left (the current run goes on, nothing drawn)."""
    if restarts.large >= rule.max_restarts:
        return None
    used_large = restarts.evaluations_large + (evaluations if restarts.regime == "large" else 0)
    used_small = restarts.evaluations_small + (evaluations if restarts.regime != "large" else 0)
    last_large = rule.population * 2**restarts.large
    small = rule.kind == "bipop" and used_small < used_large
    if small:
        population = math.floor(rule.population
                                * (last_large / rule.population) ** (rng.random() ** 2))
        sigma = rule.sigma * 10.0 ** (-2 * rng.random())
    else:
        population, sigma = last_large * 2, rule.sigma
    mean = rng.uniform(rule.initial_mean - RESTART_BOX * rule.sigma,
                       rule.initial_mean + RESTART_BOX * rule.sigma, genome_size)
    after = Restarts(population, "small" if small else "large",
                     restarts.large + (not small), restarts.small + small,
                     used_large, used_small)
    return after, NextRun(mean, sigma, population, run_budget(after))


def run_budget(restarts: Restarts) -> float | None:
    """The most generations the current run may take by its regime: a small run's half of the
    large regime's evaluations so far, in its generations; None for the others (the
    optimizer's own default limit)."""
    if restarts.regime != "small":
        return None
    return 0.5 * restarts.evaluations_large / restarts.population


def restarts_state(restarts: Restarts) -> dict[str, Any]:
    """The JSON values a checkpoint carries (`_FIELDS`)."""
    return {"restart_regime": restarts.regime, "large_restarts": restarts.large,
            "small_restarts": restarts.small, "evaluations_large": restarts.evaluations_large,
            "evaluations_small": restarts.evaluations_small, "population": restarts.population}


def restored_restarts(rule: RestartRule, state: dict[str, Any]) -> Restarts:
    """`restarts_state`'s values read back as hostile input: KeyError for a missing field,
    ValueError naming the field (`optimizer.<key>`) for a value `next_run` never makes."""
    values = {name: state[name] for name in _FIELDS}
    for name in _FIELDS[1:]:
        value = values[name]
        if not isinstance(value, int) or isinstance(value, bool) or \
                not 0 <= value < _COUNT_LIMIT:
            raise ValueError(f"optimizer.{name}: {value!r}, not a count")
    regime = values["restart_regime"]
    if regime not in ("first", "large", "small"):
        raise ValueError(f"optimizer.restart_regime: {regime!r}, not first, large or small")
    restarts = Restarts(values["population"], regime, values["large_restarts"],
                        values["small_restarts"], values["evaluations_large"],
                        values["evaluations_small"])
    problem = _inconsistency(rule, restarts)
    if problem is not None:
        raise ValueError(problem)
    return restarts


def _inconsistency(rule: RestartRule, restarts: Restarts) -> str | None:
    """The first relation between the counts that `next_run` keeps and `restarts` breaks."""
    regime, large, small = restarts.regime, restarts.large, restarts.small
    if large > rule.max_restarts:
        return (f"optimizer.large_restarts: {large}, more than optimizer.max_restarts "
                f"({rule.max_restarts})")
    if rule.kind == "ipop" and small:
        return ('optimizer.small_restarts: small-population runs are BIPOP\'s, and '
                'optimizer.restarts = "ipop"')
    if (regime == "first") != (large + small == 0) or (regime == "large" and not large) or \
            (regime == "small" and not small):
        return f"optimizer.restart_regime: {regime!r} after {large} large and {small} small runs"
    for name, ran in (("evaluations_large", large), ("evaluations_small", large + small)):
        if not ran and getattr(restarts, name):
            return (f"optimizer.{name}: {getattr(restarts, name)} evaluations of runs that "
                    "never finished")
    last_large = rule.population * 2**large
    population = restarts.population
    if not (rule.population <= population <= last_large if regime == "small"
            else population == last_large):
        return (f"optimizer.population: {population}, not the population of a {regime} run "
                f"after {large} large restarts from optimizer.population_size = "
                f"{rule.population}")
    return None
