"""Replays, traces and figures treat a run folder and its files as hostile (issue 33): no output
replaces a file the run keeps, a trace of 20 M steps or 300,000 episodes draws in seconds, frames
stream to the video file, smoothing and the API's arguments are bounded, `$` in a name is drawn
as it is, a damaged trace is one line, MP4 goes through the atomic writer, and PGF trace figures
are written with their images."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import evo_in_process, run_evo

from evo_core.api import Run, compare
from evo_core.errors import UserError
from evo_core.results.run_folder import RunFolder
from evo_core.results.trace_plot import MOST_BOUNDARIES, trace_figure


def trained(folder: Path, out: Path, generations: int, max_steps: int) -> Path:
    """A short CartPole CTRNN run in `out` (reward 1 per step, so a return is a step count)."""
    config = folder / "config.json"
    config.write_text(json.dumps({
        "environment": "CartPole-v1", "seed": 5, "generations": generations,
        "brain": {"type": "ctrnn", "number_neurons": 3},
        "optimizer": {"type": "cma-es", "population_size": 4},
        "episodes": {"runs": 1, "max_steps": max_steps}}))
    result = evo_in_process("train", str(config), "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("attacks")
    return trained(folder, folder / "run", generations=2, max_steps=30)


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


# 2. a trace's figure is bounded by the figure, not by the trace -------------------------------

def hostile_trace(path: Path, steps: int, episodes: int, neurons: int = 3) -> Path:
    """A small file of many steps: constant rewards, equal episodes, a smooth state."""
    episode = np.repeat(np.arange(episodes), -(-steps // episodes))[:steps]
    state = np.broadcast_to(np.sin(np.arange(steps) / 1000.0)[:, None], (steps, neurons))
    arrays: dict[str, Any] = {"reward": np.ones(steps), "episode": episode,
                              "step": np.zeros(steps, dtype=np.int64), "state.x": state}
    np.savez_compressed(path, **arrays)
    return path


@pytest.mark.parametrize("steps,episodes", [(400_000, 2), (300_000, 300_000)])
def test_a_trace_of_many_steps_or_episodes_draws_in_seconds(
        run: Path, tmp_path: Path, steps: int, episodes: int) -> None:
    """An episode of 200,000 steps (the figure draws a column of steps per half pixel), or
    every episode of 300,000 (`--episode all`: their boundaries are not drawn, and the return
    so far is one artist): an artist per step or per episode took minutes. The command runs in
    its own process, killed after 25 s."""
    trace = hostile_trace(tmp_path / "many.npz", steps, episodes)
    result = run_evo("plot", str(run), "--trace", str(trace), "--episode", "all"
                     if episodes > MOST_BOUNDARIES else "0", timeout=25)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "many.png").stat().st_size > 0
    from evo_core.results.trace_file import read_trace

    episode = None if episodes > MOST_BOUNDARIES else 0
    figure = trace_figure(read_trace(trace), "many", episode=episode)
    drawn = sum(len(line.get_xdata()) for axes in figure.axes for line in axes.get_lines())
    assert drawn <= 2 * 2 * 1260  # two points per half pixel column, whatever the trace holds
    assert all(len(axes.collections) <= 3 for axes in figure.axes)
    if episodes > MOST_BOUNDARIES:
        assert f"{episodes} episodes, {steps} steps, their boundaries not drawn" in \
            figure.get_suptitle()
    else:
        xlabels = [axes.get_xlabel().replace("\n", " ") for axes in figure.axes]
        assert any("(a column: 92 steps, cells their means)" in label for label in xlabels)


# 6. a trace's arrays are checked when it is read ------------------------------------------

@pytest.mark.parametrize("key,value,problem", [
    ("reward", np.array(["a", "b", "c"]), "holds <U1 values, not numbers"),
    ("reward", np.zeros(3, dtype=[("a", "f8")]), "holds [('a', '<f8')] values, not numbers"),
    ("reward", np.zeros((3, 2)), "has shape (3, 2), not 1-dimensional"),
    ("reward", np.zeros(3, dtype=np.complex128), "holds complex128 values, not numbers"),
    ("episode", np.array([0.5, 1.0, 1.5]), "holds float64 values, not whole numbers"),
    ("state.x", np.array([["a"], ["b"], ["c"]]), "holds <U1 values, not numbers"),
    ("state.x", np.zeros(3), "has shape (3,), not 2-dimensional"),
    ("state.x", np.zeros((3, 2, 2)), "has shape (3, 2, 2), not 2-dimensional"),
])
def test_a_trace_of_wrong_arrays_is_one_line(run: Path, tmp_path: Path, key: str,
                                             value: np.ndarray, problem: str) -> None:
    arrays: dict[str, Any] = {"reward": np.ones(3), "episode": np.zeros(3, dtype=np.int64),
                              "step": np.arange(3), key: value}
    trace = tmp_path / "t.npz"
    np.savez(trace, **arrays)
    result = evo_in_process("plot", str(run), "--trace", str(trace))
    assert result.returncode == 2
    line = one_line(result.stderr)
    assert f"--trace {trace}: {key} {problem}; the file is damaged" in line
    assert not (tmp_path / "t.png").exists()


# 4. smoothing is bounded by the curve; the API's plot arguments are checked --------------

def limited(megabytes: int) -> Callable[[], None]:
    """For a subprocess: at most `megabytes` of address space (a 59.6 GiB kernel fails fast)."""
    def limit() -> None:
        size = megabytes * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
    return limit


def test_a_huge_smoothing_sigma_is_the_curves_mean(run: Path, tmp_path: Path) -> None:
    from evo_core.results.plot_style import smoothed

    out = tmp_path / "smooth.png"
    result = subprocess.run([sys.executable, "-m", "evo_core.cli.main", "plot", str(run),
                             "--smooth", "1e9", "--out", str(out)], capture_output=True,
                            text=True, timeout=60, preexec_fn=limited(1536))
    assert result.returncode == 0, result.stderr
    assert out.stat().st_size > 0
    values = np.array([3.0, 1.0, np.nan, 8.0])
    assert smoothed(values, 1e9) == pytest.approx([4.0] * 4)
    assert smoothed(values, 1e308) == pytest.approx([4.0] * 4)
    assert smoothed(values, 1e-300)[[0, 1, 3]] == pytest.approx(values[[0, 1, 3]])


@pytest.mark.parametrize("call,message", [
    (lambda run, out: run.plot(out, smooth=True),
     "smooth: must be a number of generations >= 0, got bool True"),
    (lambda run, out: run.plot(out, smooth=float("inf")),
     "smooth: must be a number of generations >= 0, got float inf"),
    (lambda run, out: run.plot(out, column="yes"), "column: must be True or False, got str"),
    (lambda run, out: run.plot_trace(out.with_suffix(".npz"), out, column=1),
     "column: must be True or False, got int 1"),
    (lambda run, out: compare([run, run], out, smooth="2"),  # type: ignore[arg-type]
     "smooth: must be a number of generations >= 0, got str '2'"),
])
def test_the_apis_plot_arguments_are_checked(run: Path, tmp_path: Path,
                                             call: Callable[[Run, Path], object],
                                             message: str) -> None:
    out = tmp_path / "f.png"
    with pytest.raises(UserError) as error:
        call(Run.open(run), out)
    assert str(error.value).startswith(message)
    assert not out.exists()


# 5. text from a user or a file is drawn as it is --------------------------------------------

HOSTILE_NAME = "p$x^$q"


def test_a_dollar_in_a_run_folder_name_is_drawn_as_it_is(tmp_path: Path) -> None:
    """`evo train --out 'runs/p$x^$q'` trained, then crashed in mathtext drawing fitness.png;
    so did a `$` in a title, a trace's name or a state's name."""
    from matplotlib.text import Text

    from evo_core.results.plot import fitness_figure
    from evo_core.results.trace_file import read_trace

    folder = trained(tmp_path, tmp_path / "runs" / HOSTILE_NAME, generations=1, max_steps=10)
    assert (folder / "fitness.png").stat().st_size > 0
    texts = [text.get_text() for text in fitness_figure([folder]).findobj(Text)]
    assert any(text.startswith(r"p\$x^\$q: ") for text in texts)  # matplotlib draws `p$x^$q`
    trace = tmp_path / f"t{HOSTILE_NAME}.npz"
    arrays: dict[str, Any] = {"reward": np.ones(4), "episode": np.zeros(4, dtype=np.int64),
                              "step": np.arange(4), f"state.{HOSTILE_NAME}": np.zeros((4, 2))}
    np.savez(trace, **arrays)
    for args in (["plot", str(folder), "--title", "a $b^$ c", "--smooth", "1"],
                 ["plot", str(folder), str(folder), "--out", str(tmp_path / "c.png")],
                 ["plot", str(folder), "--trace", str(trace), "--title", "$^$"]):
        result = evo_in_process(*args)
        assert result.returncode == 0, result.stderr
    drawn = {text.get_text() for text in trace_figure(read_trace(trace), "t").findobj(Text)}
    assert rf"{HOSTILE_NAME.replace('$', chr(92) + '$')} (neuron)" in drawn


def test_a_dollar_in_a_sweep_value_is_drawn_as_it_is(run: Path, tmp_path: Path) -> None:
    from evo_core.sweeps.plot import plot_sweep
    from evo_core.sweeps.summary import SettingRuns

    settings = [SettingRuns(HOSTILE_NAME, {"brain.x": value}, [run])
                for value in (HOSTILE_NAME, "$\\frac{$")]
    out = plot_sweep(tmp_path / HOSTILE_NAME, settings, ["brain.x"], tmp_path / "sweep.png")
    assert out.stat().st_size > 0


# 8. a PGF trace figure writes its images beside it, and escapes its texts for LaTeX ---------

class FakeLatex:
    """matplotlib's pgf backend measures every text by running LaTeX; this machine may have
    none, and what is tested is what evo writes, not LaTeX: a width per character."""

    def get_width_height_descent(self, text: str, prop: object) -> tuple[float, float, float]:
        return 5.0 * len(text), 8.0, 2.0

    def _stdin_writeln(self, text: str) -> None:
        pass

    def _expect_prompt(self) -> str:
        return ""


def test_a_pgf_trace_figure_writes_its_heatmaps_beside_it(
        run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each heatmap (and colour bar) is an image the pgf backend names after the file it
    writes: it took the name of evo's temporary, a descriptor, and failed with `TypeError ...
    not 'int'`. Texts from outside reach LaTeX escaped (`_`, `$`, `&`, `#`, braces)."""
    from matplotlib.backends import backend_pgf

    from evo_core.results import plot_style

    monkeypatch.setattr(plot_style, "pgf_texsystem", lambda: "pdflatex")
    monkeypatch.setattr(backend_pgf.LatexManager, "_get_cached_or_new",
                        classmethod(lambda cls: FakeLatex()))
    trace = tmp_path / "t.npz"
    Run.open(run).replay(2, trace=trace)
    figures = tmp_path / "figures"
    figures.mkdir()
    out = figures / "t.pgf"
    result = evo_in_process("plot", str(run), "--trace", str(trace), "--out", str(out),
                            "--title", "a_b $c$ & #d {e} ~f")
    assert result.returncode == 0, result.stderr
    text = out.read_text(encoding="utf-8")
    images = sorted(path.name for path in figures.iterdir() if path.suffix == ".png")
    assert images == [f"t-img{index}.png" for index in range(6)]  # 3 heatmaps, 3 colour bars
    for image in images:
        assert f"{{{image}}}" in text  # \includegraphics{t-img0.png}
    assert r"a\_b \textdollar{}c\textdollar{} \& \#d \{e\} \textasciitilde{}f" in text
    assert [path.name for path in figures.iterdir() if path.name.startswith(".")] == []
    # evo's own mathtext stays math
    result = evo_in_process("plot", str(run), "--smooth", "2", "--out", str(figures / "f.pgf"))
    assert result.returncode == 0, result.stderr
    assert r"mean (smoothed, $\sigma$ = 2)" in (figures / "f.pgf").read_text(encoding="utf-8")


# 3. frames go to the file as they come ------------------------------------------------------

def test_render_all_episodes_keeps_no_frames(run: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """`--render-episodes all` kept every frame until the file was written (3.7 GB, then a
    traceback): the images alive while rendering stay as many, however many frames pass."""
    import gc

    from gymnasium.envs.classic_control.cartpole import CartPoleEnv
    from PIL import Image

    pytest.importorskip("pygame")
    alive: list[int] = []
    render = CartPoleEnv.render

    def counting(self: CartPoleEnv) -> object:
        if getattr(self, "_frames", 0) % 30 == 0:
            alive.append(sum(isinstance(thing, Image.Image) for thing in gc.get_objects()))
        self._frames = getattr(self, "_frames", 0) + 1  # type: ignore[attr-defined]
        return render(self)

    monkeypatch.setattr(CartPoleEnv, "render", counting)
    gif = tmp_path / "all.gif"
    result = evo_in_process("replay", str(run), "--episodes", "5", "--render", str(gif),
                            "--render-episodes", "all")
    assert result.returncode == 0, result.stderr
    frames = int(result.stderr.split(" frames")[0].rsplit(", ", 1)[1])
    assert frames >= 60 and len(alive) >= 4
    assert max(alive) - min(alive) <= 3, alive  # kept frames would add 30 per sample


def test_the_gif_writer_draws_each_frame_exactly(tmp_path: Path) -> None:
    """Each frame after the first is written as the box it changed in, over the one before:
    read back, every frame is the one given (few colours: the palette loses nothing)."""
    from PIL import Image, ImageSequence

    from evo_core.running.video import video_file

    rng = np.random.default_rng(0)
    colours = rng.integers(0, 256, size=(8, 3), dtype=np.uint8)
    frame = colours[rng.integers(0, 8, size=(37, 53))]
    given = []
    with video_file(tmp_path / "v.gif", fps=20) as (add, _):
        for index in range(12):
            if index % 4 != 3:  # every fourth frame repeats the one before
                top, left = rng.integers(0, 30), rng.integers(0, 45)
                frame = frame.copy()
                frame[top:top + 7, left:left + 8] = colours[rng.integers(0, 8)]
            given.append(frame)
            add(frame)
    with Image.open(tmp_path / "v.gif") as image:
        read = [np.asarray(shown.convert("RGB")) for shown in ImageSequence.Iterator(image)]
        assert image.info["loop"] == 0 and image.info["duration"] == 50
    assert len(read) == len(given)
    for shown, expected in zip(read, given):
        assert np.array_equal(shown, expected)


# 7. MP4 (and GIF) go through evo's atomic writer -------------------------------------------

@pytest.mark.parametrize("suffix", [".mp4", ".gif"])
def test_a_link_at_the_videos_name_is_refused(run: Path, tmp_path: Path, suffix: str) -> None:
    """MP4 replaced a symbolic link at its name with the video, where GIF refused it."""
    pytest.importorskip("pygame")
    pytest.importorskip("imageio_ffmpeg")
    victim = tmp_path / "victim.txt"
    victim.write_text("kept")
    link = tmp_path / f"v{suffix}"
    link.symlink_to(victim)
    result = evo_in_process("replay", str(run), "--episodes", "1", "--render", str(link))
    assert result.returncode == 2
    assert "is a symbolic link" in one_line(result.stderr)
    assert link.is_symlink() and victim.read_text() == "kept"
    assert sorted(path.name for path in tmp_path.iterdir()) == [f"v{suffix}", "victim.txt"]


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
@pytest.mark.parametrize("suffix", [".mp4", ".gif"])
def test_an_unwritable_video_folder_is_one_line(run: Path, suffix: str) -> None:
    """A folder no file can be made in (as root too: /proc): a traceback for MP4."""
    pytest.importorskip("pygame")
    pytest.importorskip("imageio_ffmpeg")
    target = Path("/proc") / f"evo-replay{suffix}"
    result = evo_in_process("replay", str(run), "--episodes", "1", "--render", str(target))
    assert result.returncode == 2
    assert f"{target}: cannot write" in one_line(result.stderr)


@pytest.mark.parametrize("suffix", [".mp4", ".gif"])
def test_a_replay_that_fails_leaves_no_video(run: Path, tmp_path: Path, suffix: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The frames go into the exclusive temporary; a replay that ends in an error removes it
    and leaves no half video (or the old one, unchanged)."""
    from gymnasium.envs.classic_control.cartpole import CartPoleEnv

    pytest.importorskip("pygame")
    pytest.importorskip("imageio_ffmpeg")
    step = CartPoleEnv.step
    calls = iter(range(1000))

    def failing(self: CartPoleEnv, action: object) -> object:
        if next(calls) == 5:
            raise RuntimeError("the environment broke")
        return step(self, action)

    monkeypatch.setattr(CartPoleEnv, "step", failing)
    video = tmp_path / f"v{suffix}"
    video.write_bytes(b"the old video")
    with pytest.raises(Exception, match="the environment raised in step"):
        Run.open(run).replay(1, render=video)
    assert video.read_bytes() == b"the old video"
    assert [path.name for path in tmp_path.iterdir()] == [video.name]
