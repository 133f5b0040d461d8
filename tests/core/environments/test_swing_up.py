"""evo/CartPoleSwingUp-v0 against EvoJAX's equations evaluated here, and its three forms (the
single environment, the native vector environment, the JAX form) against one another.

The reference below is written apart from the environment on purpose: the published constants
spelt out, the equations in EvoJAX's arrangement (m_p_l, total mass), on numpy vectors.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from numpy.typing import NDArray

from evo_core import IJaxEnvironment, api
from evo_core.environments.registration import register_all
from evo_core.environments.swing_up import SWING_UP, CartPoleSwingUp, CartPoleSwingUpVector

Vector = NDArray[np.float64]


def reference_step(y: Vector, action: float) -> Vector:
    """EvoJAX's update: accelerations of the old state, positions moved by the old velocities."""
    g, m_cart, m_pole, length, mu, dt = 9.82, 0.5, 0.5, 0.6, 0.1, 0.01
    force = 10.0 * min(max(action, -1.0), 1.0)
    x, x_dot, theta, theta_dot = y
    s, c = math.sin(theta), math.cos(theta)
    total, m_p_l = m_cart + m_pole, m_pole * length
    x_acc = ((-2 * m_p_l * theta_dot**2 * s + 3 * m_pole * g * s * c + 4 * force
              - 4 * mu * x_dot) / (4 * total - 3 * m_pole * c**2))
    theta_acc = ((-3 * m_p_l * theta_dot**2 * s * c + 6 * total * g * s
                  + 6 * (force - mu * x_dot) * c) / (4 * length * total - 3 * m_p_l * c**2))
    return np.array([x + x_dot * dt, x_dot + x_acc * dt, theta + theta_dot * dt,
                     theta_dot + theta_acc * dt])


def reference_reward(y: Vector) -> float:
    return (math.cos(y[2]) + 1) / 2 * math.cos(y[0] / 2.4 * math.pi / 2)


def reference_observation(y: Vector) -> Vector:
    return np.array([y[0], y[1], math.cos(y[2]), math.sin(y[2]), y[3]])


def test_two_steps_by_hand() -> None:
    """From a given state, a push inside the bounds then one beyond them (clipped to 1)."""
    env = CartPoleSwingUp()
    start = [0.5, -0.3, 2.0, 1.5]
    observation, _ = env.reset(options={"state": start})
    np.testing.assert_array_equal(env.state, start)
    np.testing.assert_array_equal(observation, reference_observation(np.array(start)))
    expected = np.array(start)
    for action in (0.7, 1.8):
        expected = reference_step(expected, action)
        observation, reward, terminated, truncated, _ = env.step(np.array([action]))
        np.testing.assert_allclose(env.state, expected, rtol=0, atol=1e-14)
        np.testing.assert_allclose(observation, reference_observation(expected), atol=1e-14)
        assert reward == pytest.approx(reference_reward(expected), abs=1e-14)
        assert not terminated and not truncated
    # the first step by the digits: x = 0.5 - 0.003, theta = 2.0 + 0.015
    first = reference_step(np.array(start), 0.7)
    assert first[0] == pytest.approx(0.497, abs=1e-15)
    assert first[2] == pytest.approx(2.015, abs=1e-15)


def test_physics_along_random_trajectories() -> None:
    rng = np.random.default_rng(3)
    env = CartPoleSwingUp()
    env.reset(seed=0)
    for _ in range(500):
        before = np.array(env.state)
        action = float(rng.uniform(-1.5, 1.5))
        _, reward, terminated, _, _ = env.step(np.array([action]))
        expected = reference_step(before, action)
        np.testing.assert_allclose(env.state, expected, rtol=0, atol=1e-12)
        assert reward == pytest.approx(reference_reward(expected), abs=1e-12)
        assert terminated == (abs(expected[0]) > 2.4)
        if terminated or rng.random() < 0.05:
            env.reset(options={"state": (rng.uniform(-1, 1, 4) * [2.3, 3, 4, 5]).tolist()})


def test_leaving_the_track_ends_the_episode_with_that_steps_reward() -> None:
    env = CartPoleSwingUp()
    env.reset(options={"state": [2.38, 1.0, 0.3, 0.0]})
    _, reward, terminated, _, _ = env.step(np.array([1.0]))  # x = 2.39: still on the track
    assert not terminated and float(reward) > 0
    state = np.array(env.state)
    _, reward, terminated, truncated, _ = env.step(np.array([1.0]))
    after = reference_step(state, 1.0)
    assert after[0] > 2.4 and terminated and not truncated
    # beyond the track cos(x / 2.4 * pi / 2) is negative: the reward is too, and is given
    assert float(reward) == pytest.approx(reference_reward(after), abs=1e-14)
    assert float(reward) < 0


def test_an_episode_is_1000_steps() -> None:
    register_all()
    env = gym.make(SWING_UP)
    assert env.spec is not None and env.spec.max_episode_steps == 1000
    env.reset(options={"state": [0.0, 0.0, math.pi, 0.0]})  # hanging at rest: stays there
    for t in range(1, 1001):
        _, reward, terminated, truncated, _ = env.step(np.zeros(1))
        assert not terminated and truncated == (t == 1000)
        assert float(reward) == pytest.approx(0.0, abs=1e-12)
    env.close()


def _starts(source: str, hard: bool, count: int) -> Vector:
    """`count` start states (x, x_dot, theta, theta_dot) of one form of the environment."""
    if source == "single":
        env = CartPoleSwingUp(hard=hard)
        env.reset(seed=5)
        rows = []
        for _ in range(count):
            env.reset()
            rows.append(env.state)
        return np.array(rows)
    if source == "vector":
        vector = CartPoleSwingUpVector(count, hard=hard)
        vector.reset(seed=5)
        return np.stack(vector.state, axis=1)
    jax = pytest.importorskip("jax")
    keys = jax.random.split(jax.random.key(5), count)
    _, states = jax.jit(jax.vmap(CartPoleSwingUp(hard=hard).jax_reset))(keys)
    return np.asarray(states, dtype=np.float64)


@pytest.mark.parametrize("source", ["single", "vector", "jax"])
def test_start_distributions(source: str) -> None:
    """Easy: (0, 0, pi, 0) plus 0.2 x N(0, 1) in each variable; hard: (0, 0, pi, 0) plus
    U(-1, 1) x (2.4, 10, pi/2, 10)."""
    centre = np.array([0.0, 0.0, math.pi, 0.0])
    easy = _starts(source, False, 4000) - centre
    np.testing.assert_allclose(easy.mean(axis=0), 0.0, atol=0.02)  # 4 standard errors
    np.testing.assert_allclose(easy.std(axis=0), 0.2, atol=0.01)
    spread = np.array([2.4, 10.0, math.pi / 2, 10.0])
    hard = (_starts(source, True, 4000) - centre) / spread
    assert (np.abs(hard) <= 1.0 + 1e-6).all()
    assert (np.min(hard, axis=0) < -0.99).all() and (np.max(hard, axis=0) > 0.99).all()
    np.testing.assert_allclose(hard.std(axis=0), 1 / math.sqrt(3), atol=0.02)  # uniform


def test_vector_environment_steps_as_the_single_one() -> None:
    """8 rows of random actions through the hard start's short episodes (off the track) and
    the next-step autoreset, against single environments started where each row starts."""
    rows, limit = 8, 60
    rng = np.random.default_rng(2)
    register_all()
    vector = gym.make_vec(SWING_UP, num_envs=rows, vectorization_mode="vector_entry_point",
                          hard=True, max_episode_steps=limit)
    vector.reset(seed=0)
    inner: Any = vector.unwrapped
    singles = [gym.make(SWING_UP, max_episode_steps=limit) for _ in range(rows)]
    for row, env in enumerate(singles):
        env.reset(options={"state": [float(column[row]) for column in inner.state]})
    ended = np.zeros(rows, dtype=bool)
    counts = {"terminated": 0, "truncated": 0}
    for _ in range(300):
        actions = rng.uniform(-1.2, 1.2, (rows, 1))
        observations, rewards, terminated, truncated, _ = vector.step(actions)
        for row, env in enumerate(singles):
            if ended[row]:
                obs, _ = env.reset(options={"state": [float(c[row]) for c in inner.state]})
                reward, term, trunc = 0.0, False, False
            else:
                obs, stepped, term, trunc, _ = env.step(actions[row])
                reward = float(stepped)
            np.testing.assert_allclose(observations[row], obs, rtol=0, atol=1e-9)
            assert rewards[row] == pytest.approx(reward, abs=1e-9)
            assert (terminated[row], truncated[row]) == (term, trunc)
        counts["terminated"] += int(terminated.sum())
        counts["truncated"] += int(truncated.sum())
        ended = terminated | truncated
    assert counts["terminated"] > 10 and counts["truncated"] > 0  # both ends were seen
    vector.close()


@pytest.mark.parametrize("hard", [False, True])
def test_the_jax_form_steps_as_the_numpy_one(hard: bool) -> None:
    """The same actions over a whole episode from the JAX form's own start: in float64 the two
    agree to rounding; in JAX's float32, to float32's precision of a chaotic system."""
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    env = CartPoleSwingUp(hard=hard)
    assert isinstance(env, IJaxEnvironment)
    rng = np.random.default_rng(4)
    actions = rng.uniform(-1.5, 1.5, (1000, 1)) * np.linspace(1, 0.2, 1000)[:, None]
    for x64, tolerance in ((True, 1e-9), (False, 2e-3)):
        with jax.enable_x64(x64):
            reset, step = jax.jit(env.jax_reset), jax.jit(env.jax_step)
            observation, state = reset(jax.random.key(9))
            env.reset(options={"state": np.asarray(state, dtype=np.float64).tolist()})
            dtype = jnp.float64 if x64 else jnp.float32
            for t, action in enumerate(actions):
                observation, state, reward, terminated, truncated = step(
                    jax.random.key(t), state, jnp.asarray(action, dtype=dtype))
                expected, expected_reward, ended, _, _ = env.step(action)
                np.testing.assert_allclose(np.asarray(observation), expected, rtol=0,
                                           atol=tolerance)
                assert float(reward) == pytest.approx(float(expected_reward), abs=tolerance)
                assert bool(terminated) == ended and not bool(truncated)
                if ended:
                    break
            assert observation.dtype == dtype


def test_checker_and_keywords() -> None:
    for hard in (False, True):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*infinity.*")
            warnings.filterwarnings("ignore", message=".*render modes.*")
            check_env(CartPoleSwingUp(hard=hard))
    with pytest.raises(ValueError, match="hard"):
        CartPoleSwingUp(hard=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="four finite"):
        CartPoleSwingUp().reset(options={"state": [0.0, 0.0, math.nan, 0.0]})


def test_list_environments_shows_it(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("jax")
    from evo_core.cli.main import main

    assert main(["list-environments", "--json"]) == 0
    rows = {row["id"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows[SWING_UP]["vectorize"] == "jax" and "swing-up" in rows[SWING_UP]["description"]


def _config(vectorize: str, **environment: Any) -> dict[str, Any]:
    return {"environment": {"id": SWING_UP, **environment}, "seed": 2, "generations": 2,
            "brain": {"type": "ffnn", "hidden_layers": [4]},
            "optimizer": {"type": "cma-es", "population_size": 6},
            "episodes": {"runs": 2, "max_steps": 100, "vectorize": vectorize}}


@pytest.mark.parametrize("vectorize", ["off", "native"])
def test_cma_es_trains_on_it(vectorize: str, tmp_path: Path) -> None:
    run = api.train(_config(vectorize), out=tmp_path / "run")
    again = api.train(_config(vectorize), out=tmp_path / "again")
    assert (run.path / "log.csv").read_text().count("\n") == 3  # header and two generations
    assert 0 < run.best.fitness <= 100 and run.best.fitness == again.best.fitness


@pytest.mark.slow
def test_cma_es_trains_on_it_in_jax_with_its_kwargs(tmp_path: Path) -> None:
    """The compiled rollout (a compile of about ten seconds); the hard start is a kwarg."""
    pytest.importorskip("jax")
    run = api.train(_config("jax", kwargs={"hard": True}), out=tmp_path / "run")
    assert 0 < run.best.fitness <= 100
    returns = run.replay(episodes=2, seed=1)  # the numpy form: the same task
    assert len(returns) == 2 and all(-100 < r <= 100 for r in returns)


def test_jax_takes_its_kwargs_but_refuses_wrappers() -> None:
    pytest.importorskip("jax")
    from evo_core.config import validate_config
    from evo_core.errors import UserError
    from evo_core.hooks.discovery import get_registry
    from evo_core.running.experiment import build_experiment

    registry = get_registry()
    build_experiment(validate_config(_config("jax", kwargs={"hard": True}), registry, "c.json"),
                     registry, "c.json")
    wrapped = _config("jax", wrappers=[{"type": "stand-still-stop", "index": 0}])
    with pytest.raises(UserError) as raised:
        build_experiment(validate_config(wrapped, registry, "c.json"), registry, "c.json")
    message = str(raised.value)
    assert "from its id and kwargs alone; remove its wrappers" in message
    assert "\n" not in message
