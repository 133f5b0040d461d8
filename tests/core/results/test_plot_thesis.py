"""`evo plot` for a thesis: Gaussian smoothing with the raw curve kept faint, an 8 cm column
figure, and PGF through matplotlib's pgf backend (which runs LaTeX to measure text)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from figure_checks import png_size

from evo_core.cli.main import main
from evo_core.errors import UserError
from evo_core.results import plot_style
from evo_core.results.log_file import LOG_COLUMNS
from evo_core.results.plot import fitness_figure
from evo_core.results.plot_style import (
    COLUMN_SIZE,
    PNG_DPI,
    PlotStyle,
    pgf_texsystem,
    smoothed,
)

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


def test_smoothing_smooths_the_mean_and_never_the_best(tmp_path: Path) -> None:
    """A smoothed best dips below what a candidate reached: the best is drawn as it is, the
    mean smoothed over its raw curve, faint; the band never leaves the population's range."""
    run = noisy_run(tmp_path / "run")
    figure = fitness_figure([run], style=PlotStyle(smooth=2.0))
    lines = figure.axes[0].get_lines()
    raw = [line for line in lines if line.get_label() == "_raw"]
    (best,) = [line for line in lines if line.get_label() == "best"]
    (mean,) = [line for line in lines if line.get_label() == "mean"]
    generations = np.arange(1, GENERATIONS + 1)
    best_values = 5.0 * generations + np.where(generations % 2, 10.0, -10.0)
    assert np.asarray(best.get_ydata()).tolist() == best_values.tolist()  # every value real
    assert len(raw) == 1 and raw[0].get_alpha() == 0.3
    assert np.asarray(raw[0].get_ydata()).tolist() == (best_values / 2).tolist()
    smooth = np.asarray(mean.get_ydata())
    assert np.abs(np.diff(smooth)).max() < np.abs(np.diff(best_values / 2)).max() / 3
    (band,) = figure.axes[0].collections
    y = np.concatenate([path.vertices[:, 1] for path in band.get_paths()])
    assert y.min() >= 0 and y.max() <= np.max(best_values)
    texts = [text.get_text() for text in figure.legends[0].get_texts()]
    assert texts[:2] == ["best of the generation", r"mean (smoothed, $\sigma$ = 2)"]


def test_column_figure_is_8_cm_with_8_pt_text_and_the_legend_below(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = noisy_run(tmp_path / "run")
    figure = fitness_figure([run], style=PlotStyle(smooth=1.5, column=True))
    width, height = figure.get_size_inches()
    assert width * 2.54 == pytest.approx(8.0) and (width, height) == pytest.approx(COLUMN_SIZE)
    axes = figure.axes[0]
    assert axes.xaxis.label.get_fontsize() == 8 and axes.get_ylabel() == "fitness (mean return)"
    figure.canvas.draw()
    legend = figure.legends[0].get_window_extent()
    assert legend.y1 <= axes.get_window_extent().y0  # below the axes, over no curve
    assert legend.x0 >= 0 and legend.x1 <= figure.bbox.width  # and inside the 8 cm
    png = tmp_path / "column.png"
    assert main(["plot", str(run), "--smooth", "1.5", "--column", "--out", str(png)]) == 0
    assert png_size(png) == (int(COLUMN_SIZE[0] * PNG_DPI), int(COLUMN_SIZE[1] * PNG_DPI))


def test_smooth_must_be_a_number_of_generations(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    run = noisy_run(tmp_path / "run")
    with pytest.raises(SystemExit):
        main(["plot", str(run), "--smooth", "-1"])
    assert "--smooth: must be a number of generations >= 0" in capsys.readouterr().err
    with pytest.raises(UserError):
        PlotStyle(smooth=float("nan"))


def fake_latex(monkeypatch: pytest.MonkeyPatch) -> None:
    """matplotlib's pgf backend measures every text by running LaTeX; this machine may have
    none, and what is tested is what evo writes into the PGF, not LaTeX: a width per
    character."""
    from matplotlib.backends import backend_pgf

    class FakeLatex:
        def get_width_height_descent(self, text: str, prop: object
                                     ) -> tuple[float, float, float]:
            return 4.0 * len(text), 8.0, 2.0

    monkeypatch.setattr(plot_style, "pgf_texsystem", lambda: "pdflatex")
    monkeypatch.setattr(backend_pgf.LatexManager, "_get_cached_or_new",
                        classmethod(lambda cls: FakeLatex()))


@pytest.mark.parametrize("column", [False, True])
def test_pgf_text_takes_the_documents_roman_font_at_8_pt(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        column: bool) -> None:
    """Every text of a .pgf is set in the document's own roman font (`\\rmfamily`, no font of
    matplotlib's), at 8 pt, full width and column alike (they were sans-serif at 7 and 8 pt)."""
    fake_latex(monkeypatch)
    run = noisy_run(tmp_path / "run")
    out = tmp_path / "fitness.pgf"
    assert main(["plot", str(run), "--out", str(out)] + (["--column"] if column else [])) == 0
    text = out.read_text(encoding="utf-8")
    sizes = set(re.findall(r"\\fontsize\{([0-9.]+)\}", text))
    families = set(re.findall(r"\\(rmfamily|sffamily|ttfamily|setmainfont|fontfamily)", text))
    assert sizes == {"8.000000"} and families == {"rmfamily"}
    assert text.count("\\rmfamily") >= 10  # title, axis names, ticks, legend
    assert "fontspec" not in text  # the document's preamble, not matplotlib's fonts


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
    assert "\\rmfamily" in text and "\\sffamily" not in text
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
