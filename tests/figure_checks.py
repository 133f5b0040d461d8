"""What every figure evo writes is checked for, read back through matplotlib's own layout
engine: no two texts drawn over each other, no text cut off by the figure's edge, no legend
over an axes, panels that are not blank in the saved image, and every text at 8 pt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from evo_core.results.plot_style import PNG_DPI, TEXT_SIZE

#: pixels (at the figure's dpi) two boxes may share at their edges, antialiasing's fringe
TOLERANCE = 0.5


def drawn_texts(figure: Any) -> list[Any]:
    """The texts the figure draws, after a draw: every visible, non-empty Text, tick labels
    only of the ticks within their axis' view (an axis holds Text objects for ticks it
    does not draw)."""
    from matplotlib.text import Text

    figure.canvas.draw()
    ticks: dict[int, Any] = {}
    drawn_ticks: set[int] = set()
    for axes in all_axes(figure):
        for axis in (axes.xaxis, axes.yaxis):
            shown = axes.axison and axis.get_visible()  # `set_axis_off` keeps its ticks
            low, high = sorted(axis.get_view_interval())
            margin = 1e-9 * max(1.0, abs(high - low))
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                inside = low - margin <= tick.get_loc() <= high + margin
                for label in (tick.label1, tick.label2):
                    ticks[id(label)] = label
                    if shown and inside and label.get_visible():
                        drawn_ticks.add(id(label))
    texts = []
    for text in {id(t): t for t in figure.findobj(Text)}.values():
        if not text.get_visible() or not text.get_text().strip():
            continue
        if id(text) in ticks and id(text) not in drawn_ticks:
            continue
        if text.axes is not None and not text.axes.get_visible():
            continue
        texts.append(text)
    return texts


def all_axes(figure: Any) -> list[Any]:
    """The figure's axes and their inset axes (colour bars), which `figure.axes` leaves out."""
    from matplotlib.axes import Axes

    return list({id(axes): axes for axes in figure.findobj(Axes)}.values())


def text_problems(figure: Any) -> list[str]:
    """Texts drawn over one another, or past the figure's edge, each said in a line."""
    texts = drawn_texts(figure)
    renderer = figure.canvas.get_renderer()
    boxes = np.array([text.get_window_extent(renderer).extents for text in texts])
    problems = []
    page = figure.bbox
    for text, (x0, y0, x1, y1) in zip(texts, boxes):
        if x0 < page.x0 - 1 or y0 < page.y0 - 1 or x1 > page.x1 + 1 or y1 > page.y1 + 1:
            problems.append(f"{text.get_text()!r} is cut by the figure's edge")
    x0, y0, x1, y1 = (boxes[:, i] for i in range(4))
    apart = ((x1[:, None] - TOLERANCE <= x0[None, :] + TOLERANCE)
             | (x1[None, :] - TOLERANCE <= x0[:, None] + TOLERANCE)
             | (y1[:, None] - TOLERANCE <= y0[None, :] + TOLERANCE)
             | (y1[None, :] - TOLERANCE <= y0[:, None] + TOLERANCE))
    for i, j in zip(*np.nonzero(np.triu(~apart, k=1))):
        problems.append(f"{texts[i].get_text()!r} overlaps {texts[j].get_text()!r}")
    return problems


def legend_problems(figure: Any) -> list[str]:
    """Legends that lie over an axes (over data)."""
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    legends = list(figure.legends) + [axes.get_legend() for axes in figure.axes
                                      if axes.get_legend() is not None]
    problems = []
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for axes in figure.axes:
            if legend.axes is axes or not axes.get_visible() or not axes.axison:
                continue
            if box.overlaps(axes.get_window_extent(renderer).padded(-TOLERANCE)):
                problems.append(f"the legend {[t.get_text() for t in legend.get_texts()]} "
                                f"lies over the axes {axes.get_label() or axes.get_ylabel()!r}")
    return problems


def text_sizes(figure: Any) -> set[float]:
    """The sizes, in points, of the texts the figure draws."""
    return {round(text.get_fontsize(), 3) for text in drawn_texts(figure)}


def check_figure(figure: Any) -> None:
    """Every check above: no overlapping or cut text, no legend over an axes, all at 8 pt."""
    problems = text_problems(figure) + legend_problems(figure)
    assert not problems, "\n".join(problems)
    assert text_sizes(figure) == {TEXT_SIZE}, text_sizes(figure)


def panel_colours(png: Path, figure: Any, axes: Any) -> int:
    """How many distinct colours the saved PNG `png` of `figure` has inside `axes` (a blank
    panel has one or two: its background and its frame)."""
    from PIL import Image

    with Image.open(png) as image:
        pixels = np.asarray(image.convert("RGB"))
    scale = PNG_DPI / figure.dpi
    box = axes.get_window_extent()
    height = pixels.shape[0]
    top, bottom = int(height - box.y1 * scale) + 2, int(height - box.y0 * scale) - 2
    left, right = int(box.x0 * scale) + 2, int(box.x1 * scale) - 2
    inside = pixels[top:bottom, left:right].reshape(-1, 3)
    return len(np.unique(inside, axis=0))


def png_size(png: Path) -> tuple[int, int]:
    from PIL import Image

    with Image.open(png) as image:
        width, height = image.size
        return width, height
