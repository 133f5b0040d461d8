"""Refusing sizes this machine cannot hold, before anything is allocated or written.

A population of a billion genomes, or a brain of a hundred thousand neurons, validates as a
number, then grows memory for minutes until the kernel kills the process or numpy gives up; the
user learns nothing. The engine estimates the population's genomes up front
(`check_population_fits`); a brain template estimates its own large arrays before it allocates
them (`memory_shortfall`) and raises `ValueError` with the estimate, which the engine reports as
one line naming the brain. The machine's memory and `memory_shortfall` live in the base layer
(`evo_core.machine`: the readers of a run folder bound what they load with it too); they are
re-exported here for brain authors.
"""

from __future__ import annotations

from evo_core.errors import UserError
from evo_core.machine import (
    address_space_left,
    format_bytes,
    machine_memory,
    memory_available,
    memory_shortfall,
)

__all__ = ["machine_memory", "address_space_left", "memory_available", "format_bytes",
           "memory_shortfall", "check_population_fits"]

#: How many population-sized float64 arrays a generation holds at once (samples, the optimizer's
#: working copies, the evaluated batch): a deliberately rough, generous factor.
GENOME_COPIES = 3


def check_population_fits(population: int, genome_size: int,
                          available: int | None = None, largest: int | None = None,
                          growth: str = "") -> None:
    """Raise a `UserError` with the estimate when `population` genomes of `genome_size` genes
    would need more memory than the machine has; for an optimizer whose population grows
    (`IVaryingPopulationConfig`), its `largest` population, which the settings `growth` make."""
    most = population if largest is None else max(largest, population)
    needed = GENOME_COPIES * 8 * most * genome_size
    shortfall = memory_shortfall(needed, f"for genomes of {genome_size} genes", available)
    if shortfall is None:
        return
    if most == population:
        raise UserError(f"optimizer.population_size = {population} {shortfall}; lower "
                        "optimizer.population_size or the brain's size")
    raise UserError(f"optimizer.population_size = {population} grows to {most} genomes a "
                    f"generation with {growth}, which {shortfall}; lower those settings, "
                    "optimizer.population_size or the brain's size")
