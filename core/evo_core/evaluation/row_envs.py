"""The environments of the engine's rows (evaluation/rows.py): each row its own, or one vector
environment.

`OwnEnvironments`: row `i` has its own `gymnasium.Env`, reset for a candidate's first episode
with the seed the evaluation seed gives it (`rows.environment_seed`) and continuing its own
random stream for the candidate's next episodes, so every row plays exactly the episodes of
"off" ("sync": many rows, stepped one after another per step; `LoneEnvironment` is "off", one
such row, and both decide how a step ends in `_row_step`).

`VectorRows`: the rows are the environments of one vector environment (gymnasium's native one or
envpool's pool, evaluation/vector_envs.py), stepped in one call, reset once per chunk with one
seed (`rows.vector_seed`), or, for one that seeds its rows (`vector_envs.SeededRows`), each row
with the seed of its first job's episode (`rows.episode_seed`). Both reset an environment whose
episode ended on the step after the end (that step's action is ignored and it is not counted); a
row whose job begins waits for that step. A row whose episode the runner ends itself (max_steps,
a NaN/inf) cannot be reset alone: it waits until its environment ends that episode; when no row
is running and some wait, the vector environment is reset as a whole (continuing its stream).
Which episode a job gets therefore depends on the rows, not only on the seed (but for the first
episodes of the rows of an environment that seeds them): native and envpool are reproducible for
a seed and a processing set-up (workers, `episodes.batch_rows`), and differ from "off".

Every row records, per step, the return so far (a NaN/inf reward is not added) and the steps;
which of them ended, and why, the episode rules decide (`EpisodeRules.after_step` and
`after_reset`, contract/episode_rules.py), called with one row's Python values ("off" and sync's
rows: `_row_step`) or with masks over a vector environment's rows, where a condition that one
whole-batch test shows for every row (every reward finite, no environment ended) is a Python
bool. What an ended episode scores is `rows.Rules.outcome`'s. What the environment raises
(in reset, step, or the behaviour's `state` hook) is a `BatchRowFailed` naming the row's
candidate, caused by an `EnvironmentRaised`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core.authoring.batching import split_rows, stack_rows
from evo_core.contract.episode_rules import GOING
from evo_core.errors import BatchRowFailed, EnvironmentRaised
from evo_core.evaluation.behaviour import RowBehaviour
from evo_core.evaluation.observation_shape import (
    batch_shape_checked,
    rows_shape_checked,
    shape_checked,
)
from evo_core.evaluation.rows import Ended, Rules, episode_seed, vector_seed
from evo_core.evaluation.vector_envs import SeededRows, SomeEnvironments
from evo_core.interrupts import is_interrupt

__all__ = ["LoneEnvironment", "OwnEnvironments", "VectorRows", "finite_batch", "finite_check",
           "finite_rows", "take_rows"]

BoolArray = NDArray[np.bool_]

#: Up to this many entries a Python sum of `tolist()` is the fastest finiteness test.
_SMALL = 64


def _small_box_finite(value: Any) -> bool:
    try:
        return math.isfinite(sum(value.tolist()))  # NaN and inf survive a sum
    except (AttributeError, TypeError):  # a list, or a numpy scalar (`tolist()` gives a float)
        return _box_finite(np.asarray(value, dtype=np.float64))


def _box_finite(value: Any) -> bool:
    return math.isfinite(float(np.sum(value)))


def finite_check(space: gym.Space[Any]) -> Callable[[Any], bool] | None:
    """A fast test for NaN/inf in observations of `space`, or None where none can occur."""
    if isinstance(space, (gym.spaces.Discrete, gym.spaces.MultiDiscrete, gym.spaces.MultiBinary)):
        return None
    if isinstance(space, gym.spaces.Box) and space.dtype is not None and space.dtype.kind == "f":
        return _small_box_finite if len(space.shape) == 1 and space.shape[0] <= _SMALL \
            else _box_finite
    return _all_finite


def _all_finite(value: Any) -> bool:
    """Any observation: arrays, numbers of every kind (numpy scalars too: `np.float32` is no
    Python float), and the tuples, lists and dicts that composite spaces are made of."""
    if isinstance(value, np.ndarray):
        return value.dtype.kind not in "fc" or bool(np.isfinite(value).all())
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (complex, np.inexact)):
        return bool(np.isfinite(value))
    if isinstance(value, (tuple, list)):
        return all(_all_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_all_finite(v) for v in value.values())
    return True


def finite_rows(space: gym.Space[Any]) -> Callable[[Any], BoolArray] | None:
    """Which rows of a batch of observations are free of NaN/inf, or None where none can be."""
    check = finite_check(space)
    if check is None:
        return None
    if isinstance(space, gym.spaces.Box):
        def box_rows(observations: Any) -> BoolArray:
            array = np.asarray(observations)
            rows: BoolArray = np.isfinite(array.reshape(array.shape[0], -1)).all(axis=1)
            return rows

        return box_rows

    def any_rows(observations: Any) -> BoolArray:
        return np.array([check(row) for row in split_rows(space, observations)], dtype=bool)

    return any_rows


def finite_batch(space: gym.Space[Any]) -> Callable[[Any], bool] | None:
    """Whether a whole batch of observations of a float Box `space` is free of NaN/inf, in one
    reduction (NaN and inf survive a sum; a sum that overflows reads as "maybe not", and
    `finite_rows` then tests the rows one by one), or None for other spaces (no test at all
    for a Box of integers, whose rows are finite; `finite_rows` every step for the rest)."""
    if not isinstance(space, gym.spaces.Box):
        return None
    if space.dtype is None or space.dtype.kind != "f":
        return None

    return _sum_is_finite


def _sum_is_finite(values: Any) -> bool:
    """No NaN/inf in `values`, in one reduction (NaN and inf survive a sum; a sum that
    overflows reads as "maybe not", and the caller then tests entry by entry)."""
    return math.isfinite(float(np.sum(values)))


def _failed(candidate: int, raised: EnvironmentRaised) -> BatchRowFailed:
    """The environment's error (an observation of the wrong shape), blamed on `candidate`."""
    failed = BatchRowFailed(candidate)
    failed.__cause__ = raised
    return failed


def _observation_ok(ok: Callable[[Any], bool], observation: Any, candidate: int) -> bool:
    """`ok(observation)`, with an observation of the wrong shape blamed on `candidate`."""
    try:
        return ok(observation)
    except EnvironmentRaised as raised:
        raise _failed(candidate, raised) from raised


def _blame(candidate: int, call: str, exc: BaseException) -> BaseException:
    """What the environment raised, as the handler reports it; an interrupt as it is."""
    if is_interrupt(exc):
        return exc
    raised = EnvironmentRaised(call)
    raised.__cause__ = exc
    failed = BatchRowFailed(candidate)
    failed.__cause__ = raised
    return failed


def take_rows(batched: Any, rows: NDArray[np.intp]) -> Any:
    """Rows `rows` of a batch in vector-environment layout (arrays, tuples, dicts of them)."""
    if isinstance(batched, tuple):
        return tuple(take_rows(part, rows) for part in batched)
    if isinstance(batched, dict):
        return {key: take_rows(part, rows) for key, part in batched.items()}
    return np.asarray(batched)[rows]


def _row_step(rules: Rules, total: float, reward: float, terminated: Any, truncated: Any,
              steps: int, ok: Callable[[Any], bool] | None, observation: Any
              ) -> tuple[float, int]:
    """A row's return after a step of its own environment, and why its episode ends with that
    step (`GOING`: it goes on): the episode rules on one row's Python values (`ok` raises
    `EnvironmentRaised` for an observation of the wrong shape)."""
    reward_ok = math.isfinite(reward)
    if reward_ok:
        total += reward
    return total, rules.after_step(np, reward_ok, bool(terminated or truncated), steps,
                                   ok is None or ok(observation))


def _reset_cause(rules: Rules, ok: Callable[[Any], bool] | None, observation: Any,
                 candidate: int) -> int:
    """Why a row's episode ends at its reset (`GOING`: it does not): the episode rules on its
    first observation, one of the wrong shape blamed on `candidate`."""
    cause: int = rules.after_reset(np, ok is None or _observation_ok(ok, observation, candidate))
    return cause


#: The one row of `LoneEnvironment`.
_ROW = (0,)


class LoneEnvironment:
    """One row with its own environment: per-genome evaluation ("off"). What `OwnEnvironments`
    does for many rows, with the row's books in attributes: a step is one call of the
    environment and of `_row_step`, nothing per row."""

    def __init__(self, env: gym.Env[Any, Any], runs: int, env_seed: int, rules: Rules,
                 behaviour: RowBehaviour | None) -> None:
        self.env = env
        self._runs = runs
        self._env_seed = env_seed
        self._rules = rules
        self._behaviour = behaviour
        # the observation's shape (the environment's bug if wrong), then NaN/inf
        self._observation_ok = shape_checked(env.observation_space, finite_check)
        self.observation: Any = None
        self._total = 0.0
        self._steps = 0

    def brain_input(self) -> Any:
        return self.observation

    def running(self) -> Sequence[int]:
        """The row, which runs whenever the brain steps."""
        return _ROW

    def narrow(self, rows: NDArray[np.intp]) -> None:
        """One row: never narrowed."""

    def start(self, starts: Sequence[tuple[int, int]]) -> tuple[list[int], list[Ended]]:
        if not starts:  # the row's last episode has ended
            return [], []
        ((_, job),) = starts
        try:
            self.observation, _ = self.env.reset(
                seed=self._env_seed if job % self._runs == 0 else None)
        except BaseException as exc:  # noqa: BLE001 - the environment's, blamed on it (interrupts pass)
            blamed = _blame(0, "reset", exc)
            raise blamed from blamed.__cause__
        self._total, self._steps = 0.0, 0
        cause = _reset_cause(self._rules, self._observation_ok, self.observation, 0)
        return [0], ([] if cause == GOING else [(0, 0.0, 0, cause)])

    def step(self, action: Any) -> tuple[list[Ended], Sequence[int]]:
        try:
            observation, reward, terminated, truncated, _ = self.env.step(action)
            reward = float(reward)
        except BaseException as exc:  # noqa: BLE001 - the environment's, blamed on it (interrupts pass)
            blamed = _blame(0, "step", exc)
            raise blamed from blamed.__cause__
        self.observation = observation
        steps = self._steps = self._steps + 1
        try:
            total, cause = _row_step(self._rules, self._total, reward, terminated, truncated,
                                     steps, self._observation_ok, observation)
        except EnvironmentRaised as raised:  # an observation of the wrong shape
            raise _failed(0, raised) from raised
        self._total = total
        if self._behaviour is not None:
            self._behaviour.record([0], [observation], [action])
        return ([] if cause == GOING else [(0, total, steps, cause)]), ()

    def finish(self) -> None:
        pass


class OwnEnvironments:
    """Row `i` steps `envs[i]` ("sync"); the brains take the rows' observations stacked (a
    batch)."""

    def __init__(self, envs: Sequence[gym.Env[Any, Any]], runs: int, env_seeds: Sequence[int],
                 rules: Rules, behaviour: RowBehaviour | None) -> None:
        self.envs = envs
        self._runs = runs
        self._env_seeds = env_seeds
        self._rules = rules
        self._behaviour = behaviour
        space = envs[0].observation_space
        self._observation_space, self._action_space = space, envs[0].action_space
        # the observation's shape (the environment's bug if wrong), then NaN/inf
        self._observation_ok = shape_checked(space, finite_check)
        count = len(envs)
        # a row without a job steps its brain on a harmless input
        self._neutral: Any = split_rows(space, gym.vector.utils.create_empty_array(space, 1))[0]
        self.observations: list[Any] = [self._neutral] * count
        self._totals = [0.0] * count
        self._steps = [0] * count
        self._candidate = [0] * count
        self.live: list[int] = []
        self._kept: list[int] | None = None  # the rows the brains step (None: all)

    def brain_input(self) -> Any:
        observations = self.observations
        if self._kept is not None:
            observations = [observations[row] for row in self._kept]
        return stack_rows(self._observation_space, observations)

    def running(self) -> Sequence[int]:
        return self.live

    def narrow(self, rows: NDArray[np.intp]) -> None:
        self._kept = rows.tolist()

    def start(self, starts: Sequence[tuple[int, int]]) -> tuple[list[int], list[Ended]]:
        begun: list[int] = []
        ended: list[Ended] = []
        runs, ok = self._runs, self._observation_ok
        for row, job in starts:
            candidate, episode = divmod(job, runs)
            self._candidate[row] = candidate
            try:
                observation, _ = self.envs[row].reset(
                    seed=self._env_seeds[candidate] if episode == 0 else None)
            except BaseException as exc:  # noqa: BLE001 - the environment's, blamed on it (interrupts pass)
                blamed = _blame(candidate, "reset", exc)
                raise blamed from blamed.__cause__
            self.observations[row] = observation
            self._totals[row], self._steps[row] = 0.0, 0
            begun.append(row)
            cause = _reset_cause(self._rules, ok, observation, candidate)
            if cause != GOING:
                ended.append((row, 0.0, 0, cause))
            else:
                self.live.append(row)
        return begun, ended

    def step(self, actions: Any) -> tuple[list[Ended], Sequence[int]]:
        # an array's rows are its entries: only the running rows' are looked at
        per_row: Any = actions if isinstance(actions, np.ndarray) else \
            split_rows(self._action_space, actions)
        envs, observations, totals, counts = self.envs, self.observations, self._totals, \
            self._steps
        rules, ok = self._rules, self._observation_ok
        ended: list[Ended] = []
        live = self.live
        row = -1
        try:
            for row in live:
                try:
                    observation, reward, terminated, truncated, _ = envs[row].step(per_row[row])
                    reward = float(reward)
                except BaseException as exc:  # noqa: BLE001 - the environment's, blamed on it (interrupts pass)
                    blamed = _blame(self._candidate[row], "step", exc)
                    raise blamed from blamed.__cause__
                observations[row] = observation
                steps = counts[row] = counts[row] + 1
                total, cause = _row_step(rules, totals[row], reward, terminated, truncated,
                                         steps, ok, observation)
                totals[row] = total
                if cause != GOING:
                    ended.append((row, total, steps, cause))
        except EnvironmentRaised as raised:  # the shape test: an observation of the wrong shape
            raise _failed(self._candidate[row], raised) from raised
        self._stepped(live, per_row, ended)
        return ended, ()

    def _stepped(self, live: list[int], per_row: Sequence[Any], ended: list[Ended]) -> None:
        """After a step of the rows: their behaviour recorded, the ended rows out of `live`."""
        if self._behaviour is not None:
            self._record(live, per_row)
        if ended:
            finished = {row for row, *_ in ended}
            self.live = [row for row in live if row not in finished]
            for row in finished:
                self.observations[row] = self._neutral

    def _record(self, live: list[int], per_row: Sequence[Any]) -> None:
        assert self._behaviour is not None
        try:
            self._behaviour.record(live, [self.observations[row] for row in live],
                                   [per_row[row] for row in live])
        except BatchRowFailed as failed:  # the `state` hook: the row's environment's code
            raise BatchRowFailed(self._candidate[failed.row]) from failed.__cause__

    def finish(self) -> None:
        self.live = []


class VectorRows:
    """The rows are the `count` environments of `vector_env`; row `i` runs a job of candidate
    `job // runs` (named when the environment raises).

    A step of the solved regime, where no episode ends, costs a handful of whole-batch calls:
    one reduction each says that every reward and every observation is finite (the masked
    tests run only when one is not), a row's steps are the vector steps since it began (read
    only when an episode ends, or when max_steps could be reached), and rows that wait for
    their environment's reset are looked at only when some do.

    A vector environment that steps some of its environments (`SomeEnvironments`: envpool's)
    steps only the rows that run or wait for their reset once some have no job left: a chunk's
    last long episode then costs one environment's step, not `count`. Which episodes the rows
    play is the same either way (an environment with no job left is never used again)."""

    def __init__(self, vector_env: Any, count: int, seeds: NDArray[np.int64], runs: int,
                 rules: Rules, behaviour: RowBehaviour | None,
                 observation_space: gym.Space[Any]) -> None:
        """`seeds`: the candidates' evaluation seeds."""
        self._env = vector_env
        self._some = vector_env if isinstance(vector_env, SomeEnvironments) else None
        self._count = count
        self._owned = False  # `observations` is this object's own array (some were stepped)
        self._seeds = seeds
        self._runs = runs
        self._rules = rules
        self._behaviour = behaviour
        self._finite = rows_shape_checked(observation_space, finite_rows)
        self._all_finite = batch_shape_checked(observation_space, finite_batch)
        self.observations: Any = None
        self._totals = np.zeros(count)
        self._clock = 0  # vector steps since the chunk began
        self._began = np.zeros(count, dtype=np.int64)  # the clock when the row's episode began
        self._oldest = 0  # at most the earliest `_began` of a running row
        self._live = np.zeros(count, dtype=bool)  # in an episode that counts
        self._live_count = 0
        self._waiting = np.zeros(count, dtype=bool)  # a job waits for the environment's reset
        self._waiting_count = 0
        # the environments that ended in the last step (reset by the next) and the step before
        self._finished = np.zeros(count, dtype=bool)
        self._finished_before = np.zeros(count, dtype=bool)
        self._any_finished = self._any_finished_before = False
        self._job = np.zeros(count, dtype=np.int64)
        self._started = False
        self._kept: NDArray[np.intp] | None = None  # the rows the brains step (None: all)

    def brain_input(self) -> Any:
        if self._kept is None:
            return self.observations
        return take_rows(self.observations, self._kept)

    def running(self) -> NDArray[np.intp]:
        return np.flatnonzero(self._live)

    def narrow(self, rows: NDArray[np.intp]) -> None:
        self._kept = rows

    def start(self, starts: Sequence[tuple[int, int]]) -> tuple[list[int], list[Ended]]:
        rows = [row for row, _ in starts]
        self._job[rows] = [job for _, job in starts]
        self._waiting[rows] = True
        self._waiting_count = int(np.count_nonzero(self._waiting))
        if self._started:
            return [], []
        self._started = True
        return self._reset(self._first_seed())

    def _first_seed(self) -> int | list[int]:
        """One seed for the whole vector environment, from the chunk's evaluation seeds; or,
        where it seeds its rows (`SeededRows`), each row's from its first job: a generation's
        candidates that share their evaluation seed start their episodes alike."""
        if not isinstance(self._env, SeededRows):
            return vector_seed(self._seeds)
        runs = self._runs
        return [episode_seed(int(self._seeds[job // runs]), job % runs)
                for job in self._job.tolist()]

    def _reset(self, seed: int | list[int] | None) -> tuple[list[int], list[Ended]]:
        """The whole vector environment; every waiting row begins."""
        try:
            self.observations, _ = self._env.reset(seed=seed)
            self._owned = False
        except BaseException as exc:  # noqa: BLE001 - the environment's, blamed on it (interrupts pass)
            waiting = np.flatnonzero(self._waiting)
            blamed = _blame(int(self._job[waiting[0]]) // self._runs if len(waiting) else 0,
                            "reset", exc)
            raise blamed from blamed.__cause__
        self._finished[:] = False
        self._finished_before[:] = False
        self._any_finished = self._any_finished_before = False
        return self._begin(self._waiting.copy())

    def _first_running(self) -> int:
        """The candidate of the first running row (blamed for what the pool did)."""
        running = np.flatnonzero(self._live)
        return int(self._job[running[0]]) // self._runs if len(running) else 0

    def _finite_rows(self) -> BoolArray | bool:
        """Which rows' observations are free of NaN/inf (True: all of them, or no NaN/inf can
        occur); an observation of the wrong shape is the environment's error (blamed, as a
        step's, on the first running row)."""
        if self._finite is None:
            return True
        try:
            if self._all_finite is not None and self._all_finite(self.observations):
                return True
            rows = self._finite(self.observations)
        except EnvironmentRaised as raised:
            raise _failed(self._first_running(), raised) from raised
        return True if rows.all() else rows

    def _begin(self, rows: BoolArray) -> tuple[list[int], list[Ended]]:
        self._waiting &= ~rows
        self._waiting_count = int(np.count_nonzero(self._waiting))
        self._totals[rows] = 0.0
        self._began[rows] = self._clock
        if not self._live_count:
            self._oldest = self._clock
        self._live |= rows
        begun = np.flatnonzero(rows).tolist()
        cause = self._rules.after_reset(np, self._finite_rows()) if begun else GOING
        if isinstance(cause, int):  # no row's episode ends at its reset
            self._live_count = int(np.count_nonzero(self._live))
            return begun, []
        ending = rows & (cause != GOING)
        self._live &= ~ending
        self._live_count = int(np.count_nonzero(self._live))
        ended = np.flatnonzero(ending)
        return begun, list(zip(ended.tolist(), [0.0] * len(ended), [0] * len(ended),
                               cause[ended].tolist()))

    def step(self, actions: Any) -> tuple[list[Ended], Sequence[int]]:
        if not self._live_count:  # only waiting rows: no step would start them sooner than a reset
            begun, ended = self._reset(None)
            return ended, begun
        try:
            if self._some is not None and isinstance(actions, np.ndarray) and \
                    self._live_count + self._waiting_count < self._count:
                rewards, terminated, truncated = self._step_some(self._some, actions)
            else:
                self.observations, rewards, terminated, truncated, _ = self._env.step(actions)
                self._owned = False
        except BaseException as exc:  # noqa: BLE001 - the environment's, blamed on it (interrupts pass)
            # the pool cannot tell which environment raised: blame the first running row
            blamed = _blame(self._first_running(), "step", exc)
            raise blamed from blamed.__cause__
        self._clock += 1
        if self._behaviour is not None:
            rows = np.flatnonzero(self._live)
            self._behaviour.record(rows, np.asarray(self.observations)[rows],
                                   np.asarray(actions)[rows])
        # an environment that ended in this step resets in the next one
        self._finished, self._finished_before = self._finished_before, self._finished
        self._any_finished_before = self._any_finished
        np.logical_or(terminated, truncated, out=self._finished)
        self._any_finished = bool(np.count_nonzero(self._finished))
        ended = self._account(np.asarray(rewards))
        if not (self._waiting_count and self._any_finished_before):
            return ended, []
        beginning = self._waiting & self._finished_before
        if not beginning.any():
            return ended, []
        begun, at_reset = self._begin(beginning)
        return ended + at_reset, begun

    def _step_some(self, env: SomeEnvironments, actions: NDArray[Any]
                   ) -> tuple[NDArray[Any], BoolArray, BoolArray]:
        """Step the rows that run or wait; the others keep their last observation and neither
        earn nor end anything."""
        ids = np.flatnonzero(self._live | self._waiting)
        stepped, observations, rewards, terminated, truncated = env.step_some(actions[ids], ids)
        if not self._owned:
            self.observations = np.array(self.observations)
            self._owned = True
        self.observations[stepped] = observations
        return (self._scattered(stepped, rewards, np.float64),
                self._scattered(stepped, terminated, np.bool_),
                self._scattered(stepped, truncated, np.bool_))

    def _scattered(self, rows: Any, values: Any, dtype: type[np.generic]) -> NDArray[Any]:
        """`values` of the stepped `rows` in an array of every row, zero (False) elsewhere."""
        every = np.zeros(self._count, dtype=dtype)
        every[rows] = values
        return every

    def _account(self, rewards: NDArray[Any]) -> list[Ended]:
        """The running rows' step: their returns (a NaN/inf reward is not added), and the
        episodes that ended, as the episode rules say. Each rule's condition is a Python bool
        where one whole-batch test shows it for every row: every reward finite, no environment
        ended, no row near max_steps, every observation finite."""
        live, totals = self._live, self._totals
        reward_ok: BoolArray | bool = True
        going = live
        if not _sum_is_finite(rewards):  # rare: which rows
            reward_ok = np.isfinite(rewards)
            going = live & reward_ok
        if going is live and self._live_count == self._count:  # every row runs: no mask
            np.add(totals, rewards, out=totals)  # (a float32 reward is added as a float64)
        else:
            np.add(totals, rewards, out=totals, where=going)
        cause = self._rules.after_step(np, reward_ok,
                                       self._finished if self._any_finished else False,
                                       self._steps_near_limit(), self._finite_rows())
        if isinstance(cause, int):  # no rule held for any row
            return []
        ending = live & (cause != GOING)
        if not np.count_nonzero(ending):
            return []
        live &= ~ending
        self._live_count = int(np.count_nonzero(live))
        rows = np.flatnonzero(ending)
        steps = self._clock - self._began[rows]
        return list(zip(rows.tolist(), totals[rows].tolist(), steps.tolist(),
                        cause[rows].tolist()))

    def _steps_near_limit(self) -> NDArray[np.int64] | None:
        """Every row's steps in its episode, or None while no running row can have reached
        max_steps: the rows' steps are read only once the oldest running row could."""
        limit = self._rules.limit
        if limit is None or self._clock - self._oldest < limit:
            return None
        running = self._began[self._live]
        if len(running):
            self._oldest = int(np.min(running))
        return self._clock - self._began

    def finish(self) -> None:
        self._live[:] = False
        self._live_count = 0
        self._waiting[:] = False
        self._waiting_count = 0
