"""evo/XOR-v0: the NEAT paper's XOR task as four steps whose return is the paper's fitness."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from evo_core.environments import make_environment
from evo_core.environments.xor import PATTERNS, TARGETS, XOR, Xor

Network = Callable[[np.ndarray], float]


def episode(network: Network) -> tuple[list[float], dict[str, object], list[np.ndarray]]:
    """The rewards, the last step's info and the observations the network was shown."""
    env = make_environment(XOR)
    observation, _ = env.reset(seed=3)
    rewards, shown = [], []
    while True:
        shown.append(observation)
        observation, reward, terminated, truncated, info = env.step(
            np.array([network(observation)]))
        rewards.append(float(reward))
        if terminated or truncated:
            assert terminated and not truncated
            return rewards, info, shown


def test_a_perfect_network_scores_16_at_the_last_step_and_is_solved() -> None:
    rewards, info, shown = episode(lambda x: float(int(x[0]) ^ int(x[1])))
    assert [tuple(x) for x in shown] == list(PATTERNS)
    assert rewards == [0.0, 0.0, 0.0, 16.0]
    assert info == {"solved": True, "errors": (0.0, 0.0, 0.0, 0.0)}


@pytest.mark.parametrize(("output", "fitness"), [(0.5, 4.0), (0.0, 4.0), (1.0, 4.0),
                                                 (0.25, 4.0)])
def test_a_constant_network_scores_by_hand_and_is_not_solved(output: float, fitness: float
                                                             ) -> None:
    # errors: |c - 0| twice and |c - 1| twice, summing to 2 for any c in [0, 1]: (4 - 2)^2
    rewards, info, _ = episode(lambda x: output)
    assert rewards == [0.0, 0.0, 0.0, fitness]
    assert info["solved"] is False


def test_one_wrong_output_caps_the_fitness_at_12_25_and_fails() -> None:
    # right everywhere but (1, 1), where it answers exactly 0.5: the best a non-solving
    # network can score, the bound examples/neat_xor.toml's [stop] fitness must exceed
    rewards, info, _ = episode(lambda x: 0.5 if x.sum() == 2 else float(int(x[0]) ^ int(x[1])))
    assert rewards[-1] == 3.5 ** 2 and info["solved"] is False
    # nearly right everywhere: solved, fitness (4 - 4 x 0.4)^2
    rewards, info, _ = episode(lambda x: abs(float(int(x[0]) ^ int(x[1])) - 0.4))
    assert rewards[-1] == pytest.approx(2.4 ** 2) and info["solved"] is True


def test_outputs_outside_0_1_are_clipped_and_nan_is_the_worst_output() -> None:
    rewards, info, _ = episode(lambda x: 5.0 if int(x[0]) ^ int(x[1]) else -5.0)
    assert rewards[-1] == 16.0 and info["solved"] is True
    rewards, info, _ = episode(lambda x: float("nan") if x.sum() == 0 else
                               float(int(x[0]) ^ int(x[1])))
    assert rewards[-1] == 9.0 and info["solved"] is False


def test_spaces_and_gymnasiums_checker() -> None:
    env = gym.make(XOR)
    assert env.observation_space == gym.spaces.Box(0.0, 1.0, (2,), np.float64)
    assert env.action_space == gym.spaces.Box(0.0, 1.0, (1,), np.float64)
    assert len(PATTERNS) == len(TARGETS) == 4
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*render modes.*")
        check_env(Xor())
