"""Wiring: a validated config becomes a template, an optimizer and a runner spec.

Nothing here names a particular brain, optimizer or handler: each is looked up in the registry by
the `type` of its table.
"""

from __future__ import annotations

from dataclasses import dataclass

from evo_core.authoring.memory import check_population_fits, format_bytes, machine_memory
from evo_core.config.schema import ExperimentConfig
from evo_core.contract.protocols import (
    IBrainTemplate,
    IDescriptorOptimizer,
    IEvaluatorFactory,
    IHandler,
    IOptimizer,
)
from evo_core.environments import probe_spaces
from evo_core.errors import UserError
from evo_core.evaluation.batched_behaviour import check_batched_behaviour
from evo_core.evaluation.batched_episodes import BatchedRunnerSpec
from evo_core.evaluation.behaviour import check_behaviour
from evo_core.evaluation.episodes import RunnerSpec
from evo_core.evaluation.picklable import find_unpicklable
from evo_core.evaluation.vector_envs import check_vectorize
from evo_core.hooks.registry import Component, Registry
from evo_core.running.seeding import Streams
from evo_core.running.stopping import check_champion_tests
from evo_core.search.shaping import Shaping

__all__ = ["Experiment", "build_experiment", "build_template", "check_picklable",
           "check_descriptor_tables"]


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

    def make_handler(self) -> IHandler:
        """The configured handler, once the template is known to suit it (see
        `check_picklable`): callers make it before the run folder."""
        if self.config.processing.pickles_templates:
            check_picklable(self.template, self.brain, self.config.processing.type)
        handler: IHandler = self.registry.get("processing", self.config.processing.type).cls(
            self.config.processing, self.runner_spec)
        return handler


def check_picklable(template: IBrainTemplate, brain: Component, processing: str) -> None:
    """A UserError naming the brain's plugin and the attribute that pickle cannot handle, for a
    handler that sends the template to other processes; otherwise the failure would come from
    inside the handler (a worker's traceback, or dozens from Dask) after the run had begun."""
    found = find_unpicklable(template, "template")
    if found is None:
        return
    plugin = f"{brain.distribution} {brain.version}".strip()
    raise UserError(
        f"brain {brain.name!r} ({plugin}): processing.type = {processing!r} sends the template "
        f"to other processes, but {found.path} cannot be pickled ({found.error}); create such "
        "objects in the template's make() or in the brain instead, or use processing.type = "
        "\"sequential\"")


def build_template(config: ExperimentConfig, registry: Registry, streams: Streams,
                   source: str = "config") -> tuple[Component, IBrainTemplate]:
    """The brain's component and its template for the config's environment, built from the
    seeded template stream (so a replay builds the same one). `source` names the config file."""
    brain = registry.get("brain", config.brain.type)
    spaces = probe_spaces(config.environment, source)
    plugin = f"brain {brain.name!r} ({f'{brain.distribution} {brain.version}'.strip()})"
    try:
        template: IBrainTemplate = brain.cls(config.brain, spaces[0], spaces[1], streams.template)
        size = template.genome_size
    except MemoryError as exc:  # e.g. numpy's "Unable to allocate 74.5 GiB for an array ..."
        available = machine_memory()
        has = f"; this machine has {format_bytes(available)}" if available else ""
        raise UserError(f"{plugin} is too large for this machine's memory "
                        f"({str(exc) or 'MemoryError'}{has}); make it smaller in the [brain] "
                        "table") from None
    except Exception as exc:  # noqa: BLE001 - whatever the plugin raises, name the plugin
        raise UserError(f"{plugin} cannot be built for {config.environment.id}: "
                        f"{type(exc).__name__}: {exc}") from None
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise UserError(f"{plugin} reports genome_size {size!r}; it must be a positive integer "
                        "(a bug in the plugin: report it to its author)")
    return brain, template


def build_experiment(config: ExperimentConfig, registry: Registry,
                     source: str = "config") -> Experiment:
    streams = Streams.from_seed(config.seed)
    brain, template = build_template(config, registry, streams, source)
    check_population_fits(config.optimizer.population_size, template.genome_size)
    optimizer_component = registry.get("optimizer", config.optimizer.type)
    optimizer: IOptimizer = optimizer_component.cls(config.optimizer, template.genome_size,
                                                    streams.optimizer)
    check_descriptor_tables(config, optimizer, source)
    check_champion_tests(config.stop, config.environment, source)
    return Experiment(config, registry, brain, template, optimizer, streams,
                      runner_spec(config, source),
                      Shaping.from_tables(config.novelty, config.fitness_shaping,
                                          streams.novelty))


def runner_spec(config: ExperimentConfig, source: str = "config") -> IEvaluatorFactory:
    """The per-genome runner, or the batched one for `episodes.vectorize` (checked here, before
    any worker or run folder exists)."""
    if config.episodes.vectorize == "off":
        return RunnerSpec(config.environment, config.episodes, config.behaviour)
    check_batched_behaviour(config.behaviour, config.episodes.vectorize, source)
    check_vectorize(config.environment, config.episodes.vectorize)
    return BatchedRunnerSpec(config.environment, config.episodes, config.behaviour)


def check_descriptor_tables(config: ExperimentConfig, optimizer: IOptimizer, source: str
                             ) -> None:
    """The tables that need or exclude one another, and a behaviour the environment can give;
    checked before the run folder exists."""
    takes_descriptors = isinstance(optimizer, IDescriptorOptimizer)
    kind = config.optimizer.type
    if config.behaviour is None:
        if takes_descriptors:
            raise UserError(f"{source}: optimizer {kind!r} learns from behaviour descriptors; "
                            "add a [behaviour] table (e.g. source = \"observation\", "
                            "max_length = 10)")
        if config.novelty is not None:
            raise UserError(f"{source}: [novelty] needs a [behaviour] table (what to compare "
                            "genomes by), e.g. source = \"observation\", max_length = 10")
        return
    if takes_descriptors:
        for table in ("novelty", "fitness_shaping"):
            if getattr(config, table) is not None:
                raise UserError(f"{source}: [{table}] has no effect with optimizer {kind!r}, "
                                "which is told raw fitness and descriptors; remove it")
    check_behaviour(config.behaviour, config.environment, source)
