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
  genomes than `hall_of_fame_size`; with `observation_normalization = "running"`, each genome
  of the hall of fame has its normaliser's finite mean and positive standard deviations;
- the novelty archive holds descriptors of the `[behaviour]` table's length;
- with `observation_normalization = "running"`, the observation statistics are there, of the
  observation's entries, finite, with a count and sums of squares that can be (and absent
  when it is off);
- with a `[stop]` table, the stop columns (`solved` 0 or 1, `test_episodes` a count) are what
  the run could have reached: no more test episodes than its generations of champion tests can
  play, solved only with a criterion met (the best fitness at `stop.fitness`, the test episodes
  that passing takes), and, with a fitness alone, solved exactly when the best fitness reached
  it. `stop_columns` takes them from the checkpoint's record and requires log.csv's last kept
  row to say the same; a checkpoint written before the record existed gives way to that row,
  checked alike. Without a `[stop]` table the checkpoint records none.

The optimizer's own state is the optimizer's to check (its `load_state` raises, naming the
field), the random streams' is numpy's (`Streams.load_state`). A value that fails is one line
naming the file and the field (log.csv's: the line and the column).
"""

from __future__ import annotations

import math
import reprlib
from pathlib import Path
from typing import Any

import numpy as np

from evo_core.config.stop import StopConfig
from evo_core.errors import UserError
from evo_core.results.checkpoint import Checkpoint
from evo_core.results.log_file import STOP_COLUMNS, last_row
from evo_core.results.observation_arrays import normalizer_problem, statistics_problem
from evo_core.running.experiment import Experiment

__all__ = ["check_checkpoint", "stop_columns"]

_EDITED = "was edited or damaged, so the run cannot continue from it (resume from a whole copy " \
          "of the run folder)"


def check_checkpoint(checkpoint: Checkpoint, experiment: Experiment, path: Path) -> None:
    """A UserError naming `path` and the first field of `checkpoint` that cannot be right for
    `experiment`."""
    genome_size = experiment.template.genome_size
    problem = (_counters(checkpoint)
               or _hall_of_fame(checkpoint.hall_of_fame, genome_size,
                                experiment.config.hall_of_fame_size, checkpoint.generation,
                                experiment.observation_size)
               or _best(checkpoint.best, genome_size, checkpoint.generation)
               or _champion(checkpoint.champion, genome_size, checkpoint.generation)
               or _novelty(checkpoint.novelty, experiment.descriptor_size)
               or _observations(checkpoint.observations, experiment.observation_size)
               or _stop_record(checkpoint, experiment.config.stop))
    if problem is not None:
        raise UserError(f"{path}: {problem}; the checkpoint {_EDITED}")


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
                  generation: int, observation_size: int | None) -> str | None:
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
    # absent in checkpoints written before fresh scores existed
    fresh, played = arrays.get("fresh"), arrays.get("fresh_episodes")
    if fresh is not None and (not _real(fresh, (count,)) or not np.isfinite(fresh).all()):
        return f"hall_of_fame.fresh is not {count} finite numbers (one per genome)"
    if played is not None and (not _real(played, (count,), "iu") or (played < 0).any()):
        return f"hall_of_fame.fresh_episodes is not {count} counts (one per genome)"
    return (_generations(found, generation, "hall_of_fame.generation")
            or _kept_normalizers(arrays, count, observation_size))


def _kept_normalizers(arrays: dict[str, Any], count: int, observation_size: int | None
                      ) -> str | None:
    """With observation_normalization = "running", each hall of fame genome's normaliser."""
    if observation_size is None:
        return None
    return normalizer_problem(arrays, (count, observation_size), "hall_of_fame")


def _best(arrays: dict[str, Any], genome_size: int, generation: int,
          group: str = "best", scores: tuple[str, ...] = ("fitness",)) -> str | None:
    """The best genome (or, as `group` "champion", the champion chosen on fresh episodes,
    whose `scores` include its fresh one)."""
    if not arrays:
        return None  # no finite fitness yet
    genome, found = arrays.get("genome"), arrays.get("generation")
    problem = _genomes(genome, genome_size, f"{group}.genome")
    if problem is not None:
        return problem
    assert isinstance(genome, np.ndarray)
    if genome.ndim != 1:
        return f"{group}.genome is not one genome"
    for score in scores:
        value = arrays.get(score)
        if not isinstance(value, np.ndarray) or not _real(value, ()) or not np.isfinite(value):
            return f"{group}.{score} is not a finite number"
    if not isinstance(found, np.ndarray) or not _real(found, (), "iu"):
        return f"{group}.generation is not an integer"
    return _generations(np.atleast_1d(found), generation, f"{group}.generation")


def _champion(arrays: dict[str, Any], genome_size: int, generation: int) -> str | None:
    return _best(arrays, genome_size, generation, "champion", ("fitness", "fresh"))


def _observations(arrays: dict[str, Any], size: int | None) -> str | None:
    """The normaliser's statistics: there exactly when observation_normalization is
    "running", of the observation's entries, finite, a count and sums of squares that can be."""
    if size is None:
        return "observations holds statistics, but observation_normalization is off" \
            if arrays else None
    if not arrays:
        return "observations lacks the statistics of observation_normalization = \"running\""
    return statistics_problem(arrays, size, "observations")


def _novelty(arrays: dict[str, Any], descriptor_size: int | None) -> str | None:
    archive = arrays.get("archive")
    if archive is None or descriptor_size is None:
        return None  # no archive yet; its own load_state checks the rest
    if not (isinstance(archive, np.ndarray) and archive.ndim == 2
            and archive.shape[1] == descriptor_size):
        return (f"novelty.archive has shape {getattr(archive, 'shape', None)}, not descriptors "
                f"of the {descriptor_size} values the [behaviour] table gives")
    return None


def _stop_record(checkpoint: Checkpoint, stop: StopConfig | None) -> str | None:
    record = checkpoint.stop
    if stop is None:
        return None if record is None else (
            f"stop is {_shown(record)}, but config.json has no [stop] table")
    if record is None:
        return None  # written before the record existed: stop_columns checks log.csv's row
    if set(record) != set(STOP_COLUMNS):
        return f"stop has the keys {sorted(record)}, not {STOP_COLUMNS}"
    problem = _stop_problem(record, stop, checkpoint)
    return None if problem is None else f"stop.{problem}"


def stop_columns(checkpoint: Checkpoint, stop: StopConfig | None, log: Path, kept: bytes
                 ) -> dict[str, int] | None:
    """The `[stop]` columns after the checkpoint's generation (None without a `[stop]` table):
    the checkpoint's record (`check_checkpoint` checked it), which log.csv's last kept row
    (`kept`: the bytes the checkpoint's mark vouched for) must repeat; from a checkpoint written
    before the record existed, that row's, checked as the record is. A UserError names log.csv,
    the line and the column."""
    if stop is None:
        return None
    found = last_row(kept, log)
    record = checkpoint.stop
    if found is None:  # no generation finished: nothing was played yet
        return {"solved": 0, "test_episodes": 0} if record is None else dict(record)
    line, row = found
    where = f"{log}: line {line}"
    if record is not None:
        for column in STOP_COLUMNS:
            if row.get(column) != str(record[column]):
                raise UserError(f"{where}: {column} is {_shown(row.get(column))}, but the "
                                f"checkpoint records {record[column]}; log.csv {_EDITED}")
        return dict(record)
    columns: dict[str, Any] = {column: _integer(row.get(column)) for column in STOP_COLUMNS}
    problem = _stop_problem(columns, stop, checkpoint)
    if problem is not None:
        raise UserError(f"{where}: {problem}; log.csv {_EDITED}")
    return columns


def _integer(text: str | None) -> int | str | None:
    """A log cell as the integer evo wrote there, or as it is (the check names it)."""
    if text is not None and text.isascii() and text.lstrip("-").isdigit() and len(text) < 20:
        return int(text)
    return text


def _stop_problem(columns: dict[str, Any], stop: StopConfig, checkpoint: Checkpoint
                  ) -> str | None:
    """What cannot be right about the stop columns after the checkpoint's generation."""
    solved, played = columns.get("solved"), columns.get("test_episodes")
    if not isinstance(solved, int) or isinstance(solved, bool) or solved not in (0, 1):
        return f"solved is {_shown(solved)}, not 0 or 1"
    if not isinstance(played, int) or isinstance(played, bool) or played < 0:
        return f"test_episodes is {_shown(played)}, not a count"
    return _unreachable_stop(solved == 1, played, stop, checkpoint)


def _unreachable_stop(solved: bool, played: int, stop: StopConfig, checkpoint: Checkpoint
                      ) -> str | None:
    """Champion tests are played only by a generation whose best reached `stop.fitness` (when
    set), at most all their episodes per generation, and solving is that fitness and passing
    the tests: what contradicts that, or None."""
    best = checkpoint.best.get("fitness")
    best_fitness = float(best) if best is not None else -math.inf
    unreached = stop.fitness is not None and not best_fitness >= stop.fitness
    tests = stop.champion_tests
    most = checkpoint.generation * sum(test.episodes for test in tests)
    if played and not tests:
        return f"test_episodes is {played}, but [stop] has no champion_tests to play"
    if played > most:
        return (f"test_episodes is {played}, more than the {most} episode(s) that "
                f"{checkpoint.generation} generation(s) of stop.champion_tests can play")
    if played and unreached:
        return (f"test_episodes is {played}, but no candidate reached stop.fitness "
                f"({stop.fitness:g}; the best fitness is {best_fitness:g}), so no champion "
                "test was played")
    if solved:
        needed = sum(test.passes_needed for test in tests)
        if not stop.can_solve:
            return "solved is 1, but [stop] sets neither fitness nor champion_tests to solve by"
        if unreached:
            return (f"solved is 1, but the best fitness ({best_fitness:g}) is below "
                    f"stop.fitness ({stop.fitness:g})")
        if played < needed:
            return (f"solved is 1 after {played} champion test episode(s), but passing "
                    f"stop.champion_tests takes {needed}")
    elif stop.fitness is not None and not tests and not unreached:
        return (f"solved is 0, but the best fitness ({best_fitness:g}) reaches stop.fitness "
                f"({stop.fitness:g}), which solves the run")
    return None


_short = reprlib.Repr()
_short.maxstring = _short.maxother = 40
_shown = _short.repr
