"""The episode runner: step limits, penalties, NaN handling, environment reuse, seeding."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from evo_core.config.schema import EpisodesConfig
from evo_core.engine.episodes import EpisodeRunner
from evo_core.engine.seeding import Streams


class Counter(gym.Env[np.ndarray, int]):
    """Reward 1 per step; never ends by itself unless `length` is reached; NaN at `nan_at`."""

    made = 0
    observation_space = gym.spaces.Box(-np.inf, np.inf, (1,), dtype=np.float64)
    action_space: gym.Space[Any] = gym.spaces.Discrete(2)

    def __init__(self, length: int = 10**9, nan_at: int | None = None,
                 nan_reward_at: int | None = None) -> None:
        Counter.made += 1
        self.length, self.nan_at, self.nan_reward_at = length, nan_at, nan_reward_at
        self.t = 0

    def reset(self, *, seed: int | None = None, options: Any = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return np.array([self.np_random.uniform()]), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.t += 1
        obs = np.array([np.nan if self.t == self.nan_at else self.np_random.uniform()])
        reward = np.inf if self.t == self.nan_reward_at else 1.0
        return obs, reward, self.t >= self.length, False, {}


for env_id, kwargs in {"test/Counter-v0": {}, "test/Short-v0": {"length": 5},
                       "test/NanObs-v0": {"nan_at": 3},
                       "test/NanReward-v0": {"nan_reward_at": 4}}.items():
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=Counter,  # type: ignore[arg-type]
                     kwargs=kwargs, disable_env_checker=True)


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

    def step(self, observation: np.ndarray) -> int:
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
