"""fitness.png: best and mean fitness per generation over the population's worst-best band,
and, for runs with novelty search, the best and mean novelty on a second y axis (novelty and
fitness have unrelated scales).

The band is the population's range (log.csv's `worst` and `best`), not mean ± std: a std band
leaves the range a return can take (below 0 and above 500 on CartPole), a range never does. The
legend sits outside the axes, so it covers no curve however many runs are compared.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from evo_core.errors import UserError
from evo_core.results.files import write_atomic
from evo_core.results.log_file import read_log

__all__ = ["BAND_LABEL", "fitness_figure", "plot_runs"]

BAND_LABEL = "population worst–best"
#: The novelty curves' colour when one run is plotted (its fitness takes the first colour).
NOVELTY_COLOUR = "tab:purple"


@dataclass(frozen=True)
class _Curves:
    generation: np.ndarray
    best: np.ndarray
    mean: np.ndarray
    worst: np.ndarray
    #: (best, mean) novelty per generation; None for a run without novelty search
    novelty: tuple[np.ndarray, np.ndarray] | None = None


def _read_curves(run_dir: Path) -> _Curves:
    log = run_dir / "log.csv"
    if not log.is_file():
        raise UserError(f"{run_dir}: no log.csv; is it a run folder made by `evo train`?")
    rows = read_log(log)
    if not rows:
        raise UserError(f"{log}: no generation finished yet; nothing to plot")

    def column(name: str) -> np.ndarray:
        return np.array([float(r[name]) for r in rows])

    novelty = None
    if all(rows[0].get(name) is not None for name in ("novelty_best", "novelty_mean")):
        try:
            novelty = (column("novelty_best"), column("novelty_mean"))
        except (TypeError, ValueError):
            raise UserError(f"{log}: its novelty columns are not numbers; the run folder is "
                            "damaged") from None
    return _Curves(column("generation"), column("best"), column("mean"), column("worst"),
                   novelty)


def _description(run_dir: Path) -> list[str]:
    """[environment, brain, optimizer] from the run's config.json, or [] if it is unreadable."""
    try:
        config = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
        environment = config["environment"]  # an id, or a table with one
        return [str(environment["id"] if isinstance(environment, dict) else environment),
                str(config["brain"]["type"]),
                str(config["optimizer"]["type"])]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def _comparison_labels(run_dirs: list[Path]) -> tuple[str, list[str]]:
    """A title naming what the runs share, and per run its folder plus what sets it apart."""
    descriptions = [_description(run_dir) for run_dir in run_dirs]
    known = all(descriptions)
    shared = [part for index, part in enumerate(descriptions[0])
              if known and all(d[index] == part for d in descriptions)]
    title = f"Fitness of {len(run_dirs)} runs" + (f": {' · '.join(shared)}" if shared else "")
    labels = []
    for run_dir, description in zip(run_dirs, descriptions):
        own = [part for part in description if part not in shared]
        labels.append(f"{run_dir.name} ({' · '.join(own)})" if own else run_dir.name)
    return title, labels


def fitness_figure(run_dirs: list[Path], title: str | None = None) -> Any:
    """The figure (a matplotlib Figure) of one run, or of several runs to compare."""
    import matplotlib

    matplotlib.use("Agg")  # files only; no display needed (servers, CI)
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    curves = [_read_curves(run_dir) for run_dir in run_dirs]
    figure, axes = plt.subplots(figsize=(9, 4.5), dpi=100, layout="constrained")
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    single = len(run_dirs) == 1
    if single:  # the legend's title says what ran: environment · brain · optimizer
        default_title, run_labels = run_dirs[0].name, [""]
        legend_title = " · ".join(_description(run_dirs[0])) or None
    else:
        (default_title, run_labels), legend_title = _comparison_labels(run_dirs), None
    for index, (run, run_label) in enumerate(zip(curves, run_labels)):
        colour = colours[index % len(colours)]
        axes.fill_between(run.generation, run.worst, run.best, color=colour, alpha=0.15, lw=0,
                          label=BAND_LABEL if single else "_band")
        axes.plot(run.generation, run.best, color=colour, lw=1.8,
                  label="best" if single else run_label)
        axes.plot(run.generation, run.mean, color=colour, lw=1.0, ls="--",
                  label="mean" if single else "_mean")
    handles, labels = axes.get_legend_handles_labels()
    if single:  # best, mean, then the band
        order = [labels.index(name) for name in ("best", "mean", BAND_LABEL)]
        handles, labels = [handles[i] for i in order], [labels[i] for i in order]
    else:  # one entry per run (its colour), then what the line styles and the band mean
        handles += [Line2D([], [], color="0.3", lw=1.8), Line2D([], [], color="0.3", lw=1.0,
                    ls="--"), Patch(color="0.3", alpha=0.15, lw=0)]
        labels += ["best (solid)", "mean (dashed)", BAND_LABEL]
    if any(run.novelty is not None for run in curves):
        novelty_colours = [NOVELTY_COLOUR] if single else colours
        _plot_novelty(axes.twinx(), curves, novelty_colours)
        grey = NOVELTY_COLOUR if single else "0.3"
        handles += [Line2D([], [], color=grey, lw=1.4, ls=":"),
                    Line2D([], [], color=grey, lw=1.0, ls="-.")]
        labels += ["novelty best (dotted, right axis)", "novelty mean (dash-dot, right axis)"]
    figure.legend(handles, labels, loc="outside right upper", fontsize="small",
                  title=legend_title, title_fontsize="small")
    axes.set_xlabel("generation")
    axes.set_ylabel("fitness (mean episode return)")
    axes.set_title(title or default_title)
    axes.grid(alpha=0.3)
    return figure


def _plot_novelty(axes: Any, curves: list[_Curves], colours: list[str]) -> None:
    for index, run in enumerate(curves):
        if run.novelty is None:
            continue
        colour = colours[index % len(colours)]
        axes.plot(run.generation, run.novelty[0], color=colour, lw=1.4, ls=":")
        axes.plot(run.generation, run.novelty[1], color=colour, lw=1.0, ls="-.")
    axes.set_ylabel("novelty (mean distance to the k nearest)")


def plot_runs(run_dirs: list[Path], output: Path, title: str | None = None) -> Path:
    figure = fitness_figure(run_dirs, title)
    import matplotlib.pyplot as plt  # after fitness_figure chose the Agg backend

    try:
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"{output}: cannot write the plot ({exc.strerror or exc})") from None
        write_atomic(output, lambda handle: figure.savefig(handle, format=_format(output)))
    finally:
        plt.close(figure)
    return output


def _format(output: Path) -> str:
    """The image format named by the file's suffix (matplotlib cannot see a name through the
    open temporary file); PNG when there is none."""
    return output.suffix[1:].lower() or "png"
