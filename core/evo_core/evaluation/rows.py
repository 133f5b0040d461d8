"""The episode engine: the one loop that runs every episode evo scores, over *rows*.

A chunk of candidates with `runs` episodes each is a list of jobs, (candidate, episode), in
candidate-major order. A row runs one job at a time: its brain (one row of a brain batch, or a
lone brain) and its environment (its own `gymnasium.Env`, or one environment of a vector
environment, evaluation/row_envs.py). Every mode is rows:

- "off" (`EpisodeRunner`): one row, its own environment, a lone brain;
- "sync": up to `episodes.batch_rows` rows, each with its own environment;
- "native" and "envpool": the rows of one vector environment.

When a row's episode ends it takes the next job of the chunk at once: the next episode of the
same candidate, or the next candidate, whose genome is loaded into that row of the brain batch
(`IReloadableBatch`; a batch without it gets one row per candidate or per episode). A chunk
therefore finishes when its jobs do, not when its slowest episode does. Once no job is left, the
brains step only the rows still running (`ISubsetBatch`), so a chunk's last long episodes do
not step the whole batch.

What an evaluation is, is written here once: its seeds (`environment_seed`, `brain_seeds`,
`vector_seed`, `episode_seed`), the episode rules of the config's `[episodes]` table (`Rules`:
how a step ends an episode and what it scores are contract/episode_rules.py's `EpisodeRules`,
the one table every engine calls, evo-jax's rollout included) and the outcome of an ended
episode, the totals of a candidate and its behaviour descriptor (`results`). With a normaliser
(`observation_normalization = "running"`), the brains step on the observations it normalises and
each job's raw observations are pooled into its statistics (evaluation/observation_rows.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from evo_core.config.schema import EpisodesConfig
from evo_core.contract.episode_rules import NONFINITE, EpisodeRules
from evo_core.contract.observation_statistics import ObservationNormalizer, ObservationStatistics
from evo_core.contract.protocols import EvaluationResult
from evo_core.evaluation.behaviour import RowBehaviour, mean_of_episodes
from evo_core.evaluation.observation_rows import RowObservations, candidate_statistics

__all__ = [
    "Ended",
    "EpisodeOutcome",
    "Played",
    "RowBrains",
    "RowEnvironments",
    "Rules",
    "Schedule",
    "brain_generator",
    "brain_seeds",
    "environment_seed",
    "results",
    "run_jobs",
    "vector_seed",
    "episode_seed",
]


@dataclass(frozen=True)
class EpisodeOutcome:
    """One episode: its return, its steps, and whether a NaN/inf ended it."""

    total: float
    steps: int
    nonfinite: bool


@dataclass(frozen=True)
class Played:
    """What `run_jobs` gives back, in job order: each job's outcome, its behaviour descriptor
    (None without a behaviour recorder) and the statistics of its observations (None without a
    normaliser)."""

    outcomes: list[EpisodeOutcome]
    descriptors: list[NDArray[np.float64]] | None = None
    observations: list[ObservationStatistics] | None = None


#: A row whose episode ended: (row, return without penalty, steps, cause: contract/episode_rules).
Ended = tuple[int, float, int, int]


class Rules(EpisodeRules):
    """The episode rules of an `[episodes]` table, and what an ended episode scores: the engines
    that settle an episode when it ends (every one in this package) add its penalty here."""

    def __init__(self, episodes: EpisodesConfig) -> None:
        super().__init__(episodes.max_steps, episodes.max_steps_penalty,
                         episodes.nonfinite_penalty)

    def outcome(self, total: float, steps: int, cause: int) -> EpisodeOutcome:
        return EpisodeOutcome(total + self.penalty(np, cause), steps, cause == NONFINITE)


def environment_seed(seed: int) -> int:
    """What an evaluation seed fixes for the environment: its seed for the first episode (the
    next ones continue the environment's stream)."""
    return int(np.random.SeedSequence(seed).generate_state(1)[0])


def brain_seeds(seed: int, runs: int) -> list[np.random.SeedSequence]:
    """What an evaluation seed fixes for the brain: the seed of each episode's Generator
    (`brain_generator`). Asked for only by brains that draw random numbers: spawning costs
    more than the rest of a short evaluation's set-up."""
    return np.random.SeedSequence(seed).spawn(runs)


def brain_generator(seed: np.random.SeedSequence) -> np.random.Generator:
    """The Generator a random brain gets for the episode of `seed` (`use_rng`)."""
    return np.random.Generator(np.random.PCG64(seed))


def episode_seed(seed: int, episode: int) -> int:
    """The seed of episode `episode` of an evaluation seeded `seed` in a vector environment
    that seeds its rows (`vector_envs.SeededRows`): the same for every candidate that shares
    the evaluation seed."""
    return int(np.random.SeedSequence(seed, spawn_key=(episode,)).generate_state(1)[0])


def vector_seed(seeds: NDArray[np.int64]) -> int:
    """The one seed of a vector environment's reset, from the chunk's evaluation seeds."""
    return int(np.random.SeedSequence([int(s) for s in seeds]).generate_state(1)[0])


class Schedule:
    """Which job a row runs next. Jobs are numbered candidate-major (`candidate * runs +
    episode`). With `whole` a row keeps a candidate for all its episodes (rows with their own
    environment: an episode continues the environment's stream of the one before); otherwise a
    row that ends takes the next job not yet started. `rows` is at most `most` and never more
    than there are candidates (whole) or jobs to run."""

    def __init__(self, candidates: int, runs: int, whole: bool, most: int) -> None:
        self.candidates, self.runs, self.whole = candidates, runs, whole
        self.jobs = candidates * runs
        self.rows = min(most, candidates if whole else self.jobs)
        self._next = self.rows  # the next candidate (whole) or job to hand out

    @property
    def reloads(self) -> bool:
        """Whether some row will take another candidate (more candidates, or jobs, than
        rows)."""
        return self.rows < (self.candidates if self.whole else self.jobs)

    def first(self) -> list[int]:
        """The first job of each row."""
        return [row * self.runs for row in range(self.rows)] if self.whole \
            else list(range(self.rows))

    def after(self, job: int) -> int | None:
        """The job the row that finished `job` runs next, or None."""
        if self.whole:
            if (job + 1) % self.runs:
                return job + 1
            if self._next >= self.candidates:
                return None
            self._next += 1
            return (self._next - 1) * self.runs
        if self._next >= self.jobs:
            return None
        self._next += 1
        return self._next - 1


class RowEnvironments(Protocol):
    """The environments of the rows (evaluation/row_envs.py)."""

    def brain_input(self) -> Any:
        """The observations the brains step on next (every row's, or the rows' given to
        `narrow`)."""

    def running(self) -> Sequence[int] | NDArray[np.intp]:
        """The rows in an episode, whose observation in `brain_input` is one the brain is
        given in that episode (the others hold no job, or wait for their environment's
        reset)."""

    def start(self, starts: Sequence[tuple[int, int]]) -> tuple[list[int], list[Ended]]:
        """Rows begin jobs (row, job): (rows whose episode begins now, episodes that ended
        at their reset). A vector environment begins a row after its reset step, so later."""

    def step(self, actions: Any) -> tuple[list[Ended], Sequence[int]]:
        """Step every running row: (episodes that ended, rows whose episode begins now)."""

    def narrow(self, rows: NDArray[np.intp]) -> None:
        """From now on `brain_input` gives the observations of `rows` alone (sorted): the
        brains step only them."""

    def finish(self) -> None:
        """The chunk is done."""


class RowBrains(Protocol):
    """The brains of the rows (evaluation/row_brains.py)."""

    def prepare(self, rows: list[int], jobs: list[int]) -> None:
        """Rows `rows` begin `jobs`: load the job's genome where the row held another, hand the
        job's Generator, reset."""

    def step(self, observations: Any) -> Any:
        """Every row's action."""

    def narrow(self, busy: NDArray[np.bool_]) -> NDArray[np.intp] | None:
        """Only the rows where `busy` is True have a job left (the chunk has no other job to
        hand out): the others' actions may be anything from now on. The rows the brains step
        from now on, which `RowEnvironments.narrow` is then told, or None for no change."""


def run_jobs(schedule: Schedule, environments: RowEnvironments, brains: RowBrains,
             rules: Rules, behaviour: RowBehaviour | None,
             normalizer: ObservationNormalizer | None = None) -> Played:
    """The episode loop: every job of `schedule` on its rows, the brains stepping on the
    observations `normalizer` normalises (None: as they are)."""
    watch = None if normalizer is None else \
        RowObservations(normalizer, schedule.rows, schedule.jobs)
    books = _Books(schedule, brains, rules, behaviour, watch)
    begun: Sequence[int]
    begun, ended = environments.start(list(enumerate(books.job_of)))
    # bound once: one row ("off") steps as fast as a loop written for it
    observe, act, step = _observer(environments, watch), brains.step, environments.step

    while True:
        if begun:
            books.begin(begun)  # before settling: a row can end at its reset
        while ended:  # settle every episode that ended; the rows start their next jobs
            begun, ended = environments.start(books.settle(ended))
            if begun:
                books.begin(begun)
        if not books.remaining:
            break
        if books.freed:  # rows left with no job: the brains may step the others only
            books.freed = False
            kept = brains.narrow(books.busy)
            if kept is not None:
                environments.narrow(kept)
                if watch is not None:
                    watch.narrow(kept)
        ended, begun = step(act(observe()))
    environments.finish()
    return Played([outcome for outcome in books.outcomes if outcome is not None],
                  books.descriptors, None if watch is None else watch.jobs)


def _observer(environments: RowEnvironments, watch: RowObservations | None
              ) -> Callable[[], Any]:
    """What the brains step on: the rows' observations, normalised by `watch` if there is
    one (which pools the running rows' into their statistics first)."""
    if watch is None:
        return environments.brain_input
    brain_input, running, see = environments.brain_input, environments.running, watch.see

    def normalized() -> Any:
        return see(brain_input(), running())

    return normalized


class _Books:
    """What `run_jobs` keeps: each row's job, each job's outcome, descriptor and observation
    statistics (`watch`)."""

    def __init__(self, schedule: Schedule, brains: RowBrains, rules: Rules,
                 behaviour: RowBehaviour | None, watch: RowObservations | None) -> None:
        self.schedule, self.brains, self.rules, self.behaviour, self.watch = \
            schedule, brains, rules, behaviour, watch
        self.job_of = schedule.first()
        self.outcomes: list[EpisodeOutcome | None] = [None] * schedule.jobs
        self.descriptors: list[NDArray[np.float64]] | None = \
            None if behaviour is None else [np.empty(0)] * schedule.jobs
        self.remaining = schedule.jobs
        self.busy = np.ones(schedule.rows, dtype=bool)  # the rows that hold a job
        self.freed = False  # a row has been left with no job since the brains last heard

    def begin(self, begun: Sequence[int]) -> None:
        rows = list(begun)
        self.brains.prepare(rows, [self.job_of[row] for row in rows])
        if self.behaviour is not None:
            self.behaviour.begin(rows)
        if self.watch is not None:
            self.watch.begin(rows)

    def settle(self, ended: list[Ended]) -> list[tuple[int, int]]:
        """Record the ended episodes; the (row, job) pairs that start next."""
        starts = []
        for row, total, steps, cause in ended:
            job = self.job_of[row]
            self.outcomes[job] = self.rules.outcome(total, steps, cause)
            if self.descriptors is not None:
                assert self.behaviour is not None
                self.descriptors[job] = self.behaviour.end(row)
            if self.watch is not None:
                self.watch.end(row, job)
            self.remaining -= 1
            following = self.schedule.after(job)
            if following is None:
                self.busy[row] = False
                self.freed = True
            else:
                self.job_of[row] = following
                starts.append((row, following))
        return starts


def results(played: Played, runs: int) -> list[EvaluationResult]:
    """Each candidate's result from its `runs` consecutive jobs: the mean return, the steps and
    NaN/inf episodes summed, the mean of the episodes' descriptors, the episodes' observation
    statistics pooled in episode order."""
    outcomes, descriptors = played.outcomes, played.descriptors
    observations = None if played.observations is None else \
        candidate_statistics(played.observations, runs)
    out = []
    for candidate, start in enumerate(range(0, len(outcomes), runs)):
        episodes = outcomes[start:start + runs]
        out.append(EvaluationResult(
            sum(o.total for o in episodes) / runs, sum(o.steps for o in episodes),
            sum(o.nonfinite for o in episodes),
            None if descriptors is None
            else mean_of_episodes(list(descriptors[start:start + runs])),
            None if observations is None else observations[candidate]))
    return out
