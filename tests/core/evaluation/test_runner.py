"""The episode runner: step limits, penalties, NaN handling, environment reuse, seeding."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from counter_envs import Counter

from evo_core.config.schema import EpisodesConfig
from evo_core.evaluation.episodes import EpisodeRunner
from evo_core.running.seeding import Streams


class OddObservations(gym.Env[Any, int]):
    """NaN at step 2 in an observation of a shape the fast checks do not expect: a Tuple holding
    a list, or a numpy scalar (an `np.float32` is no Python float)."""

    action_space: gym.spaces.Space[Any] = gym.spaces.Discrete(2)

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.observation_space = {
            "tuple-list": gym.spaces.Tuple((gym.spaces.Box(-1, 1, (2,)), gym.spaces.Discrete(3))),
            "tuple-scalar": gym.spaces.Tuple((gym.spaces.Box(-1, 1, ()), gym.spaces.Discrete(3))),
            "scalar-box": gym.spaces.Box(-1, 1, (), dtype=np.float32),
            "scalar-in-vector-box": gym.spaces.Box(-1, 1, (1,), dtype=np.float32),
            "dict-list": gym.spaces.Dict({"x": gym.spaces.Box(-1, 1, (2,))}),
        }[kind]
        self.t = 0

    def _observation(self) -> Any:
        value = np.nan if self.t == 2 else 0.5
        scalar = np.float32(value)
        return {"tuple-list": ([value, 0.0], 1), "tuple-scalar": (scalar, 1),
                "scalar-box": scalar, "scalar-in-vector-box": scalar,
                "dict-list": {"x": [0.0, value]}}[self.kind]

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return self._observation(), {}

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.t += 1
        return self._observation(), 1.0, False, False, {}


ODD_KINDS = ["tuple-list", "tuple-scalar", "scalar-box", "scalar-in-vector-box", "dict-list"]
for kind in ODD_KINDS:
    if f"test/Odd-{kind}-v0" not in gym.registry:
        gym.register(f"test/Odd-{kind}-v0", entry_point=OddObservations,  # type: ignore[arg-type]
                     kwargs={"kind": kind}, disable_env_checker=True)


class Template:
    genome_size = 1

    def __init__(self) -> None:
        self.resets = 0
        self.observations: list[float] = []

    def make(self, genome: np.ndarray) -> Brain:
        return Brain(self)


class Brain:
    def __init__(self, template: Template) -> None:
        self.template = template

    def reset(self) -> None:
        self.template.resets += 1

    def step(self, observation: Any) -> int:
        if isinstance(observation, np.ndarray) and observation.ndim == 1:
            self.template.observations.append(float(observation[0]))
        return 0


def runner(env_id: str, **episodes: Any) -> tuple[EpisodeRunner, Template]:
    template = Template()
    return EpisodeRunner(template, env_id, EpisodesConfig(**episodes)), template


def test_max_steps_is_exact_and_penalised_once() -> None:
    r, _ = runner("test/Counter-v0", max_steps=10, max_steps_penalty=-100)
    outcome = r.run_episodes(np.zeros(1), 1)[0]
    assert outcome.steps == 10 and outcome.total == 10 - 100


def test_episode_ending_by_itself_gets_no_penalty() -> None:
    r, _ = runner("test/Short-v0", max_steps=5, max_steps_penalty=-100)
    outcome = r.run_episodes(np.zeros(1), 1)[0]
    assert outcome.steps == 5 and outcome.total == 5


@pytest.mark.parametrize("env_id,steps,total", [("test/NanObs-v0", 3, 3 - 50),
                                                 ("test/NanReward-v0", 4, 3 - 50)])
def test_nonfinite_ends_the_episode_with_the_penalty(env_id: str, steps: int,
                                                     total: float) -> None:
    r, _ = runner(env_id, runs=2, nonfinite_penalty=-50, max_steps=20)
    result = r.evaluate(np.zeros(1), 7)
    assert result.nonfinite_episodes == 2 and result.steps == 2 * steps
    assert result.fitness == total


def test_environment_made_once_and_brain_reset_every_episode() -> None:
    before = Counter.made
    r, template = runner("test/Short-v0", runs=3)
    for seed in range(4):
        r.evaluate(np.zeros(1), seed)
    assert Counter.made - before == 1
    assert template.resets == 12


def test_same_seed_same_episodes_and_runs_continue_the_stream() -> None:
    r, template = runner("test/Short-v0", runs=2)
    r.evaluate(np.zeros(1), 42)
    first = list(template.observations)
    template.observations.clear()
    r.evaluate(np.zeros(1), 42)
    assert template.observations == first
    assert first[:5] != first[5:]  # the second episode is a different one


def test_generation_and_candidate_seeds() -> None:
    shared = Streams.from_seed(3).evaluation_seeds(6, per_candidate=False)
    own = Streams.from_seed(3).evaluation_seeds(6, per_candidate=True)
    assert len(set(shared.tolist())) == 1 and len(set(own.tolist())) == 6
    assert np.array_equal(shared, Streams.from_seed(3).evaluation_seeds(6, per_candidate=False))


@pytest.mark.parametrize("kind", ODD_KINDS)
def test_nan_in_any_observation_shape_is_penalised(kind: str) -> None:
    """A NaN inside a Tuple's list or in a numpy scalar used to reach the brain unnoticed."""
    r, _ = runner(f"test/Odd-{kind}-v0", runs=2, nonfinite_penalty=-50, max_steps=20)
    result = r.evaluate(np.zeros(1), 7)
    assert result.nonfinite_episodes == 2 and result.steps == 2 * 2
    assert result.fitness == 2 - 50


@pytest.mark.parametrize("value,finite", [
    (np.float32(np.nan), False), (np.float16(np.inf), False), (np.float32(1), True),
    (complex(1, np.nan), False), (np.complex64(1), True), ((1.0, [2.0, [np.nan]]), False),
    ([1, 2, 3], True), ({"a": (np.array([1.0]), [np.float64(-np.inf)])}, False),
    (np.int64(3), True), ("text", True),
])
def test_all_finite(value: Any, finite: bool) -> None:
    from evo_core.evaluation.row_envs import _all_finite

    assert _all_finite(value) is finite
