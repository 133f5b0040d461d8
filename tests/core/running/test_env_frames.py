"""evo's own environments draw frames (`render_mode="rgb_array"`) at their own rate, and their
replays are videos: the double pole, the swing-up, the mazes, Reverse and ReacherMemory, each
frame read back and checked for what it must show."""

from __future__ import annotations

import os
import subprocess
import sys
from fractions import Fraction
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_frame_panels import boxes_overlap, gif_frames, mp4_frames, played

from evo_core import api
from evo_core.contract.config_models import EnvironmentConfig
from evo_core.environments import cart_drawing, maze_drawing, tape_drawing
from evo_core.environments.making import as_environment, make_environment
from evo_core.environments.rendering import check_draws_frames, frame_rate

RATES = {"evo/DoublePole-v0": 50, "evo/CartPoleSwingUp-v0": 100, "evo/HardMaze-v1": 50,
         "evo/MediumMaze-v1": 50, "evo/HardMaze-v0": 50, "evo/MediumMaze-v0": 50,
         "evo/Reverse-v0": 2, "evo/ReverseShaped-v0": 2}


def picture(env: Any) -> np.ndarray:
    frame = env.render()
    assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.ndim == 3
    return frame


def pixels_of(frame: np.ndarray, colour: tuple[int, int, int], off: int = 30) -> np.ndarray:
    """(row, column) of the pixels near `colour`."""
    return np.argwhere(np.abs(frame.astype(int) - colour).max(axis=2) <= off)


@pytest.mark.parametrize("environment", list(RATES))
def test_own_environments_draw_frames_at_their_own_rate(environment: str) -> None:
    check_draws_frames(as_environment(environment), "--render")  # no refusal
    env = make_environment(environment, "rgb_array")
    try:
        assert frame_rate(env) == Fraction(RATES[environment])
        env.reset(seed=3)
        first = picture(env)
        assert len(np.unique(first.reshape(-1, 3), axis=0)) > 5  # drawn, not blank
        for _ in range(5):
            env.step(env.action_space.sample())
        later = picture(env)
        assert later.shape == first.shape and not np.array_equal(later, first)
    finally:
        env.close()


def test_without_a_render_mode_nothing_is_drawn() -> None:
    env = make_environment("evo/DoublePole-v0")
    env.reset()
    assert env.render() is None


# the cart-poles: to scale, and leaning as their equations say -------------------------------

def _pole_side(env: Any, state: list[float], steps: int = 0, push: float = 1.0) -> float:
    """How far right of the cart's centre the long pole's pixels lie, on average (pixels)."""
    env.reset(options={"state": state})
    for _ in range(steps):
        env.step(np.array([push]))
    frame = picture(env)
    pole = pixels_of(frame, (204, 153, 102), 20)
    cart = pixels_of(frame, cart_drawing.CART, 10)
    return float(pole[:, 1].mean() - cart[:, 1].mean())


def test_the_double_pole_leans_as_its_equations_say() -> None:
    env = make_environment("evo/DoublePole-v0", "rgb_array")
    frame_env: Any = env.unwrapped
    # the pole's middle, 0.5 m up, at 0.5 sin(0.3) m = 16 pixels right of the cart's
    assert _pole_side(frame_env, [0, 0, 0.3, 0, 0, 0]) > 10  # theta_1 > 0: tip at x + l sin
    assert _pole_side(frame_env, [0, 0, -0.3, 0, 0, 0]) < -10
    # pushed towards +x from upright, the poles fall back towards -x, as real ones do
    assert _pole_side(frame_env, [0, 0, 0, 0, 0, 0], steps=10) < -5
    assert frame_env.state[2] < 0
    # the cart where x says: 111 pixels a metre from the middle
    frame_env.reset(options={"state": [1.0, 0, 0, 0, 0, 0]})
    cart = pixels_of(picture(frame_env), cart_drawing.CART, 10)
    assert cart[:, 1].mean() == pytest.approx(300 + 600 / 5.4, abs=2)
    env.close()


def test_the_swing_up_leans_and_hangs_as_its_equations_say() -> None:
    env = make_environment("evo/CartPoleSwingUp-v0", "rgb_array").unwrapped
    assert _pole_side(env, [0, 0, 0.3, 0]) < -6  # EvoJAX's theta: tip at x - l sin
    assert _pole_side(env, [0, 0, 0, 0], steps=10) < -5  # pushed to +x, it falls back
    env.reset(options={"state": [0, 0, np.pi, 0]})
    frame = picture(env)
    pole = pixels_of(frame, (204, 153, 102), 20)
    track_row = cart_drawing.TRACK_ROW * cart_drawing.HEIGHT
    assert pole[:, 0].mean() > track_row  # hanging: below the track
    env.close()


# the mazes -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("environment", "goal_above"), [
    ("evo/HardMaze-v1", True), ("evo/MediumMaze-v1", False), ("evo/HardMaze-v0", True),
    ("evo/MediumMaze-v0", True)])
def test_a_maze_frame_shows_walls_goal_robot_and_sensors(environment: str,
                                                         goal_above: bool) -> None:
    """The published mazes are drawn with y down, as in their files and the paper (the hard
    maze's goal at the top, the medium maze's at the bottom right), evo's v0 with y up (their
    goals above the start)."""
    env = make_environment(environment, "rgb_array")
    maze: Any = env.unwrapped
    env.reset()
    frame = picture(env)
    goal = pixels_of(frame, maze_drawing.GOAL, 25)
    robot = pixels_of(frame, maze_drawing.ROBOT, 25)
    assert len(pixels_of(frame, maze_drawing.WALL, 10)) > 500
    assert len(goal) > 50 and len(robot) > 50
    assert (goal[:, 0].mean() < robot[:, 0].mean()) == goal_above
    view = maze._frames.view
    start = view.pixel(*maze.start_position())
    assert robot[:, 1].mean() == pytest.approx(start[0], abs=2)
    assert robot[:, 0].mean() == pytest.approx(start[1], abs=2)
    hits = pixels_of(frame, maze_drawing.HIT, 20)
    assert len(hits) > 0  # some rangefinder meets a wall within range
    for _ in range(30):
        env.step(np.array([0.3, 1.0] if environment.endswith("v0") else [0.5, 1.0],
                          dtype=np.float32))
    moved = picture(env)
    assert len(pixels_of(moved, maze_drawing.PATH, 25)) > 10  # the path so far
    labels = maze.observation_labels()
    assert len(labels) == env.observation_space.shape[0]  # type: ignore[index]
    env.close()


# Reverse -------------------------------------------------------------------------------------

def test_reverse_shows_the_tapes_the_heads_and_what_was_written() -> None:
    env = make_environment(EnvironmentConfig(id="evo/Reverse-v0", kwargs={"min_length": 4}),
                           "rgb_array")
    task: Any = env.unwrapped
    env.reset(seed=2)
    frame = picture(env)
    assert frame.shape == (tape_drawing.HEIGHT, tape_drawing.WIDTH, 3)
    assert len(pixels_of(frame, tape_drawing.HEAD, 10)) > 100  # the read head's cell
    target = [int(symbol) for symbol in task.target]
    env.step((1, 1, target[0]))  # right
    right = picture(env)
    assert len(pixels_of(right, tape_drawing.RIGHT, 10)) > 100
    assert len(pixels_of(right, tape_drawing.WRONG, 10)) == 0
    env.step((1, 1, 1 - target[1]))  # wrong: the episode ends
    assert len(pixels_of(picture(env), tape_drawing.WRONG, 10)) > 100
    long = make_environment(EnvironmentConfig(id="evo/Reverse-v0", kwargs={"min_length": 25}),
                            "rgb_array")
    long.reset(seed=2)
    assert picture(long).shape == frame.shape  # one size whatever the tape's length
    env.close()
    long.close()


# ReacherMemory: MuJoCo's frame under a banner of the phase --------------------------------------

def test_reacher_memory_says_its_phase_above_the_frame() -> None:
    """In a fresh process: MuJoCo picks its OpenGL back end when first imported (EGL without a
    display, as `evo replay` sets it)."""
    pytest.importorskip("mujoco")
    script = """
import numpy as np
from evo_core.environments.rendering import prefer_offscreen_gl
prefer_offscreen_gl()
from evo_core.environments.making import as_environment, make_environment
from evo_core.environments.reacher_memory import BANNER, PHASE_COLOURS
env = make_environment("evo/ReacherMemory-v0", "rgb_array")
env.reset(seed=1)
plain = env.unwrapped.render()
for _ in range(25):
    env.step(np.zeros(2))
frame = env.render()
assert frame.shape == (plain.shape[0] + BANNER, plain.shape[1], 3), frame.shape
banner = frame[:BANNER].astype(int)
for colour in PHASE_COLOURS.values():
    assert (np.abs(banner - colour).max(axis=2) <= 10).sum() > 100
mark = 8 + 25 * (plain.shape[1] - 16) / 90  # 25 of 90 steps along the time line
assert banner[35, round(mark)].max() < 60
assert (banner[:28].max(axis=2) < 100).sum() > 200  # the phase's line of text
print(env.unwrapped.metadata["render_fps"])
"""
    environment = {name: value for name, value in os.environ.items()
                   if name not in ("DISPLAY", "WAYLAND_DISPLAY", "MUJOCO_GL",
                                   "PYOPENGL_PLATFORM")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=environment, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "50"


# replays: the figures -----------------------------------------------------------------------

def _trained(tmp_path: Path, environment: Any, max_steps: int) -> Path:
    config = {"environment": environment, "seed": 1, "generations": 1,
              "brain": {"type": "ctrnn", "number_neurons": 3},
              "optimizer": {"type": "mu-lambda", "population_size": 4, "mu": 2},
              "episodes": {"runs": 1, "max_steps": max_steps}, "champion": {"episodes": 0}}
    return api.train(config, out=tmp_path / "run").path


def _texts_apart(layout: Any) -> None:
    for (box, text), (other, other_text) in combinations(layout.texts, 2):
        assert not boxes_overlap(box, other), (text, other_text)


def test_double_pole_replay(tmp_path: Path) -> None:
    """A GIF of 20 ms frames (the decision's 0.02 s), the cart and poles in every frame, the
    observation named (x / 4.8 m, ...) beside it, and the neurons."""
    run = _trained(tmp_path, "evo/DoublePole-v0", 60)
    gif = tmp_path / "dp.gif"
    result = played(run, gif, True, True)
    assert result.layout is not None and result.video is not None
    frames, durations = gif_frames(gif)
    assert result.trace is not None
    assert len(frames) == result.video.frames == len(result.trace.rewards) + 1
    assert set(durations) == {20}
    layout = result.layout
    assert layout.picture_shape == (cart_drawing.HEIGHT, cart_drawing.WIDTH)
    titles = [text for _, text in layout.texts]
    for name in ("x / 4.8 m", "v / 2 m/s", "\u03b8\u2081 / 0.52 rad", "observation",
                 "potential", "activation", "output"):
        assert name in titles
    _texts_apart(layout)
    for frame in frames:
        scene = frame[:cart_drawing.HEIGHT, :cart_drawing.WIDTH]
        assert len(pixels_of(scene, cart_drawing.CART, 12)) > 500
        assert len(pixels_of(scene, (204, 153, 102), 25)) > 100


def test_maze_replay(tmp_path: Path) -> None:
    """An MP4 at 50 frames a second, one frame per step and the reset's, the maze's frame at
    the top left and the path growing."""
    pytest.importorskip("imageio_ffmpeg")
    run = _trained(tmp_path, "evo/HardMaze-v1", 40)
    video = tmp_path / "m.mp4"
    result = played(run, video, True, False)
    frames, fps = mp4_frames(video)
    assert fps == 50 and len(frames) == 41
    layout = result.layout
    assert layout is not None and layout.picture_shape == (418, 408)
    _texts_apart(layout)
    assert "ray \u221290\u00b0 / 100" in [text for _, text in layout.texts]
    height, width = layout.picture_shape
    robot = [pixels_of(frame[:height, :width], maze_drawing.ROBOT, 40) for frame in frames]
    assert all(len(pixels) > 50 for pixels in robot)


def test_swing_up_replay_plays_100_frames_a_second(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """100 frames a second: the MP4 keeps them all; the GIF every other one, 20 ms each (a
    browser shows a GIF frame under 20 ms for 100 ms), and says so."""
    pytest.importorskip("imageio_ffmpeg")
    from evo_core.cli.main import main

    run = _trained(tmp_path, "evo/CartPoleSwingUp-v0", 30)
    gif, mp4 = tmp_path / "s.gif", tmp_path / "s.mp4"
    assert main(["replay", str(run), "--episodes", "1", "--render", str(gif)]) == 0
    err = capsys.readouterr().err
    frames, durations = gif_frames(gif)
    assert len(frames) == 16 and set(durations) == {20}  # 31 frames, 0.31 s
    assert "31 frames at 100 a second; the GIF keeps 16 of them" in err
    assert main(["replay", str(run), "--episodes", "1", "--render", str(mp4)]) == 0
    capsys.readouterr()
    frames, fps = mp4_frames(mp4)
    assert fps == 100 and len(frames) == 31


def test_reverse_replay_plays_two_frames_a_second(tmp_path: Path) -> None:
    run = _trained(tmp_path, "evo/Reverse-v0", 10)
    gif = tmp_path / "r.gif"
    result = played(run, gif, True, False)
    frames, durations = gif_frames(gif)
    assert set(durations) == {500} and result.layout is not None
    assert frames[0].shape[:2] == (result.layout.shape[0], result.layout.shape[1])
    assert result.layout.picture_shape == (tape_drawing.HEIGHT, tape_drawing.WIDTH)
