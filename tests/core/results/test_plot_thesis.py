"""`evo plot` for a thesis: Gaussian smoothing with the raw curve kept faint, an 8 cm column
figure, and PGF through matplotlib's pgf backend (which runs LaTeX to measure text)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from evo_core.cli.main import main
from evo_core.errors import UserError
from evo_core.results import plot_style
from evo_core.results.log_file import LOG_COLUMNS
from evo_core.results.plot import fitness_figure
from evo_core.results.plot_style import COLUMN_SIZE, PlotStyle, pgf_texsystem, smoothed

GENERATIONS = 40


def noisy_run(folder: Path) -> Path:
    """A run folder whose best fitness is a rising line plus alternating noise of 10."""
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({
        "environment": "CartPole-v1", "brain": {"type": "ctrnn"},
        "optimizer": {"type": "cma-es"}}))
    rows = [",".join(LOG_COLUMNS)]
    for g in range(1, GENERATIONS + 1):
        best = 5.0 * g + (10.0 if g % 2 else -10.0)
        rows.append(",".join(str(x) for x in (g, 4 * g, best, best / 2, 1.0, 0.0, best,
                                              100 * g, g)))
    (folder / "log.csv").write_text("\n".join(rows) + "\n")
    return folder


def test_smoothing_keeps_constants_and_lines_and_removes_alternation() -> None:
    assert smoothed(np.full(9, 3.0), 2.0).tolist() == pytest.approx([3.0] * 9)
    values = np.arange(30, dtype=float) + np.where(np.arange(30) % 2, 10.0, -10.0)
    smooth = smoothed(values, 2.0)
    inner = slice(8, 22)  # away from the ends, a line stays the line
    assert smooth[inner] == pytest.approx(np.arange(30, dtype=float)[inner], abs=0.05)
    assert smoothed(values, 0).tolist() == values.tolist()
    # the ends are means of the values there are, not pulled towards zero by padding
    assert smoothed(np.full(5, 100.0), 3.0)[0] == pytest.approx(100.0)
    with_nan = smoothed(np.array([1.0, np.nan, 3.0]), 1.0)
    assert np.isfinite(with_nan).all()


def test_smooth_plot_draws_the_raw_curves_faint(tmp_path: Path) -> None:
    run = noisy_run(tmp_path / "run")
    figure = fitness_figure([run], style=PlotStyle(smooth=2.0))
    lines = figure.axes[0].get_lines()
    raw = [line for line in lines if line.get_label() == "_raw"]
    smooth = [line for line in lines if line.get_label() == "best"]
    assert len(raw) == 2 and all(line.get_alpha() == 0.3 for line in raw)
    best_raw = raw[0].get_ydata()
    best_smooth = np.asarray(smooth[0].get_ydata())
    assert np.abs(np.diff(best_smooth)).max() < np.abs(np.diff(best_raw)).max() / 3
    texts = [text.get_text() for text in figure.legends[0].get_texts()]
    assert r"best (smoothed, $\sigma$ = 2)" in texts


def test_column_figure_is_8_cm_with_8_pt_text_and_the_legend_below(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from PIL import Image

    run = noisy_run(tmp_path / "run")
    figure = fitness_figure([run], style=PlotStyle(smooth=1.5, column=True))
    width, height = figure.get_size_inches()
    assert width * 2.54 == pytest.approx(8.0) and (width, height) == pytest.approx(COLUMN_SIZE)
    axes = figure.axes[0]
    assert axes.xaxis.label.get_fontsize() == 8 and axes.get_ylabel() == "fitness"
    figure.canvas.draw()
    legend = figure.legends[0].get_window_extent()
    assert legend.y1 <= axes.get_window_extent().y0  # below the axes, over no curve
    assert legend.x0 >= 0 and legend.x1 <= figure.bbox.width  # and inside the 8 cm
    png = tmp_path / "column.png"
    assert main(["plot", str(run), "--smooth", "1.5", "--column", "--out", str(png)]) == 0
    with Image.open(png) as image:
        assert image.size == (int(COLUMN_SIZE[0] * 100), int(COLUMN_SIZE[1] * 100))


def test_smooth_must_be_a_number_of_generations(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    run = noisy_run(tmp_path / "run")
    with pytest.raises(SystemExit):
        main(["plot", str(run), "--smooth", "-1"])
    assert "--smooth: must be a number of generations >= 0" in capsys.readouterr().err
    with pytest.raises(UserError):
        PlotStyle(smooth=float("nan"))


def test_a_sweep_folder_is_not_smoothed_silently(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from evo_core.sweeps.folder import RECORD_NAME

    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / RECORD_NAME).write_text("{}")
    assert main(["plot", str(sweep), "--smooth", "2"]) == 2
    assert "--smooth and --column draw run folders" in capsys.readouterr().err


@pytest.mark.skipif(pgf_texsystem() is None, reason="no TeX system (pdflatex, lualatex, "
                    "xelatex) to measure text with")
def test_pgf_is_pgf_picture_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = noisy_run(tmp_path / "run")
    out = tmp_path / "fitness.pgf"
    assert main(["plot", str(run), "--smooth", "2", "--column", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("%% Creator: Matplotlib, PGF backend")
    assert "\\begin{pgfpicture}" in text and text.rstrip().endswith("\\endgroup%")
    assert text.count("\\pgfpathlineto") > GENERATIONS  # the curves are paths, not an image
    assert "generation" in text and "fitness" in text and "\\sigma" in text
    # the 8 cm column: the picture's bounding box is 3.15 in wide
    assert f"\\pgfqpoint{{{COLUMN_SIZE[0]:.6f}in}}{{{COLUMN_SIZE[1]:.6f}in}}" in text


def test_pgf_without_tex_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plot_style, "pgf_texsystem", lambda: None)
    run = noisy_run(tmp_path / "run")
    out = tmp_path / "fitness.pgf"
    assert main(["plot", str(run), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pgf backend measures text by running LaTeX" in err[0]
    assert not out.exists()
