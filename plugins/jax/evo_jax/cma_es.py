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
pure functions of their own state.

Checkpoints hold the state's arrays (mean, step size, covariance and its eigen-decomposition or,
separable, C's diagonal, evolution paths, the count of updates and the raw JAX key), so
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

import functools
import importlib.util
from collections.abc import Callable
from typing import Any, ClassVar, Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray
from pydantic import Field, model_validator

from evo_core import OptimizerConfig, UserError, sampling_problem
from evo_jax import cma_es_update, sep_cma_es_update
from evo_jax.cma_es_update import CMAState, Constants
from evo_jax.sep_cma_es_update import SepCMAState

__all__ = ["JaxCMAES", "JaxCMAESConfig"]

_NAME = 'optimizer.type = "cma-es-jax"'


class JaxCMAESConfig(OptimizerConfig):
    """CMA-ES compiled with JAX (evo-jax): ask and tell as jitted functions, seeded from the
    experiment."""

    type: Literal["cma-es-jax"] = "cma-es-jax"
    sigma: float = Field(0.5, gt=0, allow_inf_nan=False, description="Initial step size.")
    mu: int | None = Field(None, ge=1,
                           description="Parents per update; unset: population_size // 2.")
    initial_mean: float = Field(0.0, allow_inf_nan=False,
                                description="Every gene of the initial mean.")
    diagonal: bool = Field(False, description="Separable CMA-ES: diagonal covariance, O(n) "
                           "memory and time per sample; use it for genomes of thousands of "
                           "genes.")

    @model_validator(mode="after")
    def _supported(self) -> JaxCMAESConfig:
        if self.mu is not None and self.mu > self.population_size:
            raise ValueError(f"mu ({self.mu}) must not exceed population_size "
                             f"({self.population_size})")
        # float32 whatever jax_enable_x64 says: the config is read before jax is
        problem = sampling_problem("sigma", self.sigma, np.float32,
                                   center_field="initial_mean", center=self.initial_mean)
        if problem is not None:
            raise ValueError(f"{problem} (cma-es-jax computes in float32, JAX's default)")
        return self


#: a state of either form: full covariance or separable (diagonal)
State = CMAState | SepCMAState


class Form(NamedTuple):
    """One form of the strategy: its state's type and its pure functions."""

    state: type[CMAState] | type[SepCMAState]
    initial_state: Callable[[int, float, float, Any], State]
    ask: Callable[[Constants, Any], tuple[Any, Any, Any]]
    tell: Callable[[Constants, Any, Any, Any], Any]
    inconsistency: Callable[[Any], str | None]


FULL = Form(CMAState, cma_es_update.initial_state, cma_es_update.ask, cma_es_update.tell,
            cma_es_update.inconsistency)
SEPARABLE = Form(SepCMAState, sep_cma_es_update.initial_state, sep_cma_es_update.ask,
                 sep_cma_es_update.tell, sep_cma_es_update.inconsistency)


def form_of(constants: Constants) -> Form:
    return SEPARABLE if constants.diagonal else FULL


def tell_then_ask(constants: Constants, state: State, y: Any, order: Any
                  ) -> tuple[State, State, Any, Any]:
    """tell, and the next ask drawn at once: (the state told, the state after the next ask,
    its samples, its steps)."""
    form = form_of(constants)
    told = form.tell(constants, state, y, order)
    return (told, *form.ask(constants, told))


@functools.cache
def _compiled(constants: Constants) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The jitted ask and tell-then-ask of one shape and form (shared by every optimizer of
    that shape and form)."""
    import jax

    return (jax.jit(functools.partial(form_of(constants).ask, constants)),
            jax.jit(functools.partial(tell_then_ask, constants)))


class JaxCMAES:
    """`IOptimizer` and `IRewindableOptimizer` over evo_jax.cma_es_update (see the module doc)."""

    config_model: ClassVar[type[OptimizerConfig]] = JaxCMAESConfig

    def __init__(self, config: JaxCMAESConfig, genome_size: int, rng: np.random.Generator
                 ) -> None:
        if importlib.util.find_spec("jax") is None:
            raise UserError(f"{_NAME} needs jax, which is not installed; install it with pip "
                            "install 'evo-core[jax]', or use optimizer.type = \"cma-es\"")
        import jax

        lam = config.population_size
        self.constants = Constants.of(genome_size, lam, config.mu or lam // 2, config.diagonal)
        self.form = form_of(self.constants)
        self.genome_size = genome_size
        key = jax.random.key(int(rng.integers(2**32, dtype=np.uint64)))
        self._state: State = self.form.initial_state(genome_size, config.initial_mean,
                                                     config.sigma, jax.random.key_data(key))
        self._ask, self._tell_then_ask = _compiled(self.constants)
        #: (the state before the pending ask, its steps y on the device)
        self._pending: tuple[State, Any] | None = None
        #: the next ask, drawn by `tell` in the same compiled call: (the state after it, its
        #: samples, its steps); None after a load or before the first ask
        self._drawn: tuple[State, Any, Any] | None = None

    def ask(self) -> NDArray[np.float64]:
        before = self._state
        self._state, genomes, steps = self._drawn or self._ask(before)
        self._drawn = None
        self._pending = (before, steps)
        return np.array(genomes, dtype=np.float64, order="C")

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
        self._state, *drawn = self._tell_then_ask(self._state, self._pending[1], order)
        self._drawn = (drawn[0], drawn[1], drawn[2])
        self._pending = None

    def state(self) -> dict[str, Any]:
        return _arrays(self._state)

    def state_before_ask(self) -> dict[str, Any]:
        """The state before the pending ask (ask only advanced the key): asking again after
        loading it draws the same genomes."""
        return _arrays(self._state if self._pending is None else self._pending[0])

    def load_state(self, state: dict[str, Any]) -> None:
        """Raises KeyError or ValueError naming the field for anything `tell` does not
        write: another shape, a non-numeric or non-finite value, or fields that break the
        relations `tell` keeps between them (the form's `inconsistency`)."""
        import jax.numpy as jnp

        current = self._state
        fields: dict[str, Any] = {}
        for name in self.form.state._fields:
            like = np.asarray(getattr(current, name))
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
        self._state = self.form.state(*(jnp.asarray(value) for value in loaded))
        self._pending = self._drawn = None


def _arrays(state: State) -> dict[str, Any]:
    import jax

    values = jax.device_get(state)
    return {name: np.asarray(getattr(values, name)) for name in type(state)._fields}
