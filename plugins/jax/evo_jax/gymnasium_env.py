"""The gymnasium form of evo-jax's environments, registered under the same ids.

The core makes every environment with `gymnasium.make`: to probe a config's spaces, for
`evo replay`, and for `episodes.vectorize = "off"`. `JaxGymnasiumEnv` steps the very JAX
functions the rollout compiles (jitted one step at a time), with the same keys (evo_jax.keys):
reset with the seed `EpisodeRunner` gives it, an episode is the rollout's episode of that seed,
so a replay runs the champion in the same JAX environment that trained it. It is slow per step
(a jitted call each), which is why training uses the rollout.
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from evo_jax.environments import ENVIRONMENTS, make_jax_environment
from evo_jax.keys import next_episode, step_key

__all__ = ["JaxGymnasiumEnv", "register_gymnasium"]


def register_gymnasium() -> None:
    """Register every id of the table with gymnasium (cheap: nothing imported until made),
    but evo's own, whose gymnasium form evo-core registers."""
    for env_id, entry in ENVIRONMENTS.items():
        if entry.source != "evo" and env_id not in gym.registry:
            gym.register(env_id, entry_point="evo_jax.gymnasium_env:JaxGymnasiumEnv",
                         kwargs={"env_id": env_id}, disable_env_checker=True)


class JaxGymnasiumEnv(gym.Env[Any, Any]):
    """One JAX environment behind gymnasium's reset/step; observations as numpy arrays."""

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 - gymnasium's own attribute

    def __init__(self, env_id: str, render_mode: str | None = None) -> None:
        import jax

        self.env_id = env_id
        self.jax_env = make_jax_environment(env_id)
        self.observation_space = self.jax_env.observation_space
        self.action_space = self.jax_env.action_space
        self.render_mode = render_mode
        self._reset = jax.jit(self.jax_env.reset)
        self._step = jax.jit(self.jax_env.step)
        self._key: Any = None
        self._step_root: Any = None
        self._state: Any = None
        self._t = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[Any, dict[str, Any]]:
        import jax

        super().reset(seed=seed)
        if seed is not None:
            self._key = jax.random.key(seed % 2**32)
        elif self._key is None:  # never seeded: from gymnasium's own seeded stream
            self._key = jax.random.key(int(self.np_random.integers(2**32)))
        self._key, reset_key, self._step_root = next_episode(self._key)
        observation, self._state = self._reset(reset_key)
        self._t = 0
        return np.asarray(observation), {}

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        import jax.numpy as jnp

        if self._state is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        observation, self._state, reward, terminated, truncated = self._step(
            step_key(self._step_root, self._t), self._state, jnp.asarray(action))
        self._t += 1
        truncated = bool(truncated) or self._t >= self.jax_env.episode_limit
        return np.asarray(observation), float(reward), bool(terminated), truncated, {}
