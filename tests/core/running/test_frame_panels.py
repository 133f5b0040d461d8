"""`evo replay --render` frames and files, read back: the panels beside the environment's frame
titled and indexed, no text over another, colour bars, one colour scale for the whole video
(the same number is the same colour at every step), the label in a strip below the frame
(never over it), and GIFs and MP4s that play at the environment's own rate."""

from __future__ import annotations

import json
from fractions import Fraction
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from evo_core.api import Run
from evo_core.cli.main import main
from evo_core.hooks.discovery import get_registry
from evo_core.results.run_folder import RunFolder
from evo_core.running.frame_panels import FrameLayout, Shown, colours
from evo_core.running.replay import Replay, load_champion, replay
from evo_core.running.seeding import REPLAY_SEED
from evo_core.running.video import BACKGROUND, GifClock, video_file

CARTPOLE = (400, 600)


def gif_frames(path: Path) -> tuple[list[np.ndarray], list[int]]:
    """Every frame of a GIF as RGB, and each one's duration in ms."""
    from PIL import Image, ImageSequence

    with Image.open(path) as image:
        frames = [(np.asarray(frame.convert("RGB")), int(frame.info["duration"]))
                  for frame in ImageSequence.Iterator(image)]
    return [frame for frame, _ in frames], [duration for _, duration in frames]


def mp4_frames(path: Path) -> tuple[list[np.ndarray], float]:
    import imageio.v2 as imageio

    reader: Any = imageio.get_reader(path, format="FFMPEG")
    try:
        return [np.asarray(frame) for frame in reader], float(reader.get_meta_data()["fps"])
    finally:
        reader.close()


def shown(step: int, picture: np.ndarray, observation: Any = None,
          state: dict[str, np.ndarray] | None = None) -> Shown:
    return Shown(picture, observation, state, 1, 1, step, float(step))


def boxes_overlap(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


# the GIF's clock ----------------------------------------------------------------------------

@pytest.mark.parametrize(("fps", "kept", "first_delays"), [
    (50, 100, [2, 2, 2]),                   # 20 ms, exact
    (30, 60, [3, 4, 3, 3, 4, 3]),           # 33.3 ms as 30, 40, 30 ms: no drift
    (100, 100, [2, 2, 2]),                  # every other frame, 20 ms each
    (60, 80, [2, 3, 2, 3]),                 # 16.7 ms: frames under 20 ms left out
    (2, 4, [50, 50]),
])
def test_the_gif_clock_plays_in_real_time(fps: int, kept: int, first_delays: list[int]) -> None:
    clock = GifClock(Fraction(fps))
    frames = 2 * fps  # two seconds
    delays = [clock.delay(index) for index in range(frames)]
    shown_delays = [delay for delay in delays if delay is not None]
    assert shown_delays[:len(first_delays)] == first_delays
    assert delays[0] is not None  # the reset's frame is always shown
    assert len(shown_delays) == min(kept, frames)
    assert min(shown_delays) >= 2  # browsers show shorter frames for 100 ms
    assert abs(sum(shown_delays) - 200) <= 2  # two seconds, in hundredths


def test_gif_and_mp4_play_at_the_rate_given(tmp_path: Path) -> None:
    pytest.importorskip("imageio_ffmpeg")
    rng = np.random.default_rng(1)
    given = [rng.integers(0, 255, (20, 30, 3), dtype=np.uint8) for _ in range(40)]
    for fps, name in ((50, "a"), (100, "b")):
        for suffix in (".gif", ".mp4"):
            with video_file(tmp_path / f"{name}{suffix}", fps) as (add, video):
                for frame in given:
                    add(frame)
            assert video.frames == 40 and video.fps == fps
            if suffix == ".gif":
                frames, durations = gif_frames(tmp_path / f"{name}{suffix}")
                assert set(durations) == {20} and len(frames) == video.written
                assert video.written == (40 if fps == 50 else 20)
            else:
                frames, rate = mp4_frames(tmp_path / f"{name}{suffix}")
                assert rate == fps and len(frames) == video.written == 40


# panels ------------------------------------------------------------------------------------

LAYOUTS: dict[str, tuple[tuple[int, int], Any, dict[str, np.ndarray]]] = {
    "cartpole-ctrnn": (CARTPOLE, np.zeros(4), {"potential": np.zeros(3),
                                               "activation": np.zeros(3),
                                               "output": np.zeros(2)}),
    "one number": ((230, 640), np.zeros(1), {}),
    "wrapped 256": ((400, 600), np.zeros(300), {"features": np.zeros(256)}),
    "long names": ((400, 600), None, {"stage0.layer0.a-rather-long-name": np.zeros(5),
                                      "x": np.zeros(40)}),
    "atari": ((210, 160), np.zeros((84, 84), dtype=np.uint8), {"features": np.zeros(64)}),
}


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_panels_are_titled_beside_the_frame_and_no_text_overlaps(name: str) -> None:
    size, observation, state = LAYOUTS[name]
    picture = np.random.default_rng(0).integers(0, 255, (*size, 3), dtype=np.uint8)
    first = shown(0, picture, observation, state)
    layout = FrameLayout(first, {}, {"observation": ("x / 4.8 m",)} if name == "one number"
                         else None)
    frame = layout.compose(first)
    height, width = frame.shape[:2]
    assert height % 2 == 0 and width % 2 == 0  # H.264 in yuv420p takes it as it is
    zoom = layout.zoom  # a small frame (Atari's) is scaled up, square pixels
    assert zoom == (2 if size[0] < 250 else 1)
    height_shown, width_shown = layout.picture_shape
    assert (height_shown, width_shown) == (size[0] * zoom, size[1] * zoom)
    assert np.array_equal(frame[:height_shown, :width_shown],
                          np.repeat(np.repeat(picture, zoom, axis=0), zoom, axis=1))
    assert layout.strip[0] >= height_shown  # the label's strip below the frame
    titles = [text for _, text in layout.texts]
    expected = (["observation"] if observation is not None and np.ndim(observation) == 1
                else []) + [key if len(key) <= 24 else key[:23] + "\u2026" for key in state]
    for title in expected:
        assert title in titles
    if name == "atari":
        assert "observation 84\u00d784" in titles
    if name == "one number":
        assert "x / 4.8 m" in titles  # the environment's name for it, not "0"
    for (box, text), (other, other_text) in combinations(layout.texts, 2):
        assert not boxes_overlap(box, other), (text, other_text)
    for box, text in layout.texts:
        assert box[0] >= width_shown and box[2] <= width and box[1] >= 0 and \
            box[3] <= layout.strip[0], text  # beside the frame, above the strip
        ink = frame[box[1]:box[3], box[0]:box[2]]
        assert (ink.max(axis=2) > 150).any(), text  # drawn, light on the dark background
    widths = {panel.cell[1] for panel in layout.cells}
    assert len(widths) <= 1  # every column of cells is as wide as every other


#: how far a GIF's colour may be from the one drawn: 256 colours a frame, chosen by Pillow's
#: octree quantizer (at most 14 of 255 measured on a CartPole frame with 20 cells)
GIF_COLOURS = 20


def test_the_same_number_is_the_same_colour_at_every_step(tmp_path: Path) -> None:
    """A number keeps its colour from one step to another while the other numbers change, the
    colour bar stays, and a number at the scale's end is the bar's end colour: exactly in the
    frames drawn, within the GIF's palette read back."""
    picture = np.full((*CARTPOLE, 3), 255, dtype=np.uint8)
    steps = [np.array([0.5, -1.0, 0.0]), np.array([0.5, 2.0, -0.7]),
             np.array([0.1, -2.0, np.nan]), np.array([0.5, 1.0, 0.0])]
    frames = [shown(step, picture, state={"potential": values})
              for step, values in enumerate(steps)]
    layout = FrameLayout(frames[0], {"state.potential": 2.0})
    drawn = [layout.compose(frame) for frame in frames]
    gif = tmp_path / "p.gif"
    with video_file(gif, 50) as (add, _):
        for frame in drawn:
            add(frame)
    read, durations = gif_frames(gif)
    assert len(read) == 4 and set(durations) == {20}
    panel = layout.cells[0]
    height, width = panel.cell
    bar_left = panel.at[0] + panel.columns * width + 6
    bar = (slice(panel.top, panel.top + panel.bar_height), slice(bar_left, bar_left + 10))

    def cell(frame: np.ndarray, row: int) -> np.ndarray:
        left, top = panel.at
        return np.asarray(frame[top + row * height + height // 2, left + width // 2], dtype=int)

    for images, off in ((drawn, 0), (read, GIF_COLOURS)):
        def near(a: np.ndarray, b: np.ndarray, off: int = off) -> bool:
            return bool(np.abs(a - b).max() <= off)

        assert near(cell(images[0], 0), cell(images[1], 0))  # 0.5 is 0.5
        assert near(cell(images[0], 0), cell(images[3], 0))
        assert near(cell(images[0], 2), cell(images[3], 2))  # 0 is 0
        assert not near(cell(images[0], 1), cell(images[1], 1))  # -1 and 2 differ
        for index, values in enumerate(steps):
            for row, value in enumerate(values):
                assert near(cell(images[index], row), colours(np.array([value]), 2.0)[0])
        # +2 (the scale) is the bar's top colour, -2 its bottom's; NaN grey
        assert near(cell(images[1], 1), images[1][panel.top, bar_left + 2].astype(int))
        assert near(cell(images[2], 1),
                    images[2][panel.top + panel.bar_height - 1, bar_left + 2].astype(int))
        assert near(cell(images[2], 2), np.array([128, 128, 128]))
    assert all(np.array_equal(drawn[0][bar], frame[bar]) for frame in drawn[1:])
    assert all(np.abs(read[0][bar].astype(int) - frame[bar]).max() <= GIF_COLOURS
               for frame in read[1:])


# the figure: CartPole with --show-observation --show-neurons from a CTRNN -----------------------

@pytest.fixture(scope="module")
def cartpole_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("panels")
    config = folder / "config.json"
    config.write_text(json.dumps({
        "environment": "CartPole-v1", "seed": 3, "generations": 2,
        "brain": {"type": "ctrnn", "number_neurons": 3},
        "optimizer": {"type": "cma-es", "population_size": 4},
        "episodes": {"runs": 1, "max_steps": 40}, "champion": {"episodes": 0}}))
    assert main(["train", str(config), "--out", str(folder / "run"), "--quiet"]) == 0
    return folder / "run"


def played(run: Path, video: Path, observation: bool, neurons: bool) -> Replay:
    """`evo replay RUN --episodes 1 --render VIDEO` with the trace, as the command plays it;
    its `layout` says where the panels are."""
    champion = load_champion(RunFolder.open(run), get_registry(), replaying=True,
                             render_option="--render")
    return replay(champion, 1, REPLAY_SEED, video, 1, show_observation=observation,
                  trace=True, show_neurons=neurons)


def test_cartpole_panels_are_coloured_on_the_episodes_scale(cartpole_run: Path,
                                                            tmp_path: Path) -> None:
    """The figure of issue 40, CartPole with --show-observation --show-neurons from a CTRNN:
    read back from the GIF, every cell of every frame is its number's colour on one scale per
    panel, +-the largest magnitude the episode reaches (the reset's state included): the first
    frame shows the state the brain starts from, not a blank panel; the label is below
    CartPole's frame, whose corner stays CartPole's white."""
    pytest.importorskip("pygame")
    gif = tmp_path / "n.gif"
    result = played(cartpole_run, gif, True, True)
    layout, trace, video = result.layout, result.trace, result.video
    assert layout is not None and trace is not None and video is not None
    read, durations = gif_frames(gif)
    steps = len(trace.rewards)
    assert len(read) == video.frames == steps + 1 and set(durations) == {20}  # 50 a second
    assert read[0].shape == (*layout.shape, 3) and layout.picture_shape == CARTPOLE
    assert [panel.title for panel in layout.cells] == ["observation", "potential",
                                                       "activation", "output"]
    for frame in read:
        assert frame[2, 2].min() >= 255 - GIF_COLOURS  # CartPole's white: nothing over it
    brain: Any = Run.open(cartpole_run).champion()
    brain.reset()
    initial = brain.trace_state()
    shown_numbers = {"observation": np.stack(trace.observations)}
    for name, rows in trace.states.items():
        shown_numbers[name] = np.concatenate([[initial[name]], np.stack(rows)])
    for panel in layout.cells:
        values = shown_numbers[panel.title]
        if panel.title == "observation":
            # each number its own scale (the last frame's, after the last step, is not traced)
            assert (np.abs(values).max(axis=0) <= panel.scales).all() and not panel.shared
        else:  # one scale for the array
            assert panel.scales == pytest.approx(np.full(panel.count, np.abs(values).max()))
        height, width = panel.cell
        left, top = panel.at
        centres = top + np.arange(panel.count) * height + height // 2
        for index, frame in enumerate(read[:len(values)]):
            expected = colours(values[index], panel.scales).astype(int)
            got = frame[centres, left + width // 2].astype(int)
            assert np.abs(got - expected).max() <= GIF_COLOURS, (panel.title, index)
            assert (np.abs(got - BACKGROUND).max(axis=1) > 20).all()  # not blank
