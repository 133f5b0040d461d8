"""What `evo replay --render` needs of an environment and of the machine, said before it starts.

An environment draws frames only if it declares the `rgb_array` render mode; asked for it
anyway, gymnasium passes `render_mode` to a constructor that may not take it, a traceback.
MuJoCo picks its OpenGL back end when `mujoco` is first imported, from `MUJOCO_GL`, and its
default needs a window system: on a machine without a display it fails inside the renderer
(seen: "'OffScreenViewer' object has no attribute 'opengl_context'"). EGL renders offscreen
wherever the GPU driver or Mesa provides libEGL, so that is what evo asks for when the user has
neither a display nor a choice of their own.
"""

from __future__ import annotations

import os

from evo_core.contract.config_models import EnvironmentConfig
from evo_core.environments.making import make_environment
from evo_core.errors import UserError

__all__ = ["check_draws_frames", "prefer_offscreen_gl"]


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
