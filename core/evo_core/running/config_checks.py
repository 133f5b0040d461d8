"""The config's checks that run plugin or environment code: in one place, in one order.

Validation (`config/schema.py`) runs no plugin or environment code, so what only the built
parts can tell is checked here, once, by `check_config`, which `running/experiment.py` calls
when it has built the experiment's parts and before any worker or run folder exists. The
config flows down from here: every check below is a function of a lower module (or of this
one) and none calls back up into the experiment. The order is fixed, so a config with several
mistakes is always told the same one first:

1. the tables that need or exclude one another (`check_descriptor_tables`): an
   `IDescriptorOptimizer` or `[novelty]` needs `[behaviour]`; `[novelty]` and
   `[fitness_shaping]` do nothing for an `IDescriptorOptimizer`; then the behaviour the
   environment gives (`evaluation/behaviour.py`'s `check_behaviour`, its length) and the
   optimizer's check of that length (`IDescriptorSizeCheck`);
2. the champion tests' environments (`running/stopping.py`'s `check_champion_tests`);
3. the vectorizer's check of the template (`IChunkEvaluatorFactory.check`: a behaviour the
   batched rows cannot record, a vector environment that cannot be made or disagrees);
4. with `observation_normalization = "running"`, a handler that takes the normaliser
   (`IContextHandler`) and an environment whose observations are a Box; without it, no
   optimizer settings that need it (`IObservationNormalizationConfig`, ARS's V2)
   (`check_observation_normalization`);
5. the template's pickling, for a handler that sends it to other processes
   (`check_picklable`, over `evaluation/picklable.py`).

The guards that belong to building a part stay with the building, in `running/experiment.py`:
the vectorizer's refusal when it is made (before the environment is probed), the template's
`genome_size`, and the population's memory (`authoring/memory.py`'s `check_population_fits`),
which must come before the optimizer allocates its population.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import NamedTuple

from evo_core.config.schema import ExperimentConfig
from evo_core.contract.protocols import (
    IBrainTemplate,
    IChunkEvaluatorFactory,
    IContextHandler,
    IDescriptorOptimizer,
    IDescriptorSizeCheck,
    IInProcessHandler,
    IObservationNormalizationConfig,
    IOptimizer,
)
from evo_core.errors import UserError
from evo_core.evaluation.behaviour import check_behaviour
from evo_core.evaluation.picklable import find_unpicklable
from evo_core.hooks.registry import Component, Registry
from evo_core.running.normalization import normalised_size
from evo_core.running.stopping import check_champion_tests

__all__ = ["Sizes", "check_config", "check_descriptor_tables", "check_observation_normalization",
           "check_picklable", "in_config"]


class Sizes(NamedTuple):
    """What the checks learn that the run needs: the behaviour descriptor's length (None
    without a [behaviour] table) and the entries of the normalised observation (None unless
    `observation_normalization = "running"`)."""

    descriptor: int | None
    observation: int | None


def check_config(config: ExperimentConfig, registry: Registry, brain: Component,
                 template: IBrainTemplate, optimizer: IOptimizer,
                 evaluators: IChunkEvaluatorFactory, source: str) -> Sizes:
    """Every check of `config` against its built parts, in the order the module says; a
    UserError in one line naming `source` (the config file) for the first that fails."""
    descriptor_size = check_descriptor_tables(config, optimizer, source)
    check_champion_tests(config.stop, config.environment, source)
    with in_config(source):
        evaluators.check(template)
    handler = registry.get("processing", config.processing.type).cls
    observation_size = check_observation_normalization(config, handler, source)
    if not issubclass(handler, IInProcessHandler):
        check_picklable(template, brain, config.processing.type)
    return Sizes(descriptor_size, observation_size)


def check_observation_normalization(config: ExperimentConfig, handler: type, source: str
                                    ) -> int | None:
    """With `observation_normalization = "running"`: a handler that hands the normaliser to
    its evaluators (`IContextHandler`), and observations that are a Box; the entries of the
    flattened observation (None when the normaliser is off)."""
    if config.episodes.observation_normalization != "running":
        if isinstance(config.optimizer, IObservationNormalizationConfig) and (
                needs := config.optimizer.needs_running_observations):
            raise UserError(f"{source}: {needs} normalises observations by running "
                            "statistics; add episodes.observation_normalization = \"running\" "
                            "to the config, or use the optimizer's other settings")
        return None
    if not issubclass(handler, IContextHandler):
        raise UserError(f"{source}: episodes.observation_normalization = \"running\" needs a "
                        f"handler that takes the normaliser (IContextHandler), and "
                        f"processing.type = {config.processing.type!r} does not; use "
                        "\"sequential\", \"mp\" or \"dask\", or observation_normalization = "
                        "\"off\"")
    return normalised_size(config, source)


@contextlib.contextmanager
def in_config(source: str) -> Iterator[None]:
    """A vectorizer's refusal, in one line naming the config file."""
    try:
        yield
    except UserError as exc:
        raise UserError(f"{source}: {exc}") from None


def check_descriptor_tables(config: ExperimentConfig, optimizer: IOptimizer, source: str
                             ) -> int | None:
    """The tables that need or exclude one another, and a behaviour the environment can give;
    checked before the run folder exists. The descriptor's length (None without behaviour)."""
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
        return None
    if takes_descriptors:
        for table in ("novelty", "fitness_shaping"):
            if getattr(config, table) is not None:
                raise UserError(f"{source}: [{table}] has no effect with optimizer {kind!r}, "
                                "which is told raw fitness and descriptors; remove it")
    size = check_behaviour(config.behaviour, config.environment, source)
    if isinstance(optimizer, IDescriptorSizeCheck):
        try:
            optimizer.check_descriptor_size(size)
        except ValueError as exc:
            raise UserError(f"{source}: {exc}") from None
    return size


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
