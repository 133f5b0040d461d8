"""The generation loop: ask, evaluate through the handler, tell, record.

After every generation the run folder is consistent on its own: log.csv has the row, best.npz
and hall_of_fame.npz the best genomes so far, and (every `checkpoint_every` generations) the
checkpoint what `evo resume` needs to continue exactly.
"""

from __future__ import annotations

import time
import uuid
import warnings
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from evo_core.errors import CandidateFailure, EvaluationError
from evo_core.results.files import write_npz
from evo_core.checkpoint import Checkpoint, read_checkpoint, write_checkpoint
from evo_core.experiment import Experiment
from evo_core.hall_of_fame import HallOfFame
from evo_core.handlers.base import IHandler
from evo_core.handlers.threads import blas_threads
from evo_core.results.log_file import LogFile
from evo_core.results.plot import plot_runs
from evo_core.results.run_folder import RunFolder

__all__ = ["Progress", "TrainingState", "train", "new_run_id", "template_state"]


class Progress(Protocol):
    def update(self, row: dict[str, Any]) -> None: ...


def new_run_id() -> str:
    return uuid.uuid4().hex


def template_state(template: Any) -> dict[str, NDArray[Any]]:
    """Arrays a template asks to be saved with genomes (optional `saved_state()` method)."""
    saved = getattr(template, "saved_state", None)
    return dict(saved()) if callable(saved) else {}


@dataclass
class TrainingState:
    """Counters and bests that survive a checkpoint."""

    run_id: str
    generation: int = 0
    evaluations: int = 0
    steps: int = 0
    seconds: float = 0.0
    best_fitness: float = -np.inf
    best_genome: NDArray[np.float64] | None = None
    best_generation: int = 0
    hall_of_fame: HallOfFame | None = field(default=None)


def _restore(experiment: Experiment, folder: RunFolder, state: TrainingState) -> None:
    checkpoint = read_checkpoint(folder.checkpoint_file, state.run_id)
    experiment.optimizer.load_state(checkpoint.optimizer)
    experiment.streams.load_state(checkpoint.streams)
    assert state.hall_of_fame is not None
    state.hall_of_fame.load(checkpoint.hall_of_fame)
    state.generation, state.evaluations = checkpoint.generation, checkpoint.evaluations
    state.steps, state.seconds = checkpoint.steps, checkpoint.seconds
    if "genome" in checkpoint.best:
        state.best_genome = np.array(checkpoint.best["genome"], dtype=np.float64)
        state.best_fitness = float(checkpoint.best["fitness"])
        state.best_generation = int(checkpoint.best["generation"])


def _checkpoint(experiment: Experiment, folder: RunFolder, state: TrainingState) -> None:
    assert state.hall_of_fame is not None
    best: dict[str, Any] = {}
    if state.best_genome is not None:
        best = {"genome": state.best_genome, "fitness": np.float64(state.best_fitness),
                "generation": np.int64(state.best_generation)}
    write_checkpoint(folder.checkpoint_file, Checkpoint(
        generation=state.generation, evaluations=state.evaluations, steps=state.steps,
        seconds=state.seconds, run_id=state.run_id, streams=experiment.streams.state(),
        optimizer=experiment.optimizer.state(), hall_of_fame=state.hall_of_fame.arrays(),
        best=best))


def train(experiment: Experiment, folder: RunFolder, handler: IHandler, progress: Progress,
          run_id: str, resume: bool = False) -> TrainingState:
    """Run the remaining generations; with `resume`, first restore the folder's checkpoint."""
    # the main process evaluates (sequential) or shares the cores with workers (mp, dask)
    with blas_threads(experiment.config.processing.blas_threads):
        return _generations(experiment, folder, handler, progress, run_id, resume)


def _generations(experiment: Experiment, folder: RunFolder, handler: IHandler,
                 progress: Progress, run_id: str, resume: bool) -> TrainingState:
    config = experiment.config
    template = experiment.template
    saved_template = template_state(template)
    state = TrainingState(run_id=run_id,
                          hall_of_fame=HallOfFame(config.hall_of_fame_size, template.genome_size))
    if resume:
        _restore(experiment, folder, state)
    log = LogFile(folder.log_file, keep_rows=state.generation if resume else None)
    started = time.perf_counter() - state.seconds
    try:
        while state.generation < config.generations:
            generation = state.generation + 1
            genomes = experiment.optimizer.ask()
            seeds = experiment.streams.evaluation_seeds(
                len(genomes), per_candidate=config.episodes.seed_per == "candidate")
            try:
                results = handler.evaluate(template, genomes, seeds)
            except CandidateFailure as failure:
                raise _stopped_by(failure, experiment, folder, generation, genomes) from None
            fitness = np.array([r.fitness for r in results], dtype=np.float64)
            experiment.optimizer.tell(fitness)
            _warn_nonfinite(generation, results)
            state.generation = generation
            state.evaluations += len(results)
            state.steps += sum(r.steps for r in results)
            state.seconds = time.perf_counter() - started
            hall_of_fame_changed = state.hall_of_fame.update(  # type: ignore[union-attr]
                genomes, fitness, generation)
            best_index = int(np.argmax(fitness))
            if fitness[best_index] > state.best_fitness:
                state.best_fitness = float(fitness[best_index])
                state.best_genome = genomes[best_index].copy()
                state.best_generation = generation
                folder.write_best(state.best_genome, state.best_fitness, generation,
                                  saved_template)
            if hall_of_fame_changed:
                folder.write_hall_of_fame(state.hall_of_fame.arrays(),  # type: ignore[union-attr]
                                          saved_template)
            row = {"generation": generation, "evaluations": state.evaluations,
                   "best": float(fitness.max()), "mean": float(fitness.mean()),
                   "std": float(fitness.std()), "worst": float(fitness.min()),
                   "best_ever": state.best_fitness, "steps": state.steps,
                   "seconds": round(state.seconds, 3)}
            log.write(row)
            if config.checkpoint_every and generation % config.checkpoint_every == 0 \
                    or generation == config.generations:
                _checkpoint(experiment, folder, state)
            progress.update(row)
    except BaseException:
        log.close()
        if state.generation > 0:  # keep what finished viewable; never mask the real error
            try:
                plot_runs([folder.path], folder.plot_file)
            except Exception:  # noqa: BLE001
                pass
        raise
    log.close()
    if state.generation > 0:
        plot_runs([folder.path], folder.plot_file)
    return state


def _stopped_by(failure: CandidateFailure, experiment: Experiment, folder: RunFolder,
               generation: int, genomes: NDArray[np.float64]) -> EvaluationError:
    """The error that ends a run whose brain raised; the genome is saved for debugging."""
    saved = folder.path / "failed_genome.npz"
    write_npz(saved, {"genome": genomes[failure.candidate], "generation": np.int64(generation),
                      "candidate": np.int64(failure.candidate)})
    brain = experiment.brain
    finished = {1: "no generation finished", 2: "generation 1 is kept"}.get(
        generation, f"generations 1-{generation - 1} are kept")
    kept = f"{finished} in {folder.path}"
    source = f"{brain.distribution} {brain.version}".strip()
    error = EvaluationError(
        f"brain {brain.name!r} ({source}) raised {failure.error} on "
        f"generation {generation}, candidate {failure.candidate} (genome saved to {saved}); "
        f"{kept}")
    error.details = failure.details
    return error


def _warn_nonfinite(generation: int, results: list[Any]) -> None:
    for index, result in enumerate(results):
        if result.nonfinite_episodes:
            warnings.warn(
                f"generation {generation}, candidate {index}: {result.nonfinite_episodes} "
                "episode(s) hit a NaN or infinite observation or reward and ended with "
                "episodes.nonfinite_penalty", RuntimeWarning, stacklevel=2)
