"""Figures for a paper (issue 40): the checks every figure test reads back with (they find
what they look for), the sweep plot (a panel per setting, `--smooth`, `--column`), and the QD
archive drawn in its task's terms (over the maze when its descriptor is the final position)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from figure_checks import (
    check_figure,
    legend_problems,
    panel_colours,
    png_size,
    text_problems,
    text_sizes,
)

from evo_core import ArchiveGrid
from evo_core.cli.main import main
from evo_core.config.schema import validate_config
from evo_core.environments.maze import HARD
from evo_core.hooks.discovery import get_registry
from evo_core.results.archive_plot import EMPTY_LABEL, FITNESS_LABEL, ArchiveAxes, archive_figure
from evo_core.results.log_file import LOG_COLUMNS
from evo_core.results.plot import save_figure
from evo_core.results.plot_style import COLUMN_WIDTH, FULL_WIDTH, PNG_DPI, PlotStyle, wrapped
from evo_core.running.archive_figure import archive_axes
from evo_core.sweeps.folder import RECORD_NAME
from evo_core.sweeps.plot import BAND_LABEL, MOST_PANELS, sweep_figure
from evo_core.sweeps.summary import SettingRuns


def close(figure: Any) -> None:
    import matplotlib.pyplot as plt

    plt.close(figure)


# the checks find what they look for --------------------------------------------------------

def test_the_checks_find_overlapping_cut_and_covering_text() -> None:
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(3, 2))
    try:
        axes.plot([0, 1], [0, 1], label="data")
        axes.text(0.5, 0.5, "one text", transform=axes.transAxes, fontsize=8)
        axes.text(0.52, 0.5, "another", transform=axes.transAxes, fontsize=8)
        figure.text(0.98, 0.5, "past the edge", fontsize=8)
        axes.legend(loc="center")
        problems = text_problems(figure)
        assert "'one text' overlaps 'another'" in problems
        assert "'past the edge' is cut by the figure's edge" in problems
        figure.legend(loc="center")  # a figure's legend over the axes
        assert legend_problems(figure)
        assert 10.0 in text_sizes(figure)  # matplotlib's default, not 8 pt
    finally:
        close(figure)


def test_wrapped_text_keeps_words_and_lines() -> None:
    assert wrapped("observation", 0.7) == "observation"  # a word longer than a line stays
    assert wrapped("return so far", 0.7).splitlines() == ["return so", "far"]
    assert wrapped("a\nb", 3.0) == "a\nb"  # its own lines kept
    assert wrapped(r"p\$x^\$q " * 20, 1.0).count("\n") == 1  # two lines at most
    assert "\\\n$" not in wrapped(r"ab\$" * 30, 1.0)  # an escaped `$` never split


# the sweep plot -----------------------------------------------------------------------------

def _run(folder: Path, bests: np.ndarray) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({
        "environment": "CartPole-v1", "generations": len(bests), "brain": {"type": "ctrnn"},
        "optimizer": {"type": "cma-es"}}))
    rows = [",".join(LOG_COLUMNS)]
    for generation, best in enumerate(bests, start=1):
        rows.append(",".join(str(x) for x in (generation, 4 * generation, best, best / 2, 1.0,
                                              0.0, best, 10 * generation, generation)))
    (folder / "log.csv").write_text("\n".join(rows) + "\n")
    return folder


def sweep_folder(path: Path, settings: int, seeds: int = 3, generations: int = 25) -> Path:
    """A sweep folder as `evo sweep` leaves it: its sweep.json and a run per setting and seed,
    the settings' curves rising at different rates, the seeds noisy."""
    rng = np.random.default_rng(0)
    points = []
    for setting in range(settings):
        for seed in range(seeds):
            name = f"sigma={setting / 10:g}_seed={seed}"
            rise = np.linspace(10, 100 + 40 * setting, generations)
            _run(path / name, rise + rng.normal(0, 20, generations))
            points.append({"name": name, "setting": f"sigma={setting / 10:g}",
                           "values": {"optimizer.sigma": setting / 10}, "seed": seed})
    (path / RECORD_NAME).write_text(json.dumps({"points": points,
                                                "varied": ["optimizer.sigma"]}))
    return path


def settings_of(path: Path) -> list[SettingRuns]:
    from evo_core.sweeps.folder import read_record
    from evo_core.sweeps.summary import settings_in

    return settings_in(path, read_record(path))


@pytest.mark.parametrize("column", [False, True])
def test_a_sweep_takes_smooth_and_column_and_has_a_panel_per_setting(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], column: bool) -> None:
    """Bands of settings on one axes covered one another: each setting has its panel, the
    others' means grey behind its own; `--smooth` and `--column` as for a run."""
    sweep = sweep_folder(tmp_path / "a_sweep", settings=4)
    out = tmp_path / "sweep.png"
    assert main(["plot", str(sweep), "--smooth", "2", "--out", str(out),
                 *(["--column"] if column else [])]) == 0
    assert png_size(out)[0] == int((COLUMN_WIDTH if column else FULL_WIDTH) * PNG_DPI)
    style = PlotStyle(smooth=2, column=column)
    figure = sweep_figure(sweep, settings_of(sweep), ["optimizer.sigma"], None, style)
    try:
        panels = [axes for axes in figure.axes if axes.get_visible()]
        assert len(panels) == 4
        for index, axes in enumerate(panels):
            assert len(axes.collections) == 1  # its own band only
            assert axes.get_title(loc="left") == f"sigma={index / 10:.1f} (3 runs)"
            grey = [line for line in axes.get_lines() if line.get_color() == "0.65"]
            assert len(grey) == 3  # the other settings' means
        legend = [t.get_text().replace("\n", " ") for t in figure.legends[0].get_texts()]
        assert BAND_LABEL in legend and r"$\sigma$ = 2)" in legend[0]
        check_figure(figure)
        save_figure(figure, out, style)
        assert all(panel_colours(out, figure, axes) > 10 for axes in panels)
    finally:
        close(figure)


def test_a_smoothed_sweep_band_holds_its_smoothed_mean(tmp_path: Path) -> None:
    sweep = sweep_folder(tmp_path / "s", settings=1, seeds=4)
    figure = sweep_figure(sweep, settings_of(sweep), [], None, PlotStyle(smooth=3))
    try:
        axes = figure.axes[0]
        (band,) = axes.collections
        mean = np.asarray(axes.get_lines()[-1].get_ydata())
        low, high = band.get_paths()[0].vertices[:, 1].min(), band.get_paths()[0].vertices[
            :, 1].max()
        assert low <= mean.min() and mean.max() <= high
        assert np.abs(np.diff(mean)).max() < 15  # the seeds' noise of 20 smoothed away
    finally:
        close(figure)


def test_a_sweep_of_many_settings_draws_their_means_on_one_axes(tmp_path: Path) -> None:
    sweep = sweep_folder(tmp_path / "many", settings=MOST_PANELS + 1, seeds=2,
                         generations=5)
    figure = sweep_figure(sweep, settings_of(sweep), ["optimizer.sigma"])
    try:
        (axes,) = figure.axes
        assert not axes.collections and len(axes.get_lines()) == MOST_PANELS + 1
        legend = [t.get_text().replace("\n", " ") for t in figure.legends[0].get_texts()]
        assert f"{MOST_PANELS + 1} settings: no intervals drawn (summary.csv has them)" in legend
        check_figure(figure)
    finally:
        close(figure)


# the QD archive -----------------------------------------------------------------------------

def maze_config(**behaviour: Any) -> Any:
    return validate_config({
        "environment": {"id": "evo/HardMaze-v0", "kwargs": {"radar": False}}, "seed": 1,
        "generations": 1, "brain": {"type": "ffnn", "hidden_layers": []},
        "optimizer": {"type": "cma-es", "population_size": 4},
        "behaviour": {"source": "state", "interval": "final", **behaviour}},
        get_registry(), "test")


def grid(dims: tuple[int, ...] = (20, 20), descriptors: int = 2) -> ArchiveGrid:
    """A grid over [0, 200]^2 (the hard maze's box), filled where y < 100, the fitness rising
    towards x = 0."""
    objective = np.full(dims, np.nan)
    objective[..., : dims[-1] // 2] = -np.arange(dims[0])[:, None] if len(dims) == 2 else 0.0
    if len(dims) == 1:
        objective[::2] = np.arange(dims[0])[::2]
    filled = int(np.isfinite(objective).sum())
    return ArchiveGrid(objective, np.zeros(len(dims)), np.full(len(dims), 200.0), 30, filled,
                       int(np.prod(dims)) * (4 if descriptors > len(dims) else 1), descriptors)


def test_the_archive_of_a_maze_run_is_drawn_over_the_maze() -> None:
    """The declared capabilities decide: an `IPlanarMap` environment, whose final state is
    the descriptor, gives the map's x and y and its walls, start and goal."""
    meaning = archive_axes(maze_config(), 2)
    assert meaning.names == ("x", "y") and meaning.map is not None
    assert np.array_equal(meaning.map.walls, HARD.walls)
    figure = archive_figure(grid(), meaning, "maze_me: evo/HardMaze-v0 · ffnn · map-elites")
    try:
        axes = figure.axes[0]
        assert axes.get_xlabel() == "x" and axes.get_ylabel() == "y"
        assert axes.get_aspect() == 1.0
        labels = [t.get_text() for t in figure.legends[0].get_texts()]
        assert labels == ["walls", "start", "goal", EMPTY_LABEL]
        (mesh,) = [c for c in axes.collections if c.get_array() is not None]
        assert mesh.get_clim() == (-19.0, 0.0)  # the archive's least and greatest elite
        (bar,) = [child for child in axes.child_axes]
        assert bar.get_ylabel().replace("\n", " ") == FITNESS_LABEL
        assert axes.get_title().splitlines()[-1] == "generation 30: 200 of 400 cells filled"
        check_figure(figure)
    finally:
        close(figure)


def test_an_archive_of_other_descriptors_names_their_values() -> None:
    config = maze_config(interval=10, max_length=3)
    names = archive_axes(config, 2).names
    assert archive_axes(config, 2).map is None  # a mean over steps is no final position
    assert names == ("descriptor[0]: a mean state value over windows of 10 steps",
                     "descriptor[1]: a mean state value over windows of 10 steps")
    observed = validate_config({**config.model_dump(mode="json", exclude={"provenance"}),
                                "behaviour": {"source": "action", "interval": 5,
                                              "max_length": 2}}, get_registry(), "test")
    assert archive_axes(observed, 2).names == ("action[0], mean over steps 1–5",
                                               "action[1], mean over steps 1–5")


@pytest.mark.parametrize("column", [False, True])
@pytest.mark.parametrize("kind", ["maze", "two values", "one value", "four values"])
def test_every_archive_figure_reads_back(tmp_path: Path, column: bool, kind: str) -> None:
    style = PlotStyle(column=column)
    if kind == "maze":
        archive, meaning = grid(), archive_axes(maze_config(), 2)
    elif kind == "one value":
        archive, meaning = grid((20,), 1), ArchiveAxes(("observation[2] after the last step",))
    else:
        archive = grid(descriptors=2 if kind == "two values" else 4)
        meaning = ArchiveAxes(("observation[0] after the last step",
                               "observation[1] after the last step"))
    figure = archive_figure(archive, meaning, "a run with a long name: CartPole-v1 · ffnn · "
                            "map-elites", style)
    out = tmp_path / "archive.png"
    try:
        check_figure(figure)
        save_figure(figure, out, style)
        assert png_size(out)[0] == int(style.width * PNG_DPI)
        assert panel_colours(out, figure, figure.axes[0]) > 10
        if kind == "four values":
            assert "each the best over descriptor values 3–4" in \
                figure.axes[0].get_title().replace("\n", " ")
    finally:
        close(figure)


def test_an_impossible_archive_grid_is_refused_where_it_is_made() -> None:
    with pytest.raises(ValueError, match="one or two descriptor values"):
        ArchiveGrid(np.zeros((2, 2, 2)), np.zeros(2), np.ones(2), 0, 0, 8, 3)
    with pytest.raises(ValueError, match="lower below upper"):
        ArchiveGrid(np.zeros((2, 2)), np.array([0.0, 1.0]), np.ones(2), 0, 0, 4, 2)
    with pytest.raises(ValueError, match=r"filled within 0\.\.cells"):
        ArchiveGrid(np.zeros((2, 2)), np.zeros(2), np.ones(2), 0, 5, 4, 2)
