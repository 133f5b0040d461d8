"""`evo plot`: the band is the population's mean ± s.d. within its range, the legend names every
element and covers no curve, a comparison has a title saying what its runs share, and every
fitness figure, full width and column, read back: its size, a panel that is not blank, no text
over another or cut off, all at 8 pt."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from figure_checks import check_figure, panel_colours, png_size

from evo_core.cli.main import main
from evo_core.results.log_file import LOG_COLUMNS, NOVELTY_COLUMNS
from evo_core.results.plot import BAND_LABEL, fitness_figure
from evo_core.results.plot_style import COLUMN_WIDTH, FULL_WIDTH, PNG_DPI, PlotStyle


def fake_run(folder: Path, brain: str = "ctrnn", returns: tuple[float, ...] = (0, 0, 0, 500),
             generations: int = 4, novelty: bool = False) -> Path:
    """A run folder with a log.csv whose mean ± std leaves [0, 500] in the last generation (a
    CartPole population where one candidate in four balances the pole)."""
    folder.mkdir()
    config = {"environment": "CartPole-v1", "brain": {"type": brain},
              "optimizer": {"type": "cma-es"}}
    (folder / "config.json").write_text(json.dumps(config))
    values = np.array(returns, dtype=float)
    rows = [",".join(LOG_COLUMNS + (NOVELTY_COLUMNS if novelty else []))]
    for g in range(1, generations + 1):
        now = values * g / generations  # rising to `returns` in the last generation
        row = [g, 4 * g, np.max(now), np.mean(now), np.std(now), np.min(now), np.max(now),
               100 * g, g] + ([3.0 * g, 1.5 * g, g] if novelty else [])
        rows.append(",".join(str(x) for x in row))
    (folder / "log.csv").write_text("\n".join(rows) + "\n")
    return folder


def svg_texts(svg: str, group: str) -> list[str]:
    """The texts matplotlib wrote inside the SVG group `group` (one comment per text)."""
    start = svg.index(f'<g id="{group}">')
    return re.findall(r"<!-- (.*?) -->", svg[start:])


def test_the_band_is_mean_and_sd_within_the_population(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    run = fake_run(tmp_path / "run")
    figure = fitness_figure([run])
    try:
        (band,) = figure.axes[0].collections
        y = np.concatenate([path.vertices[:, 1] for path in band.get_paths()])
        # mean 125, s.d. 216.5: the band's low edge, -91.5, is cut to the worst return, 0
        assert y.min() == 0 and y.max() == pytest.approx(125 + np.std([0, 0, 0, 500]))
        assert band.get_label() == BAND_LABEL
    finally:
        plt.close(figure)


def test_fitness_plot_legend_and_title_read_back(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    run = fake_run(tmp_path / "run")
    out = tmp_path / "fitness.svg"
    assert main(["plot", str(run), "--out", str(out)]) == 0
    svg = out.read_text()
    assert svg_texts(svg, "legend_1") == ["best of the generation", "mean", BAND_LABEL]
    assert "<!-- run: CartPole-v1 · ctrnn · cma-es -->" in svg  # the folder and what ran


def test_comparison_has_a_title_a_legend_below_and_no_bands(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import matplotlib.pyplot as plt

    a = fake_run(tmp_path / "a", brain="ctrnn")
    b = fake_run(tmp_path / "b", brain="lstm", returns=(10, 20, 30, 40))
    out = tmp_path / "comparison.svg"
    assert main(["plot", str(a), str(b), "--out", str(out)]) == 0
    svg = out.read_text()
    assert svg_texts(svg, "legend_1") == ["a (ctrnn)", "b (lstm)", "best: solid",
                                          "mean: dashed"]
    assert "<!-- Fitness of 2 runs: CartPole-v1 · cma-es -->" in svg
    figure = fitness_figure([a, b])
    try:
        assert not figure.axes[0].collections  # each run's band would cover the other's
        figure.canvas.draw()
        (legend,) = figure.legends
        assert legend.get_window_extent().y1 <= figure.axes[0].get_window_extent().y0
    finally:
        plt.close(figure)


@pytest.mark.parametrize("column", [False, True])
@pytest.mark.parametrize("runs,novelty", [(1, False), (1, True), (3, False)])
def test_every_fitness_figure_reads_back(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         column: bool, runs: int, novelty: bool) -> None:
    """Full width (16 cm) and column (8 cm), one run, one with novelty's right axis, three
    compared: the saved PNG's size, its axes not blank, no overlapping or cut text, 8 pt."""
    import matplotlib.pyplot as plt

    folders = [fake_run(tmp_path / f"run_with_a_long_name_{index}", novelty=novelty,
                        returns=(index, 5.0 + index, 100.0 - index, 500.0), generations=30)
               for index in range(runs)]
    out = tmp_path / "f.png"
    args = ["plot", *map(str, folders), "--out", str(out), "--smooth", "2"]
    assert main(args + (["--column"] if column else [])) == 0
    width = COLUMN_WIDTH if column else FULL_WIDTH
    assert png_size(out)[0] == int(width * PNG_DPI)
    figure = fitness_figure(folders, style=PlotStyle(smooth=2, column=column))
    try:
        check_figure(figure)
        assert panel_colours(out, figure, figure.axes[0]) > 10
    finally:
        plt.close(figure)
