"""Stopping a run when it is solved or its budget is spent: the `[stop]` table at work.

After every generation `Stopping.after_generation` decides. When a candidate reached
`stop.fitness` (or no fitness is set) and there are champion tests, the generation's best
candidate plays them in this process, in order, whatever the handler: episode i of a test
resets the environment with seed i and the brain to its initial state (a brain that draws
random numbers gets a Generator seeded with i), through the same `EpisodeRunner` that
evaluations use. A test stops as soon as its outcome is certain (enough passes, or too many
failures), and the tests after a failed one are not played. Test episodes are counted apart
from evaluations, as the benchmarks' papers count them.

A checkpoint records the stop columns of its generation (`solved`, `test_episodes`, as log.csv
has them) and a resume continues from that record, checked against the config, the
checkpoint's other values and log.csv's last kept row (`running/checkpoint_checks.py`); whether
the budget is spent follows from the checkpoint's evaluations. A run that stopped writes its
checkpoint at that generation, and resuming it trains nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from evo_core.config.schema import EpisodesConfig
from evo_core.config.stop import ChampionTest, StopConfig
from evo_core.contract.config_models import EnvironmentConfig
from evo_core.contract.observation_statistics import EvaluationContext, ObservationNormalizer
from evo_core.contract.protocols import IBrain, IBrainTemplate
from evo_core.environments import probe_spaces
from evo_core.errors import UserError
from evo_core.evaluation.episodes import EpisodeRunner
from evo_core.results.log_file import STOP_COLUMNS

__all__ = ["STOP_COLUMNS", "StopState", "Stopping", "check_champion_tests", "outcome_line",
           "restored_stop"]


@dataclass
class StopState:
    """Whether the run is solved or out of budget, and the test episodes played so far."""

    solved: bool = False
    budget_spent: bool = False
    test_episodes: int = 0

    @property
    def done(self) -> bool:
        return self.solved or self.budget_spent

    def columns(self) -> dict[str, int]:
        """The log.csv cells of STOP_COLUMNS."""
        return {"solved": int(self.solved), "test_episodes": self.test_episodes}


def restored_stop(config: StopConfig, columns: dict[str, int], evaluations: int) -> StopState:
    """The state of a checkpoint whose stop columns are `columns` (checked by
    `checkpoint_checks.stop_columns`) after `evaluations`."""
    solved = columns["solved"] == 1
    spent = (config.evaluations is not None and not solved
             and evaluations >= config.evaluations)
    return StopState(solved, spent, columns["test_episodes"])


class Stopping:
    """Decides after each generation; holds one runner per champion test, made when first
    needed and closed by `close`."""

    def __init__(self, config: StopConfig, template: IBrainTemplate) -> None:
        self.config = config
        self.template = template
        self._runners: dict[int, EpisodeRunner] = {}
        #: the genome last tested, its outcome and the test episodes that took: an elitist
        #: optimizer (NEAT) keeps the same champion for dozens of generations, and its
        #: seeded test episodes would only repeat themselves
        self._last: tuple[bytes, bool, int] | None = None

    def after_generation(self, state: StopState, genomes: NDArray[np.float64],
                         fitness: NDArray[np.float64], evaluations: int,
                         normalizer: ObservationNormalizer | None = None) -> None:
        """Update `state` for a generation of `genomes` with raw `fitness`, `evaluations`
        being the run's count after it; the tests' brains see observations through the
        generation's `normalizer` (None: as they are), as in training."""
        config = self.config
        best = int(np.argmax(fitness))
        if config.can_solve and (config.fitness is None or fitness[best] >= config.fitness):
            state.solved = self._passes_tests(genomes[best], state, normalizer)
        if not state.solved and config.evaluations is not None \
                and evaluations >= config.evaluations:
            state.budget_spent = True

    def _passes_tests(self, genome: NDArray[np.float64], state: StopState,
                      normalizer: ObservationNormalizer | None) -> bool:
        """Whether `genome` passes every test; the episodes it takes are counted in `state`
        also when the outcome is the last one's, for the same genome (the tests' episodes are
        seeded by their index, so they would repeat it step for step): a resumed run, which
        tests again, logs what an uninterrupted one does."""
        genome = np.ascontiguousarray(genome, dtype=np.float64)
        key = genome.tobytes() if normalizer is None else \
            genome.tobytes() + normalizer.mean.tobytes() + normalizer.std.tobytes()
        if self._last is not None and self._last[0] == key:
            state.test_episodes += self._last[2]
            return self._last[1]
        passed, played = self._run_tests(genome, EvaluationContext(normalizer))
        self._last = (key, passed, played)
        state.test_episodes += played
        return passed

    def _run_tests(self, genome: NDArray[np.float64], context: EvaluationContext
                   ) -> tuple[bool, int]:
        """(passed all, episodes played) of the tests in order, stopping at a failed one."""
        total = 0
        for index, test in enumerate(self.config.champion_tests):
            brain = self.template.make(genome)
            runner = self._runner(index, test)
            runner.use_context(context)
            passed, played = self._test(runner, brain, test)
            total += played
            if not passed:
                return False, total
        return True, total

    def _test(self, runner: EpisodeRunner, brain: IBrain, test: ChampionTest
              ) -> tuple[bool, int]:
        """(passed, episodes played) of one test."""
        needed, allowed_failures = test.passes_needed, test.episodes - test.passes_needed
        passes = failures = 0
        for episode in range(test.episodes):
            outcome = runner.run_episode(brain, episode)  # reset, Generator and env seeded by i
            if outcome.total >= test.min_return and not outcome.nonfinite:
                passes += 1
                if passes >= needed:
                    return True, episode + 1
            else:
                failures += 1
                if failures > allowed_failures:
                    return False, episode + 1
        return False, test.episodes  # not reached: one of the two returns above ends the loop

    def _runner(self, index: int, test: ChampionTest) -> EpisodeRunner:
        runner = self._runners.get(index)
        if runner is None:
            runner = self._runners[index] = EpisodeRunner(
                self.template, test.environment, EpisodesConfig(runs=test.episodes))
        return runner

    def close(self) -> None:
        runners, self._runners = list(self._runners.values()), {}
        for runner in runners:
            runner.close()


def check_champion_tests(config: StopConfig | None, environment: EnvironmentConfig,
                         source: str) -> None:
    """A UserError, before the run folder exists, for a champion test whose environment cannot
    be made or whose spaces differ from those of the training `environment`."""
    if config is None or not config.champion_tests:
        return
    trained = probe_spaces(environment, source)
    for index, test in enumerate(config.champion_tests):
        where = f"{source}: stop.champion_tests[{index}]"
        tested = probe_spaces(test.environment, where)
        if tested != trained:
            raise UserError(f"{where}: environment {test.environment.id!r} has the spaces "
                            f"{tested[0]} and {tested[1]}, but the brain is trained on "
                            f"{trained[0]} and {trained[1]}; test on an environment with the "
                            "training environment's observations and actions")


def outcome_line(config: StopConfig, state: StopState, generation: int, evaluations: int
                 ) -> str:
    """The line `evo train` and `evo resume` end with when the run has a `[stop]` table."""
    if state.solved:
        outcome = f"solved at generation {generation} after {evaluations} evaluations"
    elif state.budget_spent:
        outcome = (f"not solved; the budget of {config.evaluations} evaluations was spent at "
                   f"generation {generation} ({evaluations} evaluations)")
    else:
        outcome = f"not solved in {generation} generation(s) ({evaluations} evaluations)"
    tests = (f"; {state.test_episodes} champion test episode(s) were played besides, not "
             "counted as evaluations" if config.champion_tests else "")
    return f"evo: {outcome}{tests}"
