"""Everything the core relies on from a plugin, declared as structural types.

A plugin need not inherit from anything. The core calls only what these protocols declare, and
every optional capability is its own `runtime_checkable` protocol that the core detects with
`isinstance` (never by inspecting signatures or probing attributes):

========================  ===================================================================
protocol                  what the core does with it
========================  ===================================================================
`IBrainTemplate`          builds brains from genomes; shared by every individual of a run
`IBrain`                  `reset()` before every episode, `step(observation)` every step
`IRandomBrain`            gets a fresh seeded Generator before every episode (noisy brains)
`IStatefulTemplate`       its `saved_state()` arrays go into every run-folder file; replay and
                          resume rebuild the template with `restore(state)` (CTRNN masks)
`IBatchTemplate`          `make_batch(genomes)` steps a whole population at once
`IJaxTemplate`            pure functions of (parameters, state, observation) that JAX traces:
                          a chunk evaluated in one compiled function (evo-jax)
`IRandomBrainBatch`       a batch whose rows draw random numbers gets one Generator per row
`IBatchEvaluator`         scores a whole chunk of genomes in one call (`episodes.vectorize`)
`IChunkEvaluatorFactory`  a plugin's evaluator factory for its own `episodes.vectorize` value,
                          which checks the template before the run starts
`IOptimizer`              ask/tell, state for checkpoints
`IDescriptorOptimizer`    is told each genome's behaviour descriptor with its raw fitness
                          (quality-diversity); needs a `[behaviour]` table
`IHandler`                evaluates a population wherever it likes (processes, clusters)
`IBehaviourState`         an environment or wrapper offering its own state as the behaviour
                          (`[behaviour] source = "state"`)
`IWrapperClass`           wraps the environment as an `environment.wrappers` entry asks
========================  ===================================================================

Templates and brains are split because shared set-up (sparse masks, index maps) must exist once
per experiment and travel to worker processes by pickle, while a brain is cheap per-individual
state. A template is therefore immutable and picklable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core.contract.config_models import (
    BrainConfig,
    EnvironmentConfig,
    OptimizerConfig,
    ProcessingConfig,
    VectorizerConfig,
    WrapperConfig,
)

__all__ = ["IBrain", "IRandomBrain", "IBrainTemplate", "IBrainTemplateClass",
           "IStatefulTemplate", "IBrainBatch", "IRandomBrainBatch", "IBatchTemplate",
           "IJaxTemplate", "IChunkEvaluatorFactory", "IChunkEvaluatorClass",
           "IOptimizer", "IDescriptorOptimizer", "IOptimizerClass", "IEvaluator",
           "IBatchEvaluator", "IEvaluatorFactory", "IHandler", "IHandlerClass", "IBehaviourState",
           "IWrapperClass", "EvaluationResult"]


@runtime_checkable
class IBrain(Protocol):
    """One individual: per-individual state only, so making one from a template is cheap."""

    def reset(self) -> None:
        """Return to the initial state; the runner calls it before every episode."""

    def step(self, observation: Any) -> Any:
        """Map one observation to an action that the environment's action space contains."""


@runtime_checkable
class IRandomBrain(IBrain, Protocol):
    """A brain that draws random numbers while it runs (state noise, stochastic policies).

    Before every episode the runner calls `use_rng` with a Generator derived from the
    evaluation seed, then `reset()`. An episode's noise is thus fixed by the seed alone,
    whichever process runs it and whatever ran before.
    """

    def use_rng(self, rng: np.random.Generator) -> None:
        """Draw this episode's random numbers from `rng`."""


@runtime_checkable
class IBrainTemplate(Protocol):
    """Everything individuals share: built once per experiment, immutable, picklable.

    The constructor (see `IBrainTemplateClass`) may raise `TypeError` or `ValueError` for a pair
    of spaces it does not support; the experiment and the conformance checker report that as
    "cannot be built for ...", not as a crash.
    """

    @property
    def genome_size(self) -> int:
        """Number of float64 genes `make` expects."""

    def make(self, genome: NDArray[np.float64]) -> IBrain:
        """Build one brain from a genome of exactly `genome_size` genes."""


@runtime_checkable
class IStatefulTemplate(IBrainTemplate, Protocol):
    """A template with set-up state that a seed alone should not be trusted to rebuild.

    Run folders store `saved_state()` beside every genome and checkpoint; replay and resume call
    `restore` on a freshly built template, so they rebuild exactly the trained brains even if the
    way the state is generated changes between versions.
    """

    def saved_state(self) -> Mapping[str, NDArray[Any]]:
        """Arrays to store, by name (names are plain identifiers)."""

    def restore(self, state: Mapping[str, NDArray[Any]]) -> IBrainTemplate:
        """A template equal to this one but holding `state` (what `saved_state` returned)."""


@runtime_checkable
class IBrainBatch(Protocol):
    """Many brains stepped together: row `i` of every array belongs to brain `i`."""

    def reset(self, mask: NDArray[np.bool_] | None = None) -> None:
        """The rows where `mask` (bool, one per row) is True back to their initial state; every
        row when `mask` is None. Rows start episodes at different times in a batched runner."""

    def step(self, observations: Any) -> Any:
        """Observations stacked along axis 0 (as a gymnasium vector environment returns them)
        to actions stacked the same way. Every row steps, also one whose episode has ended (the
        runner ignores its action): a row's result must not depend on the other rows."""


@runtime_checkable
class IRandomBrainBatch(IBrainBatch, Protocol):
    """A batch whose rows draw random numbers (the batched form of `IRandomBrain`).

    Before a row starts an episode the runner hands it the Generator that `use_rng` would get
    for the same episode of the same genome, then resets the row: row `i` then draws exactly
    the numbers a lone brain of genome `i` draws, whatever the other rows do.
    """

    def use_rngs(self, rngs: Sequence[np.random.Generator | None]) -> None:
        """One entry per row: row `i` draws from `rngs[i]` from now on; None keeps its own."""


@runtime_checkable
class IBatchTemplate(IBrainTemplate, Protocol):
    """A template that can make a whole population as one batch (vectorised evaluation)."""

    def make_batch(self, genomes: NDArray[np.float64]) -> IBrainBatch:
        """Brains of `genomes` (shape `(n, genome_size)`), equal step by step to `make(g)`."""


@runtime_checkable
class IJaxTemplate(IBrainTemplate, Protocol):
    """A template whose brains JAX can trace: `episodes.vectorize = "jax"` (evo-jax) compiles a
    whole chunk's episodes, environment and brains, into one function.

    The three functions are pure (no Python state, no numpy random draws, no branching on array
    values) and act like `make(genome)` step for step: the parameters are the genome decoded,
    the state is what the brain keeps between steps (any pytree of arrays, `()` for none), and
    every value may be a JAX tracer. They see the arrays of one individual; the evaluator maps
    them over rows with `jax.vmap`. A template's module must not import jax at import time
    (jax is an optional extra): import it inside these functions.
    """

    def jax_unsupported(self) -> str | None:
        """None if this template (its config and spaces) runs in JAX; else why not, in one
        line naming the option or space (the run is refused with it)."""

    def jax_params(self, genome: Any) -> Any:
        """The genome (a JAX float array of `genome_size`) decoded into a pytree of arrays."""

    def jax_init_state(self, params: Any) -> Any:
        """The state at the start of every episode."""

    def jax_step(self, params: Any, state: Any, observation: Any) -> tuple[Any, Any]:
        """One step: (the next state, the action) for an observation as the JAX environment
        gives it; the action as that environment takes it (an integer for Discrete, a float
        array for Box)."""


class IBrainTemplateClass(Protocol):
    """What a plugin's `evo_brain_templates` hook returns: template classes, not instances."""

    config_model: type[BrainConfig]

    def __call__(self, config: Any, observation_space: gym.Space[Any],
                 action_space: gym.Space[Any], rng: np.random.Generator, /
                 ) -> IBrainTemplate: ...


class IOptimizer(Protocol):
    """ask/tell, as in evosax and pycma: higher fitness is better.

    State for checkpoints is a dict of numpy arrays and JSON values. A run folder may come from
    someone else, so `load_state` must never execute what it reads: an optimizer that cannot do
    without pickle (CMA-ES) signs its state with `evo_core.results.signing` and raises UserError
    on state whose signature does not check.
    """

    def ask(self) -> NDArray[np.float64]:
        """The next genomes to evaluate, shape (n, genome_size), C-contiguous float64."""

    def tell(self, fitnesses: NDArray[np.float64]) -> None:
        """The fitness of each genome of the last `ask`, in the same order."""

    def state(self) -> dict[str, Any]:
        """Everything needed to continue exactly, for checkpoints."""

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore what `state` returned."""


@runtime_checkable
class IDescriptorOptimizer(IOptimizer, Protocol):
    """An optimizer that works on behaviour as well as fitness (MAP-Elites, CMA-ME).

    The training loop calls `tell_descriptors` INSTEAD of `tell` for such an optimizer, with the
    raw fitnesses (mean episode returns, unshaped: neither the novelty nor the efficiency rank is
    applied, since the optimizer does its own use of behaviour) and the descriptors the episode
    runner recorded. A config that selects one without a `[behaviour]` table is refused before
    the run starts, because there would be no descriptors to tell.
    """

    def tell_descriptors(self, fitnesses: NDArray[np.float64],
                         descriptors: NDArray[np.float64]) -> None:
        """`fitnesses` of shape (n,) and `descriptors` of shape (n, D), float64, both in the
        order of the last `ask`; D is fixed for a run (`[behaviour]` fixes it)."""


class IOptimizerClass(Protocol):
    """What a plugin's `evo_optimizers` hook returns."""

    config_model: type[OptimizerConfig]

    def __call__(self, config: Any, genome_size: int, rng: np.random.Generator, /
                 ) -> IOptimizer: ...


@runtime_checkable
class IBehaviourState(Protocol):
    """An environment (or a wrapper) that offers its own state as a behaviour descriptor.

    With `[behaviour] source = "state"` the episode runner records `behaviour_state()` after
    every step. It uses the outermost object of the wrapper chain that implements this protocol,
    found once per runner; without one it falls back to built-in providers (MuJoCo: `qpos`;
    Atari: the console RAM). A maze, for example, returns the robot's position: what it did,
    not how it sensed it.
    """

    def behaviour_state(self) -> NDArray[np.float64]:
        """The current state as a 1-D float64 array of the same length at every step."""


@dataclass(frozen=True, eq=False)
class EvaluationResult:
    """Mean return over the episodes, total steps, how many episodes hit a NaN/inf, and the
    behaviour descriptor when the config has a `[behaviour]` table.

    `descriptor` is a 1-D float64 array whose length is fixed by the `[behaviour]` table (so
    descriptors of a population stack into one (n, D) array), or None without one. Results are
    equal when every field is, descriptors element for element: handlers are checked against
    the sequential one with `==`.
    """

    fitness: float
    steps: int
    nonfinite_episodes: int = 0
    descriptor: NDArray[np.float64] | None = field(default=None)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EvaluationResult):
            return NotImplemented
        if (self.fitness, self.steps, self.nonfinite_episodes) != (
                other.fitness, other.steps, other.nonfinite_episodes):
            return False
        if self.descriptor is None or other.descriptor is None:
            return self.descriptor is other.descriptor
        return bool(np.array_equal(self.descriptor, other.descriptor))

    __hash__ = None  # type: ignore[assignment]  # holds an array


@runtime_checkable
class IEvaluator(Protocol):
    """Scores genomes in one environment with one template; a handler keeps one per worker."""

    def evaluate(self, genome: NDArray[np.float64], seed: int) -> EvaluationResult:
        """Run the configured episodes of `genome`'s brain; `seed` fixes everything random."""

    def close(self) -> None:
        """Close the environment."""


@runtime_checkable
class IBatchEvaluator(IEvaluator, Protocol):
    """An evaluator that scores many genomes at once (batched brains, vector environments).
    Handlers give it each chunk in one call instead of one `evaluate` per genome."""

    def evaluate_many(self, genomes: NDArray[np.float64], seeds: NDArray[np.int64]
                      ) -> list[EvaluationResult]:
        """`evaluate(genomes[i], seeds[i])` for every row, in one batch; results in order."""


class IEvaluatorFactory(Protocol):
    """What a handler is given: small, picklable, and builds an evaluator wherever it runs."""

    def build(self, template: IBrainTemplate) -> IEvaluator: ...


@runtime_checkable
class IChunkEvaluatorFactory(IEvaluatorFactory, Protocol):
    """What a plugin's chunk evaluator class makes of a config (see `IChunkEvaluatorClass`)."""

    def check(self, template: IBrainTemplate) -> None:
        """Raise UserError, in one line, if this evaluator cannot run `template` (a capability
        missing, an option it does not support); called before any worker or run folder."""


class IChunkEvaluatorClass(Protocol):
    """What a plugin's `evo_chunk_evaluators` hook returns: a class selected by
    `episodes.vectorize = "<its config_model's type>"`, called with the config's environment,
    episodes table and behaviour table (None without one); the factory it makes builds an
    `IBatchEvaluator` wherever the handler evaluates.

    `environments` maps every environment id it evaluates to a line describing it (`evo
    list-environments` shows them); `register_environments()` registers those ids with
    gymnasium (cheaply, importing nothing heavy), so that the core can make them too: to probe
    their spaces, and for replay and `vectorize = "off"`."""

    config_model: type[VectorizerConfig]
    environments: Mapping[str, str]
    register_environments: Callable[[], None]

    def __call__(self, config: Any, environment: EnvironmentConfig, episodes: Any,
                 behaviour: Any, /) -> IChunkEvaluatorFactory: ...


class IHandler(Protocol):
    """Decides where evaluation runs; the only code that knows about processes.

    `evaluate` receives the template with every call: a handler that keeps templates in workers
    ships a template only when it differs from the one they hold, which lets an optimizer swap
    templates between generations (a curriculum, a growing network).
    """

    def evaluate(self, template: IBrainTemplate, genomes: NDArray[np.float64],
                 seeds: NDArray[np.int64]) -> list[EvaluationResult]:
        """Score each genome with its seed; results in input order."""

    def close(self) -> None:
        """Release workers and clusters; safe to call twice."""


class IHandlerClass(Protocol):
    """What a plugin's `evo_processing_handlers` hook returns."""

    config_model: type[ProcessingConfig]

    def __call__(self, config: Any, evaluators: IEvaluatorFactory, /) -> IHandler: ...


class IWrapperClass(Protocol):
    """What a plugin's `evo_wrappers` hook returns: a class (usually a `gymnasium.Wrapper`)
    whose `config_model` is the wrapper's table and which, called with a validated table and the
    environment so far, returns the wrapped environment.

    It is built in every process that evaluates, for every environment made there, so it must
    be cheap and must take everything from the config: the environment table is all that travels.
    A constructor that raises `ValueError`, `TypeError` or `gymnasium.error.Error` for an
    environment it cannot wrap is reported as the user's mistake, naming the table's position.
    """

    config_model: type[WrapperConfig]

    def __call__(self, config: Any, env: gym.Env[Any, Any], /) -> gym.Env[Any, Any]: ...
