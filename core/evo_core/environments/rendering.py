"""What `evo replay --render` needs of an environment and of the machine, said before it starts.

An environment draws frames only if it declares the `rgb_array` render mode; asked for it
anyway, gymnasium passes `render_mode` to a constructor that may not take it, a traceback.
MuJoCo picks its OpenGL back end when `mujoco` is first imported, from `MUJOCO_GL`, and its
default needs a window system: on a machine without a display it fails inside the renderer
(seen: "'OffScreenViewer' object has no attribute 'opengl_context'"). EGL renders offscreen
wherever the GPU driver or Mesa provides libEGL, so that is what evo asks for when the user has
neither a display nor a choice of their own.

A replay's video plays at the environment's own rate, `frame_rate`: its metadata's
`render_fps`, gymnasium's convention (CartPole 50, MuJoCo's 1/dt, evo's own environments the
same: the double pole 50, the swing-up 100); one that declares none plays at 30, the rate
gymnasium's own video recorder assumes then.
"""

from __future__ import annotations

import math
import os
from fractions import Fraction
from typing import Any

import gymnasium as gym

from evo_core.contract.config_models import EnvironmentConfig
from evo_core.environments.making import make_environment
from evo_core.errors import UserError

__all__ = ["DEFAULT_FPS", "check_draws_frames", "frame_rate", "prefer_offscreen_gl"]

#: gymnasium's RecordVideo's rate for an environment that declares none
DEFAULT_FPS = 30


def frame_rate(env: gym.Env[Any, Any]) -> Fraction:
    """The frames a second that show `env`'s episodes in real time (the module docstring),
    exact: a float `render_fps` as the fraction nearest to it with a denominator up to 1001
    (NTSC's 30000/1001)."""
    fps = env.metadata.get("render_fps")
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not math.isfinite(fps) \
            or fps <= 0:
        return Fraction(DEFAULT_FPS)
    return Fraction(fps).limit_denominator(1001)


def check_draws_frames(environment: EnvironmentConfig, option: str) -> None:
    """A UserError, in one line naming `option`, when the environment declares no `rgb_array`
    render mode (its metadata's `render_modes`)."""
    env = make_environment(environment)
    try:
        modes = env.unwrapped.metadata.get("render_modes") or []
    finally:
        env.close()
    if "rgb_array" not in modes:
        shown = ", ".join(map(str, modes)) or "none"
        raise UserError(f"{option}: {environment.id} draws no frames (its render modes: "
                        f"{shown}; frames need rgb_array); replay without {option}, or use "
                        "--trace FILE.npz and `evo plot RUN --trace FILE.npz` to see the episode")


def prefer_offscreen_gl() -> None:
    """Set `MUJOCO_GL=egl` (and PyOpenGL's platform with it) when there is no display and the
    user chose no back end; call before anything imports `mujoco` (making a MuJoCo environment
    does). Only for rendering: an unusable EGL would fail the import itself."""
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or \
            "MUJOCO_GL" in os.environ:
        return
    os.environ["MUJOCO_GL"] = "egl"
    os.environ.setdefault("PYOPENGL_PLATFORM", "egl")
