"""`evo replay --render` is one line or works: an environment that draws no frames, a machine
without a display (MuJoCo), a missing render extra."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evo_core import UserError, api
from evo_core.cli.main import main


def _run(tmp_path: Path, environment: Any, max_steps: int = 5) -> Path:
    config = {"environment": environment, "seed": 1, "generations": 1,
              "brain": {"type": "ctrnn", "number_neurons": 2},
              "optimizer": {"type": "mu-lambda", "population_size": 4, "mu": 2},
              "episodes": {"runs": 1, "max_steps": max_steps}}
    return api.train(config, out=tmp_path / "run").path


@pytest.mark.parametrize("environment", ["evo/XOR-v0"])
def test_an_environment_without_frames_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], environment: str) -> None:
    """evo's XOR task, a truth table in four steps, draws no frames (the double pole and the
    mazes were such, and a TypeError traceback from gymnasium then: "unexpected keyword
    argument 'render_mode'"; they draw frames now: tests/core/running/test_env_frames.py)."""
    run = _run(tmp_path, environment)
    capsys.readouterr()
    assert main(["replay", str(run), "--episodes", "1", "--render",
                 str(tmp_path / "x.gif")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert f"--render: {environment} draws no frames" in err and "--trace" in err
    assert not (tmp_path / "x.gif").exists()
    with pytest.raises(UserError, match=f"render: {environment} draws no frames"):
        api.Run.open(run).replay(episodes=1, render=tmp_path / "x.gif")


def test_a_missing_render_extra_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    run = _run(tmp_path, "CartPole-v1")
    monkeypatch.setitem(sys.modules, "pygame", None)  # what a core-only install has
    capsys.readouterr()
    assert main(["replay", str(run), "--episodes", "1", "--render",
                 str(tmp_path / "x.gif")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "evo-core[render]" in err, err


def test_mujoco_renders_without_a_display(tmp_path: Path) -> None:
    """MuJoCo's default OpenGL back end needs a window system; evo asks for EGL when there is
    no display and the user chose none (a fresh process: the back end is fixed when `mujoco`
    is first imported)."""
    pytest.importorskip("mujoco")
    run = _run(tmp_path, "InvertedPendulum-v5", max_steps=3)
    environment = {name: value for name, value in os.environ.items()
                   if name not in ("DISPLAY", "WAYLAND_DISPLAY", "MUJOCO_GL",
                                   "PYOPENGL_PLATFORM")}
    video = tmp_path / "p.gif"
    done = subprocess.run([sys.executable, "-m", "evo_core.cli.main", "replay", str(run),
                           "--episodes", "1", "--render", str(video)],
                          capture_output=True, text=True, env=environment, timeout=120)
    assert done.returncode == 0, done.stderr
    assert video.stat().st_size > 0
