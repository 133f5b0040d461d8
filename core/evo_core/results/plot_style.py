"""How every figure evo writes is sized, lettered and saved: the one rule for fitness plots,
comparisons, sweep plots, traces, networks, mazes and QD archives.

- **Sizes.** Two widths a paper uses: the full text width (`FULL_WIDTH`, 16 cm, the default)
  and one column (`--column`, `COLUMN_WIDTH`, 8 cm), each at its natural size: include it
  without scaling (`\\input{FILE.pgf}`, or `\\includegraphics{FILE.pdf}` with no width), and
  its text prints at the size it was drawn (a 9 in figure scaled into an 8 cm column printed
  its 10 pt text at 3.5 pt). Each figure chooses its height for the width.
- **Text.** Every text is `TEXT_SIZE` (8 pt): titles, axis labels, ticks, legends and colour
  bars alike, so nothing on a page is smaller. A `.pgf` is typeset by LaTeX in the document's
  own roman font (`pgf.rcfonts = False`, `font.family = serif`: each text is set in
  `\\rmfamily` at 8 pt, and the preamble is the document's); the pixel formats draw
  matplotlib's own sans-serif at the same size.
- **Pixels.** A PNG has `PNG_DPI` pixels per inch: 1260 across the full width, so a trace of a
  500-step episode has a column of pixels for every step.
- **Smoothing** (`--smooth SIGMA`): a mean is convolved with a Gaussian of standard deviation
  SIGMA generations, the kernel cut at 4 sigma and at the curve's length (beyond which it adds
  nothing, so a huge SIGMA costs no more than the curve: the curve's mean), and renormalised
  where it runs off either end (the first and last generations are means of the generations
  there are, not pulled towards zero by padding). Only means are smoothed, never a maximum:
  a smoothed best would dip below values a candidate reached and rise above any it reached at
  that generation. The raw curve stays, thin and faint, under the smooth one.
- **PGF** (`--out FILE.pgf`): matplotlib's pgf backend writes PGF/TikZ drawing commands that
  LaTeX typesets with the document's fonts. It measures text by running LaTeX, so it needs a
  TeX system (pdflatex, lualatex or xelatex, tried in that order) on PATH; without one, or
  when LaTeX fails, `evo plot` says so in one line. A `.pdf` or `.svg` needs none. The
  symbols on the figure are mathtext (`$\\sigma$`), which both the pixel backends and LaTeX
  typeset. A figure is made for its format (`PlotStyle.for_output`): a text's font is fixed
  when the text is made, so a figure drawn for a PNG cannot become serif when saved.
- **Text from outside** (a run folder's or a trace's name, `--title`, a sweep's keys and values,
  a trace's state names) is drawn as it is, through `literal`: no `$` in it starts mathtext
  (`evo train --out 'runs/p$x^$q'` once trained, then crashed drawing fitness.png), and in a
  PGF file it is escaped for LaTeX (`results/plot.py`).
"""

from __future__ import annotations

import shutil
import textwrap
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.errors import UserError

__all__ = ["COLUMN_SIZE", "COLUMN_WIDTH", "FULL_WIDTH", "LONGEST_LABEL", "PNG_DPI", "TEXT_SIZE",
           "PlotStyle", "check_pgf", "legend_below", "literal", "output_format",
           "pgf_texsystem",
           "sigma_text", "smoothed", "wrapped"]

#: a paper's column and its full text width, in inches
COLUMN_WIDTH = 8 / 2.54
FULL_WIDTH = 16 / 2.54
#: the fitness figure in a column: 8 cm by 6.6 cm
COLUMN_SIZE = (COLUMN_WIDTH, 2.6)
#: every text of every figure, in points
TEXT_SIZE = 8
#: the width of a glyph, in em, that `wrapped` counts on: DejaVu Sans' lower case and digits
#: average 0.55 em, its capitals and `_` 0.6 to 0.75; a line of mixed text fits at 0.62
GLYPH = 0.62
#: the inches of a figure's height meant for a legend below it (a row, its title, a gap)
LEGEND_ROOM = 0.45
#: a PNG's pixels per inch
PNG_DPI = 200
#: names from outside drawn at most this long (`literal`), where they share a line with others
LONGEST_LABEL = 60
#: what matplotlib's pgf backend can run, in the order evo prefers: pdflatex needs the fewest
#: packages (lualatex and xelatex need fontspec and their OpenType font loaders as well)
TEXSYSTEMS = ("pdflatex", "lualatex", "xelatex")


@dataclass(frozen=True)
class PlotStyle:
    """`smooth`: the Gaussian's sigma in generations (0: raw curves only); `column`: the 8 cm
    column instead of the full width; `pgf`: the figure is for a .pgf file (`for_output`)."""

    smooth: float = 0.0
    column: bool = False
    pgf: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.smooth, bool) or not (isinstance(self.smooth, (int, float))
                                                 and np.isfinite(self.smooth)
                                                 and self.smooth >= 0):
            raise UserError(f"--smooth {self.smooth!r}: must be a number of generations >= 0")
        if not isinstance(self.column, bool):
            raise UserError(f"--column {self.column!r}: must be True or False")

    def for_output(self, output: Path) -> PlotStyle:
        """This style for a figure written to `output` (a .pgf: LaTeX's fonts)."""
        return replace(self, pgf=output_format(output) == "pgf")

    @property
    def width(self) -> float:
        """The figure's width in inches."""
        return COLUMN_WIDTH if self.column else FULL_WIDTH

    def figure_size(self, full_height: float, column_height: float) -> tuple[float, float]:
        """The width and the figure's height (in inches) at that width."""
        return self.width, column_height if self.column else full_height

    def rc(self) -> dict[Any, Any]:
        """matplotlib's rcParams for making and saving the figure (module docstring)."""
        sizes = ("font.size", "axes.titlesize", "axes.labelsize", "xtick.labelsize",
                 "ytick.labelsize", "legend.fontsize", "legend.title_fontsize",
                 "figure.titlesize", "figure.labelsize")
        rc: dict[Any, Any] = dict.fromkeys(sizes, TEXT_SIZE)
        rc.update({"lines.linewidth": 1.0, "axes.linewidth": 0.6, "grid.linewidth": 0.5,
                   "xtick.major.width": 0.6, "ytick.major.width": 0.6,
                   "xtick.major.size": 3.0, "ytick.major.size": 3.0,
                   "legend.handlelength": 1.6, "legend.columnspacing": 1.2,
                   "legend.frameon": False, "savefig.dpi": PNG_DPI, "figure.dpi": 100})
        if self.pgf:
            rc.update({"pgf.rcfonts": False, "font.family": "serif"})
        return rc


def output_format(output: Path) -> str:
    """The image format named by the file's suffix (matplotlib cannot see a name through the
    open temporary file); PNG when there is none."""
    return output.suffix[1:].lower() or "png"


def smoothed(values: NDArray[np.float64], sigma: float) -> NDArray[np.float64]:
    """`values` convolved with a Gaussian of `sigma` samples, renormalised at the ends (module
    docstring); unchanged for sigma 0 or a single value. NaNs are left out of the means."""
    values = np.asarray(values, dtype=np.float64)
    if sigma <= 0 or values.size < 2:
        return values.copy()
    # no offset beyond the curve's length meets two of its values: the kernel stops there, so
    # `--smooth 1e9` is the curve's mean, not a kernel of 8e9 numbers (59.6 GiB)
    radius = int(min(values.size - 1, max(1.0, np.ceil(4 * sigma))))
    offsets = np.arange(-radius, radius + 1, dtype=np.float64)
    with np.errstate(over="ignore", under="ignore"):  # a tiny sigma: 0 beside the centre
        kernel = np.exp(-0.5 * (offsets / sigma) ** 2)
    finite = np.isfinite(values)
    # "full" then the middle: "same" would take the kernel's length when it is the longer
    middle = slice(radius, radius + values.size)
    weights = np.convolve(finite.astype(np.float64), kernel, mode="full")[middle]
    sums = np.convolve(np.where(finite, values, 0.0), kernel, mode="full")[middle]
    with np.errstate(invalid="ignore", divide="ignore"):
        out: NDArray[np.float64] = np.where(weights > 0, sums / weights, np.nan)
    return out


def literal(text: str, limit: int | None = None) -> str:
    """`text`, which a user or a file chose, as matplotlib draws it character for character:
    each `$` escaped, since two of them make mathtext of what lies between (`p$x^$q` is a
    parse error), and control characters as escapes (a NUL has no glyph, a newline breaks a
    legend entry); cut to `limit` characters when given, so a hostile name cannot crowd out
    the axes. evo's own mathtext (`sigma_text`) is joined to it afterwards."""
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    if limit is not None and len(shown) > limit:
        shown = shown[:limit - 1] + "…"
    return shown.replace("$", r"\$")


def sigma_text(sigma: float) -> str:
    """"sigma = 2" as mathtext, typeset alike by Agg and by LaTeX (pdflatex has no Greek in
    text)."""
    return rf"$\sigma$ = {sigma:g}"


def pgf_texsystem() -> str | None:
    """The TeX system matplotlib's pgf backend can run here, or None."""
    for name in TEXSYSTEMS:
        if shutil.which(name) is not None:
            return name
    return None


def check_pgf(output: Any) -> str:
    """The TeX system to write `output` (a .pgf file) with; a UserError without one."""
    texsystem = pgf_texsystem()
    if texsystem is None:
        raise UserError(f"--out {output}: matplotlib's pgf backend measures text by running "
                        "LaTeX, and no lualatex, pdflatex or xelatex is on PATH; install a TeX "
                        "system (e.g. texlive-latex-base and texlive-pictures), or write a .pdf "
                        "or .svg, which \\includegraphics takes")
    return texsystem


def legend_below(figure: Any, handles: list[Any], labels: list[str], title: str | None = None
                 ) -> Any:
    """The figure's legend below its axes (beside them it would take a quarter of the width,
    inside them it would cover data), in as many columns as fit the figure's width: one row
    when they fit, fewer columns, row after row, when they do not; a label or title wider
    than the figure in lines. A legend taller than `LEGEND_ROOM` makes the figure as much
    taller."""
    renderer = figure.canvas.get_renderer()
    width = figure.get_figwidth()
    labels = [wrapped(label, width - 0.6) for label in labels]  # room for the handle
    title = None if title is None else wrapped(title, width)
    columns = max(len(labels), 1)
    legend = figure.legend(handles, labels, loc="outside lower center", ncols=columns,
                           title=title)
    while columns > 1 and legend.get_window_extent(renderer).width > 0.98 * figure.bbox.width:
        legend.remove()
        columns -= 1
        legend = figure.legend(handles, labels, loc="outside lower center", ncols=columns,
                               title=title)
    # the figure's height allows a legend of one row; a taller one makes the figure taller
    # rather than the axes shorter (many compared runs squeezed them to a strip)
    height = legend.get_window_extent(renderer).height / figure.dpi
    if height > LEGEND_ROOM:
        figure.set_figheight(figure.get_figheight() + height - LEGEND_ROOM)
    return legend


def wrapped(text: str, inches: float) -> str:
    """`text` (drawn as it is: `literal`) in lines that fit `inches` at `TEXT_SIZE` (a
    glyph `GLYPH` em wide), each of its own lines in two at most, the second cut short
    with "…" if need be: a long folder name or setting stays within its panel. A word is
    split only when it is much longer than a line ("observation" stays whole on a line of
    ten)."""
    characters = max(8, int(inches * 72 / (GLYPH * TEXT_SIZE)))
    dollar = "\0"  # an escaped `$` (`literal`) is one character, never split from its `\\`
    out = []
    for paragraph in text.replace(r"\$", dollar).split("\n"):
        lines = textwrap.wrap(paragraph, characters, break_long_words=False,
                              break_on_hyphens=False) or [""]
        if max(len(line) for line in lines) > 1.25 * characters:  # a name without spaces
            lines = textwrap.wrap(paragraph, characters, break_on_hyphens=False)
        if len(lines) > 2:
            lines = [lines[0], textwrap.shorten(" ".join(lines[1:]), characters,
                                                placeholder="…")]
        out += lines
    return "\n".join(out).replace(dollar, r"\$")
