"""Replays, traces and figures treat a run folder and its files as hostile (issue 33): no output
replaces a file the run keeps, a trace of 20 M steps or 300,000 episodes draws in seconds, frames
stream to the video file, smoothing and the API's arguments are bounded, `$` in a name is drawn
as it is, a damaged trace is one line, MP4 goes through the atomic writer, and PGF trace figures
are written with their images."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import evo_in_process

from evo_core.api import Run, compare
from evo_core.errors import UserError
from evo_core.results.run_folder import RunFolder


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short CartPole run (reward 1 per step, so a return is a step count)."""
    folder = tmp_path_factory.mktemp("attacks")
    config = folder / "config.json"
    config.write_text(json.dumps({
        "environment": "CartPole-v1", "seed": 5, "generations": 2,
        "brain": {"type": "ctrnn", "number_neurons": 3},
        "optimizer": {"type": "cma-es", "population_size": 4},
        "episodes": {"runs": 1, "max_steps": 30}}))
    result = evo_in_process("train", str(config), "--out", str(folder / "run"), "--quiet")
    assert result.returncode == 0, result.stderr
    return folder / "run"


def contents(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


# 1. no output replaces a file the run folder keeps ------------------------------------------

@pytest.mark.parametrize("option,target", [
    ("--trace", "checkpoint.npz"), ("--trace", "best.npz"), ("--trace", "hall_of_fame.npz"),
    ("--trace", "sub/../best.npz"), ("--render", "config.json"), ("--render", "log.csv"),
    ("--render", "fitness.png"), ("--render", ".lock")])
def test_replay_refuses_to_write_over_the_runs_own_files(run: Path, tmp_path: Path,
                                                         option: str, target: str) -> None:
    """Straight (`--trace RUN/checkpoint.npz`, `..` in the name) and through a link (a
    `t.gif` pointing at a file of the run), while a training holds the run's lock."""
    (run / "sub").mkdir(exist_ok=True)
    holder = RunFolder(run)
    holder.lock()  # a training in progress
    try:
        before = contents(run)
        if option == "--render":
            name = tmp_path / "through.gif"
            name.symlink_to(run / target)
        else:
            name = run / target
        result = evo_in_process("replay", str(run), option, str(name), "--episodes", "1")
        assert result.returncode == 2
        line = one_line(result.stderr)
        assert f"{option} {name}: would replace {Path(target).name} of the run folder" in line
        assert contents(run) == before
    finally:
        holder.unlock(remove=False)


def test_the_api_refuses_the_runs_own_files_too(run: Path, tmp_path: Path) -> None:
    before = contents(run)
    opened = Run.open(run)
    with pytest.raises(UserError, match=r"trace .*best\.npz: would replace best\.npz"):
        opened.replay(1, trace=run / "best.npz")
    with pytest.raises(UserError, match=r"render .*: would replace config\.json"):
        link = tmp_path / "v.mp4"
        link.symlink_to(run / "config.json")
        opened.replay(1, render=link)
    trace = tmp_path / "t.npz"
    opened.replay(1, trace=trace)
    with pytest.raises(UserError, match=r"out .*fitness\.png: would replace fitness\.png"):
        opened.plot_trace(trace, out=run / "fitness.png")
    with pytest.raises(UserError, match=r"out .*fitness\.png: would replace fitness\.png"):
        compare([opened, opened], run / "fitness.png")
    assert contents(run) == before
    assert opened.plot(run / "fitness.png") == run / "fitness.png"  # the run's own plot


def test_plot_refuses_the_runs_own_files_but_its_own_figure(run: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "config.json").write_text((run / "config.json").read_text())
    (other / "log.csv").write_text((run / "log.csv").read_text())
    before = contents(run)
    result = evo_in_process("plot", str(other), "--out", str(run / "fitness.png"))
    assert result.returncode == 2
    assert "would replace fitness.png of the run folder" in one_line(result.stderr)
    # a trace named like the run's figure would put its figure over fitness.png
    assert evo_in_process("replay", str(run), "--episodes", "1", "--trace",
                          str(run / "fitness.npz")).returncode == 0
    result = evo_in_process("plot", str(run), "--trace", str(run / "fitness.npz"))
    assert result.returncode == 2
    assert "the figure of --trace" in one_line(result.stderr)
    (run / "fitness.npz").unlink()
    assert contents(run) == before
    # `evo plot RUN --out RUN/fitness.png` is what `evo plot RUN` writes anyway
    assert evo_in_process("plot", str(run), "--out", str(run / "fitness.png")).returncode == 0
