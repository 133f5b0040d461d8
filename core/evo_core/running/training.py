"""The generation loop: ask, evaluate through the handler, tell, record.

After every generation the run folder is consistent on its own: log.csv has the row, best.npz
and hall_of_fame.npz the best genomes so far, and (every `checkpoint_every` generations) the
checkpoint what `evo resume` needs to continue exactly. A snapshot of the last finished generation
is kept in memory, so an interrupt (Ctrl-C, SIGTERM) writes it before the run stops. The
optimizer's state, costly for CMA-ES (pickled and signed: hundreds of milliseconds at thousands of
genes), is taken only when a checkpoint is written if the optimizer can give its state from
before its last ask (`IRewindableOptimizer`); other optimizers' state is kept after every
generation for the interrupt. Observers
(the plugins' event hooks) hear of the start, of every finished generation and of the end.
"""

from __future__ import annotations

import contextlib
import time
import uuid
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from evo_core.config.champion import ChampionConfig
from evo_core.contract.observation_statistics import (
    EvaluationContext,
    ObservationNormalizer,
    ObservationStatistics,
)
from evo_core.contract.protocols import (
    EvaluationResult,
    IBrainTemplate,
    IContextHandler,
    IDescriptorOptimizer,
    IHandler,
    IOptimizer,
    IRewindableOptimizer,
)
from evo_core.errors import (
    CandidateFailure,
    EvaluationError,
    EvaluationTimeout,
    UserError,
    WorkersLost,
    WriteFailed,
)
from evo_core.processes.blas_threads import blas_threads
from evo_core.results.checkpoint import (
    RESUMABLE,
    Checkpoint,
    changed_setting,
    read_checkpoint,
    run_binding,
    write_checkpoint,
)
from evo_core.results.files import write_npz
from evo_core.results.hall_of_fame import HallOfFame
from evo_core.results.log_file import (
    CHAMPION_COLUMNS,
    LOG_COLUMNS,
    LogFile,
    LogMark,
    kept_log,
    read_log,
)
from evo_core.results.observation_arrays import statistics_arrays
from evo_core.results.plot import plot_runs
from evo_core.results.run_folder import RunFolder
from evo_core.results.signing import signing_for
from evo_core.results.template_state import restored_template, template_state
from evo_core.running.champion import ChampionRecord, fresh_episodes, fresh_scores
from evo_core.running.checkpoint_checks import check_checkpoint, stop_columns
from evo_core.running.experiment import Experiment
from evo_core.running.normalization import generation_context, pooled, restored_statistics
from evo_core.running.stopping import STOP_COLUMNS, Stopping, StopState, restored_stop

__all__ = ["Progress", "RunEvents", "NO_EVENTS", "TrainingState", "train", "new_run_id",
           "resume_state"]


class Progress(Protocol):
    def update(self, row: dict[str, Any]) -> None: ...


class RunEvents(Protocol):
    """Who hears of the run's progress (the plugins' event hooks); never changes its results."""

    def started(self) -> None: ...

    def generation_finished(self, row: dict[str, Any]) -> None: ...

    def finished(self) -> None: ...


class _NoEvents:
    def started(self) -> None:
        pass

    def generation_finished(self, row: dict[str, Any]) -> None:
        pass

    def finished(self) -> None:
        pass


NO_EVENTS: RunEvents = _NoEvents()


def new_run_id() -> str:
    return uuid.uuid4().hex


@dataclass
class TrainingState:
    """Counters and bests that a checkpoint carries."""

    run_id: str
    hall_of_fame: HallOfFame
    generation: int = 0
    evaluations: int = 0
    steps: int = 0
    seconds: float = 0.0
    best_fitness: float = -np.inf
    best_genome: NDArray[np.float64] | None = None
    best_generation: int = 0
    #: the generation of the checkpoint on disk (what a resume would start from)
    checkpointed: int = 0
    #: the part of log.csv a resume keeps (None: a new log)
    log_mark: LogMark | None = None
    #: solved or out of budget ([stop]); restored from the checkpoint on resume
    stop: StopState = field(default_factory=StopState)
    #: best.npz's champion when it is chosen on fresh episodes ([champion]); None before one
    champion: ChampionRecord | None = None
    #: the statistics of every observation so far (observation_normalization = "running";
    #: None when it is off)
    observations: ObservationStatistics | None = None

    @classmethod
    def fresh(cls, experiment: Experiment, run_id: str) -> TrainingState:
        size = experiment.observation_size
        return cls(run_id, HallOfFame(experiment.config.hall_of_fame_size,
                                      experiment.template.genome_size, size),
                   observations=None if size is None else ObservationStatistics.empty(size))


def resume_state(experiment: Experiment, folder: RunFolder, run_id: str) -> TrainingState:
    """The state of the folder's checkpoint, restored into `experiment` (optimizer, random
    streams, template). Without a checkpoint the run starts again from generation 1.

    Refused (UserError) if `experiment.config` differs from the checkpoint's config outside
    RESUMABLE, or if log.csv no longer holds the rows the checkpoint covers."""
    state = TrainingState.fresh(experiment, run_id)
    if folder.log_file.exists():
        read_log(folder.log_file)  # a damaged log stops the resume before anything is written
    if not folder.checkpoint_file.exists():
        return state
    checkpoint = read_checkpoint(folder.checkpoint_file, run_id)
    change = changed_setting(checkpoint.config, experiment.config.model_dump(mode="json"))
    if change:
        raise UserError(f"{folder.config_file}: {change}; a resume may change only "
                        f"{', '.join(RESUMABLE)} (start a new run with `evo train` for anything "
                        "else)")
    experiment.template = restored_template(experiment.template, checkpoint.template,
                                            folder.checkpoint_file)
    # after the template state: the genome size is the trained brain's
    check_checkpoint(checkpoint, experiment, folder.checkpoint_file)
    kept = kept_log(folder.log_file, checkpoint.log, log_columns(experiment))
    stop = experiment.config.stop
    columns = stop_columns(checkpoint, stop, folder.log_file, kept)
    if stop is not None and columns is not None:
        state.stop = restored_stop(stop, columns, checkpoint.evaluations)
    state.hall_of_fame.load(checkpoint.hall_of_fame)
    if state.hall_of_fame.genomes.shape[1:] != (experiment.template.genome_size,):
        raise UserError(f"{folder.checkpoint_file}: its genomes do not fit the brain of "
                        "config.json; was the brain plugin changed since the run started?")
    try:
        with signing_for(run_binding(run_id, checkpoint.config)):
            experiment.optimizer.load_state(checkpoint.optimizer)
        experiment.streams.load_state(checkpoint.streams)
        if experiment.shaping is not None and experiment.shaping.archive is not None:
            experiment.shaping.archive.load_state(checkpoint.novelty)
    except UserError as exc:
        raise UserError(f"{folder.checkpoint_file}: {exc}") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
        raise UserError(f"{folder.checkpoint_file}: its optimizer or random-stream state is "
                        f"damaged ({type(exc).__name__}: {exc}); the run cannot continue exactly "
                        "from it") from None
    state.generation, state.evaluations = checkpoint.generation, checkpoint.evaluations
    state.checkpointed = checkpoint.generation
    state.steps, state.seconds = checkpoint.steps, checkpoint.seconds
    state.log_mark = checkpoint.log
    if "genome" in checkpoint.best:
        state.best_genome = np.array(checkpoint.best["genome"], dtype=np.float64)
        state.best_fitness = float(checkpoint.best["fitness"])
        state.best_generation = int(checkpoint.best["generation"])
    state.champion = ChampionRecord.from_arrays(checkpoint.champion)
    state.observations = restored_statistics(state.observations, checkpoint.observations)
    return state


def _snapshot(experiment: Experiment, state: TrainingState,
              saved_template: dict[str, NDArray[Any]], log: LogMark) -> Checkpoint:
    """The checkpoint of the generation just finished, but the optimizer's state (cheap: the
    streams' states, the hall of fame's and the novelty archive's arrays)."""
    best: dict[str, Any] = {}
    if state.best_genome is not None:
        best = {"genome": state.best_genome, "fitness": np.float64(state.best_fitness),
                "generation": np.int64(state.best_generation)}
    archive = experiment.shaping.archive if experiment.shaping is not None else None
    return Checkpoint(
        generation=state.generation, evaluations=state.evaluations, steps=state.steps,
        seconds=state.seconds, run_id=state.run_id, streams=experiment.streams.state(),
        optimizer={}, hall_of_fame=state.hall_of_fame.arrays(),
        best=best, template=saved_template,
        config=experiment.config.model_dump(mode="json"), log=log,
        novelty={} if archive is None else archive.state(),
        stop=state.stop.columns() if experiment.config.stop is not None else None,
        champion={} if state.champion is None else state.champion.arrays(),
        observations={} if state.observations is None else statistics_arrays(state.observations))


def log_columns(experiment: Experiment) -> list[str]:
    """log.csv's columns: the standard ones, then novelty's, [champion]'s and [stop]'s when
    configured."""
    shaping = experiment.shaping
    return (LOG_COLUMNS + (shaping.columns if shaping is not None else [])
            + (CHAMPION_COLUMNS if fresh_champion(experiment) is not None else [])
            + (STOP_COLUMNS if experiment.config.stop is not None else []))


def fresh_champion(experiment: Experiment) -> ChampionConfig | None:
    """The run's `[champion]` table when it chooses the champion on fresh episodes."""
    champion = experiment.config.champion
    return champion if champion is not None and champion.enabled else None


def train(experiment: Experiment, folder: RunFolder, handler: IHandler, progress: Progress,
          state: TrainingState, events: RunEvents = NO_EVENTS) -> TrainingState:
    """Run the generations after `state.generation` (0 for a new run); none once the run was
    solved or spent its budget ([stop])."""
    if state.stop.done:
        return state
    # the main process evaluates (sequential) or shares the cores with workers (mp, dask)
    with blas_threads(experiment.config.processing.blas_threads):
        try:
            return _generations(experiment, folder, handler, progress, state, events)
        except WriteFailed as exc:  # the finished generations are kept: say how to go on
            raise WriteFailed(f"{exc}; the run stopped: once fixed, continue it with "
                              f"`evo resume {folder.path}`") from None


def _generations(experiment: Experiment, folder: RunFolder, handler: IHandler,
                 progress: Progress, state: TrainingState, events: RunEvents) -> TrainingState:
    loop = _Loop(experiment, folder, handler, state)
    try:
        events.started()  # log.csv holds the generations this run continues from
        while state.generation < experiment.config.generations and not state.stop.done:
            row = loop.generation()
            progress.update(row)
            events.generation_finished(row)
    except BaseException:
        loop.interrupted()
        events.finished()
        raise
    loop.finished()
    events.finished()
    return state


class _Loop:
    """One run's generations, and what the loop shares with the end of an interrupted run: the
    open log, the snapshot of the last finished generation and the optimizer's state kept for
    it."""

    def __init__(self, experiment: Experiment, folder: RunFolder, handler: IHandler,
                 state: TrainingState) -> None:
        self.experiment, self.folder, self.handler, self.state = experiment, folder, handler, state
        self.template = experiment.template  # the one every generation evaluates
        self.saved_template = template_state(self.template)
        self.log = LogFile(folder.log_file, state.log_mark, log_columns(experiment))
        self.started = time.perf_counter() - state.seconds
        self.snapshot: Checkpoint | None = None
        self.optimizer = experiment.optimizer
        self.rewindable = isinstance(self.optimizer, IRewindableOptimizer)
        #: the optimizer's state after the last finished generation (not rewindable), and
        #: whether it has been told since (rewindable: its state from before the ask is gone)
        self.kept: dict[str, Any] | None = None
        self.told_since = False
        # told raw fitness and descriptors instead of `tell` (the experiment made sure that a
        # [behaviour] table gives it descriptors)
        self.descriptor_optimizer = (self.optimizer if isinstance(
            self.optimizer, IDescriptorOptimizer) else None)
        config = experiment.config
        self.stopping = (Stopping(config.stop, self.template) if config.stop is not None
                         else None)
        self.champion = fresh_champion(experiment)

    def generation(self) -> dict[str, Any]:
        """Ask, evaluate, tell, record and (when due) checkpoint the next generation; its row
        of log.csv."""
        experiment, state = self.experiment, self.state
        generation = state.generation + 1
        genomes = self.optimizer.ask()
        seeds = experiment.streams.evaluation_seeds(
            len(genomes), per_candidate=experiment.config.episodes.seed_per == "candidate")
        # frozen for the generation: its candidates and champion tests alike
        context = generation_context(state.observations, experiment.config.episodes)
        results = _evaluate(experiment, self.folder, self.handler, self.template, generation,
                            genomes, seeds, context)
        fitness = np.array([r.fitness for r in results], dtype=np.float64)
        fresh = None
        if self.champion is not None:  # before `tell`, as the tests below, for an interrupt
            fresh = fresh_scores(
                self.champion, experiment.config.episodes.runs, fitness, genomes,
                experiment.streams, lambda replayed, fresh_seeds: _evaluate(
                    experiment, self.folder, self.handler, self.template, generation, replayed,
                    fresh_seeds, context))
        normalizer = None if context is None else context.normalizer
        if self.stopping is not None:
            # before `tell`: the champion tests often take most of a generation, and until the
            # optimizer is told, an interrupt still finds its state of the last finished
            # generation (a rewindable optimizer's from before this ask) to checkpoint
            self.stopping.after_generation(state.stop, genomes, fitness,
                                           state.evaluations + len(results), normalizer)
        novelty_columns = self._tell(results, fitness)
        self.told_since = True
        if state.observations is not None:  # the next generation's normaliser
            state.observations = pooled(state.observations, results)
        _warn_nonfinite(generation, results)
        self._record(generation, genomes, fitness, results, fresh, normalizer)
        row = {"generation": generation, "evaluations": state.evaluations,
               "best": float(np.max(fitness)), "mean": float(fitness.mean()),
               "std": float(fitness.std()), "worst": float(np.min(fitness)),
               "best_ever": state.best_fitness, "steps": state.steps,
               "seconds": round(state.seconds, 3), **novelty_columns}
        if fresh is not None:
            row.update(fresh_best=float(np.nanmax(fresh)) if np.isfinite(fresh).any() else
                       np.nan, champion_fresh=state.champion.fresh if state.champion is not None
                       else np.nan)
        if self.stopping is not None:
            row.update(state.stop.columns())
        self.log.write(row)
        self._checkpoint(generation)
        return row

    def _tell(self, results: list[EvaluationResult], fitness: NDArray[np.float64]
              ) -> dict[str, Any]:
        """Tell the optimizer the generation's results; novelty's log columns, if any."""
        experiment = self.experiment
        descriptors = (descriptor_matrix(results) if experiment.config.behaviour is not None
                       else None)
        if self.descriptor_optimizer is not None:
            assert descriptors is not None
            self.descriptor_optimizer.tell_descriptors(fitness, descriptors)
            return {}
        if experiment.shaping is not None:
            steps = np.array([r.steps for r in results], dtype=np.int64)
            told, novelty_columns = experiment.shaping.scores(fitness, steps, descriptors)
            self.optimizer.tell(told)
            return novelty_columns
        self.optimizer.tell(fitness)
        return {}

    def _record(self, generation: int, genomes: NDArray[np.float64],
                fitness: NDArray[np.float64], results: list[EvaluationResult],
                fresh: NDArray[np.float64] | None, normalizer: ObservationNormalizer | None
                ) -> None:
        """The counters, the hall of fame and the best genome after `generation`; best.npz is
        the best training fitness ever, or, with fresh scores, the best fresh score; each kept
        genome with the normaliser `generation` was evaluated with."""
        state, folder = self.state, self.folder
        state.generation = generation
        state.evaluations += len(results)
        state.steps += sum(r.steps for r in results)
        state.seconds = time.perf_counter() - self.started
        played = (0 if self.champion is None else
                  fresh_episodes(self.champion, self.experiment.config.episodes.runs))
        if state.hall_of_fame.update(genomes, fitness, generation, fresh, played, normalizer):
            folder.write_hall_of_fame(state.hall_of_fame.arrays(), self.saved_template)
        best_index = int(np.argmax(fitness))
        if fitness[best_index] > state.best_fitness:
            state.best_fitness = float(fitness[best_index])
            state.best_genome = genomes[best_index].copy()
            state.best_generation = generation
            if fresh is None:
                folder.write_best(state.best_genome, state.best_fitness, generation,
                                  self.saved_template, normalizer=normalizer)
        if fresh is None or not np.isfinite(fresh).any():
            return
        chosen = int(np.nanargmax(fresh))
        if state.champion is None or fresh[chosen] > state.champion.fresh:
            state.champion = ChampionRecord(genomes[chosen].copy(), float(fitness[chosen]),
                                            generation, float(fresh[chosen]))
            folder.write_best(state.champion.genome, state.champion.fitness, generation,
                              self.saved_template, fresh=(state.champion.fresh, played),
                              normalizer=normalizer)

    def _checkpoint(self, generation: int) -> None:
        """Snapshot the finished generation; write the checkpoint every `checkpoint_every`
        generations, at the last one and when the run stops early."""
        config, state = self.experiment.config, self.state
        self.snapshot = snapshot = _snapshot(self.experiment, state, self.saved_template,
                                             self.log.mark())
        self.kept = None if self.rewindable else self.optimizer.state()
        self.told_since = False
        if generation == config.generations or state.stop.done or (
                config.checkpoint_every and generation % config.checkpoint_every == 0):
            self.log.sync()  # the rows it counts reach the disk before the checkpoint does
            write_checkpoint(self.folder.checkpoint_file,
                             replace(snapshot, optimizer=self.kept or self.optimizer.state()))
            state.checkpointed, state.log_mark = generation, snapshot.log

    def interrupted(self) -> None:
        """After an exception or interrupt: the last finished generation checkpointed (an
        interrupt loses nothing) and plotted, the files closed."""
        self._close()
        state, snapshot = self.state, self.snapshot
        optimizer_state = _interrupted_state(self.optimizer, self.kept, self.told_since)
        if snapshot is not None and snapshot.generation != state.checkpointed and \
                optimizer_state is not None:
            write_checkpoint(self.folder.checkpoint_file,
                             replace(snapshot, optimizer=optimizer_state))
            state.checkpointed, state.log_mark = snapshot.generation, snapshot.log
        if state.generation > 0:  # keep what finished viewable; never mask the real error
            with contextlib.suppress(Exception):
                plot_runs([self.folder.path], self.folder.plot_file)

    def finished(self) -> None:
        """After the last generation: the files closed, fitness.png drawn."""
        self._close()
        if self.state.generation > 0:
            plot_runs([self.folder.path], self.folder.plot_file)

    def _close(self) -> None:
        self.log.close()
        if self.stopping is not None:
            self.stopping.close()


def _evaluate(experiment: Experiment, folder: RunFolder, handler: IHandler,
              template: IBrainTemplate, generation: int, genomes: NDArray[np.float64],
              seeds: NDArray[np.int64], context: EvaluationContext | None
              ) -> list[EvaluationResult]:
    """The handler's results for the generation's genomes, evaluated in `context` (None: the
    plain `evaluate`); a failure of a candidate, of the workers or of a plugin ends the run
    with a line naming the generation and what is kept."""
    try:
        if context is None:
            return handler.evaluate(template, genomes, seeds)
        if not isinstance(handler, IContextHandler):  # the config's checks refuse its class
            raise UserError(f"episodes.observation_normalization = \"running\" needs a handler "
                            f"that takes the normaliser (IContextHandler); "
                            f"{type(handler).__name__} does not")
        return handler.evaluate_in_context(template, genomes, seeds, context)
    except CandidateFailure as failure:
        raise _stopped_by(failure, experiment, folder, generation, genomes) from None
    except WorkersLost as lost:
        raise EvaluationError(f"generation {generation}: {lost}; "
                              f"{_kept(generation, folder)}") from None
    except UserError as exc:  # a worker that cannot load a plugin or make the env
        raise UserError(f"generation {generation}: {exc}; "
                        f"{_kept(generation, folder)}") from None
    except EvaluationTimeout as timeout:  # ends the run like a brain that raises
        raise EvaluationError(
            f"generation {generation}, candidate {timeout.candidate}: one evaluation in "
            f"environment {experiment.config.environment.id!r} took longer than "
            f"processing.task_timeout = {timeout.seconds:g} s; "
            f"{_kept(generation, folder)}") from None


def _interrupted_state(optimizer: IOptimizer, kept: dict[str, Any] | None, told: bool
                       ) -> dict[str, Any] | None:
    """The optimizer's state after the last finished generation, or None in the moment
    between a rewindable optimizer's `tell` and the end of its generation (the checkpoint on
    disk then stays: it is as exact, only older)."""
    if kept is not None:
        return kept
    if told or not isinstance(optimizer, IRewindableOptimizer):
        return None
    return optimizer.state_before_ask()


def descriptor_matrix(results: list[EvaluationResult]) -> NDArray[np.float64]:
    """The descriptors of a generation as one (n, D) float64 array."""
    descriptors = [r.descriptor for r in results]
    if any(d is None for d in descriptors):
        raise ValueError("an evaluation returned no descriptor, but [behaviour] is set")
    return np.stack([np.asarray(d, dtype=np.float64) for d in descriptors])


def _stopped_by(failure: CandidateFailure, experiment: Experiment, folder: RunFolder,
                generation: int, genomes: NDArray[np.float64]) -> EvaluationError:
    """The error that ends a run whose brain or environment raised; the genome is saved for
    debugging either way (an environment may fail only on what this brain does)."""
    saved = folder.path / "failed_genome.npz"
    write_npz(saved, {"genome": genomes[failure.candidate], "generation": np.int64(generation),
                      "candidate": np.int64(failure.candidate)})
    if failure.source == "environment":
        culprit = f"environment {experiment.config.environment.id!r}"
    else:
        brain = experiment.brain
        plugin = f"{brain.distribution} {brain.version}".strip()
        culprit = f"brain {brain.name!r} ({plugin})"
    error = EvaluationError(
        f"{culprit} raised {failure.error} on generation {generation}, "
        f"candidate {failure.candidate} (genome saved to {saved}); {_kept(generation, folder)}")
    error.details = failure.details
    return error


def _kept(generation: int, folder: RunFolder) -> str:
    """What a run stopped during `generation` keeps."""
    finished = {1: "no generation finished", 2: "generation 1 is kept"}.get(
        generation, f"generations 1-{generation - 1} are kept")
    return f"{finished} in {folder.path}"


def _warn_nonfinite(generation: int, results: list[Any]) -> None:
    """One line per generation, not per candidate: in a diverging population most candidates
    can hit a NaN, and a line each would bury the progress output."""
    hit = [index for index, result in enumerate(results) if result.nonfinite_episodes]
    if not hit:
        return
    episodes = sum(results[index].nonfinite_episodes for index in hit)
    shown = ", ".join(str(index) for index in hit[:10]) + (", ..." if len(hit) > 10 else "")
    warnings.warn(
        f"generation {generation}: {len(hit)} candidate(s) hit a NaN or infinite observation or "
        f"reward in {episodes} episode(s) (candidates {shown}); those episodes ended with "
        "episodes.nonfinite_penalty", RuntimeWarning, stacklevel=2)
