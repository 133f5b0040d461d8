"""CMA-ES on the `cma` package (pycma), with IPOP or BIPOP restarts (`authoring/restarts.py`).

Without restarts pycma's termination criteria are off: evo's run ends at `generations` or by
`[stop]`. With them, a run that pycma says is over (`es.stop()` after a `tell`) is followed by
a new strategy whose population and step size `restarts.next_run` chooses, so `ask()` returns
another number of genomes from then on; the config declares the largest
(`IVaryingPopulationConfig`), which the memory check holds the machine to."""

from __future__ import annotations

import warnings
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field, model_validator

from evo_core.authoring.gene_limits import sampling_problem
from evo_core.authoring.restarts import (
    Restarts,
    RestartsConfig,
    next_run,
    restarts_state,
    restored_restarts,
)
from evo_core.authoring.signed_state import check_signing_secret, open_state, seal_state
from evo_core.contract.config_models import OptimizerConfig
from evo_core.errors import UserError

__all__ = ["CMAESConfig", "CMAES"]

#: Above this many genes full covariance gets slow (O(n^2) per sample, O(n^3) decompositions).
FULL_COVARIANCE_WARN_GENES = 3000
#: Refuse full covariance when its matrices alone would need more memory than this.
FULL_COVARIANCE_MAX_BYTES = 8 * 2**30
#: What CMA-ES signatures vouch for (a signature made for anything else does not verify).
_SIGNED_AS = "evo cma-es state v1"
#: pycma's termination criteria switched off: without restarts evo's run decides when it ends
_NEVER_STOP: dict[str, Any] = {"tolfun": 0, "tolfunhist": 0, "tolflatfitness": 10**9,
                               "tolstagnation": 10**9, "tolx": 0, "tolconditioncov": np.inf}


class CMAESConfig(RestartsConfig):
    """CMA-ES (pycma): a full covariance for up to a few thousand genes; `diagonal = true`
    (separable, O(n) a candidate) for more, `restarts = "ipop"` or `"bipop"` for multimodal
    landscapes."""

    type: Literal["cma-es"] = "cma-es"
    sigma: float = Field(0.5, gt=0, description="Initial step size.")
    diagonal: bool = Field(False, description="Separable CMA-ES: diagonal covariance, O(n) memory "
                           "and time per sample; use it for genomes of thousands of genes.")
    initial_mean: float = Field(0.0, description="Every gene of the initial mean.")

    @model_validator(mode="after")
    def _samples_fit(self) -> CMAESConfig:
        problem = sampling_problem("sigma", self.sigma, np.float64,
                                   center_field="initial_mean", center=self.initial_mean,
                                   deviations=self.sample_deviations)
        if problem is not None:
            raise ValueError(problem)
        return self


class _GeneratorRandn:
    """pycma's `randn` option: without it pycma samples from numpy's global RNG."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def __call__(self, *shape: int) -> NDArray[np.float64]:
        return self.rng.standard_normal(shape)


class CMAES:
    """CMA-ES with pycma's defaults except population size, mu and the seeded sampler."""

    config_model: ClassVar[type[OptimizerConfig]] = CMAESConfig

    def __init__(self, config: CMAESConfig, genome_size: int, rng: np.random.Generator) -> None:
        if not config.diagonal:
            _check_full_covariance(genome_size)
        self.config = config
        self._randn = _GeneratorRandn(rng)
        self.genome_size = genome_size
        self._rule = config.restart_rule(config.sigma, config.initial_mean)
        self.restarts = Restarts(config.population_size)
        self.es = self._strategy(np.full(genome_size, config.initial_mean), config.sigma,
                                 config.population_size)
        self._asked: list[NDArray[np.float64]] | None = None
        #: the sampler's Generator state before the pending ask (`state_before_ask`)
        self._before_ask: dict[str, Any] | None = None
        check_signing_secret()  # an unusable secret is reported now, not at the first checkpoint

    def _strategy(self, mean: NDArray[np.float64], sigma: float, population: int,
                  max_generations: float | None = None) -> Any:
        """A pycma strategy with evo's options: the seeded sampler, no output, and pycma's
        termination criteria off unless restarts read them."""
        options: dict[str, Any] = {
            "popsize": population,
            "randn": self._randn,
            "verbose": -9,
            "verb_log": 0,
            "verb_disp": 0,
            "CMA_diagonal": self.config.diagonal,
            **(_NEVER_STOP if self._rule is None else {}),
        }
        if self.config.mu is not None:
            options["CMA_mu"] = self.config.mu
        if max_generations is not None:
            options["maxiter"] = max_generations
        import cma  # here, not at module level: pycma imports matplotlib, 0.3 s every `evo` call

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return cma.CMAEvolutionStrategy(mean, sigma, options)

    def ask(self) -> NDArray[np.float64]:
        self._before_ask = dict(self._randn.rng.bit_generator.state)
        self._asked = self.es.ask()
        # pycma hands out strided views; brains slice and reshape genomes: cheap on contiguous
        # float64 only
        return np.ascontiguousarray(np.array(self._asked, dtype=np.float64))

    def tell(self, fitnesses: NDArray[np.float64]) -> None:
        if self._asked is None:
            raise RuntimeError("tell() without ask()")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.es.tell(self._asked, [-float(f) for f in fitnesses])  # pycma minimises
            over = self._rule is not None and bool(self.es.stop())
        self._asked = None
        self._before_ask = None
        if over:
            self._restart()

    def _restart(self) -> None:
        """The next run, if a restart is left (`restarts.next_run`)."""
        assert self._rule is not None
        after = next_run(self._rule, self.restarts, int(self.es.countevals), self.genome_size,
                         self._randn.rng)
        if after is not None:
            self.restarts, run = after
            self.es = self._strategy(run.mean, run.sigma, run.population, run.max_generations)

    def state(self) -> dict[str, Any]:
        # pycma's strategy has no array form, and options it evaluates as code; it is pickled,
        # and signed so that only state this user's evo wrote is ever unpickled. The restarts'
        # bookkeeping is JSON values beside it (none without restarts: the state of a run
        # without them is what it was before restarts existed).
        sealed = seal_state(self.es, _SIGNED_AS, "pickle")
        return sealed if self._rule is None else {**sealed, **restarts_state(self.restarts)}

    def state_before_ask(self) -> dict[str, Any]:
        """`ask` changes nothing of pycma's strategy that the next `ask` would not redo the
        same way except the draws from its sampler: so the state after `ask` with the sampler's
        Generator set back is the state before it (tests/core/running/test_resume.py checks it)."""
        if self._before_ask is None:
            return self.state()
        rng = self._randn.rng
        after = rng.bit_generator.state
        rng.bit_generator.state = self._before_ask
        try:
            return self.state()
        finally:
            rng.bit_generator.state = after

    def load_state(self, state: dict[str, Any]) -> None:
        """Refuses (UserError) state without this user's signature, before unpickling it; with
        restarts, their bookkeeping (KeyError, or ValueError naming the field) before that, and
        a population that is not the strategy's after it."""
        restarts = (None if self._rule is None else restored_restarts(self._rule, state))
        es = open_state(state, _SIGNED_AS, "the CMA-ES state", "pickle")
        if restarts is not None and int(es.popsize) != restarts.population:
            raise ValueError(f"optimizer.population: {restarts.population}, but the strategy "
                             f"samples {int(es.popsize)} genomes")
        randn = es.opts["randn"]
        assert isinstance(randn, _GeneratorRandn)
        self.es, self._randn = es, randn
        self.restarts = restarts or Restarts(self.config.population_size)
        self._asked = None
        self._before_ask = None


def _check_full_covariance(genome_size: int) -> None:
    matrix_bytes = 3 * 8 * genome_size**2  # C, B and the eigen-decomposition's copy
    if matrix_bytes > FULL_COVARIANCE_MAX_BYTES:
        raise UserError(
            f"optimizer: full-covariance CMA-ES on {genome_size} genes needs about "
            f"{matrix_bytes / 2**30:.0f} GiB; set optimizer.diagonal = true (separable CMA-ES)")
    if genome_size > FULL_COVARIANCE_WARN_GENES:
        warnings.warn(
            f"full-covariance CMA-ES on {genome_size} genes is slow (O(n^2) per sample, "
            f"{matrix_bytes / 2**20:.0f} MiB of matrices); consider optimizer.diagonal = true",
            stacklevel=2)
