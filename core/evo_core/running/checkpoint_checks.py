"""Every value of a checkpoint checked against the experiment before a resume uses it.

A run folder may come from someone else, or a checkpoint may have been edited. `read_checkpoint`
checks the file's structure (format, run id, the digest of the config it records); here each
value is checked against the experiment rebuilt from config.json, because a value that is
merely wrong either stops the resume later with a traceback (an index out of range) or, worse,
resumes silently into corrupt results (a generation of -3, NaN genes that reach
hall_of_fame.npz). So:

- the counters are non-negative integers, the seconds a finite non-negative number, and log.csv's
  mark covers exactly the checkpoint's generations;
- every genome of the hall of fame and the best has the brain's genome size and finite genes,
  with as many finite fitness values and generations in 1..generation as genomes, and no more
  genomes than `hall_of_fame_size`;
- the novelty archive holds descriptors of the `[behaviour]` table's length.

The optimizer's own state is the optimizer's to check (its `load_state` raises, naming the
field), the random streams' is numpy's (`Streams.load_state`). A value that fails is one line
naming the file and the field.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from evo_core.errors import UserError
from evo_core.results.checkpoint import Checkpoint
from evo_core.running.experiment import Experiment

__all__ = ["check_checkpoint"]


def check_checkpoint(checkpoint: Checkpoint, experiment: Experiment, path: Path) -> None:
    """A UserError naming `path` and the first field of `checkpoint` that cannot be right for
    `experiment`."""
    genome_size = experiment.template.genome_size
    problem = (_counters(checkpoint)
               or _hall_of_fame(checkpoint.hall_of_fame, genome_size,
                                experiment.config.hall_of_fame_size, checkpoint.generation)
               or _best(checkpoint.best, genome_size, checkpoint.generation)
               or _novelty(checkpoint.novelty, experiment.descriptor_size))
    if problem is not None:
        raise UserError(f"{path}: {problem}; the checkpoint was edited or damaged, so the run "
                        "cannot continue from it (resume from a whole copy of the run folder)")


def _counters(checkpoint: Checkpoint) -> str | None:
    for name in ("generation", "evaluations", "steps"):
        value = getattr(checkpoint, name)
        if not isinstance(value, int) or value < 0:
            return f"{name} is {value!r}, not a count"
    if not (math.isfinite(checkpoint.seconds) and checkpoint.seconds >= 0):
        return f"seconds is {checkpoint.seconds!r}, not a duration"
    if checkpoint.log.rows != checkpoint.generation:
        return (f"log covers {checkpoint.log.rows} rows of log.csv but generation is "
                f"{checkpoint.generation}")
    return None


def _real(array: Any, shape: tuple[int, ...], kinds: str = "fiu") -> bool:
    return isinstance(array, np.ndarray) and array.shape == shape and array.dtype.kind in kinds


def _genomes(genomes: Any, genome_size: int, field: str) -> str | None:
    if not (isinstance(genomes, np.ndarray) and genomes.ndim in (1, 2)
            and genomes.shape[-1:] == (genome_size,) and genomes.dtype.kind in "fiu"):
        shape = getattr(genomes, "shape", None)
        return (f"{field} has shape {shape}, not genomes of the {genome_size} genes the brain "
                "of config.json takes")
    if not np.isfinite(genomes).all():
        return f"{field} holds genes that are not finite"
    return None


def _generations(generations: np.ndarray, last: int, field: str) -> str | None:
    if generations.size and (generations.min() < 1 or generations.max() > last):
        return f"{field} holds generations outside 1..{last}"
    return None


def _hall_of_fame(arrays: dict[str, Any], genome_size: int, size: int,
                  generation: int) -> str | None:
    genomes, fitness, found = (arrays.get(key) for key in ("genomes", "fitness", "generation"))
    if genomes is None or fitness is None or found is None:
        return "hall_of_fame lacks genomes, fitness or generation"
    problem = _genomes(genomes, genome_size, "hall_of_fame.genomes")
    if problem is None and genomes.ndim != 2:
        problem = "hall_of_fame.genomes is not a matrix"
    if problem is not None:
        return problem
    count = len(genomes)
    if count > size:
        return f"hall_of_fame holds {count} genomes, more than hall_of_fame_size ({size})"
    if not _real(fitness, (count,)) or not np.isfinite(fitness).all():
        return f"hall_of_fame.fitness is not {count} finite numbers (one per genome)"
    if not _real(found, (count,), "iu"):
        return f"hall_of_fame.generation is not {count} integers (one per genome)"
    return _generations(found, generation, "hall_of_fame.generation")


def _best(arrays: dict[str, Any], genome_size: int, generation: int) -> str | None:
    if not arrays:
        return None  # no finite fitness yet
    genome, fitness, found = (arrays.get(key) for key in ("genome", "fitness", "generation"))
    problem = _genomes(genome, genome_size, "best.genome")
    if problem is not None:
        return problem
    assert isinstance(genome, np.ndarray)
    if genome.ndim != 1:
        return "best.genome is not one genome"
    if not isinstance(fitness, np.ndarray) or not _real(fitness, ()) or \
            not np.isfinite(fitness):
        return "best.fitness is not a finite number"
    if not isinstance(found, np.ndarray) or not _real(found, (), "iu"):
        return "best.generation is not an integer"
    return _generations(np.atleast_1d(found), generation, "best.generation")


def _novelty(arrays: dict[str, Any], descriptor_size: int | None) -> str | None:
    archive = arrays.get("archive")
    if archive is None or descriptor_size is None:
        return None  # no archive yet; its own load_state checks the rest
    if not (isinstance(archive, np.ndarray) and archive.ndim == 2
            and archive.shape[1] == descriptor_size):
        return (f"novelty.archive has shape {getattr(archive, 'shape', None)}, not descriptors "
                f"of the {descriptor_size} values the [behaviour] table gives")
    return None
