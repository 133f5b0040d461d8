"""Wiring: a validated config becomes a template, an optimizer and a runner spec.

Nothing here names a particular brain, optimizer, handler or way of evaluating: each is looked
up in the registry by the `type` of its table, and the evaluator factory by the value of
`episodes.vectorize` (the core's modes and a plugin's alike). Each part is built with the guards
of its building; the checks of the config against the built parts are
`running/config_checks.py`'s, called once, so the config flows down from here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evo_core.authoring.memory import check_population_fits, format_bytes, machine_memory
from evo_core.config.schema import ExperimentConfig
from evo_core.contract.protocols import (
    IBrainTemplate,
    IChunkEvaluatorFactory,
    IEvaluatorFactory,
    IGenomeLayoutTemplate,
    IHandler,
    ILayoutOptimizerClass,
    IOptimizer,
    IVaryingPopulationConfig,
)
from evo_core.environments import probe_spaces
from evo_core.errors import UserError
from evo_core.hooks.registry import Component, Registry
from evo_core.interrupts import describe_raised, is_interrupt, marked_interrupts
from evo_core.running.config_checks import check_config, in_config
from evo_core.running.seeding import Streams
from evo_core.running.worker_plugins import with_worker_plugins
from evo_core.search.shaping import Shaping

__all__ = ["Experiment", "build_experiment", "build_optimizer", "build_template"]


@dataclass
class Experiment:
    config: ExperimentConfig
    registry: Registry
    brain: Component
    template: IBrainTemplate
    optimizer: IOptimizer
    streams: Streams
    runner_spec: IEvaluatorFactory
    #: what turns raw fitness into the optimizer's score (None: the raw fitness is told)
    shaping: Shaping | None = None
    #: the behaviour descriptor's length (None without a [behaviour] table)
    descriptor_size: int | None = None
    #: the entries of the normalised observation (None unless observation_normalization =
    #: "running")
    observation_size: int | None = None

    def make_handler(self) -> IHandler:
        """The configured handler: callers make it before the run folder. The template is
        known to suit it (`running/config_checks.py` checked its pickling when the experiment
        was built)."""
        component = self.registry.get("processing", self.config.processing.type)
        handler: IHandler = component.cls(self.config.processing, self.runner_spec)
        return handler


def build_template(config: ExperimentConfig, registry: Registry, streams: Streams,
                   source: str = "config") -> tuple[Component, IBrainTemplate]:
    """The brain's component and its template for the config's environment, built from the
    seeded template stream (so a replay builds the same one). `source` names the config file."""
    brain = registry.get("brain", config.brain.type)
    plugin = f"brain {brain.name!r} ({f'{brain.distribution} {brain.version}'.strip()})"
    # the environment's and the template's code run here: their own KeyboardInterrupt or
    # sys.exit() is their error, not the user's Ctrl-C
    with marked_interrupts():
        spaces = probe_spaces(config.environment, source)
        try:
            template: IBrainTemplate = brain.cls(config.brain, spaces[0], spaces[1],
                                                 streams.template)
            size = template.genome_size
        except MemoryError as exc:  # e.g. numpy's "Unable to allocate 74.5 GiB for an array"
            available = machine_memory()
            has = f"; this machine has {format_bytes(available)}" if available else ""
            raise UserError(f"{plugin} is too large for this machine's memory "
                            f"({str(exc) or 'MemoryError'}{has}); make it smaller in the "
                            "[brain] table") from None
        except BaseException as exc:
            if is_interrupt(exc):
                raise
            raise UserError(f"{plugin} cannot be built for {config.environment.id}: "
                            f"{describe_raised(exc)}") from None
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise UserError(f"{plugin} reports genome_size {size!r}; it must be a positive integer "
                        "(a bug in the plugin: report it to its author)")
    return brain, template


def build_experiment(config: ExperimentConfig, registry: Registry,
                     source: str = "config") -> Experiment:
    """The experiment of `config`, every check that runs plugin or environment code done (with
    their own KeyboardInterrupt told from the user's Ctrl-C): each part is built with its own
    guards, then `check_config` checks the config against the parts, once, in its order."""
    with marked_interrupts():
        return _build_experiment(config, registry, source)


def _build_experiment(config: ExperimentConfig, registry: Registry, source: str) -> Experiment:
    streams = Streams.from_seed(config.seed)
    evaluators = evaluator_factory(config, registry, source)
    brain, template = build_template(config, registry, streams, source)
    varying = config.optimizer if isinstance(config.optimizer, IVaryingPopulationConfig) \
        else None
    check_population_fits(config.optimizer.population_size, template.genome_size,
                          largest=varying.largest_population if varying else None,
                          growth=varying.population_growth if varying else "")
    optimizer = build_optimizer(config, registry, brain, template, streams.optimizer, source)
    sizes = check_config(config, registry, brain, template, optimizer, evaluators, source)
    return Experiment(config, registry, brain, template, optimizer, streams,
                      with_worker_plugins(evaluators, config.environment.id),
                      Shaping.from_tables(config.novelty, config.fitness_shaping,
                                          streams.novelty), sizes.descriptor, sizes.observation)


def build_optimizer(config: ExperimentConfig, registry: Registry, brain: Component,
                    template: IBrainTemplate, rng: np.random.Generator, source: str
                    ) -> IOptimizer:
    """The configured optimizer for `template`'s genomes. A template with a genome layout
    (`IGenomeLayoutTemplate`, NEAT's tables) is searched only by an optimizer that reads that
    layout (`ILayoutOptimizerClass`), which is given it; every other pairing is refused in one
    line naming both plugins, before the run folder exists. An optimizer's own refusal of its
    config (a ValueError, e.g. a population that cannot fit in memory) is one line too."""
    component = registry.get("optimizer", config.optimizer.type)
    cls = component.cls
    layout = template.genome_layout if isinstance(template, IGenomeLayoutTemplate) else None
    reads_layout = isinstance(cls, ILayoutOptimizerClass)
    wanted = cls.layout_type.__name__ if reads_layout else ""
    if reads_layout and not isinstance(layout, cls.layout_type):
        raise UserError(f"{source}: optimizer {component.name!r} searches over a "
                        f"{wanted} genome, and brain {brain.name!r} has none; use a brain "
                        f"whose genome is a {wanted} (e.g. brain.type = {component.name!r})")
    if layout is not None and not reads_layout:
        kind = type(layout).__name__
        raise UserError(f"{source}: brain {brain.name!r} has a {kind} genome, which only an "
                        f"optimizer that reads it can search, and optimizer {component.name!r} "
                        f"does not; use optimizer.type = {brain.name!r}")
    try:
        if reads_layout:
            optimizer: IOptimizer = cls(config.optimizer, template.genome_size, rng,
                                        layout=layout)
        else:
            optimizer = cls(config.optimizer, template.genome_size, rng)
    except ValueError as exc:
        raise UserError(f"{source}: optimizer {component.name!r}: {exc}") from None
    return optimizer


def evaluator_factory(config: ExperimentConfig, registry: Registry, source: str = "config"
                      ) -> IChunkEvaluatorFactory:
    """The factory of the evaluators of the vectorizer `episodes.vectorize` names, found in the
    registry by that name as a brain is by its `type`; made before the template, so that a
    config it cannot run is refused first (envpool's task names are no gymnasium ids). Its
    `check` of the template is `check_config`'s, before any worker or run folder exists."""
    name = config.episodes.vectorize
    component = registry.get("vectorizer", name)
    with in_config(source):
        factory: IChunkEvaluatorFactory = component.cls(
            component.config_model.model_validate({"type": name}), config.environment,
            config.episodes, config.behaviour)
    return factory
