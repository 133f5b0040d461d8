"""`evo plot RUN --maze`: the maze (an `IPlanarMap`) with the champion's replayed path and the
final positions of the novelty archive, on tiny runs of the hard maze; a run on no map and the
options of other figures refused in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import matplotlib.pyplot
import numpy as np
import pytest
from conftest import evo_in_process
from figure_checks import check_figure, panel_colours, png_size
from PIL import Image

from evo_core import IPlanarMap
from evo_core.config.schema import validate_config
from evo_core.environments import make_environment, wrapper_chain
from evo_core.environments.maze import HARD
from evo_core.environments.published_maze import HARD as PUBLISHED_HARD
from evo_core.errors import UserError
from evo_core.hooks.discovery import get_registry
from evo_core.results import maze_plot
from evo_core.results.checkpoint import read_checkpoint, write_checkpoint
from evo_core.results.maze_plot import LABELS, PATH, MapView, maze_figure
from evo_core.results.plot_style import COLUMN_WIDTH, FULL_WIDTH, PNG_DPI, PlotStyle
from evo_core.results.run_folder import RunFolder
from evo_core.running.planar_map import champion_path, final_positions, map_view, planar_map
from evo_core.running.replay import Champion, load_champion, replay
from evo_core.running.seeding import REPLAY_SEED

MAZE = {"id": "evo/HardMaze-v0", "kwargs": {"radar": False}}
NOVELTY = {"behaviour": {"source": "state", "interval": "final"},
           "novelty": {"k": 3, "insertion": "random", "per_generation": 2}}


def train(folder: Path, name: str, environment: object, **tables: object) -> Path:
    config = folder / f"{name}.json"
    config.write_text(json.dumps({
        "environment": environment, "seed": 1, "generations": 2,
        "brain": {"type": "ffnn", "hidden_layers": [3]},
        "optimizer": {"type": "mu-lambda", "population_size": 6, "mu": 3,
                      "reevaluate_parents": False},
        "episodes": {"max_steps": 60}, "champion": {"episodes": 0}, **tables}))
    run = folder / name
    result = evo_in_process("train", str(config), "--out", str(run), "--quiet")
    assert result.returncode == 0, result.stderr
    return run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two generations of six on the hard maze, with novelty search on the final position and
    without; and a CartPole run (no map)."""
    folder = tmp_path_factory.mktemp("maze")
    return {"novelty": train(folder, "novelty", MAZE, **NOVELTY),
            "fitness": train(folder, "fitness", MAZE),
            "cartpole": train(folder, "cartpole", "CartPole-v1")}


def champion_of(run: Path) -> Champion:
    return load_champion(RunFolder.open(run), get_registry(), replaying=True)


def test_the_v0_mazes_are_planar_maps() -> None:
    env = make_environment("evo/HardMaze-v0")
    try:
        found = [layer for layer in wrapper_chain(env) if isinstance(layer, IPlanarMap)]
        unwrapped: object = env.unwrapped
        assert len(found) == 1 and found[0] is unwrapped
        assert np.array_equal(found[0].walls(), HARD.walls)
        assert found[0].walls().shape == (6, 4) and found[0].walls().dtype == np.float64
        assert found[0].start_position().tolist() == list(HARD.start)
        assert found[0].goal_position().tolist() == list(HARD.goal)
        assert found[0].y_points_down() is False
    finally:
        env.close()
    assert not isinstance(make_environment("CartPole-v1").unwrapped, IPlanarMap)


def test_the_published_mazes_are_planar_maps_drawn_with_y_down() -> None:
    env = make_environment("evo/HardMaze-v1")
    try:
        assert isinstance(env.unwrapped, IPlanarMap)
    finally:
        env.close()
    config = validate_config({"environment": "evo/HardMaze-v1", "brain": {"type": "ffnn"},
                              "generations": 1,
                              "optimizer": {"type": "cma-es", "population_size": 4}},
                             get_registry(), "c.toml")
    arrays = planar_map(config)
    assert np.array_equal(arrays.walls, PUBLISHED_HARD.walls) and arrays.y_down
    assert arrays.start.tolist() == [36.0, 184.0] and arrays.goal.tolist() == [31.0, 20.0]
    view = MapView("evo/HardMaze-v1", arrays, np.array([arrays.start, arrays.goal]), None,
                   "none")
    figure = maze_figure(view, ["hard"])
    bottom, top = figure.axes[0].get_ylim()
    assert bottom > top  # y grows downwards: the start (y = 184) below the goal (y = 20)
    matplotlib.pyplot.close(figure)


def test_path_is_the_replayed_episode_from_the_start(runs: dict[str, Path]) -> None:
    champion = champion_of(runs["novelty"])
    path = champion_path(champion)
    trace = replay(champion, 1, REPLAY_SEED, trace=True).trace
    assert trace is not None
    assert path.shape == (len(trace.rewards) + 1, 2)
    assert path[0].tolist() == list(HARD.start)
    # the return is the progress toward the goal: start distance - final distance
    final = float(np.hypot(*(path[-1] - np.array(HARD.goal))))
    assert HARD.start_distance - final == pytest.approx(sum(trace.rewards))


def drawn(view: MapView) -> tuple[np.ndarray, np.ndarray | None]:
    """The path's line and the archive's points as the figure holds them."""

    figure = maze_figure(view, ["title"])
    try:
        axes = figure.axes[0]
        lines = [line for line in axes.get_lines() if line.get_color() == PATH
                 and line.get_label().startswith(LABELS["path"])]
        assert len(lines) == 1
        points = [c.get_offsets() for c in axes.collections
                  if c.get_label().startswith(LABELS["archive"])]
        assert axes.get_xlabel() == "x" and axes.get_ylabel() == "y"
        assert axes.get_aspect() == 1.0
        return np.asarray(lines[0].get_xydata()), \
            np.asarray(points[0]) if points else None
    finally:
        matplotlib.pyplot.close(figure)


def test_figure_draws_the_path_and_the_checkpoints_archive(runs: dict[str, Path]) -> None:
    folder = RunFolder.open(runs["novelty"])
    view = map_view(folder, champion_of(runs["novelty"]))
    line, points = drawn(view)
    assert np.array_equal(line, view.path)
    assert np.array_equal(line, champion_path(champion_of(runs["novelty"])))
    stored = np.load(folder.checkpoint_file)["novelty.archive"]
    assert stored.shape == (4, 2)  # two generations, two joined each
    assert points is not None and np.array_equal(points, stored)
    assert view.no_archive is None


def test_plot_maze_writes_png_and_pdf(runs: dict[str, Path], tmp_path: Path) -> None:
    run = runs["novelty"]
    result = evo_in_process("plot", str(run), "--maze")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(run / "maze.png")
    assert result.stderr == ""
    with Image.open(run / "maze.png") as image:  # 16 cm wide; the square map under a title
        assert image.format == "PNG" and image.size[0] == int(FULL_WIDTH * PNG_DPI)
        assert image.size[1] > image.size[0]
    pdf = tmp_path / "maze.pdf"
    result = evo_in_process("plot", str(run), "--maze", "--hof", "2", "--column",
                            "--out", str(pdf))
    assert result.returncode == 0, result.stderr
    assert pdf.read_bytes().startswith(b"%PDF")


@pytest.mark.parametrize("column", [False, True])
def test_the_maze_figure_reads_back(runs: dict[str, Path], tmp_path: Path,
                                    column: bool) -> None:
    """Full width and column: the saved PNG's width, the map not blank, no text over another
    or cut off, the legend below the map, every text at 8 pt."""
    run = runs["novelty"]
    out = tmp_path / "m.png"
    result = evo_in_process("plot", str(run), "--maze", "--out", str(out),
                            *(["--column"] if column else []))
    assert result.returncode == 0, result.stderr
    assert png_size(out)[0] == int((COLUMN_WIDTH if column else FULL_WIDTH) * PNG_DPI)
    view = map_view(RunFolder.open(run), champion_of(run))
    figure = maze_figure(view, ["evo/HardMaze-v0 · ffnn · mu-lambda", "novelty: best genome"],
                         PlotStyle(column=column))
    try:
        check_figure(figure)
        assert panel_colours(out, figure, figure.axes[0]) > 10
    finally:
        matplotlib.pyplot.close(figure)


def test_run_without_novelty_draws_the_path_and_says_why_no_archive(runs: dict[str, Path]
                                                                   ) -> None:
    run = runs["fitness"]
    result = evo_in_process("plot", str(run), "--maze")
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == f"{run}: no archive drawn: the run has no [novelty] table"
    assert (run / "maze.png").read_bytes().startswith(b"\x89PNG")
    view = map_view(RunFolder.open(run), champion_of(run))
    assert view.archive is None and drawn(view)[1] is None


def test_run_on_no_map_is_one_line(runs: dict[str, Path]) -> None:
    result = evo_in_process("plot", str(runs["cartpole"]), "--maze")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "'CartPole-v1' is not one" in lines[0]
    assert "evo_core.IPlanarMap" in lines[0]
    assert not (runs["cartpole"] / "maze.png").exists()


@pytest.mark.parametrize(("options", "said"), [
    (["--maze", "--network"], "--network and --maze draw different figures; give one of them"),
    (["--maze", "--disabled"], "--disabled chooses what --network draws; add --network"),
    (["--max-steps", "5"], "--max-steps bounds the episode --maze replays; add --maze"),
    (["--maze", "--smooth", "2"], "--smooth draws over steps or generations; --maze draws a "
     "genome: give one of them")])
def test_options_of_other_figures_are_one_line(runs: dict[str, Path], options: list[str],
                                               said: str) -> None:
    result = evo_in_process("plot", str(runs["novelty"]), *options)
    assert result.returncode == 2
    assert result.stderr.strip() == f"evo: error: {said}"


def test_out_refuses_a_file_of_the_run(runs: dict[str, Path]) -> None:
    run = runs["novelty"]
    before = (run / "fitness.png").read_bytes()
    result = evo_in_process("plot", str(run), "--maze", "--out", str(run / "fitness.png"))
    assert result.returncode == 2
    assert "would replace fitness.png of the run folder" in result.stderr
    assert (run / "fitness.png").read_bytes() == before


def test_max_steps_bounds_the_path(runs: dict[str, Path], tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    views: list[MapView] = []

    def keep(view: MapView, *args: Any) -> Any:
        views.append(view)
        return maze_figure(view, *args)

    monkeypatch.setattr(maze_plot, "maze_figure", keep)
    out = tmp_path / "short.png"
    result = evo_in_process("plot", str(runs["novelty"]), "--maze", "--max-steps", "7",
                            "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert out.exists() and views[0].path.shape == (8, 2)


def test_archive_that_is_not_positions_is_one_line(runs: dict[str, Path],
                                                   tmp_path: Path) -> None:
    run = tmp_path / "copy"
    shutil.copytree(runs["novelty"], run)
    folder = RunFolder.open(run)
    config = champion_of(run).config
    run_id = config.provenance["run_id"]  # type: ignore[index]
    checkpoint = read_checkpoint(folder.checkpoint_file, run_id)
    checkpoint.novelty["archive"] = np.zeros((3, 3))
    write_checkpoint(folder.checkpoint_file, checkpoint)
    with pytest.raises(UserError, match=r"novelty.archive \(float64, shape \(3, 3\)\) is not "
                       r"finite \(x, y\) rows"):
        final_positions(folder, config)
    (run / "checkpoint.npz").unlink()
    assert final_positions(folder, config) == (
        None, "no archive drawn: the run has no checkpoint.npz yet")
