"""How `evo plot` draws for a thesis: smoothed curves, an 8 cm column, PGF for LaTeX.

- **Smoothing** (`--smooth SIGMA`): each curve is convolved with a Gaussian of standard deviation
  SIGMA generations, the kernel cut at 4 sigma and at the curve's length (beyond which it adds
  nothing, so a huge SIGMA costs no more than the curve: the curve's mean), and renormalised
  where it runs off either end of the curve (so the first and last generations are means of the
  generations there are, not pulled towards zero by padding). The raw curve stays, thin and
  faint, under the smooth one, so smoothing never hides what happened. The population band is
  smoothed the same way.
- **Column** (`--column`): a figure 8 cm wide (3.15 in, 2.6 in tall) with 8 pt text, the size a
  two-column paper or a thesis margin figure takes without scaling (scaled figures scale their
  text: 9 in at 10 pt would print at 3 pt), and the legend below the axes in as many columns as
  fit, with short labels, instead of beside them, where it would take half the width; the
  title is what ran (environment, brain, optimizer) unless `--title` says otherwise.
- **PGF** (`--out FILE.pgf`): matplotlib's pgf backend writes PGF/TikZ drawing commands that
  LaTeX typesets with the document's own fonts (`\\input{FILE.pgf}`). It measures text by
  running LaTeX, so it needs a TeX system (pdflatex, lualatex or xelatex, tried in that order)
  on PATH; without one, or when LaTeX fails, `evo plot` says so in one line. A `.pdf` or
  `.svg` needs none. The symbols on the figure are mathtext (`$\\sigma$`), which both the
  pixel backends and LaTeX typeset.
- **Text from outside** (a run folder's or a trace's name, `--title`, a sweep's keys and values,
  a trace's state names) is drawn as it is, through `literal`: no `$` in it starts mathtext
  (`evo train --out 'runs/p$x^$q'` once trained, then crashed drawing fitness.png), and in a
  PGF file it is escaped for LaTeX (`results/plot.py`).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.errors import UserError

__all__ = ["COLUMN_SIZE", "LONGEST_LABEL", "PlotStyle", "check_pgf", "literal", "pgf_texsystem",
           "sigma_text", "smoothed"]

#: 8 cm by 6.6 cm, in inches
COLUMN_SIZE = (8 / 2.54, 2.6)
#: names from outside drawn at most this long (`literal`), where they share a line with others
LONGEST_LABEL = 60
#: what matplotlib's pgf backend can run, in the order evo prefers: pdflatex needs the fewest
#: packages (lualatex and xelatex need fontspec and their OpenType font loaders as well)
TEXSYSTEMS = ("pdflatex", "lualatex", "xelatex")


@dataclass(frozen=True)
class PlotStyle:
    """`smooth`: the Gaussian's sigma in generations (0: raw curves only); `column`: the 8 cm
    column figure."""

    smooth: float = 0.0
    column: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.smooth, bool) or not (isinstance(self.smooth, (int, float))
                                                 and np.isfinite(self.smooth)
                                                 and self.smooth >= 0):
            raise UserError(f"--smooth {self.smooth!r}: must be a number of generations >= 0")
        if not isinstance(self.column, bool):
            raise UserError(f"--column {self.column!r}: must be True or False")

    def figure_size(self, default: tuple[float, float]) -> tuple[float, float]:
        return COLUMN_SIZE if self.column else default

    def rc(self) -> dict[Any, Any]:
        """matplotlib rcParams for the figure (empty: matplotlib's)."""
        if not self.column:
            return {}
        return {"font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8,
                "xtick.labelsize": 7, "ytick.labelsize": 7, "legend.fontsize": 7,
                "legend.title_fontsize": 7, "lines.linewidth": 1.0}


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
