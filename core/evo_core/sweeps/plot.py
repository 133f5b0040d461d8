"""A sweep's fitness.png: per setting, the mean over seeds of each generation's best fitness,
in a band of its 95 % confidence interval.

The band is the t-interval of the mean (`statistics.t_quantile`), not the spread of the runs:
the question a sweep asks is which setting is better. A generation only one run of a setting
reached has no band. With few seeds the interval is wider than anything the runs did (two
seeds: t = 12.7, so returns of 8..500 gave a band of -600..800), which says nothing and
squashes the curves: the band is cut to the range the runs' values span at that generation,
and the legend says so.

Bands of several settings on one axes cover one another, so each setting has a panel of its
own (`MOST_PANELS` at most), sharing both axes, with the other settings' means drawn thin and
grey behind its own for comparison. A sweep of more settings draws their means on one axes,
without bands (summary.csv has the intervals), and says so.

`--smooth SIGMA` smooths each run's curve as `evo plot RUN --smooth` smooths a mean, then takes
the mean and interval over the seeds (the mean of smoothed curves is the smoothed mean), the
band cut to the range of the smoothed curves; the raw mean stays faint beneath. Sizes, fonts and
formats are `PlotStyle`'s, as for every figure (`--column`, `.pgf`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.errors import UserError
from evo_core.results.log_file import read_log
from evo_core.results.plot import run_description, save_figure, smoothed_label
from evo_core.results.plot_style import (
    LONGEST_LABEL,
    PlotStyle,
    check_pgf,
    legend_below,
    literal,
    smoothed,
    wrapped,
)
from evo_core.sweeps.points import format_value
from evo_core.sweeps.statistics import CONFIDENCE, t_quantile
from evo_core.sweeps.summary import SettingRuns

__all__ = ["BAND_LABEL", "MAX_LEGEND_KEYS", "MOST_PANELS", "plot_sweep", "sweep_figure"]

#: settings that vary more keys than this are named by their label in the legend
MAX_LEGEND_KEYS = 4
#: what the legend says the shaded bands are
BAND_LABEL = "95 % t-interval of the mean, within the seeds' range"
#: the y axis of every panel: the legend says it is the mean over seeds
Y_LABEL = "best fitness"
#: what the y axis is, in the legend (a panel is too short to say it beside the axis)
MEAN_LABEL = "mean over seeds of the generation's best"
#: settings drawn in panels of their own at most; beyond, their means on one axes
MOST_PANELS = 12
Floats = NDArray[np.float64]


@dataclass(frozen=True)
class _Band:
    """A setting's curve: per generation (from 1) the mean over its runs, and the interval's
    bounds (NaN where fewer than two runs reached the generation); its raw mean when smoothed."""

    mean: Floats
    low: Floats
    high: Floats
    raw: Floats
    runs: int

    @property
    def generation(self) -> Floats:
        return np.arange(1, self.mean.size + 1, dtype=np.float64)


def _curves(setting: SettingRuns) -> list[Floats]:
    """Each run's best fitness per generation (runs without a generation left out)."""
    curves = []
    for run_dir in setting.run_dirs:
        log = run_dir / "log.csv"
        rows = read_log(log) if log.is_file() else []
        if rows:
            curves.append(np.array([float(row["best"]) for row in rows]))
    return curves


def _band(curves: list[Floats], sigma: float) -> _Band:
    """The setting's mean and interval per generation, over its runs' curves, each smoothed by
    `sigma` first (vectorised over generations: the runs as rows, NaN past a run's end)."""
    length = max(curve.size for curve in curves)
    raw = np.full((len(curves), length), np.nan)
    for row, curve in enumerate(curves):
        raw[row, :curve.size] = curve
    reached = np.isfinite(raw)
    values = np.where(reached, np.array([smoothed(row, sigma) for row in raw]), np.nan)
    count = reached.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.nansum(values, axis=0) / count
        spread = np.sqrt(np.nansum((values - mean) ** 2, axis=0) / (count - 1))
        quantiles = np.array([t_quantile(0.5 + CONFIDENCE / 2, int(n)) if n > 1 else np.nan
                              for n in np.unique(count)])
        half = quantiles[np.searchsorted(np.unique(count), count)] * spread / np.sqrt(count)
    low = np.maximum(mean - half, np.nanmin(values, axis=0))
    high = np.minimum(mean + half, np.nanmax(values, axis=0))
    return _Band(mean, low, high, np.nanmean(raw, axis=0), len(curves))


def _label(setting: SettingRuns, varied: list[str]) -> str:
    if not varied:
        return "all runs"
    if len(varied) > MAX_LEGEND_KEYS:
        return literal(setting.label, LONGEST_LABEL)
    short = {key: key.rsplit(".", 1)[-1] for key in varied}
    if len(set(short.values())) < len(varied):
        short = {key: key for key in varied}
    return literal(", ".join(f"{short[key]}={_shown(setting.values.get(key))}"
                             for key in varied), LONGEST_LABEL)


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else format_value(value)


def _description(settings: list[SettingRuns]) -> str:
    """What ran (environment · brain · optimizer), from the first run's config."""
    for setting in settings:
        for run_dir in setting.run_dirs:
            description = run_description(run_dir)
            if description:
                return " · ".join(description)
    return ""


def plot_sweep(path: Path, settings: list[SettingRuns], varied: list[str], output: Path,
               title: str | None = None, style: PlotStyle | None = None) -> Path:
    """Draw the sweep folder `path`'s settings into `output`; its path."""
    style = (style or PlotStyle()).for_output(output)
    if style.pgf:
        check_pgf(output)  # before anything is drawn
    figure = sweep_figure(path, settings, varied, title, style)
    save_figure(figure, output, style)  # as `evo plot RUN` saves (PGF, one-line errors)
    return output


def sweep_figure(path: Path, settings: list[SettingRuns], varied: list[str],
                 title: str | None = None, style: PlotStyle | None = None) -> Any:
    """The figure (a matplotlib Figure) of the sweep folder `path`'s settings."""
    drawn = [(setting, curves) for setting in settings if (curves := _curves(setting))]
    if not drawn:
        raise UserError(f"{path}: no run of the sweep has finished a generation yet; nothing "
                        "to plot")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    style = style or PlotStyle()
    bands = [(_label(setting, varied), _band(curves, style.smooth)) for setting, curves in drawn]
    shown = literal(title) if title else literal(path.name, LONGEST_LABEL)
    description = _description([setting for setting, _ in drawn])
    heading = (f"{shown}: {literal(description, 3 * LONGEST_LABEL)}" if description and not title
               else shown)
    with matplotlib.rc_context(style.rc()):
        figure = (_panels(plt, bands, style) if len(bands) <= MOST_PANELS
                  else _one_axes(plt, bands, style))
        try:
            figure.suptitle(wrapped(heading, style.width))
            _legend(figure, bands, varied, style, panels=len(bands) <= MOST_PANELS)
        except BaseException:
            plt.close(figure)
            raise
    return figure


def _panels(plt: Any, bands: list[tuple[str, _Band]], style: PlotStyle) -> Any:
    """A panel per setting: the other settings' means thin and grey, its own band and mean."""
    columns = min(len(bands), 2 if style.column else 3)
    rows = -(-len(bands) // columns)
    height = (1.5 if style.column else 1.3) + rows * (1.35 if style.column else 1.7)
    figure, grid = plt.subplots(rows, columns, figsize=(style.width, height), sharex=True,
                                sharey=True, layout="constrained", squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    panel_width = style.width / columns
    for index, axes in enumerate(grid.flat):
        if index >= len(bands):
            axes.remove()  # the last row's empty places
            continue
        label, band = bands[index]
        colour = colours[index % len(colours)]
        for other, (_, theirs) in enumerate(bands):
            if other != index:
                axes.plot(theirs.generation, theirs.mean, color="0.65", lw=0.6, zorder=1)
        axes.fill_between(band.generation, band.low, band.high, color=colour, alpha=0.3,
                          lw=0, zorder=2)
        if style.smooth > 0:
            axes.plot(band.generation, band.raw, color=colour, lw=0.5, alpha=0.35, zorder=3)
        axes.plot(band.generation, band.mean, color=colour, lw=1.4, zorder=4)
        runs = f"{band.runs} run{'s' if band.runs != 1 else ''}"
        axes.set_title(wrapped(f"{label} ({runs})", panel_width), loc="left")
        axes.grid(alpha=0.3)
        axes.xaxis.set_major_locator(plt.MaxNLocator(4 if style.column else 6, integer=True))
        axes.yaxis.set_major_locator(plt.MaxNLocator(4))
        _axis_labels(axes, index, len(bands), columns)
    return figure


def _axis_labels(axes: Any, index: int, count: int, columns: int) -> None:
    """The x axis named under the lowest panel of each column, the y axis beside the first
    panel of each row (the panels share both)."""
    if index + columns >= count:
        axes.set_xlabel("generation")
    if index % columns == 0:
        axes.set_ylabel(Y_LABEL)


def _one_axes(plt: Any, bands: list[tuple[str, _Band]], style: PlotStyle) -> Any:
    """More settings than panels: their means on one axes, no bands."""
    figure, axes = plt.subplots(figsize=style.figure_size(3.6, 2.8), layout="constrained")
    for label, band in bands:
        axes.plot(band.generation, band.mean, lw=1.0, label=f"{label} ({band.runs})")
    axes.grid(alpha=0.3)
    axes.set_xlabel("generation")
    axes.set_ylabel(Y_LABEL)
    return figure


def _legend(figure: Any, bands: list[tuple[str, _Band]], varied: list[str], style: PlotStyle,
            panels: bool) -> None:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if panels:
        handles = [Line2D([], [], color="0.2", lw=1.4), Patch(color="0.2", alpha=0.3, lw=0),
                   Line2D([], [], color="0.65", lw=0.6)]
        labels = [smoothed_label(MEAN_LABEL, style), BAND_LABEL,
                  "the other settings' means"]
        if style.smooth > 0:
            handles.insert(1, Line2D([], [], color="0.2", lw=0.5, alpha=0.35))
            labels.insert(1, "raw mean")
    else:
        handles, labels = figure.axes[0].get_legend_handles_labels()
        labels = [smoothed_label(label, style) for label in labels]
        labels.append(f"{len(bands)} settings: no intervals drawn (summary.csv has them)")
        handles.append(Line2D([], [], ls=""))
    title = literal("varied: " + ", ".join(varied), LONGEST_LABEL) if varied else None
    legend_below(figure, handles, labels, title=title)
