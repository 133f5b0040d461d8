"""`evo replay --trace FILE.npz`: every step's observation, action, reward and the brain's
internal state, in one file a notebook reads with `numpy.load`.

The episode loop stays the one training uses (evaluation/episodes.py): the tracer sits around
it. `TracingTemplate` hands the runner brains that note what they were given and what they
answered, and asks the brain for its state after each step when it is an `ITraceableBrain`;
`RewardTracer`, a wrapper around the environment, notes each step's reward and whether the
episode ended. Both append one row per step, so row i of every array is step i.

The file (all arrays have one row per step, T rows over all replayed episodes):

| key | shape | what |
| --- | --- | --- |
| `observation` | (T, *shape) | what the brain received (a Box as it is; others flattened) |
| `action` | (T, A) | the action it chose, flattened (evaluation/flattening.py) |
| `reward` | (T,) | the reward the step returned |
| `episode` | (T,) | the episode, from 0 |
| `step` | (T,) | the step within the episode, from 0 |
| `done` | (T,) | whether the episode ended at this step (terminated or truncated) |
| `state.NAME` | (T, N) | each array of the brain's `trace_state()` (chains: `state.stage0.NAME`) |
| `return` | (episodes,) | each episode's return |
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core.contract.protocols import IBrain, IBrainTemplate, IRandomBrain, ITraceableBrain
from evo_core.evaluation.flattening import Flattener, flattener
from evo_core.results.trace_file import STATE_PREFIX, write_trace_file

__all__ = ["RewardTracer", "Trace", "TracingBrain", "TracingTemplate", "new_trace",
           "write_trace"]



@dataclass
class Trace:
    """The rows the tracer collected, step by step."""

    flatten_action: Flattener
    keep_observation: Callable[[Any], NDArray[Any]]
    observations: list[NDArray[Any]] = field(default_factory=list)
    actions: list[NDArray[np.float64]] = field(default_factory=list)
    states: dict[str, list[NDArray[np.float64]]] = field(default_factory=dict)
    rewards: list[float] = field(default_factory=list)
    episodes: list[int] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)
    done: list[bool] = field(default_factory=list)
    returns: list[float] = field(default_factory=list)
    traceable: bool = False
    #: the brain's state right after its last reset (what a frame after the environment's
    #: reset shows); not part of the file
    initial: dict[str, NDArray[np.float64]] = field(default_factory=dict)

    def arrays(self) -> dict[str, NDArray[Any]]:
        """The npz contents (module docstring); only the steps that finished (a brain step
        whose environment step raised is left out)."""
        rows = len(self.rewards)
        arrays: dict[str, NDArray[Any]] = {
            "observation": np.stack(self.observations[:rows]) if rows else np.zeros((0,)),
            "action": np.stack(self.actions[:rows]) if rows else np.zeros((0, 0)),
            "reward": np.asarray(self.rewards, dtype=np.float64),
            "episode": np.asarray(self.episodes, dtype=np.int64),
            "step": np.asarray(self.steps, dtype=np.int64),
            "done": np.asarray(self.done, dtype=np.bool_),
            "return": np.asarray(self.returns, dtype=np.float64)}
        for key, values in self.states.items():
            arrays[STATE_PREFIX + key] = np.stack(values[:rows]) if rows else np.zeros((0, 0))
        return arrays


class TracingBrain:
    """The brain the runner steps: the trained one, with each step noted in the trace. It
    passes `use_rng` on when the trained brain draws random numbers, so the replayed episodes
    are the untraced ones."""

    def __init__(self, brain: IBrain, trace: Trace) -> None:
        self.brain = brain
        self.trace = trace
        self.random = isinstance(brain, IRandomBrain)
        self.traceable = isinstance(brain, ITraceableBrain)
        trace.traceable = self.traceable

    def use_rng(self, rng: np.random.Generator) -> None:
        if self.random:
            inner: Any = self.brain
            inner.use_rng(rng)

    def reset(self) -> None:
        self.brain.reset()
        if self.traceable:
            inner: Any = self.brain
            self.trace.initial = {key: np.asarray(value, dtype=np.float64).reshape(-1)
                                  for key, value in inner.trace_state().items()}

    def step(self, observation: Any) -> Any:
        action = self.brain.step(observation)
        trace = self.trace
        trace.observations.append(trace.keep_observation(observation))
        trace.actions.append(trace.flatten_action(action))
        if self.traceable:
            inner: Any = self.brain
            for key, value in inner.trace_state().items():
                trace.states.setdefault(key, []).append(
                    np.asarray(value, dtype=np.float64).reshape(-1))
        return action


class TracingTemplate:
    """The trained template, making `TracingBrain`s that write into one trace."""

    def __init__(self, template: IBrainTemplate, trace: Trace) -> None:
        self.template = template
        self.trace = trace

    @property
    def genome_size(self) -> int:
        return self.template.genome_size

    def make(self, genome: NDArray[np.float64]) -> IBrain:
        return TracingBrain(self.template.make(genome), self.trace)


class RewardTracer(gym.Wrapper[Any, Any, Any, Any]):
    """Notes every step's reward, episode, step and end into the trace."""

    def __init__(self, env: gym.Env[Any, Any], trace: Trace) -> None:
        super().__init__(env)
        self.trace = trace
        self.episode = -1
        self.step_count = 0
        self.total = 0.0

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        self._close_episode()
        self.episode += 1
        self.step_count, self.total = 0, 0.0
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        result = self.env.step(action)
        trace = self.trace
        trace.rewards.append(float(result[1]))
        trace.episodes.append(self.episode)
        trace.steps.append(self.step_count)
        trace.done.append(bool(result[2] or result[3]))
        self.step_count += 1
        self.total += float(result[1])
        return result

    def _close_episode(self) -> None:
        if self.episode >= 0:
            self.trace.returns.append(self.total)

    def finish(self) -> None:
        """After the last episode: its return joins the trace."""
        self._close_episode()
        self.episode = -1


def _copy(value: Any) -> NDArray[Any]:
    return np.array(value)


def new_trace(env: gym.Env[Any, Any]) -> Trace:
    """An empty trace for `env`'s spaces: a Box observation is kept as it is (an image stays an
    image), any other observation and every action flattened."""
    _, flatten_action = flattener(env.action_space, "action")
    space = env.observation_space
    keep: Callable[[Any], NDArray[Any]] = (_copy if isinstance(space, gym.spaces.Box)
                                           else flattener(space, "observation")[1])
    return Trace(flatten_action, keep)


def write_trace(trace: Trace, path: Path) -> None:
    write_trace_file(trace.arrays(), path)
