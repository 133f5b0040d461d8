"""`optimizer.type = "cma-es-jax"`: CMA-ES whose ask and tell are compiled JAX functions.

The core's `cma-es` is pycma: its Python bookkeeping per solution (an archive of every sent
solution, hashed, and more) costs milliseconds a generation at a population of hundreds, more
than a compiled rollout of the whole population takes. Here sampling and the update are two
jitted functions of a state of arrays (evo_jax.cma_es_update, the tutorial's equations), so a
generation's optimizer work is one compiled call: `tell` updates the state and draws the next
ask's samples at once, dispatched without waiting, so the device works while the host records
the generation, and `ask` hands those samples over. Only the ranking is done on the host, in
float64 from the fitness the core hands over (NaN ranks last), so that values the float32 device
type would round together are still told apart.

With `diagonal = true` the strategy is separable CMA-ES (evo_jax.sep_cma_es_update: C's
diagonal alone, O(n) memory and time per sample); the two forms are a `Form` each, the same
pure functions of their own state (evo_jax.cma_es_forms).

With `restarts = "ipop"` or `"bipop"`, `ask` first asks whether the current run is over (the
criteria of evo_jax.termination, on the fitness record the host keeps and on the state, checked
where `ask` waits for the device anyway) and if so begins the next run that `evo_core.next_run`
schedules, with a new population size: its constants and compiled functions, and a new state
whose key continues the old one's. Since the decision is a function of the state, a state
loaded before that `ask` makes the same restart.

Checkpoints hold the state's arrays (mean, step size, covariance and its eigen-decomposition or,
separable, C's diagonal, evolution paths, the count of updates and the raw JAX key; with
restarts, the counts of `evo_core.restarts_state` and the run's fitness record too), so
`load_state` executes nothing it reads and needs no signature; every field is checked for shape,
type and finiteness, and the fields for the relations the update keeps between them (the form's
`inconsistency`): a zeroed basis, a negative-definite covariance or scales times 1e30 are
finite, and resumed into a NaN mean. A `sigma` or `initial_mean` whose samples overflow
float32 is refused by the config.
The JAX key is drawn once from the experiment's seeded optimizer stream, so a seed gives the
same run, and a resumed run continues the same key: resumed, it asks exactly the genomes it
would have asked.

It has none of pycma's other options; it computes in JAX's default float type (float32 unless
`jax_enable_x64` is set). jax is imported when the optimizer is built, not with this module.
"""

from __future__ import annotations

import importlib.util
from typing import Any, ClassVar, Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray
from pydantic import Field, model_validator

from evo_core import (
    OptimizerConfig,
    Restarts,
    RestartsConfig,
    UserError,
    next_run,
    restarts_state,
    restored_restarts,
    run_budget,
    sampling_problem,
)
from evo_jax.cma_es_forms import State, compiled, form_of
from evo_jax.cma_es_update import Constants
from evo_jax.termination import RunHistory, fitness_over, generation_limit

__all__ = ["JaxCMAES", "JaxCMAESConfig"]

_NAME = 'optimizer.type = "cma-es-jax"'


class JaxCMAESConfig(RestartsConfig):
    """CMA-ES compiled with JAX (evo-jax): ask and tell as jitted functions, for populations
    and genomes where pycma's Python overhead shows; `diagonal = true` and restarts as in
    `cma-es`."""

    type: Literal["cma-es-jax"] = "cma-es-jax"
    sigma: float = Field(0.5, gt=0, allow_inf_nan=False, description="Initial step size.")
    initial_mean: float = Field(0.0, allow_inf_nan=False,
                                description="Every gene of the initial mean.")
    diagonal: bool = Field(False, description="Separable CMA-ES: diagonal covariance, O(n) "
                           "memory and time per sample; use it for genomes of thousands of "
                           "genes.")

    @model_validator(mode="after")
    def _supported(self) -> JaxCMAESConfig:
        # float32 whatever jax_enable_x64 says: the config is read before jax is
        problem = sampling_problem("sigma", self.sigma, np.float32,
                                   center_field="initial_mean", center=self.initial_mean,
                                   deviations=self.sample_deviations)
        if problem is not None:
            raise ValueError(f"{problem} (cma-es-jax computes in float32, JAX's default)")
        return self


class _Moment(NamedTuple):
    """Everything that changes from one generation to the next: the device state, and with
    restarts where they stand and the run's fitness record."""

    state: State
    restarts: Restarts
    history: RunHistory


class JaxCMAES:
    """`IOptimizer` and `IRewindableOptimizer` over evo_jax.cma_es_forms (see the module
    doc)."""

    config_model: ClassVar[type[OptimizerConfig]] = JaxCMAESConfig

    def __init__(self, config: JaxCMAESConfig, genome_size: int, rng: np.random.Generator
                 ) -> None:
        if importlib.util.find_spec("jax") is None:
            raise UserError(f"{_NAME} needs jax, which is not installed; install it with pip "
                            "install 'evo-core[jax]', or use optimizer.type = \"cma-es\"")
        import jax

        self.config = config
        self.genome_size = genome_size
        self._rule = config.restart_rule(config.sigma, config.initial_mean)
        self._sample(config.population_size)
        key = jax.random.key(int(rng.integers(2**32, dtype=np.uint64)))
        self._now = _Moment(self.form.initial_state(genome_size, config.initial_mean,
                                                    config.sigma, jax.random.key_data(key)),
                            Restarts(config.population_size), RunHistory.empty())
        #: (the moment before the pending ask, its steps y on the device)
        self._pending: tuple[_Moment, Any] | None = None
        #: the next ask, drawn by `tell` in the same compiled call: (the state after it, its
        #: samples, its steps); None after a load, a restart or before the first ask
        self._drawn: tuple[State, Any, Any] | None = None

    def _sample(self, population: int) -> None:
        """The constants, form and compiled functions of runs of `population` samples."""
        self.constants = Constants.of(self.genome_size, population,
                                      self.config.mu or population // 2, self.config.diagonal)
        self.form = form_of(self.constants)
        self._compiled = compiled(self.constants)

    @property
    def restarts(self) -> Restarts:
        return self._now.restarts

    def ask(self) -> NDArray[np.float64]:
        before = self._now
        if self._over():
            self._restart()
        state, genomes, steps = self._drawn or self._compiled.ask(self._now.state)
        self._now = self._now._replace(state=state)
        self._drawn = None
        self._pending = (before, steps)
        return np.array(genomes, dtype=np.float64, order="C")

    def _over(self) -> bool:
        """Whether the current run is over and a restart is left (`evo_jax.termination`)."""
        rule, now = self._rule, self._now
        if rule is None or now.restarts.large >= rule.max_restarts:
            return False
        n, lam = self.genome_size, self.constants.lam
        generation = int(now.state.generation)
        if generation == 0:
            return False
        return (fitness_over(now.history.best, now.history.last, n) is not None
                or generation >= generation_limit(n, lam, run_budget(now.restarts))
                or bool(self._compiled.stalled(now.state)))

    def _restart(self) -> None:
        """The next run (`evo_core.next_run`), its draws from the state's JAX key."""
        import jax

        assert self._rule is not None
        now = self._now
        key, draw = jax.random.split(jax.random.wrap_key_data(now.state.key))
        rng = np.random.default_rng(np.asarray(jax.random.key_data(draw)))
        evaluations = int(now.state.generation) * self.constants.lam
        after = next_run(self._rule, now.restarts, evaluations, self.genome_size, rng)
        assert after is not None  # `_over` said a restart is left
        restarts, run = after
        self._sample(run.population)
        self._now = _Moment(self.form.initial_state(self.genome_size, run.mean, run.sigma,
                                                    jax.random.key_data(key)),
                            restarts, RunHistory.empty())
        self._drawn = None

    def tell(self, fitnesses: NDArray[np.float64]) -> None:
        if self._pending is None:
            raise RuntimeError("tell() without ask()")
        fitness = np.asarray(fitnesses, dtype=np.float64)
        if fitness.shape != (self.constants.lam,):
            raise ValueError(f"tell() got {fitness.shape} fitness values for "
                             f"{self.constants.lam} genomes")
        # stable: of equal fitness the earlier sample ranks first; NaN ranks last
        order = np.argsort(-fitness, kind="stable").astype(np.int32)
        # dispatched, not waited for: the device updates (and draws the next ask) while the
        # host records the generation
        state, *drawn = self._compiled.tell_then_ask(self._now.state, self._pending[1], order)
        history = (self._now.history.told(fitness, self.genome_size) if self._rule is not None
                   else self._now.history)
        self._now = self._now._replace(state=state, history=history)
        self._drawn = (drawn[0], drawn[1], drawn[2])
        self._pending = None

    def state(self) -> dict[str, Any]:
        return self._arrays(self._now)

    def state_before_ask(self) -> dict[str, Any]:
        """The state before the pending ask (ask only advanced the key, or restarted): asking
        again after loading it draws the same genomes."""
        return self._arrays(self._now if self._pending is None else self._pending[0])

    def _arrays(self, moment: _Moment) -> dict[str, Any]:
        import jax

        values = jax.device_get(moment.state)
        arrays = {name: np.asarray(getattr(values, name)) for name in type(values)._fields}
        if self._rule is None:  # the state of a run without restarts is as it always was
            return arrays
        return {**arrays, **restarts_state(moment.restarts), **moment.history.arrays()}

    def load_state(self, state: dict[str, Any]) -> None:
        """Raises KeyError or ValueError naming the field for anything `tell` does not
        write: another shape, a non-numeric or non-finite value, or fields that break the
        relations `tell` keeps between them (the form's `inconsistency`); with restarts,
        counts `evo_core.restored_restarts` refuses, and a fitness record of another run."""
        import jax.numpy as jnp

        restarts = (Restarts(self.config.population_size) if self._rule is None
                    else restored_restarts(self._rule, state))
        fields: dict[str, Any] = {}
        for name in self.form.state._fields:
            like = np.asarray(getattr(self._now.state, name))
            value = np.asarray(state[name])
            kind = "u" if name == "key" else "iu" if name == "generation" else "fiu"
            if value.shape != like.shape or value.dtype.kind not in kind or \
                    not np.isfinite(value).all():
                raise ValueError(f"optimizer.{name}: {value.shape} {value.dtype}, not the "
                                 f"finite {like.shape} {like.dtype} array this optimizer keeps")
            # cast as the state holds it (what the checks see is what the next tell uses): a
            # value the type cannot hold would wrap (an integer) or become inf
            with np.errstate(over="ignore"):
                fields[name] = np.asarray(value, dtype=like.dtype)
            held = np.array_equal(fields[name], value) if like.dtype.kind in "iu" else \
                np.isfinite(fields[name]).all()
            if not held:
                raise ValueError(f"optimizer.{name}: values beyond what {like.dtype} holds")
        loaded = self.form.state(**fields)
        problem = self.form.inconsistency(loaded)
        if problem is not None:
            raise ValueError(problem)
        history = RunHistory.empty() if self._rule is None else RunHistory.restored(
            state, self.genome_size, restarts.population, int(loaded.generation))
        self._sample(restarts.population)
        self._now = _Moment(self.form.state(*(jnp.asarray(value) for value in loaded)),
                            restarts, history)
        self._pending = self._drawn = None
