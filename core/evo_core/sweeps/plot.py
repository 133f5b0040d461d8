"""A sweep's fitness.png: per setting, the mean over seeds of each generation's best fitness,
in a band of its 95 % confidence interval.

The band is the t-interval of the mean (see `statistics`), not the spread of the runs: the
question a sweep asks is which setting is better, and overlapping intervals say the seeds cannot
tell. A generation only one run of a setting reached has no band. With few seeds the interval
is wider than anything the runs did (two seeds: t = 12.7, so returns of 8..500 gave a band of
-600..800), which says nothing and squashes the curves: the band is clipped to the range the
runs' values span at that generation, and the legend says so. The legend names the varied
keys in its title and each setting by its values; a setting with many sampled keys is named by
its folder label instead (its values are in summary.csv).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from evo_core.errors import UserError
from evo_core.results.log_file import read_log
from evo_core.results.plot import save_figure
from evo_core.results.plot_style import LONGEST_LABEL, literal
from evo_core.sweeps.points import format_value
from evo_core.sweeps.statistics import estimate
from evo_core.sweeps.summary import SettingRuns

__all__ = ["BAND_LABEL", "MAX_LEGEND_KEYS", "plot_sweep"]

#: settings that vary more keys than this are named by their label in the legend
MAX_LEGEND_KEYS = 4
#: what the legend says the shaded bands are
BAND_LABEL = "band: 95 % t-interval of the mean,\nclipped to the seeds' range"


def _curves(setting: SettingRuns) -> list[list[float]]:
    """Each run's best fitness per generation (runs without a generation left out)."""
    curves = []
    for run_dir in setting.run_dirs:
        log = run_dir / "log.csv"
        rows = read_log(log) if log.is_file() else []
        if rows:
            curves.append([float(row["best"]) for row in rows])
    return curves


def _band(curves: list[list[float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Generation numbers, mean, lower and upper bound of the interval (NaN without one)."""
    length = max(len(curve) for curve in curves)
    mean, low, high = np.full(length, np.nan), np.full(length, np.nan), np.full(length, np.nan)
    for index in range(length):
        values = [curve[index] for curve in curves if len(curve) > index]
        result = estimate(values)
        if result is not None:
            mean[index] = result.mean
            if result.half_width is not None:  # clipped to what the runs did
                low[index] = max(result.mean - result.half_width, min(values))
                high[index] = min(result.mean + result.half_width, max(values))
    return np.arange(1, length + 1), mean, low, high


def _label(setting: SettingRuns, varied: list[str]) -> str:
    if not varied:
        return "all runs"
    if len(varied) > MAX_LEGEND_KEYS:
        return literal(setting.label)
    short = {key: key.rsplit(".", 1)[-1] for key in varied}
    if len(set(short.values())) < len(varied):
        short = {key: key for key in varied}
    return literal(", ".join(f"{short[key]}={_shown(setting.values.get(key))}"
                             for key in varied), LONGEST_LABEL)


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else format_value(value)


def plot_sweep(path: Path, settings: list[SettingRuns], varied: list[str], output: Path,
               title: str | None = None) -> Path:
    """Draw the sweep folder `path`'s settings into `output`; its path."""
    drawn = [(setting, curves) for setting in settings if (curves := _curves(setting))]
    if not drawn:
        raise UserError(f"{path}: no run of the sweep has finished a generation yet; nothing "
                        "to plot")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(9, 4.5), dpi=100, layout="constrained")
    try:
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for index, (setting, curves) in enumerate(drawn):
            colour = colours[index % len(colours)]
            generation, mean, low, high = _band(curves)
            axes.fill_between(generation, low, high, color=colour, alpha=0.2, lw=0)
            axes.plot(generation, mean, color=colour, lw=1.8,
                      label=f"{_label(setting, varied)} ({len(curves)} run"
                      f"{'s' if len(curves) != 1 else ''})")
        axes.fill_between([], [], [], color="grey", alpha=0.2, lw=0, label=BAND_LABEL)
        legend_title = literal("varied: " + ", ".join(varied), LONGEST_LABEL) if varied else None
        figure.legend(loc="outside right upper", fontsize="small", title=legend_title,
                      title_fontsize="small")
        axes.set_xlabel("generation")
        axes.set_ylabel("best fitness of the generation\n(mean over seeds)")
        axes.set_title(literal(title or path.name))
        axes.grid(alpha=0.3)
    except BaseException:
        plt.close(figure)
        raise
    save_figure(figure, output)  # as `evo plot RUN` saves (PGF, one-line errors), and closes it
    return output
