"""`evo/DoublePole-v0`: balancing two poles on a cart, the classic neuroevolution benchmark.

The physics is Wieland's (1991) as the code of Gomez, Stanley and Miikkulainen has it, the
code behind the published tables (Stanley and Miikkulainen 2002, NEAT; Gomez, Schmidhuber and
Miikkulainen 2008, CoSyNE, with Igel's 2003 CMA-ES figures):

- a cart of 1 kg on a track of 4.8 m; a long pole of 0.1 kg and half-length 0.5 m, a short one
  of 0.01 kg and half-length 0.05 m; hinge friction mu_p = 0.000002, no cart friction;
  g = -9.8 (the sign convention of the equations);
- for each pole i: f_i = m_i l_i theta_dot_i^2 sin(theta_i) + 3/4 m_i cos(theta_i)
  (mu_p theta_dot_i / (m_i l_i) + g sin(theta_i)), m~_i = m_i (1 - 3/4 cos^2(theta_i)),
  x_acc = (F + sum f_i) / (M + sum m~_i), theta_acc_i = -3/4 (x_acc cos(theta_i) +
  g sin(theta_i) + mu_p theta_dot_i / (m_i l_i)) / l_i;
- a decision is two classic Runge-Kutta-4 steps of 0.01 s with the force held: F = 10 N x a,
  the action a clipped to [-1, 1] (the action space);
- the episode fails (terminated) once |x| > 2.4 m or a pole leans more than 36 degrees;
- the standard start: everything 0 but theta_1 = 0.07 rad.

`env.unwrapped.state` is (x, x_dot, theta_1, theta_dot_1, theta_2, theta_dot_2) as floats, and
`reset(options={"state": [...]})` starts from any six values, so that the physics can be checked
from outside.

Keywords:

- `velocities` (default True): the observation is the published network input, x/4.8, x_dot/2,
  theta_1/0.52, theta_dot_1/2, theta_2/0.52, theta_dot_2/2; False: x/4.8, theta_1/0.52,
  theta_2/0.52 (the non-Markovian task).
- `fitness`: "steps" (default) rewards 1 for every decision after which the poles still stand,
  so the return is the number of decisions survived (the failing one earns 0); the id's
  registered limit is 100,000 decisions, the with-velocities success criterion. "damping":
  Gruau's fitness F = 0.1 t/1000 + 0.9 x 0.75 / S, t the decisions survived, S the sum of
  |x| + |x_dot| + |theta_1| + |theta_dot_1| over the states after the last 100 decisions survived,
  the second term only when t >= 100. Every decision survived earns 0.1/1000 and the episode's
  last step (failure, or the 1,000th decision, where this fitness ends its episodes itself)
  adds the second term, so the return is F.
- `start`: "standard" (default), or "generalization": `reset(seed=k)` starts in the k-th of the
  625 test starts (k mod 625), a reset without a seed in the next one. The starts are every
  combination of v in (0.05, 0.25, 0.5, 0.75, 0.95) for x = 4.32 v - 2.16,
  x_dot = 2.70 v - 1.35, theta_1 = 0.12566304 v - 0.06283152,
  theta_dot_1 = 0.30019504 v - 0.15009752 (the poles' other values 0), numbered with theta_dot_1
  varying fastest, then theta_1, x_dot, x: `GENERALIZATION_STARTS[k]`.

Speed: the Runge-Kutta stages are plain Python floats, since numpy's per-call overhead on
six-element arrays costs more than the arithmetic. Measured by `bench/pole_balancing.py` in
process time (gymnasium's wrappers bypassed) on a shared 2-core machine under a load average
of about 13: 12 µs a decision for `step`, observation included, and 1.5 s for a
100,000-decision episode (what a solution costs) with a linear controller computing each push.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Literal, SupportsFloat

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core.environments.cart_drawing import CartFrames, Pole
from evo_core.environments.drawing import checked_render_mode

__all__ = ["DOUBLE_POLE", "FAILURE_ANGLE", "GENERALIZATION_STARTS", "STANDARD_START",
           "DoublePole", "State", "register"]

DOUBLE_POLE = "evo/DoublePole-v0"

State = tuple[float, float, float, float, float, float]
Observation = NDArray[np.float64]
Fitness = Literal["steps", "damping"]
Start = Literal["standard", "generalization"]

GRAVITY = -9.8
CART_MASS = 1.0
POLE_MASS = (0.1, 0.01)
HALF_LENGTH = (0.5, 0.05)
HINGE_FRICTION = 0.000002
FORCE = 10.0
TAU = 0.01
TRACK_LIMIT = 2.4
FAILURE_ANGLE = 36.0 * math.pi / 180.0  # 0.628329 rad
STANDARD_START: State = (0.0, 0.0, 0.07, 0.0, 0.0, 0.0)
#: what the observation divides each state variable by: the published network input
OBSERVATION_SCALES: State = (4.8, 2.0, 0.52, 2.0, 0.52, 2.0)
#: Gruau's fitness: its episodes' length and the window of its damping term.
DAMPING_EPISODE = 1000
DAMPING_WINDOW = 100

_V = (0.05, 0.25, 0.5, 0.75, 0.95)
GENERALIZATION_STARTS: tuple[State, ...] = tuple(
    (4.32 * a - 2.16, 2.70 * b - 1.35, 0.12566304 * c - 0.06283152,
     0.30019504 * d - 0.15009752, 0.0, 0.0)
    for a, b, c, d in itertools.product(_V, repeat=4))

# the constants the derivative uses, bound once
_M1, _M2 = POLE_MASS
_L1, _L2 = HALF_LENGTH
_ML1, _ML2 = _M1 * _L1, _M2 * _L2


def _decision(state: State, force: float) -> State:
    """Two RK4 steps of TAU with `force` held: the published integrator, in floats."""
    x, xd, t1, td1, t2, td2 = state
    for _ in range(2):
        a1 = _accelerations(force, t1, td1, t2, td2)
        h = 0.5 * TAU
        b1 = _accelerations(force, t1 + h * td1, td1 + h * a1[1], t2 + h * td2,
                            td2 + h * a1[2])
        xd_b, td1_b, td2_b = xd + h * a1[0], td1 + h * a1[1], td2 + h * a1[2]
        c1 = _accelerations(force, t1 + h * td1_b, td1 + h * b1[1], t2 + h * td2_b,
                            td2 + h * b1[2])
        xd_c, td1_c, td2_c = xd + h * b1[0], td1 + h * b1[1], td2 + h * b1[2]
        d1 = _accelerations(force, t1 + TAU * td1_c, td1 + TAU * c1[1], t2 + TAU * td2_c,
                            td2 + TAU * c1[2])
        xd_d, td1_d, td2_d = xd + TAU * c1[0], td1 + TAU * c1[1], td2 + TAU * c1[2]
        sixth = TAU / 6.0
        # (k1 + k4) + 2 (k3 + k2): the published code's order of the sums
        x += sixth * (xd + xd_d + 2.0 * (xd_c + xd_b))
        t1 += sixth * (td1 + td1_d + 2.0 * (td1_c + td1_b))
        t2 += sixth * (td2 + td2_d + 2.0 * (td2_c + td2_b))
        xd += sixth * (a1[0] + d1[0] + 2.0 * (c1[0] + b1[0]))
        td1 += sixth * (a1[1] + d1[1] + 2.0 * (c1[1] + b1[1]))
        td2 += sixth * (a1[2] + d1[2] + 2.0 * (c1[2] + b1[2]))
    return (x, xd, t1, td1, t2, td2)


def _accelerations(force: float, t1: float, td1: float, t2: float, td2: float
                   ) -> tuple[float, float, float]:
    """(x_acc, theta_acc_1, theta_acc_2) of the equations in the module docstring (the cart's
    position and speed do not enter them)."""
    cos1, sin1 = math.cos(t1), math.sin(t1)
    cos2, sin2 = math.cos(t2), math.sin(t2)
    g1, g2 = GRAVITY * sin1, GRAVITY * sin2
    friction1, friction2 = HINGE_FRICTION * td1 / _ML1, HINGE_FRICTION * td2 / _ML2
    f1 = _ML1 * td1 * td1 * sin1 + 0.75 * _M1 * cos1 * (friction1 + g1)
    f2 = _ML2 * td2 * td2 * sin2 + 0.75 * _M2 * cos2 * (friction2 + g2)
    m1 = _M1 * (1.0 - 0.75 * cos1 * cos1)
    m2 = _M2 * (1.0 - 0.75 * cos2 * cos2)
    x_acc = (force + f1 + f2) / (CART_MASS + m1 + m2)
    return (x_acc, -0.75 * (x_acc * cos1 + g1 + friction1) / _L1,
            -0.75 * (x_acc * cos2 + g2 + friction2) / _L2)


def failed(state: State) -> bool:
    """Off the track, or a pole beyond 36 degrees."""
    return (abs(state[0]) > TRACK_LIMIT or abs(state[2]) > FAILURE_ANGLE
            or abs(state[4]) > FAILURE_ANGLE)


class DoublePole(gym.Env[Observation, Observation]):
    """Two poles on a cart (physics, observations and fitness in the module docstring)."""

    #: a frame per decision, two steps of TAU: 50 frames a second is real time
    metadata: dict[str, Any] = {"render_modes": ["rgb_array"],  # noqa: RUF012 - gymnasium's own type
                                "render_fps": round(1.0 / (2 * TAU))}

    def __init__(self, velocities: bool = True, fitness: Fitness = "steps",
                 start: Start = "standard", render_mode: str | None = None) -> None:
        if not isinstance(velocities, bool):
            raise ValueError(f"velocities must be true or false, got {velocities!r}")
        if fitness not in ("steps", "damping"):
            raise ValueError(f"fitness must be 'steps' or 'damping', got {fitness!r}")
        if start not in ("standard", "generalization"):
            raise ValueError(f"start must be 'standard' or 'generalization', got {start!r}")
        self.render_mode = checked_render_mode(self.metadata, render_mode)
        self._frames: CartFrames | None = None
        self.velocities = velocities
        self.fitness: Fitness = fitness
        self.start: Start = start
        size = 6 if velocities else 3
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (size,), np.float64)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (1,), np.float64)
        self.state: State = STANDARD_START
        self.decisions = 0
        #: the next generalization start a reset without a seed takes
        self.next_start = 0
        #: |x| + |x_dot| + |theta_1| + |theta_dot_1| after each of the last decisions (damping)
        self.jiggle: list[float] = []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[Observation, dict[str, Any]]:
        super().reset(seed=seed)
        if options is not None and "state" in options:
            self.state = _state(options["state"])
        elif self.start == "generalization":
            index = self.next_start if seed is None else seed % len(GENERALIZATION_STARTS)
            self.state = GENERALIZATION_STARTS[index]
            self.next_start = (index + 1) % len(GENERALIZATION_STARTS)
        else:
            self.state = STANDARD_START
        self.decisions = 0
        self.jiggle = []
        return self._observation(), {}

    def step(self, action: Any) -> tuple[Observation, SupportsFloat, bool, bool, dict[str, Any]]:
        push = float(np.asarray(action, dtype=np.float64).reshape(-1)[0])
        push = -1.0 if push < -1.0 else min(push, 1.0)  # NaN stays NaN and fails below
        self.state = state = _decision(self.state, FORCE * push)
        terminated = failed(state) or math.isnan(push)
        if self.fitness == "steps":
            return self._observation(), 0.0 if terminated else 1.0, terminated, False, {}
        return self._damping_step(terminated)

    def _damping_step(self, terminated: bool
                      ) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        reward = 0.0
        if not terminated:
            self.decisions += 1
            x, xd, t1, td1 = self.state[:4]
            self.jiggle.append(abs(x) + abs(xd) + abs(t1) + abs(td1))
            if len(self.jiggle) > DAMPING_WINDOW:
                del self.jiggle[0]
            reward = 0.1 / DAMPING_EPISODE
        truncated = not terminated and self.decisions >= DAMPING_EPISODE
        if (terminated or truncated) and self.decisions >= DAMPING_WINDOW:
            reward += 0.9 * 0.75 / sum(self.jiggle)
        return self._observation(), reward, terminated, truncated, {}

    def render(self) -> NDArray[np.uint8] | None:
        """The cart and both poles to scale (`cart_drawing.py`), with the failure angles
        marked: an H x W x 3 array in `render_mode="rgb_array"`, else None."""
        if self.render_mode != "rgb_array":
            return None
        if self._frames is None:
            self._frames = CartFrames(
                TRACK_LIMIT, (Pole(2 * HALF_LENGTH[0], 0.06, (204, 153, 102)),
                              Pole(2 * HALF_LENGTH[1], 0.04, (64, 112, 192))),
                tip_side=1, guide=FAILURE_ANGLE)
        x, _, t1, _, t2, _ = self.state
        return self._frames.picture(x, (t1, t2))

    def observation_labels(self) -> tuple[str, ...]:
        """IObservationLabels: each number of the observation, over its scale."""
        names = ("x", "v", "\u03b8\u2081", "\u03c9\u2081", "\u03b8\u2082", "\u03c9\u2082")
        units = ("m", "m/s", "rad", "rad/s", "rad", "rad/s")
        kept = range(6) if self.velocities else (0, 2, 4)
        return tuple(f"{names[i]} / {OBSERVATION_SCALES[i]:g} {units[i]}" for i in kept)

    def _observation(self) -> Observation:
        x, xd, t1, td1, t2, td2 = self.state
        sx, sxd, st1, std1, st2, std2 = OBSERVATION_SCALES
        if self.velocities:
            return np.array((x / sx, xd / sxd, t1 / st1, td1 / std1, t2 / st2, td2 / std2))
        return np.array((x / sx, t1 / st1, t2 / st2))


def _state(values: Any) -> State:
    """Six finite floats from `options["state"]`."""
    array = np.asarray(values, dtype=np.float64).reshape(-1)
    if array.shape != (6,) or not np.isfinite(array).all():
        raise ValueError("options['state'] must be six finite numbers (x, x_dot, theta_1, "
                         f"theta_dot_1, theta_2, theta_dot_2), got {values!r}")
    x, xd, t1, td1, t2, td2 = (float(v) for v in array)
    return (x, xd, t1, td1, t2, td2)


def register() -> None:
    if DOUBLE_POLE not in gym.registry:
        gym.register(DOUBLE_POLE, entry_point=f"{__name__}:DoublePole",
                     max_episode_steps=100_000)
