"""The `[stop]` table: when a run counts as solved, and a budget of evaluations.

Benchmarks report the evaluations a method needed until it solved a task, so a run has to
stop at the generation that solved it, and say so. `fitness` is solved once a candidate's raw
fitness (its mean return) reaches it; `champion_tests` are episodes the generation's best
candidate must pass as well (running/stopping.py runs them); `evaluations` ends a run that has
spent its budget without solving. docs/benchmarks.md shows the pole-balancing criteria written
as such a table.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from evo_core.contract.config_models import EnvironmentConfig, StrictModel

__all__ = ["ChampionTest", "StopConfig"]


class ChampionTest(StrictModel):
    """Episodes the generation's best candidate plays after every generation: episode i resets
    the environment with seed i and the brain to its initial state; the test passes when at
    least `min_passes` of them return `min_return` or more."""

    environment: EnvironmentConfig = Field(
        ..., description="A gymnasium id, or a table with id, kwargs and wrappers, as "
        "`environment` (its spaces must be those of the training environment).")
    episodes: int = Field(1, ge=1, le=1_000_000, description="Episodes of the test.")
    min_return: float = Field(..., description="The return an episode must reach to pass.")
    min_passes: int | None = Field(
        None, ge=1, description="Episodes that must pass; unset: all of them.")

    @model_validator(mode="after")
    def _passes_fit(self) -> ChampionTest:
        if self.min_passes is not None and self.min_passes > self.episodes:
            raise ValueError(f"min_passes ({self.min_passes}) cannot exceed episodes "
                             f"({self.episodes})")
        return self

    @property
    def passes_needed(self) -> int:
        return self.episodes if self.min_passes is None else self.min_passes


class StopConfig(StrictModel):
    """Solved: a candidate reached `fitness` (when set) and the generation's best passed every
    champion test (when there are any). The run stops at the generation that solved it, or at
    the first one after which `evaluations` were spent, or after `generations`."""

    fitness: float | None = Field(
        None, description="Solved once a candidate's raw fitness (mean return) reaches this.")
    evaluations: int | None = Field(
        None, ge=1, description="Stop, unsolved, after the generation that brings the "
        "evaluations (candidates evaluated; test episodes are not counted) to this budget.")
    champion_tests: tuple[ChampionTest, ...] = Field(
        (), description="Tests the generation's best candidate must pass, in order, for the run "
        "to count as solved: [{ environment = ..., episodes = N, min_return = R, "
        "min_passes = K }].")

    @model_validator(mode="after")
    def _has_a_criterion(self) -> StopConfig:
        if self.fitness is None and self.evaluations is None and not self.champion_tests:
            raise ValueError("set fitness, evaluations or champion_tests (an empty [stop] table "
                             "never stops a run)")
        return self

    @property
    def can_solve(self) -> bool:
        """Whether a criterion of success is set (a budget alone only stops)."""
        return self.fitness is not None or bool(self.champion_tests)
