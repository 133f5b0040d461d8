"""`evo replay`: what --render records (all episodes on request, an overlay on every frame), no
stray SDL line on stderr, and a mean printed rounded."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evo_core.cli.commands.replay import _mean_text
from evo_core.cli.main import main


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short CartPole run (reward 1 per step, so a return is a step count)."""
    folder = tmp_path_factory.mktemp("replay")
    config = folder / "config.json"
    config.write_text(json.dumps({
        "environment": "CartPole-v1", "seed": 5, "generations": 2,
        "brain": {"type": "ctrnn", "number_neurons": 3},
        "optimizer": {"type": "cma-es", "population_size": 4},
        "episodes": {"runs": 1, "max_steps": 60}}))
    assert main(["train", str(config), "--out", str(folder / "run"), "--quiet"]) == 0
    return folder / "run"


def frames_of(gif: Path) -> list[object]:
    from PIL import Image, ImageSequence

    with Image.open(gif) as image:
        return [frame.convert("RGB") for frame in ImageSequence.Iterator(image)]


def returns_of(stderr: str) -> list[float]:
    return [float(value) for value in re.findall(r"^episode \d+: return (\S+)$", stderr, re.M)]


def test_render_all_episodes_has_a_frame_per_step_and_reset(
        run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pygame")  # the `render` extra; scripts/setup.sh installs it
    capsys.readouterr()
    gif = tmp_path / "all.gif"
    assert main(["replay", str(run), "--episodes", "3", "--render", str(gif),
                 "--render-episodes", "all"]) == 0
    out, err = capsys.readouterr()
    returns = returns_of(err)
    assert len(returns) == 3 and float(out) == pytest.approx(np.mean(returns), abs=1e-4)
    frames = frames_of(gif)
    assert len(frames) == sum(returns) + 3  # one frame after each reset and after each step
    assert f"animation: {gif} (episodes 1-3 of 3, {len(frames)} frames at 50 a second)" in err
    # the overlay: a dark strip below the environment's 600 x 400 frame, nothing over it
    # (CartPole's top-left corner stays white)
    for frame in frames[:: max(1, len(frames) // 20)]:
        assert frame.size[0] == 600 and frame.size[1] > 400  # type: ignore[attr-defined]
        assert min(frame.getpixel((1, 1))) >= 240  # type: ignore[attr-defined]
        assert max(abs(c - 32) for c in frame.getpixel((1, 405))) <= 8  # type: ignore[attr-defined]


def test_render_records_the_first_episode_and_says_so(
        run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("pygame")
    capsys.readouterr()
    gif = tmp_path / "first.gif"
    assert main(["replay", str(run), "--episodes", "2", "--render", str(gif)]) == 0
    err = capsys.readouterr().err
    first = returns_of(err)[0]
    frames = frames_of(gif)
    assert len(frames) == first + 1
    assert (f"animation: {gif} (episode 1 of 2, {len(frames)} frames at 50 a second; "
            "--render-episodes all records all)") in err


def test_render_prints_no_sdl_noise(run: Path, tmp_path: Path) -> None:
    pytest.importorskip("pygame")
    env = {key: value for key, value in os.environ.items()
           if key not in {"SDL_VIDEODRIVER", "XDG_RUNTIME_DIR", "WAYLAND_DISPLAY"}}
    gif = tmp_path / "quiet.gif"
    result = subprocess.run([sys.executable, "-m", "evo_core.cli.main", "replay", str(run),
                             "--episodes", "1", "--render", str(gif)], env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stderr.splitlines()
            if not line.startswith(("episode 1:", "animation:"))] == []


def test_render_episodes_must_be_a_count_or_all(run: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["replay", str(run), "--render", "x.gif", "--render-episodes", "some"])
    assert exit_info.value.code == 2
    assert "--render-episodes: must be a positive number or `all`" in capsys.readouterr().err


@pytest.mark.parametrize("mean,text", [(494.6666666666667, "494.6667"), (500.0, "500"),
                                       (-12.5, "-12.5"), (0.0, "0"), (1.234e-07, "1.234e-07")])
def test_mean_is_printed_rounded(mean: float, text: str) -> None:
    assert _mean_text(mean) == text
