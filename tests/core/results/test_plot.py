"""`evo plot`: the band stays within the population's returns, the legend names every element and
covers no curve, and a comparison has a title saying what its runs share."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from evo_core.cli.main import main
from evo_core.results.log_file import LOG_COLUMNS
from evo_core.results.plot import BAND_LABEL, fitness_figure


def fake_run(folder: Path, brain: str = "ctrnn", returns: tuple[float, ...] = (0, 0, 0, 500),
             generations: int = 4) -> Path:
    """A run folder with a log.csv whose mean ± std leaves [0, 500] (a CartPole population where
    one candidate in four balances the pole)."""
    folder.mkdir()
    config = {"environment": "CartPole-v1", "brain": {"type": brain},
              "optimizer": {"type": "cma-es"}}
    (folder / "config.json").write_text(json.dumps(config))
    values = np.array(returns, dtype=float)
    rows = [",".join(LOG_COLUMNS)]
    for g in range(1, generations + 1):
        rows.append(",".join(str(x) for x in (
            g, 4 * g, values.max(), values.mean(), values.std(), values.min(), values.max(),
            100 * g, g)))
    (folder / "log.csv").write_text("\n".join(rows) + "\n")
    return folder


def svg_texts(svg: str, group: str) -> list[str]:
    """The texts matplotlib wrote inside the SVG group `group` (one comment per text)."""
    start = svg.index(f'<g id="{group}">')
    return re.findall(r"<!-- (.*?) -->", svg[start:])


def test_fitness_band_stays_within_the_population(tmp_path: Path) -> None:
    import matplotlib.pyplot as plt

    run = fake_run(tmp_path / "run")
    figure = fitness_figure([run])
    try:
        (band,) = figure.axes[0].collections
        y = np.concatenate([path.vertices[:, 1] for path in band.get_paths()])
        assert y.min() == 0 and y.max() == 500  # mean ± std would reach -91.5 and 341.5
        assert band.get_label() == BAND_LABEL
    finally:
        plt.close(figure)


def test_fitness_plot_legend_read_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = fake_run(tmp_path / "run")
    out = tmp_path / "fitness.svg"
    assert main(["plot", str(run), "--out", str(out)]) == 0
    texts = svg_texts(out.read_text(), "legend_1")
    assert texts == ["CartPole-v1 · ctrnn · cma-es", "best", "mean", BAND_LABEL]


def test_comparison_has_a_title_and_a_legend_beside_the_curves(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import matplotlib.pyplot as plt

    a = fake_run(tmp_path / "a", brain="ctrnn")
    b = fake_run(tmp_path / "b", brain="lstm", returns=(10, 20, 30, 40))
    out = tmp_path / "comparison.svg"
    assert main(["plot", str(a), str(b), "--out", str(out)]) == 0
    svg = out.read_text()
    assert svg_texts(svg, "legend_1") == ["a (ctrnn)", "b (lstm)", "best (solid)",
                                          "mean (dashed)", BAND_LABEL]
    assert "<!-- Fitness of 2 runs: CartPole-v1 · cma-es -->" in svg
    figure = fitness_figure([a, b])
    try:
        figure.canvas.draw()
        (legend,) = figure.legends
        axes = figure.axes[0].get_window_extent()
        assert not legend.get_window_extent().overlaps(axes)
    finally:
        plt.close(figure)
