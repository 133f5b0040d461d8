"""fitness.png: best and mean fitness per generation over the population's worst-best band,
and, for runs with novelty search, the best and mean novelty on a second y axis (novelty and
fitness have unrelated scales).

The band is the population's range (log.csv's `worst` and `best`), not mean ± std: a std band
leaves the range a return can take (below 0 and above 500 on CartPole), a range never does. The
legend sits outside the axes, so it covers no curve however many runs are compared.

`PlotStyle` (results/plot_style.py) smooths the curves (the raw ones kept faint beneath), sets
an 8 cm column figure with the legend below, and `.pgf` output goes through matplotlib's pgf
backend.
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
    literal,
    sigma_text,
    smoothed,
)
from evo_core.results.run_folder import RunFolder

__all__ = ["BAND_LABEL", "fitness_figure", "plot_runs", "save_figure"]

BAND_LABEL = "population worst–best"
#: Shorter legend entries in an 8 cm column
COLUMN_LABELS = {BAND_LABEL: "worst–best",
                 "novelty best (dotted, right axis)": "novelty best (right)",
                 "novelty mean (dash-dot, right axis)": "novelty mean (right)"}
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
    return _Curves(column("generation"), column("best"), column("mean"), column("worst"),
                   novelty)


def _description(run_dir: Path) -> list[str]:
    """[environment, brain, optimizer] from the run's config.json, as drawn (`literal`), or []
    if it is unreadable."""
    try:
        config = RunFolder(run_dir).read_config()
        environment = config["environment"]  # an id, or a table with one
        parts = [environment["id"] if isinstance(environment, dict) else environment,
                 config["brain"]["type"], config["optimizer"]["type"]]
        return [literal(str(part), LONGEST_LABEL) for part in parts]
    except (UserError, KeyError, TypeError):
        return []


def _name(run_dir: Path) -> str:
    """A run folder's name, as drawn."""
    return literal(run_dir.name)


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
        labels.append(f"{_name(run_dir)} ({' · '.join(own)})" if own else _name(run_dir))
    return title, labels


def _line(axes: Any, x: np.ndarray, y: np.ndarray, style: PlotStyle, **kwargs: Any) -> None:
    """One curve; smoothed, with the raw one thin and faint beneath it."""
    if style.smooth > 0:
        axes.plot(x, y, color=kwargs["color"], lw=0.6, alpha=0.3, ls=kwargs.get("ls", "-"),
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
    from matplotlib.patches import Patch

    figure, axes = plt.subplots(figsize=style.figure_size((9, 4.5)), dpi=100,
                                layout="constrained")
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    single = len(run_dirs) == 1
    if single:  # the legend's title says what ran: environment · brain · optimizer
        default_title, run_labels = _name(run_dirs[0]), [""]
        legend_title = " · ".join(_description(run_dirs[0])) or None
    else:
        (default_title, run_labels), legend_title = _comparison_labels(run_dirs), None
    for index, (run, run_label) in enumerate(zip(curves, run_labels)):
        colour = colours[index % len(colours)]
        axes.fill_between(run.generation, smoothed(run.worst, style.smooth),
                          smoothed(run.best, style.smooth), color=colour, alpha=0.15, lw=0,
                          label=BAND_LABEL if single else "_band")
        _line(axes, run.generation, run.best, style, color=colour, lw=1.8,
              label="best" if single else run_label)
        _line(axes, run.generation, run.mean, style, color=colour, lw=1.0, ls="--",
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
        _plot_novelty(axes.twinx(), curves, novelty_colours, style)
        grey = NOVELTY_COLOUR if single else "0.3"
        handles += [Line2D([], [], color=grey, lw=1.4, ls=":"),
                    Line2D([], [], color=grey, lw=1.0, ls="-.")]
        labels += ["novelty best (dotted, right axis)", "novelty mean (dash-dot, right axis)"]
    if style.smooth > 0:
        sigma = sigma_text(style.smooth)
        suffix = sigma if style.column else f"smoothed, {sigma}"
        labels = [f"{label} ({suffix})" if label in ("best", "mean") else label
                  for label in labels]
    if style.column:  # below the axes (beside them it would take half of 8 cm), short labels
        labels = [COLUMN_LABELS.get(label, label) for label in labels]
        figure.legend(handles, labels, loc="outside lower center", ncols=min(3, len(labels)),
                      handlelength=1.5, columnspacing=1.0)
    else:
        figure.legend(handles, labels, loc="outside right upper", fontsize="small",
                      title=legend_title, title_fontsize="small")
    axes.set_xlabel("generation")
    axes.set_ylabel("fitness" if style.column else "fitness (mean episode return)")
    title = None if title is None else literal(title)
    axes.set_title(title or default_title if not style.column or title
                   else " · ".join(_description(run_dirs[0])) if single else default_title)
    axes.grid(alpha=0.3)
    return figure


def _plot_novelty(axes: Any, curves: list[_Curves], colours: list[str],
                  style: PlotStyle) -> None:
    for index, run in enumerate(curves):
        if run.novelty is None:
            continue
        colour = colours[index % len(colours)]
        _line(axes, run.generation, run.novelty[0], style, color=colour, lw=1.4, ls=":")
        _line(axes, run.generation, run.novelty[1], style, color=colour, lw=1.0, ls="-.")
    axes.set_ylabel("novelty (mean distance to the k nearest)" if not style.column
                    else "novelty")


def plot_runs(run_dirs: list[Path], output: Path, title: str | None = None,
              style: PlotStyle | None = None) -> Path:
    style = style or PlotStyle()
    if _format(output) == "pgf":
        check_pgf(output)  # before anything is drawn
    figure = fitness_figure(run_dirs, title, style)
    save_figure(figure, output, style)
    return output


def save_figure(figure: Any, output: Path, style: PlotStyle | None = None) -> None:
    """Write `figure` to `output` (its format by the suffix; .pgf through the pgf backend)
    atomically, then close it. Temporaries of `output` that a killed writer left (a `kill -9`
    during training's last plot) are removed first, those of a live writer kept."""
    import matplotlib
    import matplotlib.pyplot as plt  # after the figure chose the Agg backend

    style = style or PlotStyle()
    rc = dict(style.rc())
    if _format(output) == "pgf":
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
    said in one line."""
    from matplotlib.backends.backend_pgf import LatexError

    try:
        if _format(output) == "pgf":
            _save_pgf(figure, handle, output)
        else:
            figure.savefig(handle, format=_format(output))
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


def _format(output: Path) -> str:
    """The image format named by the file's suffix (matplotlib cannot see a name through the
    open temporary file); PNG when there is none."""
    return output.suffix[1:].lower() or "png"
