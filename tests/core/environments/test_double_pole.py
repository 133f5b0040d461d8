"""evo/DoublePole-v0 against an independent implementation of the published physics.

The reference below is written differently on purpose: numpy state vectors, the equations as a
derivative function of the whole state, and a generic RK4 integrator, so that a slip in the
environment's unrolled float arithmetic cannot be repeated here.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from numpy.typing import NDArray

from evo_core.environments.double_pole import DOUBLE_POLE, DoublePole
from evo_core.environments.registration import register_all

Vector = NDArray[np.float64]

MASSES = np.array([0.1, 0.01])
HALF_LENGTHS = np.array([0.5, 0.05])


def derivative(y: Vector, force: float) -> Vector:
    """d/dt of (x, x_dot, theta_1, theta_dot_1, theta_2, theta_dot_2), both poles at once."""
    g, mu = -9.8, 0.000002
    theta, theta_dot = y[[2, 4]], y[[3, 5]]
    friction = mu * theta_dot / (MASSES * HALF_LENGTHS)
    effective_force = (MASSES * HALF_LENGTHS * theta_dot ** 2 * np.sin(theta)
                       + 0.75 * MASSES * np.cos(theta) * (friction + g * np.sin(theta)))
    effective_mass = MASSES * (1 - 0.75 * np.cos(theta) ** 2)
    x_acc = (force + effective_force.sum()) / (1.0 + effective_mass.sum())
    theta_acc = -0.75 * (x_acc * np.cos(theta) + g * np.sin(theta) + friction) / HALF_LENGTHS
    return np.array([y[1], x_acc, theta_dot[0], theta_acc[0], theta_dot[1], theta_acc[1]])


def rk4(f: Callable[[Vector], Vector], y: Vector, h: float) -> Vector:
    k1 = f(y)
    k2 = f(y + h / 2 * k1)
    k3 = f(y + h / 2 * k2)
    k4 = f(y + h * k3)
    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def reference_decision(y: Vector, action: float) -> Vector:
    force = 10.0 * float(np.clip(action, -1, 1))
    for _ in range(2):
        y = rk4(lambda s: derivative(s, force), y, 0.01)
    return y


def reference_failed(y: Vector) -> bool:
    return bool(abs(y[0]) > 2.4 or np.abs(y[[2, 4]]).max() > math.radians(36))


def reference_observation(y: Vector, velocities: bool) -> Vector:
    scale = np.array([4.8, 2, 0.52, 2, 0.52, 2])
    normalised: Vector = y / scale
    return normalised if velocities else normalised[[0, 2, 4]]


@pytest.mark.parametrize("velocities", [True, False])
def test_physics_equals_an_independent_implementation(velocities: bool) -> None:
    """1,000 random decisions, from random states as well as along trajectories."""
    rng = np.random.default_rng(7)
    env = DoublePole(velocities=velocities)
    observation, _ = env.reset(seed=0)
    np.testing.assert_array_equal(env.state, (0, 0, 0.07, 0, 0, 0))
    failures = 0
    for _ in range(1000):
        before = np.array(env.state)
        action = rng.uniform(-1.3, 1.3)  # beyond the bounds too: the force is clipped
        observation, reward, terminated, truncated, _ = env.step(np.array([action]))
        expected = reference_decision(before, action)
        np.testing.assert_allclose(env.state, expected, rtol=0, atol=1e-12)
        np.testing.assert_allclose(observation, reference_observation(expected, velocities),
                                   rtol=0, atol=1e-12)
        assert terminated == reference_failed(expected)
        assert reward == (0.0 if terminated else 1.0)
        assert not truncated
        if terminated or rng.random() < 0.05:
            failures += terminated
            start = rng.uniform(-1, 1, 6) * [2.0, 1.5, 0.5, 2.0, 0.5, 2.0]
            env.reset(options={"state": start.tolist()})
            np.testing.assert_array_equal(env.state, start)
    assert failures > 20  # the checks above saw the failure test both ways


def test_damping_rewards_sum_to_gruaus_fitness() -> None:
    """F = 0.1 t/1000 + 0.9 * 0.75 / S, S over the last 100 decisions' |x|+|x_dot|+|th1|+|thd1|:
    for an episode shorter than 100 decisions, one that fails later, and one that lasts 1,000."""
    gains = balancing_gains()
    env = DoublePole(velocities=False, fitness="damping")
    lengths = []
    for balanced in (0, 300, 1000):  # balance this many decisions, then push right
        env.reset()
        states, total, t = [], 0.0, 0
        terminated = truncated = False
        while not (terminated or truncated):
            push = -float(gains @ np.array(env.state)) if t < balanced else 1.0
            _, reward, terminated, truncated, _ = env.step(np.array([push]))
            total += float(reward)
            if not terminated:
                t += 1
                states.append(env.state)
        jiggle = np.abs(np.array(states)[-100:, :4]).sum()
        fitness = 0.1 * t / 1000 + (0.9 * 0.75 / jiggle if t >= 100 else 0.0)
        assert total == pytest.approx(fitness, rel=1e-12, abs=1e-15)
        lengths.append((t, terminated))
    assert lengths[0][0] < 100 and lengths[0][1]  # the first term alone
    assert 100 <= lengths[1][0] < 1000 and lengths[1][1]  # both terms, ended by a failure
    assert lengths[2] == (1000, False)  # both terms, ended by the episode's length


def balancing_gains() -> Vector:
    """A linear state feedback that balances both poles: LQR on the reference's decision,
    linearised around the upright state by central differences."""
    zero, eps = np.zeros(6), 1e-6
    a = np.column_stack([(reference_decision(zero + eps * e, 0.0)
                          - reference_decision(zero - eps * e, 0.0)) / (2 * eps)
                         for e in np.eye(6)])
    b = ((reference_decision(zero, eps) - reference_decision(zero, -eps)) / (2 * eps))[:, None]
    q, r = np.diag([1.0, 1, 10, 1, 10, 1]), np.eye(1)
    p = q
    for _ in range(3000):  # the Riccati recursion to its fixed point
        k = np.linalg.solve(r + b.T @ p @ b, b.T @ p @ a)
        p = q + a.T @ p @ (a - b @ k)
    gains: Vector = k[0]
    return gains


def test_generalization_starts_are_the_published_625() -> None:
    values = (0.05, 0.25, 0.5, 0.75, 0.95)
    published = [(4.32 * a - 2.16, 2.70 * b - 1.35, 0.12566304 * c - 0.06283152,
                  0.30019504 * d - 0.15009752, 0.0, 0.0)
                 for a, b, c, d in itertools.product(values, repeat=4)]
    env = DoublePole(start="generalization")
    for k in range(625):
        env.reset(seed=k)
        assert env.state == pytest.approx(published[k], abs=1e-15)
    env.reset(seed=625 + 17)
    assert env.state == pytest.approx(published[17], abs=1e-15)
    env.reset()  # without a seed: the next start
    assert env.state == pytest.approx(published[18], abs=1e-15)
    assert len({tuple(s) for s in published}) == 625


def test_registered_limits_spaces_and_checker() -> None:
    register_all()
    steps = gym.make(DOUBLE_POLE)
    assert steps.spec is not None and steps.spec.max_episode_steps == 100_000
    assert steps.observation_space.shape == (6,)
    assert steps.action_space == gym.spaces.Box(-1.0, 1.0, (1,), np.float64)
    damping = gym.make(DOUBLE_POLE, velocities=False, fitness="damping")
    assert damping.observation_space.shape == (3,)
    damping.reset()
    _, _, terminated, truncated, _ = damping.step(np.ones(1))
    assert not terminated and not truncated
    for kwargs in ({}, {"velocities": False, "fitness": "damping"},
                   {"start": "generalization"}):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*infinity.*")
            warnings.filterwarnings("ignore", message=".*render modes.*")
            check_env(DoublePole(**kwargs))


@pytest.mark.parametrize("kwargs", [{"velocities": 1}, {"fitness": "gruau"},
                                    {"start": "random"}])
def test_bad_keywords_are_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        DoublePole(**kwargs)
    env = DoublePole()
    with pytest.raises(ValueError, match="six finite"):
        env.reset(options={"state": [0.0] * 5})
