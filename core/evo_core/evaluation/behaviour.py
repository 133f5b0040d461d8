"""Behaviour descriptors: what an evaluation did, recorded beside its episodes.

`WindowRecorder` turns each row's episode of per-step values into a fixed-length vector and
knows nothing of environments: a step of every running row is one array assignment (its input is
a flat float array per row, so a flattening of other spaces can sit in front of it).
`RowBehaviour` is the episode engine's side (evaluation/rows.py): it picks the value the
`[behaviour]` table names out of each step of the rows, and `mean_of_episodes` combines the
episodes of one evaluation. docs/behaviour.md states the semantics; they are:

* windows: the mean of the values of `interval` consecutive steps; a last, partial window is the
  mean of the steps it has (an episode's end is information, not noise to drop);
* the first `max_length` windows are kept; an episode with fewer repeats its last window (an
  agent that stopped early stays where it stopped: zeros would make every early stop look like
  standing at the origin, and a robot's final position is what a maze descriptor is about);
  an episode without a single step gives zeros;
* `interval = "final"`: only the value after the last step;
* several episodes: the element-wise mean, which keeps the length fixed;
* float64 throughout, and a NaN or infinity in a recorded value becomes 0 (the episode that met
  it already ends with `episodes.nonfinite_penalty`; a NaN descriptor would poison every
  distance to it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core.config.behaviour import BehaviourConfig
from evo_core.contract.protocols import IBehaviourState, IVectorBehaviourState
from evo_core.environments import make_environment, wrapper_chain
from evo_core.errors import BatchRowFailed, EnvironmentRaised, UserError
from evo_core.evaluation.flattening import Flattener, flat_state, flattener
from evo_core.interrupts import describe_raised, is_interrupt

__all__ = ["WindowRecorder", "RowBehaviour", "state_provider",
           "check_state_provider", "check_behaviour", "mean_of_episodes"]

StateProvider = Callable[[], Any]

#: The most numbers one episode's recorder buffers (8 bytes each: 800 MB).
MOST_RECORDED = 100_000_000


class WindowRecorder:
    """Each of `rows` rows' episode of values as `windows` window means of `width` entries.

    `record` only copies the values into preallocated rows (the steps beyond the last window are
    not even copied); the means are taken once per episode, in `end`. That keeps the per-step
    cost to one numpy assignment for the whole batch."""

    def __init__(self, interval: int | None, windows: int, width: int, rows: int = 1) -> None:
        """`interval` None: keep only the last value (`interval = "final"`). A UserError if the
        buffer of one episode would not fit in memory."""
        self.interval = interval
        self.windows = 1 if interval is None else windows
        self.width = width
        self._capacity = 1 if interval is None else windows * interval
        if self._capacity * width > MOST_RECORDED:
            raise UserError(f"behaviour: max_length x interval x width = {self.windows} x "
                            f"{interval} x {width} numbers per episode is more than "
                            f"{MOST_RECORDED:,}; lower max_length or interval")
        self._values = np.zeros((rows, self._capacity, width), dtype=np.float64)
        self._steps = np.zeros(rows, dtype=np.int64)

    @property
    def length(self) -> int:
        return self.windows * self.width

    def begin(self, rows: NDArray[np.intp] | None = None) -> None:
        """Start an episode in `rows` (None: row 0)."""
        self._steps[0 if rows is None else rows] = 0

    def record(self, values: Any, rows: NDArray[np.intp] | None = None) -> None:
        """One step: `values[i]` (`width` numbers) for row `rows[i]`; rows None: `values` is
        row 0's value (anything numpy reads as `width` numbers)."""
        if rows is None:
            rows, values = np.zeros(1, dtype=np.intp), np.reshape(values, (1, -1))
        if self.interval is None:
            self._values[rows, 0] = values
            self._steps[rows] = 1
            return
        steps = self._steps[rows]
        keep = steps < self._capacity
        if not keep.all():
            rows, steps, values = rows[keep], steps[keep], np.asarray(values)[keep]
        self._values[rows, steps] = values
        self._steps[rows] = steps + 1

    def end(self, row: int = 0) -> NDArray[np.float64]:
        """Row `row`'s episode's descriptor, `length` float64 entries."""
        steps, width = int(self._steps[row]), self.width
        if steps == 0:
            return np.zeros(self.length, dtype=np.float64)
        values = self._values[row]
        if self.interval is None:
            out: NDArray[np.float64] = values[0].copy()
        else:
            interval = self.interval
            whole, rest = divmod(steps, interval)
            cut = whole * interval
            windows = np.empty((self.windows, width), dtype=np.float64)
            if whole:  # sums, then one division: fewer numpy calls than mean()
                np.add.reduce(values[:cut].reshape(whole, interval, width), axis=1,
                              out=windows[:whole])
                windows[:whole] /= interval
            filled = whole
            if rest:  # the last, partial window
                np.add.reduce(values[cut:steps], axis=0, out=windows[whole])
                windows[whole] /= rest
                filled += 1
            windows[filled:] = windows[filled - 1]
            out = windows.reshape(-1)
        if not np.isfinite(out).all():
            out[~np.isfinite(out)] = 0.0
        return out


def state_provider(env: gym.Env[Any, Any]) -> StateProvider | None:
    """The environment's own state as a function, or None: the outermost object of the wrapper
    chain that implements IBehaviourState, else a built-in provider for the unwrapped
    environment (MuJoCo qpos, Atari RAM)."""
    own = next((layer for layer in wrapper_chain(env) if isinstance(layer, IBehaviourState)),
               None)
    return own.behaviour_state if own is not None else _builtin_provider(env.unwrapped)


def _builtin_provider(env: Any) -> StateProvider | None:
    try:
        from gymnasium.envs.mujoco import MujocoEnv
    except (ImportError, gym.error.DependencyNotInstalled):  # no mujoco: no MuJoCo env either
        pass
    else:
        if isinstance(env, MujocoEnv):
            data = env.data
            return lambda: data.qpos
    try:
        from ale_py import AtariEnv
    except ImportError:
        pass
    else:
        if isinstance(env, AtariEnv):
            ale = env.ale
            return ale.getRAM  # type: ignore[no-any-return]
    return None


def check_state_provider(env: gym.Env[Any, Any]) -> StateProvider:
    """The provider, or the one-line error for an environment that offers no state."""
    provider = state_provider(env)
    if provider is None:
        name = env.spec.id if env.spec is not None else type(env.unwrapped).__name__
        raise UserError(f"behaviour.source = \"state\": environment {name!r} offers no state "
                        "(it implements no IBehaviourState.behaviour_state and is neither "
                        "MuJoCo nor Atari); use source = \"observation\" or \"action\"")
    return provider


class RowBehaviour:
    """The engine's recorder for `rows` rows: `begin(rows)` after their reset, `record` after
    each step of the running rows, `end(row)` gives a row's episode descriptor.

    `envs` are the rows' own environments, which the `state` source reads; the rows of a
    vector environment read it from the environment given to `read_states_from`, which offers
    every row's state at once (`IVectorBehaviourState`; a vector environment without it is
    refused for that source, evaluation/batched_behaviour.py). `env` gives the spaces."""

    def __init__(self, config: BehaviourConfig, env: gym.Env[Any, Any], rows: int,
                 envs: list[gym.Env[Any, Any]] | None = None) -> None:
        self.source = config.source
        self._interval = None if config.interval == "final" else int(config.interval)
        self._windows = config.windows
        self._rows = rows
        self.recorder: WindowRecorder | None = None
        self.states: list[StateProvider] = []
        #: every row's state at once (a vector environment's rows)
        self._vector_states: Callable[[], NDArray[np.float64]] | None = None
        #: a composite space's values, one row at a time (None: an array space, whose rows one
        #: reshape flattens together)
        self._flatten: Flattener | None = None
        if config.source == "state":
            # the state's width is read after the first reset: an environment need not have
            # a valid state before it
            self.states = [check_state_provider(each) for each in (envs or [env])]
        else:
            space = env.action_space if config.source == "action" else env.observation_space
            width, flatten = flattener(space, config.source)
            if isinstance(space, (gym.spaces.Tuple, gym.spaces.Dict)):
                self._flatten = flatten
            self.recorder = WindowRecorder(self._interval, self._windows, width, rows)

    def read_states_from(self, vector: IVectorBehaviourState) -> None:
        """The `state` source of a vector environment's rows: its `behaviour_states()`."""
        self._vector_states = vector.behaviour_states

    def begin(self, rows: list[int]) -> None:
        """Right after the rows' reset."""
        if self.recorder is None:
            width = np.shape(self._vector_states())[1] if self._vector_states is not None \
                else np.size(self.states[rows[0]]())
            self.recorder = WindowRecorder(self._interval, self._windows, int(width), self._rows)
        self.recorder.begin(np.asarray(rows, dtype=np.intp))

    def record(self, rows: list[int] | NDArray[np.intp], observations: Any, actions: Any) -> None:
        """One step of `rows`: what `env.step` returned to each (`observations[i]` is row
        `rows[i]`'s) and the actions it was given. The `state` source reads each row's
        environment; what that raises is a `BatchRowFailed(row)` caused by the environment."""
        recorder = self.recorder
        assert recorder is not None, "begin() first"
        index = np.asarray(rows, dtype=np.intp)
        if self._vector_states is not None:
            values = np.asarray(self._vector_states(), dtype=np.float64)[index]
        elif self.states:
            values = np.array([flat_state(self._state(row)) for row in index.tolist()])
        else:
            chosen = actions if self.source == "action" else observations
            if self._flatten is None:
                values = np.asarray(chosen, dtype=np.float64).reshape(len(index), -1)
            else:
                values = np.stack([self._flatten(value) for value in chosen])
        recorder.record(values, index)

    def _state(self, row: int) -> Any:
        try:
            return self.states[row]()
        except BaseException as exc:
            if is_interrupt(exc):
                raise
            raised = EnvironmentRaised("step")
            raised.__cause__ = exc
            raise BatchRowFailed(row) from raised

    def end(self, row: int) -> NDArray[np.float64]:
        assert self.recorder is not None, "begin() first"
        return self.recorder.end(row)


def mean_of_episodes(episodes: list[NDArray[np.float64]]) -> NDArray[np.float64]:
    """One evaluation's descriptor from its episodes' (evaluation/rows.py's `results`)."""
    if not episodes:
        raise ValueError("no episode was recorded")
    if len(episodes) == 1:
        return episodes[0]
    combined: NDArray[np.float64] = np.sum(np.stack(episodes), axis=0)
    combined /= len(episodes)
    return combined


def check_behaviour(config: BehaviourConfig, environment: Any, source: str) -> int:
    """The descriptor's length; a UserError, naming `source`, if the environment cannot give
    the behaviour `config` asks for. Made once in the main process so the run stops before its
    folder exists."""
    env = make_environment(environment)
    try:
        behaviour = RowBehaviour(config, env, 1)
        if behaviour.recorder is None:  # the state's width is known after a reset
            env.reset(seed=0)
            behaviour.begin([0])
        assert behaviour.recorder is not None
        return behaviour.recorder.length
    except UserError as exc:
        raise UserError(f"{source}: {exc}") from None
    except BaseException as exc:
        if is_interrupt(exc):
            raise
        name = env.spec.id if env.spec is not None else type(env.unwrapped).__name__
        raise UserError(f"{source}: behaviour.source = {config.source!r}: environment "
                        f"{name!r} raised {describe_raised(exc)} in reset() or "
                        "behaviour_state() before the run; a bug in the environment: fix it "
                        "or report it to its author") from None
    finally:
        env.close()
