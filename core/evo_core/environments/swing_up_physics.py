"""The cart-pole swing-up's equations, written once over a math namespace `xp`.

The task is EvoJAX's `CartPoleSwingUp` (its `evojax/task/cartpole.py`): a cart of 0.5 kg on a
track of |x| <= 2.4, a pole of 0.5 kg and length 0.6 hinged on it, gravity 9.82, friction 0.1
on the cart's speed, a push of 10 N x the action (clipped to [-1, 1]), and steps of 0.01 s.
With s = sin(theta), c = cos(theta), M = cart + pole, m = the pole's mass, l its length:

    x_acc     = (-2 m l theta_dot^2 s + 3 m g s c + 4 F - 4 mu x_dot) / (4 M - 3 m c^2)
    theta_acc = (-3 m l theta_dot^2 s c + 6 M g s + 6 (F - mu x_dot) c) / (4 l M - 3 m l c^2)

integrated by explicit Euler: the positions move with the old velocities, and the velocities
with the accelerations of the old state. theta = 0 is the pole upright, theta = pi hanging.
The reward after a step is (cos(theta) + 1) / 2 x cos(x / 2.4 x pi / 2) of the new state; the
episode ends once |x| > 2.4 (that step still earns its reward, negative beyond the track).

The functions use only `xp.sin`, `xp.cos`, `xp.pi` and arithmetic (those that need the
namespace take it first), so the same lines run on Python floats (`math`: the single
environment, a few microseconds a step), on numpy arrays of rows (the vector environment) and
traced by JAX (`jax.numpy`: evo-jax's compiled rollout).
"""

from __future__ import annotations

from typing import Any

__all__ = ["CART_MASS", "DT", "FORCE", "FRICTION", "GRAVITY", "HARD_SPREAD", "NOISE",
           "POLE_LENGTH", "POLE_MASS", "START", "TRACK_LIMIT", "accelerations", "clipped",
           "observation", "off_track", "reward", "sin_cos", "start_state", "step"]

GRAVITY = 9.82
CART_MASS = 0.5
POLE_MASS = 0.5
POLE_LENGTH = 0.6
FRICTION = 0.1
FORCE = 10.0
DT = 0.01
TRACK_LIMIT = 2.4
#: the mean start (x, x_dot, theta, theta_dot): at rest, the pole hanging down
START = (0.0, 0.0, 3.141592653589793, 0.0)
#: the easy start: each variable the mean plus NOISE x a standard normal draw
NOISE = 0.2
#: the hard start: each variable the mean plus a uniform draw in +-HARD_SPREAD
HARD_SPREAD = (TRACK_LIMIT, 10.0, 3.141592653589793 / 2.0, 10.0)

_TOTAL = CART_MASS + POLE_MASS
_MASS_LENGTH = POLE_MASS * POLE_LENGTH

State = tuple[Any, Any, Any, Any]


def start_state(hard: bool, draws: State) -> State:
    """A start from the random draws of its four variables: standard normal ones for the easy
    start, uniform ones in [0, 1) for the hard start. The draws come from the caller's own
    random stream (a numpy Generator, a JAX key), so this is arithmetic only."""
    if hard:
        x, x_dot, theta, theta_dot = ((2.0 * u - 1.0) * spread + mean
                                      for u, spread, mean in zip(draws, HARD_SPREAD, START))
    else:
        x, x_dot, theta, theta_dot = (z * NOISE + mean for z, mean in zip(draws, START))
    return x, x_dot, theta, theta_dot


def clipped(xp: Any, action: Any) -> Any:
    """The action limited to [-1, 1] (NaN stays NaN, and makes the state NaN)."""
    return xp.clip(action, -1.0, 1.0)


def sin_cos(xp: Any, theta: Any) -> tuple[Any, Any]:
    """(sin(theta), cos(theta)): computed once per state, for its step, reward and
    observation alike (on 1,024 rows, the sines and cosines are most of a step's cost)."""
    return xp.sin(theta), xp.cos(theta)


def accelerations(x_dot: Any, theta_dot: Any, trig: tuple[Any, Any], force: Any
                  ) -> tuple[Any, Any]:
    """(x_acc, theta_acc) of the equations in the module docstring; `trig` is
    `sin_cos(theta)`."""
    s, c = trig
    spin = theta_dot * theta_dot * s
    drag = force - FRICTION * x_dot
    x_acc = ((-2.0 * _MASS_LENGTH * spin + 3.0 * POLE_MASS * GRAVITY * s * c + 4.0 * drag)
             / (4.0 * _TOTAL - 3.0 * POLE_MASS * c * c))
    theta_acc = ((-3.0 * _MASS_LENGTH * spin * c + 6.0 * _TOTAL * GRAVITY * s + 6.0 * drag * c)
                 / (4.0 * POLE_LENGTH * _TOTAL - 3.0 * _MASS_LENGTH * c * c))
    return x_acc, theta_acc


def step(state: State, trig: tuple[Any, Any], push: Any) -> State:
    """The state after one step of 0.01 s with `push` in [-1, 1] (already clipped); `trig` is
    `sin_cos` of the state's theta."""
    x, x_dot, theta, theta_dot = state
    x_acc, theta_acc = accelerations(x_dot, theta_dot, trig, FORCE * push)
    return (x + DT * x_dot, x_dot + DT * x_acc, theta + DT * theta_dot,
            theta_dot + DT * theta_acc)


def reward(xp: Any, x: Any, cos_theta: Any) -> Any:
    """The pole's height, (cos(theta) + 1) / 2, times the cart's nearness to the centre,
    cos(x / 2.4 x pi / 2)."""
    return (cos_theta + 1.0) / 2.0 * xp.cos(x / TRACK_LIMIT * (xp.pi / 2.0))


def off_track(x: Any) -> Any:
    """Whether the cart left the track (|x| > 2.4): the episode ends (terminated)."""
    return abs(x) > TRACK_LIMIT


def observation(state: State, trig: tuple[Any, Any]) -> tuple[Any, Any, Any, Any, Any]:
    """The five observed values, (x, x_dot, cos(theta), sin(theta), theta_dot), each of the
    state's own type (the caller stacks them: one row, or columns of rows); `trig` is
    `sin_cos` of the state's theta."""
    x, x_dot, _, theta_dot = state
    return x, x_dot, trig[1], trig[0], theta_dot
