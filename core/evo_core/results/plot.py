"""fitness.png: per generation, the population's best and mean fitness over a band of its
mean ± one standard deviation, and, for runs with novelty search, the best and mean novelty on
a second y axis (novelty and fitness have unrelated scales); or several runs' curves on one
figure to compare.

What is drawn says what happened and nothing else:
- **The band** is the population's mean ± its standard deviation (log.csv's `mean`, `std`),
  cut to the population's range (`worst`, `best`): where most candidates are, never a return
  no candidate had (a bare std band leaves [0, 500] on CartPole; the worst–best range it
  replaced spanned nearly the whole axis and said little). Runs compared on one figure have
  no bands: each would cover the others.
- **Smoothing** (`--smooth`) smooths means only: the mean, the standard deviation of the band
  (which is then cut to the raw range) and the mean novelty. The best of a generation is a
  maximum and is drawn as it is: a smoothed best would dip below what a candidate reached.
  The raw mean stays faint beneath its smooth curve.
- **Text**: the title is the run folder's name and what ran (environment · brain · optimizer,
  read from config.json; `--title` to choose another), the legend below the axes,
  so it covers no curve however many runs are compared (`plot_style.legend_below`).

Sizes, fonts and formats are `PlotStyle`'s (results/plot_style.py), as for every figure.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from evo_core.errors import UserError
from evo_core.results.files import remove_abandoned_temporaries, write_atomic
from evo_core.results.log_file import read_log
from evo_core.results.plot_style import (
    LONGEST_LABEL,
    PlotStyle,
    check_pgf,
    legend_below,
    literal,
    output_format,
    sigma_text,
    smoothed,
    wrapped,
)
from evo_core.results.run_folder import RunFolder

__all__ = ["BAND_LABEL", "fitness_figure", "plot_runs", "run_description", "save_figure",
           "smoothed_label"]

BAND_LABEL = "mean ± s.d. of the population"
#: Shorter legend entries in an 8 cm column
COLUMN_LABELS = {"best of the generation": "best", BAND_LABEL: "mean ± s.d.",
                 "novelty best (right axis)": "novelty best (right)",
                 "novelty mean (right axis)": "novelty mean (right)"}
#: The novelty curves' colour when one run is plotted (its fitness takes the first colour).
NOVELTY_COLOUR = "tab:purple"


@dataclass(frozen=True)
class _Curves:
    generation: np.ndarray
    best: np.ndarray
    mean: np.ndarray
    std: np.ndarray
    worst: np.ndarray
    #: (best, mean) novelty per generation; None for a run without novelty search
    novelty: tuple[np.ndarray, np.ndarray] | None = None


def _read_curves(run_dir: Path) -> _Curves:
    log = run_dir / "log.csv"
    rows = read_log(log, f"{run_dir}: no log.csv; is it a run folder made by `evo train`?")
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
    return _Curves(column("generation"), column("best"), column("mean"), column("std"),
                   column("worst"), novelty)


def run_description(run_dir: Path) -> list[str]:
    """[environment, brain, optimizer] from the run's config.json, as written there (a figure
    draws them through `literal`), or [] if it is unreadable."""
    try:
        config = RunFolder(run_dir).read_config()
        environment = config["environment"]  # an id, or a table with one
        parts = [environment["id"] if isinstance(environment, dict) else environment,
                 config["brain"]["type"], config["optimizer"]["type"]]
        return [str(part) for part in parts]
    except (UserError, KeyError, TypeError):
        return []


def _drawn_description(run_dir: Path) -> list[str]:
    """`run_description`, each part as drawn."""
    return [literal(part, LONGEST_LABEL) for part in run_description(run_dir)]


def _name(run_dir: Path) -> str:
    """A run folder's name, as drawn."""
    return literal(run_dir.name, LONGEST_LABEL)


def _comparison_labels(run_dirs: list[Path]) -> tuple[str, list[str]]:
    """A title naming what the runs share, and per run its folder plus what sets it apart."""
    descriptions = [_drawn_description(run_dir) for run_dir in run_dirs]
    known = all(descriptions)
    shared = [part for index, part in enumerate(descriptions[0])
              if known and all(d[index] == part for d in descriptions)]
    title = f"Fitness of {len(run_dirs)} runs" + (f": {' · '.join(shared)}" if shared else "")
    labels = []
    for run_dir, description in zip(run_dirs, descriptions):
        own = [part for part in description if part not in shared]
        labels.append(f"{_name(run_dir)} ({' · '.join(own)})" if own else _name(run_dir))
    return title, labels


def smoothed_label(label: str, style: PlotStyle) -> str:
    """A smoothed curve's legend entry: it says the sigma (in a column, in fewer words)."""
    if style.smooth <= 0:
        return label
    return f"{label} ({'' if style.column else 'smoothed, '}{sigma_text(style.smooth)})"


def _mean_line(axes: Any, x: np.ndarray, y: np.ndarray, style: PlotStyle, **kwargs: Any
               ) -> None:
    """A mean: smoothed, the raw one thin and faint beneath it, when the style smooths."""
    if style.smooth > 0:
        axes.plot(x, y, color=kwargs["color"], lw=0.5, alpha=0.3, ls=kwargs.get("ls", "-"),
                  label="_raw")
        y = smoothed(y, style.smooth)
    axes.plot(x, y, **kwargs)


def fitness_figure(run_dirs: list[Path], title: str | None = None,
                   style: PlotStyle | None = None) -> Any:
    """The figure (a matplotlib Figure) of one run, or of several runs to compare."""
    import matplotlib

    matplotlib.use("Agg")  # files only; no display needed (servers, CI)
    import matplotlib.pyplot as plt

    style = style or PlotStyle()
    curves = [_read_curves(run_dir) for run_dir in run_dirs]
    with matplotlib.rc_context(style.rc()):
        return _draw(plt, run_dirs, curves, title, style)


def _draw(plt: Any, run_dirs: list[Path], curves: list[_Curves], title: str | None,
          style: PlotStyle) -> Any:
    from matplotlib.lines import Line2D

    figure, axes = plt.subplots(figsize=style.figure_size(3.4, 2.6), layout="constrained")
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    single = len(run_dirs) == 1
    if single:
        description = " · ".join(_drawn_description(run_dirs[0]))
        default_title = f"{_name(run_dirs[0])}: {description}" if description else \
            _name(run_dirs[0])
        run_labels = [""]
    else:
        default_title, run_labels = _comparison_labels(run_dirs)
    for index, run in enumerate(curves):
        colour = colours[index % len(colours)]
        if single:
            _band(axes, run, style, colour)
        axes.plot(run.generation, run.best, color=colour, lw=1.4, label="best")
        _mean_line(axes, run.generation, run.mean, style, color=colour, lw=1.0, ls="--",
                   label="mean")
    # the legend's entries: (handle, label, whether it is a mean the style smooths)
    if single:
        found = dict(zip(*reversed(axes.get_legend_handles_labels())))
        entries = [(found["best"], "best of the generation", False),
                   (found["mean"], "mean", True), (found[BAND_LABEL], BAND_LABEL, False)]
    else:  # one entry per run (its colour), then what the line styles mean
        entries = [(Line2D([], [], color=colours[i % len(colours)], lw=1.4), label, False)
                   for i, label in enumerate(run_labels)]
        entries += [(Line2D([], [], color="0.3", lw=1.4), "best: solid", False),
                    (Line2D([], [], color="0.3", lw=1.0, ls="--"), "mean: dashed", True)]
    if any(run.novelty is not None for run in curves):
        novelty_colours = [NOVELTY_COLOUR] if single else colours
        _plot_novelty(axes.twinx(), curves, novelty_colours, style)
        grey = NOVELTY_COLOUR if single else "0.3"
        entries += [(Line2D([], [], color=grey, lw=1.2, ls=":"), "novelty best (right axis)",
                     False),
                    (Line2D([], [], color=grey, lw=1.0, ls="-."), "novelty mean (right axis)",
                     True)]
    handles = [handle for handle, _, _ in entries]
    labels = [COLUMN_LABELS.get(label, label) if style.column else label
              for _, label, _ in entries]
    labels = [smoothed_label(label, style) if mean else label
              for label, (_, _, mean) in zip(labels, entries)]
    legend_below(figure, handles, labels)
    axes.set_xlabel("generation")
    axes.set_ylabel("fitness (mean return)")
    axes.set_title(wrapped(literal(title) if title else default_title, style.width))
    axes.grid(alpha=0.3)
    first = float(min(run.generation[0] for run in curves))
    last = float(max(run.generation[-1] for run in curves))
    if last > first:  # one generation has no span to fill
        axes.set_xlim(first, last)
    return figure


def _band(axes: Any, run: _Curves, style: PlotStyle, colour: str) -> None:
    """The population's mean ± std, its parts smoothed as means are, cut to the raw range."""
    mean, std = smoothed(run.mean, style.smooth), smoothed(run.std, style.smooth)
    low = np.clip(mean - std, run.worst, run.best)
    high = np.clip(mean + std, run.worst, run.best)
    axes.fill_between(run.generation, low, high, color=colour, alpha=0.18, lw=0,
                      label=BAND_LABEL)


def _plot_novelty(axes: Any, curves: list[_Curves], colours: list[str],
                  style: PlotStyle) -> None:
    for index, run in enumerate(curves):
        if run.novelty is None:
            continue
        colour = colours[index % len(colours)]
        axes.plot(run.generation, run.novelty[0], color=colour, lw=1.2, ls=":")
        _mean_line(axes, run.generation, run.novelty[1], style, color=colour, lw=1.0, ls="-.")
    axes.set_ylabel("novelty (mean distance to the k nearest)" if not style.column
                    else "novelty")


def plot_runs(run_dirs: list[Path], output: Path, title: str | None = None,
              style: PlotStyle | None = None) -> Path:
    style = (style or PlotStyle()).for_output(output)
    if style.pgf:
        check_pgf(output)  # before anything is drawn
    figure = fitness_figure(run_dirs, title, style)
    save_figure(figure, output, style)
    return output


def save_figure(figure: Any, output: Path, style: PlotStyle | None = None) -> None:
    """Write `figure`, made with `style.for_output(output)`, to `output` (its format by the
    suffix; .pgf through the pgf backend) atomically, then close it. Temporaries of `output`
    that a killed writer left (a `kill -9` during training's last plot) are removed first,
    those of a live writer kept."""
    import matplotlib
    import matplotlib.pyplot as plt  # after the figure chose the Agg backend

    style = (style or PlotStyle()).for_output(output)
    rc = style.rc()
    if style.pgf:
        rc["pgf.texsystem"] = check_pgf(output)
    try:
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"{output}: cannot write the plot ({exc.strerror or exc})") from None
        remove_abandoned_temporaries(output)
        with matplotlib.rc_context(rc):
            write_atomic(output, lambda handle: _savefig(figure, handle, output))
    finally:
        plt.close(figure)


def _savefig(figure: Any, handle: BinaryIO, output: Path) -> None:
    """`figure.savefig`; LaTeX failing under the pgf backend is the user's TeX installation,
    said in one line. Only a .pgf runs LaTeX: the backend's module is imported for it alone
    (0.1 s of every run's last fitness.png otherwise)."""
    if output_format(output) != "pgf":
        figure.savefig(handle, format=output_format(output))
        return
    from matplotlib.backends.backend_pgf import LatexError

    try:
        _save_pgf(figure, handle, output)
    except LatexError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else "LaTeX failed"
        raise UserError(f"--out {output}: matplotlib's pgf backend ran LaTeX, which failed "
                        f"({first}); check the TeX installation (pdflatex is tried first), or "
                        "write a .pdf or .svg") from None


class _NamedFile:
    """The open temporary of `write_atomic` under the name of a file in `folder`: matplotlib's
    pgf backend names a figure's images after the file it writes (`FILE-img0.png`) and writes
    them beside it; the temporary's name is its descriptor, a number (a trace figure's
    heatmaps were a `TypeError ... not 'int'`)."""

    def __init__(self, handle: BinaryIO, name: Path) -> None:
        self._handle = handle
        self.name = str(name)

    def write(self, data: bytes) -> int:
        return self._handle.write(data)

    def flush(self) -> None:
        self._handle.flush()

    def seek(self, offset: int, whence: int = 0) -> int:  # matplotlib's test of a file
        return self._handle.seek(offset, whence)

    def tell(self) -> int:
        return self._handle.tell()


def _save_pgf(figure: Any, handle: BinaryIO, output: Path) -> None:
    """The figure's PGF into `handle`: its texts escaped for LaTeX (`_tex`), its images (the
    heatmaps of a trace) written beside `output` as the pgf backend names them, each through
    `write_atomic`, before the PGF that includes them is renamed into place. The backend
    writes them into a private temporary folder, so it never writes through a link."""
    from matplotlib.text import Text

    for text in {id(text): text for text in figure.findobj(Text)}.values():  # each once
        text.set_text(_tex(text.get_text()))
    with tempfile.TemporaryDirectory(prefix=f".{output.name}.", dir=output.parent) as folder:
        named = Path(folder) / output.name
        named.touch()  # the backend draws images only beside a file that exists
        figure.savefig(_NamedFile(handle, named), format="pgf")
        for image in sorted(Path(folder).iterdir()):
            if image != named:
                write_atomic(output.parent / image.name, image.read_bytes())


#: what LaTeX reads as markup in text, as LaTeX writes the character itself (`%` and `^` the
#: pgf backend makes active characters that print themselves)
_TEX_TEXT = str.maketrans({"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}",
                           "$": r"\textdollar{}", "#": r"\#", "&": r"\&", "_": r"\_",
                           "~": r"\textasciitilde{}"})


def _tex(text: str) -> str:
    """A figure's text as LaTeX must read it from a PGF file, which the pgf backend writes as
    it is: what matplotlib draws as text (all of it, or what lies outside its `$...$`) with
    LaTeX's special characters escaped (a run named `cartpole_ctrnn` was a LaTeX error, `$`
    from a name opened math), its mathtext (evo's `$\\sigma$`) left as math."""
    from matplotlib import cbook

    if not cbook.is_math_text(text):
        return text.replace(r"\$", "$").translate(_TEX_TEXT)
    parts = re.split(r"(?<!\\)\$", text)
    return "$".join(part if index % 2 else part.replace(r"\$", "$").translate(_TEX_TEXT)
                    for index, part in enumerate(parts))
