"""The JAX environments evo-jax runs: their ids, and one interface over gymnax, brax and evo's own.

An id is `gymnax/<gymnax id>`, `brax/<brax name>`, or one of evo's own environments that declare a
JAX form (`evo_core.IJaxEnvironment`: `evo/CartPoleSwingUp-v0`), made with `gymnasium.make` and
the config's kwargs, whose `jax_reset` and `jax_step` are the pure functions and whose
registered `max_episode_steps` is the time limit. All are wrapped into
`JaxEnvironment`, pure functions without automatic resets (the rollout masks finished rows
instead, and a reset on every step, as gymnax's `step` does, would cost a reset's work per
step): `reset(key) -> (observation, state)` and `step(key, state, action) -> (observation,
state, reward, terminated, truncated)`, with the spaces as gymnasium spaces. `episode_limit`
is the environment's own time limit (gymnax's `max_steps_in_episode`; brax environments have
none, so brax's training default of 1000 steps is used), applied by the rollout and by the
gymnasium form alike as truncation.

The table below needs no JAX; `make_jax_environment` imports gymnax or brax when called. evo's
own ids keep the gymnasium form evo-core registers (the numpy environment with the same
equations), so a replay or `vectorize = "off"` runs that form: the same task, its own random
starts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import gymnasium as gym
import numpy as np

from evo_core import IJaxEnvironment, UserError

__all__ = [
    "BRAX_EPISODE_LIMIT",
    "ENVIRONMENTS",
    "EnvironmentEntry",
    "JaxEnvironment",
    "make_jax_environment",
]

#: brax's own training default (brax.envs.training.EpisodeWrapper's episode_length)
BRAX_EPISODE_LIMIT = 1000


@dataclass(frozen=True)
class EnvironmentEntry:
    """One supported id: which library, its name there, and a line for `evo list-environments`."""

    source: Literal["gymnax", "brax", "evo"]
    name: str
    description: str

    @property
    def id(self) -> str:
        return f"{self.source}/{self.name}"


_ENTRIES = [
    EnvironmentEntry("gymnax", "CartPole-v1", "gymnax's CartPole-v1: Box(4) -> Discrete(2), "
                     "500 steps"),
    EnvironmentEntry("gymnax", "Acrobot-v1", "gymnax's Acrobot-v1: Box(6) -> Discrete(3), "
                     "500 steps"),
    EnvironmentEntry("gymnax", "MountainCar-v0", "gymnax's MountainCar-v0: Box(2) -> "
                     "Discrete(3), 200 steps"),
    EnvironmentEntry("gymnax", "MountainCarContinuous-v0", "gymnax's MountainCarContinuous-v0: "
                     "Box(2) -> Box(1), 999 steps"),
    EnvironmentEntry("gymnax", "Pendulum-v1", "gymnax's Pendulum-v1: Box(3) -> Box(1), "
                     "200 steps"),
    EnvironmentEntry("brax", "ant", "brax's ant (evo-jax[brax]): Box(27) -> Box(8), "
                     f"{BRAX_EPISODE_LIMIT} steps"),
    EnvironmentEntry("brax", "halfcheetah", "brax's halfcheetah (evo-jax[brax]): Box(18) -> "
                     f"Box(6), {BRAX_EPISODE_LIMIT} steps"),
    EnvironmentEntry("brax", "hopper", "brax's hopper (evo-jax[brax]): Box(11) -> Box(3), "
                     f"{BRAX_EPISODE_LIMIT} steps"),
    EnvironmentEntry("brax", "inverted_pendulum", "brax's inverted_pendulum (evo-jax[brax]): "
                     f"Box(4) -> Box(1), {BRAX_EPISODE_LIMIT} steps"),
    EnvironmentEntry("evo", "CartPoleSwingUp-v0", "EvoJAX's cart-pole swing-up (evo-core's own; "
                     "kwargs: hard): Box(5) -> Box(1), 1000 steps"),
]

#: every supported id -> its entry
ENVIRONMENTS: dict[str, EnvironmentEntry] = {entry.id: entry for entry in _ENTRIES}


@dataclass(frozen=True)
class JaxEnvironment:
    """Pure, traceable functions of one environment, and its spaces (see the module doc)."""

    observation_space: gym.Space[Any]
    action_space: gym.Space[Any]
    reset: Callable[[Any], tuple[Any, Any]]
    step: Callable[[Any, Any, Any], tuple[Any, Any, Any, Any, Any]]
    episode_limit: int
    #: steps unrolled into one iteration of the rollout's scan: 2 where a step is cheap
    #: (gymnax's classic control, where the loop's own cost counts: CartPole with an FFNN, 256
    #: rows, about a tenth faster than 1), 1 where it is heavy (brax's physics: unrolling
    #: would only lengthen the compile)
    unroll: int = 1


def make_jax_environment(env_id: str, kwargs: Mapping[str, Any] | None = None
                         ) -> JaxEnvironment:
    """The JAX environment of a supported id (`kwargs`: the config's, for evo's own ids); a
    UserError for any other id, or when its library is not installed."""
    entry = ENVIRONMENTS.get(env_id)
    if entry is None:
        raise UserError(f"environment {env_id!r} is not one evo-jax runs; it runs "
                        f"{', '.join(ENVIRONMENTS)} (see `evo list-environments`)")
    if entry.source == "gymnax":
        return _gymnax(entry.name)
    if entry.source == "evo":
        return _evo(env_id, dict(kwargs or {}))
    return _brax(entry.name)


def _missing(module: str, extra: str, exc: ImportError) -> UserError:
    return UserError(f"evo-jax needs {module} for this environment, which cannot be imported "
                     f"({exc}); install it with pip install '{extra}'")


def _gymnax(name: str) -> JaxEnvironment:
    try:
        import gymnax
    except ImportError as exc:
        raise _missing("gymnax", "evo-core[jax]", exc) from None
    env, params = gymnax.make(name)

    def reset(key: Any) -> tuple[Any, Any]:
        observation, state = env.reset_env(key, params)
        return observation, state

    def step(key: Any, state: Any, action: Any) -> tuple[Any, Any, Any, Any, Any]:
        observation, state, reward, terminated, _ = env.step_env(key, state, action, params)
        return observation, state, reward, terminated, env.is_truncated(state, params)

    return JaxEnvironment(_gymnasium_space(env.observation_space(params)),
                          _gymnasium_space(env.action_space(params)), reset, step,
                          int(params.max_steps_in_episode), unroll=2)


def _gymnasium_space(space: Any) -> gym.Space[Any]:
    """A gymnax Box or Discrete as the gymnasium space brains are built for."""
    from gymnax.environments import spaces

    if isinstance(space, spaces.Discrete):
        return gym.spaces.Discrete(int(space.n))
    if not isinstance(space, spaces.Box):
        raise UserError(f"evo-jax runs gymnax environments with Box and Discrete spaces, not "
                        f"{type(space).__name__}")
    shape = tuple(space.shape)
    low = np.broadcast_to(np.asarray(space.low, dtype=np.float32), shape)
    high = np.broadcast_to(np.asarray(space.high, dtype=np.float32), shape)
    return gym.spaces.Box(low, high, shape, dtype=np.float32)


def _brax(name: str) -> JaxEnvironment:
    try:
        import warnings

        with warnings.catch_warnings():  # brax's notice that MJX is better maintained
            warnings.simplefilter("ignore", UserWarning)
            from brax import envs
            env = envs.get_environment(name)
    except ImportError as exc:
        raise _missing("brax", "evo-jax[brax]", exc) from None
    import jax.numpy as jnp

    def reset(key: Any) -> tuple[Any, Any]:
        state = env.reset(key)
        return state.obs, state

    def step(key: Any, state: Any, action: Any) -> tuple[Any, Any, Any, Any, Any]:
        state = env.step(state, action)
        return state.obs, state, state.reward, state.done > 0, jnp.asarray(False)

    size = int(env.observation_size)
    actions = int(env.action_size)
    return JaxEnvironment(
        gym.spaces.Box(-np.inf, np.inf, (size,), dtype=np.float32),
        gym.spaces.Box(-1.0, 1.0, (actions,), dtype=np.float32), reset, step,
        BRAX_EPISODE_LIMIT)


def _evo(env_id: str, kwargs: dict[str, Any]) -> JaxEnvironment:
    """An evo environment's own JAX form, made as gymnasium makes it (its id is registered by
    evo-core in every process that makes environments)."""
    env = gym.make(env_id, **kwargs)
    try:
        form = env.unwrapped
        if not isinstance(form, IJaxEnvironment):
            raise UserError(f"environment {env_id!r} declares no JAX form (an "
                            "evo_core.IJaxEnvironment)")
        limit = env.spec.max_episode_steps if env.spec is not None else None
        if limit is None:
            raise UserError(f"environment {env_id!r} has no time limit (max_episode_steps), "
                            "which the JAX rollout needs")
        return JaxEnvironment(env.observation_space, env.action_space, form.jax_reset,
                              form.jax_step, int(limit), unroll=2)
    finally:
        env.close()
