"""Everything the core relies on from a plugin, declared as structural types.

A plugin need not inherit from anything. The core calls only what these protocols declare, and
every optional capability is its own `runtime_checkable` protocol that the core detects with
`isinstance` (never by inspecting signatures or probing attributes). They are typing_extensions'
protocols, so `isinstance` decides the same on every Python evo supports: as Python 3.12 does,
it looks members up on the object and its class without running its code (a property is not
called, and a name only `__getattr__` answers is not there), where 3.11's own protocols ask
`__getattr__`, so a brain that hands `use_rng` on through it would draw other numbers there:

==========================  ===================================================================
protocol                    what the core does with it
==========================  ===================================================================
`IBrainTemplate`            builds brains from genomes; shared by every individual of a run
`IBrain`                    `reset()` before every episode, `step(observation)` every step
`IRandomBrain`              gets a fresh seeded Generator before every episode (noisy brains)
`IStatefulTemplate`         its `saved_state()` arrays go into every run-folder file; replay and
                            resume rebuild the template with `restore(state)` (CTRNN masks)
`IArrayBrain`               the brain's math written once, as array functions over rows: the
                            core derives the lone brain, the batch and the JAX form from it
`IGroupedArrayBrain`        an `IArrayBrain` whose functions broadcast over leading row axes: the
                            batch steps a genome's rows as a group sharing its parameters
`IBatchTemplate`            `make_batch(genomes)` steps a whole population at once (a batch of
                            its own; an `IArrayBrain` gets one derived)
`IJaxTemplate`              pure functions of (parameters, state, observation) that JAX traces:
                            a chunk evaluated in one compiled function (evo-jax)
`IOnnxTemplate`             gives a genome's brain as an ONNX model that steps as `make()`
                            does (`evo export`; an `IArrayBrain` gets one derived)
`INetworkGraph`             describes a genome as a graph of nodes and connections
                            (`NetworkGraph`), which `evo plot RUN --network` draws (NEAT)
`IRandomBrainBatch`         a batch whose rows draw random numbers gets one Generator per row
`IReloadableBatch`          a batch that loads other genomes into some of its rows: a row whose
                            episodes end takes the next candidate at once (batched evaluation)
`ISubsetBatch`              a batch that gives a batch of some of its rows: once a chunk has no
                            job left, only the rows still running step (batched evaluation)
`IBatchEvaluator`           scores a whole chunk of genomes in one call (`episodes.vectorize`)
`IChunkEvaluatorFactory`    the evaluator factory of an `episodes.vectorize` value (the core's
                            modes and a plugin's), which checks the template before the run
`IOptimizer`                ask/tell, state for checkpoints (opaque state: `seal_state`)
`IRewindableOptimizer`      gives its state as it was before the last ask: its state is then
                            taken only when a checkpoint is written, not after every generation
`IDescriptorOptimizer`      is told each genome's behaviour descriptor with its raw fitness
                            (quality-diversity); needs a `[behaviour]` table
`IDescriptorSizeCheck`      checks the descriptor length `[behaviour]` gives before the run
`IVaryingPopulationConfig`  an optimizer config whose optimizer's `ask()` may return another
                            number of genomes each generation (restarts): the memory check
                            takes its largest
`IObservationNormalization  an optimizer config whose settings need observations normalised
Config`                     by running statistics (ARS V2): refused without
                            `observation_normalization = "running"`
`IHandler`                  evaluates a population wherever it likes (processes, clusters)
`IContextHandler`           also takes a generation's `EvaluationContext` (the observation
                            normaliser) and hands it to the evaluators: needed by
                            `observation_normalization = "running"` (the core's handlers)
`IContextEvaluator`         an evaluator that is handed that context before a chunk (the core's
                            and evo-jax's), and returns each candidate's observation statistics
`IInProcessHandler`         evaluates in the calling process: templates need not pickle
`IBehaviourState`           an environment or wrapper offering its own state as the behaviour
                            (`[behaviour] source = "state"`)
`IPlanarMap`                an environment that is a 2-D map (walls, start, goal) whose
                            behaviour state is the agent's (x, y): `evo plot RUN --maze` (mazes)
`IObservationLabels`        an environment that names each number of its observation (with
                            its unit): `evo replay --render --show-observation` writes the
                            names beside the observation's cells instead of their indices
`IWrapperClass`             wraps the environment as an `environment.wrappers` entry asks
`IRun`                      the run an event hook receives (`run.path`, `run.config`, `run.log`,
                            its checkpointed optimizer state, `write_file` for a plugin's files,
                            `write_archive_figure` for a QD archive's `ArchiveGrid`)
`ITracker`                  a tracker's object for one run (`record` each generation's row,
                            `close` with how training ended), opened by `tracker_hooks`
==========================  ===================================================================

Discovery checks each class a plugin returns against its kind's protocol with `issubclass`
(`IBrainFactory` for templates, `IOptimizer`, `IHandler`), so a class that lacks a method is
reported when the plugin loads, naming the plugin, not when a run first calls it.

Templates and brains are split because shared set-up (sparse masks, index maps) must exist once
per experiment and travel to worker processes by pickle, while a brain is cheap per-individual
state. A template is therefore immutable and picklable.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray
from typing_extensions import Protocol, runtime_checkable

from evo_core.contract.config_models import (
    BrainConfig,
    EnvironmentConfig,
    OptimizerConfig,
    ProcessingConfig,
    TrackerConfig,
    VectorizerConfig,
    WrapperConfig,
)
from evo_core.contract.observation_statistics import EvaluationContext, ObservationStatistics

__all__ = ["IBrain", "IRandomBrain", "IBrainFactory", "IBrainTemplate", "IBrainTemplateClass",
           "IStatefulTemplate", "IArrayBrain", "IGroupedArrayBrain", "IBrainBatch",
           "IRandomBrainBatch",
           "IReloadableBatch", "IJaxEnvironment",
           "ISubsetBatch",
           "IBatchTemplate", "IJaxTemplate", "IOnnxTemplate", "IChunkEvaluatorFactory",
           "IChunkEvaluatorClass", "IOptimizer", "IRewindableOptimizer", "IDescriptorOptimizer",
           "IDescriptorSizeCheck", "IObservationNormalizationConfig", "IOptimizerClass",
           "IGenomeLayoutTemplate",
           "ILayoutOptimizerClass", "IEvaluator", "IBatchEvaluator",
           "IEvaluatorFactory", "IHandler", "IInProcessHandler", "IHandlerClass",
           "IContextHandler", "IContextEvaluator",
           "IBehaviourState", "IPlanarMap", "IObservationLabels", "IWrapperClass",
           "EvaluationResult", "IRun", "ITracker",
           "IRunConfig",
           "ITrackersTable", "ITraceableBrain", "INetworkGraph", "NetworkGraph", "NodeKind",
           "ArchiveGrid"]


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
class ITraceableBrain(IBrain, Protocol):
    """A brain that can show its internal state, for `evo replay --trace` (optional).

    After every step the tracer calls `trace_state()` and stores each array as one row of the
    trace file, so each key must give a 1-D float array of the same length at every step (a
    CTRNN's potentials and outputs, an LSTM's hidden and cell states). It is called only while
    tracing, never in training, so it may compute what the step did not keep.
    """

    def trace_state(self) -> dict[str, NDArray[np.float64]]:
        """Name -> 1-D array of the state after the last step (copies: the tracer keeps them)."""


@runtime_checkable
class IBrainFactory(Protocol):
    """The methods of a brain template, which its class shows (discovery checks a template
    class against this with `issubclass`; `genome_size` may be set on the instance)."""

    def make(self, genome: NDArray[np.float64]) -> IBrain:
        """Build one brain from a genome of exactly `genome_size` genes."""


@runtime_checkable
class IBrainTemplate(IBrainFactory, Protocol):
    """Everything individuals share: built once per experiment, immutable, picklable.

    The constructor (see `IBrainTemplateClass`) may raise `TypeError` or `ValueError` for a pair
    of spaces it does not support; the experiment and the conformance checker report that as
    "cannot be built for ...", not as a crash.
    """

    @property
    def genome_size(self) -> int:
        """Number of float64 genes `make` expects."""


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
class IArrayBrain(IBrainTemplate, Protocol):
    """A brain written once: array functions over a leading axis of rows, against an array
    namespace `xp` that is numpy or `jax.numpy`.

    From these functions the core derives every form a run needs (`authoring/array_brain.py`,
    `authoring/array_jax.py`): the lone brain (`make()`), the batch that steps a chunk of genomes
    together (reset by mask, genomes loaded into rows, a subset of rows, a Generator per row),
    the JAX form of `vectorize = "jax"`, and the trace `--trace` and `--show-neurons` show. A
    batch row and the lone brain run the same operations on the same rows, so they agree bit
    for bit.

    Parameters and states are dicts of arrays whose first axis is the rows (row `i` belongs to
    genome `i`); what every row shares (masks, layer shapes) stays on the template. The
    functions are pure: they return new arrays and write into none they are given (JAX arrays
    cannot be written; numpy ones may be the batch's). An augmented assignment (`x += y`) on an
    array the function made itself is fine: numpy writes in place, JAX makes a new array, and
    the numbers are the same. They branch on the config, never on array values, so JAX can
    trace them. Observations reach `forward` encoded by `encoder` (a
    float array of rows x `encoder.size`), and its outputs (rows x `decoder.size`) become
    actions through `decoder`.
    """

    @property
    def observation_space(self) -> gym.Space[Any]: ...

    @property
    def action_space(self) -> gym.Space[Any]: ...

    @property
    def encoder(self) -> Any:
        """The observation encoder (`evo_core.ObservationEncoder`) the inputs come through."""

    @property
    def decoder(self) -> Any:
        """The action decoder (`evo_core.ActionDecoder`) the outputs go through."""

    @property
    def noise_size(self) -> int:
        """How many standard normal numbers each row draws per step (0: none, and the brain
        is given no Generator). The core draws them from each row's stream, so a row draws
        what the lone brain of its genome draws in the same episode."""

    def params(self, xp: Any, genomes: Any) -> dict[str, Any]:
        """Genomes (rows x `genome_size`) decoded into the brain's parameters."""

    def initial_state(self, xp: Any, params: dict[str, Any]) -> dict[str, Any]:
        """The state every episode starts from (`{}` for a brain without one)."""

    def forward(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any,
                noise: Any) -> tuple[dict[str, Any], Any]:
        """One step of every row: (the next state, the outputs) from the encoded inputs;
        `noise` is rows x `noise_size` standard normal numbers, or None when it is 0."""

    def trace(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any
              ) -> dict[str, Any]:
        """What a trace shows after a step, by name, each rows x something: the state, or
        what is computed from it and the step's inputs (a network's layer activations)."""


@runtime_checkable
class IGroupedArrayBrain(IArrayBrain, Protocol):
    """An `IArrayBrain` whose `initial_state` and `forward` work over any number of leading row
    axes, broadcasting them, so the batch steps the rows of one genome (a candidate's
    episodes) as a group that reads one copy of its parameters (`authoring/array_grouped.py`;
    a swing-up MLP's step about twice as fast).

    The core then calls `params` with genomes as before (genomes x `genome_size`) and puts an
    axis of one after the first of every array it returns; `initial_state` gets those
    (groups x 1 x ...) and returns its arrays with the same two leading axes; `forward` gets
    them, the state and the encoded inputs as groups x slots x ..., and the noise so too.
    `matvec_of(xp)`, elementwise arithmetic, `xp.tanh` and adding a bias broadcast; what
    names one row axis does not: write `z[..., :n]`, not `z[:, :n]`, and take shapes from
    the trailing axes or `shape[:-k]`, not `shape[0]`. `check_brain` compares the grouped
    batch with the lone brains, rows of one genome included. The declaration vouches for the
    functions of its class: a subclass that overrides `initial_state` or `forward` is stepped
    row by row unless it declares again."""

    def broadcasts_rows(self) -> Literal[True]:
        """Declares the capability (`make_batch` checks the template for it)."""


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
class IReloadableBatch(IBrainBatch, Protocol):
    """A batch that can replace the brains of some rows (the batched runner's refill).

    The batched runner keeps fewer rows than a chunk has episodes: when a row's episodes end it
    takes the chunk's next candidate, and this loads that candidate's genome into the row
    instead of building a new batch. A batch without it still works: the runner then gives it
    one row per candidate (or per episode) and never changes a row's genome.
    """

    def load(self, rows: NDArray[np.intp], genomes: NDArray[np.float64]) -> None:
        """Row `rows[i]` becomes the brain of `genomes[i]`, equal bit for bit to the row that
        `make_batch` would have built for it (and so to `make(genomes[i])`); `rows` are
        distinct. The other rows are left as they are; the runner resets the loaded rows (and
        hands them their Generators) before they step."""


@runtime_checkable
class ISubsetBatch(IBrainBatch, Protocol):
    """A batch that can give a batch of only some of its rows (the batched runner's tail).

    Once a chunk has no job left to hand out, its rows end one by one while the batch would
    still step all of them; the runner then keeps stepping only the rows that still run, in a
    batch this makes, each time their number has halved. A batch without it still works: every
    row steps to the chunk's end.
    """

    def subset(self, rows: NDArray[np.intp]) -> IBrainBatch:
        """A batch whose row `i` continues row `rows[i]` of this one bit for bit: its brain,
        its state and its Generator, and every capability this batch has (`load`,
        `use_rngs`, `subset`). `rows` are distinct and sorted. This batch is not stepped
        again, so the new one may share its arrays."""


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


@runtime_checkable
class IOnnxTemplate(IBrainTemplate, Protocol):
    """A template whose brains have an ONNX form: `evo export` writes a run's champion as a
    model that onnxruntime (or any ONNX runtime) steps as `make(genome)` does, one call per
    step. An `IArrayBrain` gets this form derived from its array functions
    (`authoring/array_onnx.py`); another template declares it with these two methods.

    The model (docs/export.md): the input `observation`, float64, of the observation space's
    shape (one observation as the environment gives it, cast to float64; evo puts the cast and
    any observation normaliser in front); with state, the input `state_in`, float64 of shape
    (S,); the outputs `action` (the action space's shape and dtype: what `step` returns),
    `output` (float64, the brain's outputs before its action decoder, one vector) and, with
    state, `state_out` (S,), the next step's `state_in`. Its metadata holds `evo.initial_state`
    (the state `reset()` starts an episode from, a JSON list of S numbers) and
    `evo.state_layout` (which of the S numbers are which state array).
    """

    def onnx_unsupported(self) -> str | None:
        """None if this template (its config and spaces) has an ONNX form; else why not, in
        one line naming the option or space (the export is refused with it)."""

    def onnx_model(self, genome: NDArray[np.float64]) -> Any:
        """The brain of `genome` as an `onnx.ModelProto` with the interface above."""


#: What a node of a `NetworkGraph` is: where the drawing puts it (inputs left, outputs right)
NodeKind = Literal["input", "hidden", "output"]


@dataclass(frozen=True, eq=False)
class NetworkGraph:
    """A genome as the network it expresses: nodes by key, and connections between them.

    `keys` (distinct) name the nodes, `kinds` says which are inputs, hidden nodes and outputs,
    and `labels`, when given, one text per node ("" for none) that the drawing writes beside
    it (an input's observation, an output's action). Connection `i` joins node
    `sources[i]` to node `targets[i]` (keys of `keys`) with `weights[i]`; `enabled[i]` False
    is a gene the network does not express (NEAT's disabled genes), kept so that a drawing
    may show it. Arrays, one entry per node or connection; checked when made, so a template
    that describes an impossible graph is told where, not the drawing.
    """

    keys: NDArray[np.int64]
    kinds: tuple[NodeKind, ...]
    sources: NDArray[np.int64]
    targets: NDArray[np.int64]
    weights: NDArray[np.float64]
    enabled: NDArray[np.bool_]
    labels: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        for name, dtype in (("keys", np.int64), ("sources", np.int64), ("targets", np.int64),
                            ("weights", np.float64), ("enabled", np.bool_)):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=dtype))
        nodes, links = len(self.keys), len(self.sources)
        if self.keys.shape != (nodes,) or len(np.unique(self.keys)) != nodes:
            raise ValueError("NetworkGraph.keys: must be distinct node keys, one per node")
        if len(self.kinds) != nodes or not set(self.kinds) <= {"input", "hidden", "output"}:
            raise ValueError("NetworkGraph.kinds: one of input, hidden, output per node")
        if self.labels is not None and len(self.labels) != nodes:
            raise ValueError("NetworkGraph.labels: one text per node, or None")
        if any(getattr(self, name).shape != (links,)
               for name in ("sources", "targets", "weights", "enabled")):
            raise ValueError("NetworkGraph: sources, targets, weights and enabled must be "
                             "1-D arrays of one entry per connection")
        if not (np.isin(self.sources, self.keys).all() and np.isin(self.targets,
                                                                   self.keys).all()):
            raise ValueError("NetworkGraph: every connection's source and target must be one "
                             "of its keys")


@dataclass(frozen=True, eq=False)
class ArchiveGrid:
    """A quality-diversity archive as its figure shows it (evo-qd's archive.png, drawn by the
    core through `IRun.write_archive_figure`): the best objective of each cell of a grid over
    the archive's first one or two descriptor values, NaN for an empty cell, and each value's
    range; with more descriptor values, a cell holds the best over the others. `generation`,
    `filled` and `cells` (the whole archive's, over all `descriptors` values) are what the
    title says. Checked when made, so an optimizer that describes an impossible grid is told
    where, not the drawing."""

    objective: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    generation: int
    filled: int
    cells: int
    descriptors: int

    def __post_init__(self) -> None:
        for name in ("objective", "lower", "upper"):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=np.float64))
        dimensions = self.objective.ndim
        if dimensions not in (1, 2) or 0 in self.objective.shape:
            raise ValueError("ArchiveGrid.objective: a grid of one or two descriptor values, "
                             "one entry per cell")
        if self.lower.shape != (dimensions,) or self.upper.shape != (dimensions,) or not (
                np.isfinite(self.lower).all() and np.isfinite(self.upper).all()
                and (self.lower < self.upper).all()):
            raise ValueError("ArchiveGrid.lower, upper: each grid dimension's finite range, "
                             "lower below upper")
        if not 0 <= self.filled <= self.cells or self.descriptors < dimensions \
                or self.generation < 0:
            raise ValueError("ArchiveGrid: filled within 0..cells, descriptors at least the "
                             "grid's dimensions, generation >= 0")


@runtime_checkable
class INetworkGraph(IBrainTemplate, Protocol):
    """A template whose genomes describe a network of their own topology (NEAT), and that
    can say what that network is (optional): `evo plot RUN --network` draws the run's
    champion from it. A brain of fixed layers has no graph worth drawing node by node, and
    does not declare it."""

    def network_graph(self, genome: NDArray[np.float64]) -> NetworkGraph:
        """The network `make(genome)` computes: its present nodes, and its connections
        between them, the ones it does not express with `enabled` False."""


class IBrainTemplateClass(Protocol):
    """What a plugin's `evo_brain_templates` hook returns: template classes, not instances."""

    config_model: type[BrainConfig]

    def __call__(self, config: Any, observation_space: gym.Space[Any],
                 action_space: gym.Space[Any], rng: np.random.Generator, /
                 ) -> IBrainTemplate: ...


@runtime_checkable
class IOptimizer(Protocol):
    """ask/tell, as in evosax and pycma: higher fitness is better.

    State for checkpoints is a dict of numpy arrays and JSON values. A run folder may come from
    someone else, so `load_state` must never execute what it reads. An optimizer whose state has
    no array form (pycma's strategy, pyribs' scheduler) stores it with `evo_core.seal_state` and
    reads it back with `evo_core.open_state`, which unpickles only what this user's evo signed
    and raises UserError otherwise (CMA-ES and evo-qd do so).
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
class IRewindableOptimizer(IOptimizer, Protocol):
    """An optimizer whose state is costly to take (pycma's, pickled and signed) and that can
    give it as it was before its last `ask()`.

    Training takes an optimizer's state for the checkpoint of the last finished generation; an
    interrupt during the next generation's evaluation writes that checkpoint. Without this
    capability the state is taken after every generation in case; with it, only when a
    checkpoint is written, and an interrupt between `ask()` and `tell()` asks for this.
    """

    def state_before_ask(self) -> dict[str, Any]:
        """What `state()` returned just before the last `ask()` (the state itself when no
        `ask()` waits for its `tell()`); loading it and asking again gives the same genomes."""


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


@runtime_checkable
class IDescriptorSizeCheck(Protocol):
    """An optimizer whose config fixes the descriptor's length D (an archive's bounds, one pair
    per value). evo calls `check_descriptor_size` with the length the `[behaviour]` table gives,
    before the run folder exists, so a mismatch is one line instead of an error after the first
    generation."""

    def check_descriptor_size(self, size: int) -> None:
        """Raise `ValueError` with a one-line message naming the optimizer's field when
        descriptors of `size` values cannot be told."""


@runtime_checkable
class IVaryingPopulationConfig(Protocol):
    """An optimizer config whose optimizer's `ask()` returns a different number of genomes
    from one generation to the next (CMA-ES's IPOP and BIPOP restarts), never more than
    `largest_population`.

    The generation loop, the evaluation seeds, the handlers, the hall of fame, novelty and
    `[stop]` take the number from each `ask()`; only the memory check, made before the optimizer
    exists, reads it from the config: it holds the machine to `largest_population` genomes
    instead of `population_size`, and names `population_growth` when it refuses them.
    """

    @property
    def largest_population(self) -> int:
        """The most genomes one `ask()` may return."""

    @property
    def population_growth(self) -> str:
        """The settings that make the population grow, as the user writes them
        (`optimizer.restarts = 'ipop' with max_restarts = 9`), for the refusal's line; empty
        when these settings keep it at `population_size`."""


@runtime_checkable
class IObservationNormalizationConfig(Protocol):
    """An optimizer config whose settings only mean what they say with observations normalised
    by running statistics (ARS's V2, Mania et al. 2018): evo refuses such settings in one line,
    before the run folder exists, unless `episodes.observation_normalization = "running"`.
    The normalisation stays the episodes' job; the optimizer only names what needs it."""

    @property
    def needs_running_observations(self) -> str:
        """The settings that need the normaliser, as the user writes them
        (`optimizer.version = "v2"`), for the refusal's line; empty when these settings do not."""


class IOptimizerClass(Protocol):
    """What a plugin's `evo_optimizers` hook returns."""

    config_model: type[OptimizerConfig]

    def __call__(self, config: Any, genome_size: int, rng: np.random.Generator, /
                 ) -> IOptimizer: ...


@runtime_checkable
class IGenomeLayoutTemplate(Protocol):
    """A template whose genome has a structure that only an optimizer which reads it can
    search: NEAT's node and connection tables, where a gene's meaning depends on its row and
    its flags, and a perturbation of every gene (CMA-ES) would be no search at all.

    evo pairs it with an `ILayoutOptimizerClass` whose `layout_type` its `genome_layout` is an
    instance of, and refuses any other pairing in one line before the run folder exists (a
    layout brain with another optimizer, a layout optimizer with another brain).
    """

    @property
    def genome_layout(self) -> object:
        """What the optimizer needs to read and write this template's genomes (the tables'
        capacity, the task's inputs and outputs, what a new gene starts at)."""


@runtime_checkable
class ILayoutOptimizerClass(Protocol):
    """An optimizer class that searches over a brain's genome layout (NEAT): built with the
    template's `genome_layout`, which is an instance of `layout_type`, as a keyword argument
    besides `IOptimizerClass`'s arguments."""

    config_model: type[OptimizerConfig]
    #: the class of the `genome_layout` this optimizer reads (the brain's plugin defines it)
    layout_type: type[Any]

    def __call__(self, config: Any, genome_size: int, rng: np.random.Generator, /, *,
                 layout: Any) -> IOptimizer: ...


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


@runtime_checkable
class IVectorBehaviourState(Protocol):
    """A vector environment (`episodes.vectorize = "native"`) that offers the state of each of
    its environments, so the `state` behaviour source works on its rows too (without it, only
    "sync" and "off" can record a state: a vector environment has no per-row object to ask).
    Row i of the array is environment i's `IBehaviourState.behaviour_state()`, read after every
    step, before the next step's autoreset."""

    def behaviour_states(self) -> NDArray[np.float64]:
        """num_envs x width float64: every environment's current state."""


@runtime_checkable
class IPlanarMap(IBehaviourState, Protocol):
    """An environment that is a map of the plane: an agent moves among wall segments from a
    start toward a goal, and its behaviour state is where it is, (x, y) in the map's
    coordinates (a length-2 float64 array).

    `evo plot RUN --maze` draws any such environment, found in the wrapper chain as
    `IBehaviourState` is, without knowing its module: the walls, the start and the goal, the
    champion's path (its behaviour state after the reset and after each step of a replayed
    episode) and, for novelty search on the final behaviour state, the archive's final
    positions. The arrays are read once per figure; they need not be copies the caller may
    keep, and the caller changes none of them.
    """

    def walls(self) -> NDArray[np.float64]:
        """Every wall as a segment `(x1, y1, x2, y2)`: an (n, 4) float64 array."""

    def start_position(self) -> NDArray[np.float64]:
        """Where every episode starts, (x, y): a length-2 float64 array."""

    def goal_position(self) -> NDArray[np.float64]:
        """The goal, (x, y): a length-2 float64 array."""

    def y_points_down(self) -> bool:
        """Whether the map's y grows downwards, as on a screen (Lehman and Stanley's maze
        files): the figure then draws it so, and looks as the map's authors drew it."""


@runtime_checkable
class IObservationLabels(Protocol):
    """An environment (or a wrapper) that names each number of its observation, flattened, in
    order, with its unit or scale where it has one (`"x / 4.8 m"`: the cart's position over
    4.8 m).

    `evo replay --render --show-observation` writes the names beside the observation's cells,
    found in the wrapper chain as `IBehaviourState` is (so a wrapper that changes the
    observation names its own); names of another count than the observation's numbers are
    not used (indices are).
    """

    def observation_labels(self) -> tuple[str, ...]:
        """One short name per number of the observation."""


@runtime_checkable
class IJaxEnvironment(Protocol):
    """A gymnasium environment that also has a JAX form: evo-jax's `episodes.vectorize =
    "jax"` compiles a chunk's episodes with these two functions for the ids it lists as evo's
    own (`evo list-environments`), made with the config's kwargs, so the numpy and the JAX form
    are one environment with one set of keywords (evo's `evo/CartPoleSwingUp-v0` is one).

    Both are pure and traceable (no Python state, no numpy random draws, no branching on array
    values; jax imported inside them), see one environment (the rollout maps them over rows),
    and step as the environment's `reset` and `step` do, in JAX's float type. The state is any
    pytree of arrays; `key` is a JAX random key, the only source of randomness. The episode's
    time limit is the registered `max_episode_steps`, which the rollout applies."""

    def jax_reset(self, key: Any) -> tuple[Any, Any]:
        """(the first observation, the state) of an episode started from `key`."""

    def jax_step(self, key: Any, state: Any, action: Any) -> tuple[Any, Any, Any, Any, Any]:
        """(observation, state, reward, terminated, truncated) after `action`."""


@dataclass(frozen=True, eq=False)
class EvaluationResult:
    """Mean return over the episodes, total steps, how many episodes hit a NaN/inf, the
    behaviour descriptor when the config has a `[behaviour]` table, and the statistics of the
    observations the brain was given with `observation_normalization = "running"`.

    `descriptor` is a 1-D float64 array whose length is fixed by the `[behaviour]` table (so
    descriptors of a population stack into one (n, D) array), or None without one.
    `observations` pools the candidate's episodes in episode order
    (contract/observation_statistics.py), or is None when the normaliser is off. Results are
    equal when every field is, arrays element for element: handlers are checked against the
    sequential one with `==`.
    """

    fitness: float
    steps: int
    nonfinite_episodes: int = 0
    descriptor: NDArray[np.float64] | None = field(default=None)
    observations: ObservationStatistics | None = field(default=None)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EvaluationResult):
            return NotImplemented
        if (self.fitness, self.steps, self.nonfinite_episodes) != (
                other.fitness, other.steps, other.nonfinite_episodes):
            return False
        if self.observations != other.observations:
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


@runtime_checkable
class IContextEvaluator(IEvaluator, Protocol):
    """An evaluator that takes a generation's `EvaluationContext`: the observation normaliser
    of `observation_normalization = "running"`. A handler hands it the context before every
    chunk; with a normaliser, the evaluations that follow give the brains the normalised
    observations and return the statistics of the raw ones (`EvaluationResult.observations`,
    each candidate's episodes pooled in episode order with `combine`)."""

    def use_context(self, context: EvaluationContext) -> None:
        """The context of the evaluations that follow, until the next call."""


class IEvaluatorFactory(Protocol):
    """What a handler is given: small, picklable, and builds an evaluator wherever it runs."""

    def build(self, template: IBrainTemplate) -> IEvaluator: ...


@runtime_checkable
class IChunkEvaluatorFactory(IEvaluatorFactory, Protocol):
    """What a chunk evaluator class makes of a config (see `IChunkEvaluatorClass`)."""

    def check(self, template: IBrainTemplate) -> None:
        """Raise UserError, in one line, if this evaluator cannot run `template` (a capability
        missing, an option it does not support); called before any worker or run folder."""


class IChunkEvaluatorClass(Protocol):
    """What an `evo_chunk_evaluators` hook returns: a class selected by `episodes.vectorize =
    "<its config_model's type>"`, called in the main process with its config (a
    `VectorizerConfig`), the config's environment, episodes table and behaviour table (None
    without one); the factory it makes builds an `IEvaluator` (usually an `IBatchEvaluator`)
    wherever the handler evaluates. The core's own modes (off, sync, native, envpool) are such
    classes too (`evo_core/evaluation/vectorizers.py`). The call may refuse a config it cannot
    run with a one-line UserError, before the brain's template is built; `check` refuses what
    needs the template.

    `environments` maps every environment id it evaluates to a line describing it (`evo
    list-environments` shows them); `register_environments()` registers those ids with
    gymnasium (cheaply, importing nothing heavy), so that the core can make them too: to probe
    their spaces, and for replay and `vectorize = "off"`."""

    config_model: type[VectorizerConfig]
    environments: Mapping[str, str]
    register_environments: Callable[[], None]

    def __call__(self, config: Any, environment: EnvironmentConfig, episodes: Any,
                 behaviour: Any, /) -> IChunkEvaluatorFactory: ...


@runtime_checkable
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


@runtime_checkable
class IContextHandler(IHandler, Protocol):
    """A handler that evaluates with a generation's `EvaluationContext` (the observation
    normaliser of `observation_normalization = "running"`): it hands the context to each
    evaluator (`IContextEvaluator.use_context`) before the chunks it evaluates. A run with that
    setting refuses, before it starts, a handler that does not declare this."""

    def evaluate_in_context(self, template: IBrainTemplate, genomes: NDArray[np.float64],
                            seeds: NDArray[np.int64], context: EvaluationContext
                            ) -> list[EvaluationResult]:
        """`evaluate`, every evaluator handed `context` first."""


@runtime_checkable
class IInProcessHandler(IHandler, Protocol):
    """A handler that evaluates in the calling process, so its templates never travel: a
    template that pickle cannot handle still works with it. For every other handler the
    experiment checks, before the run folder is made, that the template pickles (the contract
    lets a handler send it to worker processes), naming what does not."""

    def evaluates_in_process(self) -> Literal[True]:
        """Declares the capability (the experiment checks the handler class for it)."""


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


class ITrackersTable(Protocol):
    """The `[trackers]` table of a run's config, as a tracker reads it."""

    def enabled(self) -> Mapping[str, TrackerConfig]:
        """The configured trackers by name (`[trackers.NAME]`), each its validated table."""


class IRunConfig(Protocol):
    """A run's validated config as the event hooks see it (an `ExperimentConfig`)."""

    @property
    def trackers(self) -> ITrackersTable: ...

    @property
    def optimizer(self) -> OptimizerConfig: ...

    @property
    def provenance(self) -> Mapping[str, Any] | None:
        """What made the run (`run_id`, versions), or None in a config that was never run."""

    def model_dump(self, *, mode: str = ..., exclude: Any = ...) -> dict[str, Any]:
        """The config as plain data (pydantic's `model_dump`)."""


class IRun(Protocol):
    """The run an event hook receives (`evo_core.api.Run` implements it): its folder, its
    config, its log, and what its last checkpoint holds for the optimizer."""

    @property
    def path(self) -> Path:
        """The run folder."""

    @property
    def config(self) -> IRunConfig: ...

    @property
    def log(self) -> list[dict[str, int | float]]:
        """log.csv, one dict of numbers per finished generation."""

    def checkpointed_optimizer(self) -> tuple[int, dict[str, Any]] | None:
        """The generation of the last checkpoint and the optimizer state it holds (what
        `IOptimizer.state()` returned), or None before the first checkpoint."""

    def write_file(self, name: str, data: bytes | Callable[[BinaryIO], None]) -> Path:
        """Write a plugin's own file `name` into the run folder, atomically; its path."""

    def write_archive_figure(self, archive: ArchiveGrid) -> Path:
        """Draw `archive` into the run folder's archive.png, in the task's own terms (on a
        map, over its walls, start and goal, when the descriptor is an `IPlanarMap`'s final
        position), sized and lettered as every figure of evo; its path."""


@runtime_checkable
class ITracker(Protocol):
    """A tracker's object for one run training in this process (`tracker_hooks` opens it when
    the run starts): it sees every finished generation and is closed once when training here
    ends. It only observes: nothing it does changes the run's results."""

    def record(self, row: dict[str, Any]) -> None:
        """A generation finished; `row` is its log.csv row as numbers."""

    def close(self, status: str) -> None:
        """Training in this process ended: "FINISHED" (its last generation), "KILLED" (an
        interrupt) or "FAILED" (an error); its finished generations are checkpointed."""
