"""`evo/CartPoleSwingUp-v0`: EvoJAX's cart-pole swing-up, in numpy and in JAX.

The physics, reward and end are `swing_up_physics.py`'s, written once: the single environment
steps Python floats with them, the vector environment (`episodes.vectorize = "native"`) steps
arrays of cart-poles, and the JAX form (`jax_reset`, `jax_step`: `IJaxEnvironment`, which
evo-jax's `episodes.vectorize = "jax"` compiles) traces the same lines with `jax.numpy`.

The observation is (x, x_dot, cos(theta), sin(theta), theta_dot); the action one number, clipped
to [-1, 1] (10 N each way). An episode is 1,000 steps (the registered limit, truncated), or ends
earlier (terminated) on the step that takes the cart beyond |x| = 2.4, which still earns its
reward. Keyword `hard` (default False): the start is EvoJAX's harder one.

- the easy start: each of (x, x_dot, theta, theta_dot) is (0, 0, pi, 0) plus 0.2 x a standard
  normal draw (the pole hangs down, nearly at rest);
- the hard start: (0, 0, pi, 0) plus a uniform draw in +-(2.4, 10, pi/2, 10), each variable its
  own (anywhere on the track, fast, the pole anywhere in its lower half).

`env.unwrapped.state` is (x, x_dot, theta, theta_dot) as floats, and
`reset(options={"state": [...]})` starts from any four values, so the physics can be checked
from outside. The single environment draws its starts from gymnasium's seeded `np_random`, the
vector environment from one Generator for all its rows (seeded by `reset(seed=...)`), the JAX
form from the key it is given: the same distributions, not the same numbers.

Speed, in process time on a shared 2-core machine (load average about 5): 7 µs a step of the
single environment, observation included; 150 µs a step of the vector environment of 1,024
cart-poles (6.8 million cart-pole steps a second), where the sines and cosines, computed once
per state (`swing_up_physics.sin_cos`), are the largest part.
"""

from __future__ import annotations

import math
from typing import Any, Literal, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from numpy.typing import NDArray

from evo_core.environments import swing_up_physics as physics
from evo_core.environments.cart_drawing import CartFrames, Pole
from evo_core.environments.drawing import checked_render_mode

__all__ = ["EPISODE_STEPS", "SWING_UP", "CartPoleSwingUp", "CartPoleSwingUpVector", "register"]

SWING_UP = "evo/CartPoleSwingUp-v0"
EPISODE_STEPS = 1000

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
State = tuple[float, float, float, float]


def _spaces() -> tuple[gym.spaces.Box, gym.spaces.Box]:
    return (gym.spaces.Box(-np.inf, np.inf, (5,), np.float64),
            gym.spaces.Box(-1.0, 1.0, (1,), np.float64))


def _hard(hard: Any) -> bool:
    if not isinstance(hard, bool):
        raise ValueError(f"hard must be true or false, got {hard!r}")
    return hard


def _draws(rng: np.random.Generator, hard: bool, rows: int) -> FloatArray:
    """rows x 4 draws for `physics.start_state`: uniform in [0, 1) for the hard start,
    standard normal for the easy one."""
    if hard:
        return rng.random((rows, 4))
    return rng.standard_normal((rows, 4))


class CartPoleSwingUp(gym.Env[FloatArray, FloatArray]):
    """One cart-pole (the task in the module docstring)."""

    #: a frame per step of DT: 100 frames a second is real time
    metadata: dict[str, Any] = {"render_modes": ["rgb_array"],  # noqa: RUF012 - gymnasium's own type
                                "render_fps": round(1.0 / physics.DT)}

    def __init__(self, hard: bool = False, render_mode: str | None = None) -> None:
        self.hard = _hard(hard)
        self.render_mode = checked_render_mode(self.metadata, render_mode)
        self._frames: CartFrames | None = None
        self.observation_space, self.action_space = _spaces()
        self.state: State = physics.START
        self._trig = physics.sin_cos(math, self.state[2])

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[FloatArray, dict[str, Any]]:
        super().reset(seed=seed)
        if options is not None and "state" in options:
            self.state = _state(options["state"])
        else:
            x, x_dot, theta, theta_dot = _draws(self.np_random, self.hard, 1)[0].tolist()
            self.state = physics.start_state(self.hard, (x, x_dot, theta, theta_dot))
        self._trig = physics.sin_cos(math, self.state[2])
        return self._observation(), {}

    def step(self, action: Any) -> tuple[FloatArray, SupportsFloat, bool, bool, dict[str, Any]]:
        push = float(physics.clipped(np, np.asarray(action, dtype=np.float64).reshape(-1)[0]))
        self.state = state = physics.step(self.state, self._trig, push)
        self._trig = trig = physics.sin_cos(math, state[2])
        return (self._observation(), physics.reward(math, state[0], trig[1]),
                bool(physics.off_track(state[0])), False, {})

    def _observation(self) -> FloatArray:
        return np.array(physics.observation(self.state, self._trig))

    def observation_labels(self) -> tuple[str, ...]:
        """IObservationLabels: (x, x_dot, cos(theta), sin(theta), theta_dot)."""
        return ("x m", "v m/s", "cos \u03b8", "sin \u03b8", "\u03c9 rad/s")

    def render(self) -> NDArray[np.uint8] | None:
        """The cart and its pole to scale (`cart_drawing.py`; theta = 0 upright, pi hanging):
        an H x W x 3 array in `render_mode="rgb_array"`, else None."""
        if self.render_mode != "rgb_array":
            return None
        if self._frames is None:
            self._frames = CartFrames(physics.TRACK_LIMIT,
                                      (Pole(physics.POLE_LENGTH, 0.06, (204, 153, 102)),),
                                      tip_side=-1)
        return self._frames.picture(self.state[0], (self.state[2],))

    # the JAX form (IJaxEnvironment): its state is a float array (x, x_dot, theta, theta_dot)

    def jax_reset(self, key: Any) -> tuple[Any, Any]:
        import jax
        import jax.numpy as jnp

        draws = (jax.random.uniform(key, (4,)) if self.hard
                 else jax.random.normal(key, (4,)))
        state = physics.start_state(self.hard, tuple(draws))
        trig = physics.sin_cos(jnp, state[2])
        return jnp.stack(physics.observation(state, trig)), jnp.stack(state)

    def jax_step(self, key: Any, state: Any, action: Any) -> tuple[Any, Any, Any, Any, Any]:
        import jax.numpy as jnp

        push = physics.clipped(jnp, jnp.reshape(action, (-1,))[0])
        before = (state[0], state[1], state[2], state[3])
        after = physics.step(before, physics.sin_cos(jnp, before[2]), push)
        trig = physics.sin_cos(jnp, after[2])
        return (jnp.stack(physics.observation(after, trig)), jnp.stack(after),
                physics.reward(jnp, after[0], trig[1]), physics.off_track(after[0]),
                jnp.asarray(False))


def _state(values: Any) -> State:
    """Four finite floats from `options["state"]`."""
    array = np.asarray(values, dtype=np.float64).reshape(-1)
    if array.shape != (4,) or not np.isfinite(array).all():
        raise ValueError("options['state'] must be four finite numbers (x, x_dot, theta, "
                         f"theta_dot), got {values!r}")
    x, x_dot, theta, theta_dot = array.tolist()
    return x, x_dot, theta, theta_dot


class CartPoleSwingUpVector(VectorEnv[FloatArray, FloatArray, NDArray[Any]]):
    """`num_envs` cart-poles stepped as columns of arrays (gymnasium's next-step autoreset: an
    environment that ended starts again on the following step, whose action it ignores). All
    rows draw their starts from one Generator, seeded by `reset(seed=...)`; given one seed per
    row, `reset(seed=[s_0, s_1, ...])`, row i starts as the single environment's
    `reset(seed=s_i)` (`SeededRows`: the batched runner seeds each row's first episode from its
    job, so a generation's candidates that share their evaluation seed start alike) and the
    later starts come from a Generator seeded with all of them."""

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.NEXT_STEP}  # noqa: RUF012 - gymnasium's VectorEnv declares metadata a plain class attribute

    def __init__(self, num_envs: int = 1, hard: bool = False,
                 max_episode_steps: int = EPISODE_STEPS) -> None:
        self.hard = _hard(hard)
        self.num_envs = num_envs
        self.max_episode_steps = max_episode_steps
        self.single_observation_space, self.single_action_space = _spaces()
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space,
                                                              num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self._rng = np.random.default_rng()
        zeros = np.zeros(num_envs)
        self.state: tuple[FloatArray, FloatArray, FloatArray, FloatArray] = (
            zeros, zeros, zeros, zeros)
        self._trig = physics.sin_cos(np, zeros)
        self.steps = np.zeros(num_envs, dtype=np.int64)
        self._ended = np.zeros(num_envs, dtype=bool)

    def seeds_rows(self) -> Literal[True]:
        """`reset(seed=list)` seeds each row (evaluation/vector_envs.py's `SeededRows`)."""
        return True

    def reset(self, *, seed: int | list[int] | None = None,
              options: dict[str, Any] | None = None) -> tuple[FloatArray, dict[str, Any]]:
        if isinstance(seed, list):
            if len(seed) != self.num_envs:
                raise ValueError(f"reset: {len(seed)} seeds for {self.num_envs} rows")
            self.state = self._started(np.concatenate(
                [_draws(np.random.default_rng(row), self.hard, 1) for row in seed]))
            self._rng = np.random.default_rng(seed)
        else:
            if seed is not None:
                self._rng = np.random.default_rng(seed)
            self.state = self._starts(self.num_envs)
        self._trig = physics.sin_cos(np, self.state[2])
        self.steps[:] = 0
        self._ended[:] = False
        return self._observations(), {}

    def step(self, actions: FloatArray
             ) -> tuple[FloatArray, FloatArray, BoolArray, BoolArray, dict[str, Any]]:
        push = physics.clipped(np, np.asarray(actions, dtype=np.float64).reshape(
            self.num_envs, -1)[:, 0])
        state = physics.step(self.state, self._trig, push)
        ended = self._ended
        if ended.any():  # the rows that ended last step start again instead
            starts = self._starts(int(ended.sum()))
            for column, start in zip(state, starts):
                column[ended] = start
        self.state = state
        self._trig = trig = physics.sin_cos(np, state[2])
        rewards = physics.reward(np, state[0], trig[1])
        terminated = physics.off_track(state[0])
        if ended.any():
            rewards[ended] = 0.0
            terminated[ended] = False
        self.steps += 1
        self.steps[ended] = 0
        truncated = self.steps >= self.max_episode_steps  # as gymnasium's TimeLimit says
        self._ended = terminated | truncated
        return self._observations(), rewards, terminated, truncated, {}

    def _starts(self, rows: int) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        return self._started(_draws(self._rng, self.hard, rows))

    def _started(self, draws: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray,
                                                   FloatArray]:
        """The start states of rows x 4 draws (`_draws`)."""
        x, x_dot, theta, theta_dot = physics.start_state(
            self.hard, (draws[:, 0], draws[:, 1], draws[:, 2], draws[:, 3]))
        return x, x_dot, theta, theta_dot

    def _observations(self) -> FloatArray:
        return np.stack(physics.observation(self.state, self._trig), axis=1)


def _make_vector(**kwargs: Any) -> CartPoleSwingUpVector:
    return CartPoleSwingUpVector(**kwargs)


def register() -> None:
    """Register the id with gymnasium (idempotent)."""
    if SWING_UP not in gym.registry:
        gym.register(SWING_UP, entry_point=f"{__name__}:CartPoleSwingUp",
                     vector_entry_point=_make_vector, max_episode_steps=EPISODE_STEPS)
