"""Behaviour descriptors: what an evaluation did, recorded beside its episodes.

`WindowRecorder` turns one episode's per-step values into a fixed-length vector and knows nothing
of environments, so a batched runner can keep one per row. `BehaviourTracker` is the runner's
side: it picks the value the `[behaviour]` table names out of each step and combines the
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
from evo_core.contract.protocols import IBehaviourState
from evo_core.environments import make_environment
from evo_core.errors import UserError

__all__ = ["WindowRecorder", "BehaviourTracker", "space_width", "state_provider",
           "check_state_provider", "check_behaviour", "mean_of_episodes"]

StateProvider = Callable[[], Any]

#: The most numbers one episode's recorder buffers (8 bytes each: 800 MB).
MOST_RECORDED = 100_000_000


class WindowRecorder:
    """One episode's values as `windows` window means of `width` entries each.

    `record` only copies the value into a preallocated row (the steps beyond the last window are
    not even copied); the means are taken once, in `end`. That keeps the per-step cost to one
    numpy assignment."""

    def __init__(self, interval: int | None, windows: int, width: int) -> None:
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
        self._values = np.zeros((self._capacity, width), dtype=np.float64)
        self._steps = 0

    @property
    def length(self) -> int:
        return self.windows * self.width

    def begin(self) -> None:
        """Start an episode."""
        self._steps = 0

    def record(self, value: Any) -> None:
        """The value of one step (anything numpy reads as `width` numbers)."""
        if self.interval is None:
            self._values[0] = value
            self._steps = 1
        elif self._steps < self._capacity:
            self._values[self._steps] = value
            self._steps += 1

    def end(self) -> NDArray[np.float64]:
        """The episode's descriptor, `length` float64 entries."""
        steps, width = self._steps, self.width
        if steps == 0:
            return np.zeros(self.length, dtype=np.float64)
        if self.interval is None:
            out: NDArray[np.float64] = self._values[0].copy()
        else:
            interval = self.interval
            whole, rest = divmod(steps, interval)
            cut = whole * interval
            windows = np.empty((self.windows, width), dtype=np.float64)
            if whole:  # sums, then one division: fewer numpy calls than mean()
                np.add.reduce(self._values[:cut].reshape(whole, interval, width), axis=1,
                              out=windows[:whole])
                windows[:whole] /= interval
            filled = whole
            if rest:  # the last, partial window
                np.add.reduce(self._values[cut:steps], axis=0, out=windows[whole])
                windows[whole] /= rest
                filled += 1
            windows[filled:] = windows[filled - 1]
            out = windows.reshape(-1)
        if not np.isfinite(out).all():
            out[~np.isfinite(out)] = 0.0
        return out


def space_width(space: gym.Space[Any], what: str) -> int:
    """How many numbers a value of `space` is, as the recorder reads it (raw values: a Discrete
    action is one number, not a one-hot vector); a UserError for spaces that are not arrays."""
    if isinstance(space, gym.spaces.Discrete):
        return 1
    if isinstance(space, (gym.spaces.Box, gym.spaces.MultiDiscrete, gym.spaces.MultiBinary)):
        return int(np.prod(space.shape, dtype=np.int64))
    raise UserError(f"behaviour.source = {what!r}: the {what} space {space} is not an array of "
                    "numbers; use another source, or a wrapper that flattens the space")


def state_provider(env: gym.Env[Any, Any]) -> StateProvider | None:
    """The environment's own state as a function, or None: the outermost object of the wrapper
    chain that implements IBehaviourState, else a built-in provider for the unwrapped
    environment (MuJoCo qpos, Atari RAM)."""
    current: Any = env
    while True:
        if isinstance(current, IBehaviourState):
            return current.behaviour_state
        if not isinstance(current, gym.Wrapper):
            break
        current = current.env
    return _builtin_provider(env.unwrapped)


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


class BehaviourTracker:
    """The runner's recorder: begin after each reset, `step` after each step, `end` after each
    episode, `descriptor` once per evaluation."""

    def __init__(self, config: BehaviourConfig, env: gym.Env[Any, Any]) -> None:
        self.source = config.source
        self.state: StateProvider | None = None
        self._interval = None if config.interval == "final" else int(config.interval)
        self._windows = config.windows
        self.recorder: WindowRecorder | None = None
        if config.source == "state":
            # the state's width is read after the first reset: an environment need not have
            # a valid state before it
            self.state = check_state_provider(env)
        else:
            space = env.action_space if config.source == "action" else env.observation_space
            self.recorder = WindowRecorder(self._interval, self._windows,
                                           space_width(space, config.source))
        self._episodes: list[NDArray[np.float64]] = []
        #: record the value of a step: `step(action, observation)` after each env.step
        self.step: Callable[[Any, Any], None] = self._unstarted
        self._started = False

    def clear(self) -> None:
        """Forget episodes of an evaluation that did not finish."""
        self._episodes = []

    def begin(self) -> None:
        """Right after the environment's reset."""
        if self.recorder is None:
            assert self.state is not None
            self.recorder = WindowRecorder(self._interval, self._windows,
                                           int(np.size(self.state())))
        if not self._started:
            self.step = self._recording_step(self.recorder)
            self._started = True
        self.recorder.begin()

    def _recording_step(self, recorder: WindowRecorder) -> Callable[[Any, Any], None]:
        """`step` for this source: one call into the recorder, no test per step."""
        record, state = recorder.record, self.state
        if state is not None:
            return lambda action, observation: record(state())
        if self.source == "action":
            return lambda action, observation: record(action)
        return lambda action, observation: record(observation)

    def _unstarted(self, action: Any, observation: Any) -> None:
        raise RuntimeError("begin() first")

    def end(self) -> None:
        assert self.recorder is not None, "begin() first"
        self._episodes.append(self.recorder.end())

    def descriptor(self) -> NDArray[np.float64]:
        """The mean over the episodes since the last call."""
        episodes, self._episodes = self._episodes, []
        return mean_of_episodes(episodes)


def mean_of_episodes(episodes: list[NDArray[np.float64]]) -> NDArray[np.float64]:
    """One evaluation's descriptor from its episodes' (the batched runner, whose episodes of one
    candidate may be recorded by different rows, combines them here too, so both agree)."""
    if not episodes:
        raise ValueError("no episode was recorded")
    if len(episodes) == 1:
        return episodes[0]
    combined: NDArray[np.float64] = np.add.reduce(np.stack(episodes), axis=0)
    combined /= len(episodes)
    return combined


def check_behaviour(config: BehaviourConfig, environment: Any, source: str) -> int:
    """The descriptor's length; a UserError, naming `source`, if the environment cannot give
    the behaviour `config` asks for. Made once in the main process so the run stops before its
    folder exists."""
    env = make_environment(environment)
    try:
        tracker = BehaviourTracker(config, env)
        if tracker.recorder is None:  # the state's width is known after a reset
            env.reset(seed=0)
            tracker.begin()
        assert tracker.recorder is not None
        return tracker.recorder.length
    except UserError as exc:
        raise UserError(f"{source}: {exc}") from None
    finally:
        env.close()
