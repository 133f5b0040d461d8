"""`evo plot RUN --maze`: the figure a novelty-search paper shows on a maze task, drawn with
matplotlib from arrays (`MapView`; `running/planar_map.py` reads them from a run folder).

The walls are black segments; the start (a green circle) and the goal (a gold star) are marked
and named in the legend; the final positions of the run's novelty archive are small blue points
(when the run has them); the champion's path is a red line from the start to where its episode
ended (a red cross). The axes are the map's x and y at equal scale (a unit is as long across as
up), the view the walls, the path and the archive together span, with a margin. The legend
stands below the axes, outside them, so it never covers the map (with `--column`, in short
words).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.results.plot_style import LONGEST_LABEL, PlotStyle, legend_below, literal, wrapped

__all__ = ["ARCHIVE", "PATH", "MapView", "PlanarMapArrays", "draw_map", "map_axes", "maze_figure",
           "map_extent"]

FloatArray = NDArray[np.float64]

#: the colours of the archive's points and the champion's path (matplotlib's tab10 blue, red)
ARCHIVE, PATH = "#1f77b4", "#d62728"
START, GOAL = "#2ca02c", "#e6ab02"
#: the inches a square map's figure has beyond its width, for the title and the legend
EXTRA_HEIGHT = 1.0
#: with `--column`: the figure's height for a square map above the legend
COLUMN_HEIGHT = 4.0
#: the legend's entries; with `--column` shorter ones, three to a row
LABELS = {"archive": "novelty archive: final positions", "path": "champion's path",
          "end": "champion's end"}
COLUMN_LABELS = {"archive": "archive", "path": "path", "end": "path's end"}
#: the margin round what is drawn, as a fraction of its larger side
MARGIN = 0.04


@dataclass(frozen=True)
class PlanarMapArrays:
    """An `IPlanarMap`'s walls (n, 4), start (2,) and goal (2,), checked finite, and whether
    its y grows downwards."""

    walls: FloatArray
    start: FloatArray
    goal: FloatArray
    y_down: bool = False


@dataclass(frozen=True)
class MapView:
    """What the figure draws: the environment's id, the map, the champion's path (steps + 1,
    2, the first row the start), and the archive's final positions (n, 2) or, when none are
    drawn, None and why not (`no_archive`, one line)."""

    environment: str
    map: PlanarMapArrays
    path: FloatArray
    archive: FloatArray | None
    no_archive: str | None


def maze_figure(view: MapView, title: Sequence[str], style: PlotStyle | None = None) -> Any:
    """The figure (a matplotlib Figure) of `view`; `title` is its lines, each drawn as it is
    (`literal`, at most `LONGEST_LABEL` characters: a long folder name stays on the figure)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    style = style or PlotStyle()
    with matplotlib.rc_context(style.rc()):
        return _draw(plt, view, "\n".join(literal(line, LONGEST_LABEL) for line in title),
                     style)


def _draw(plt: Any, view: MapView, title: str, style: PlotStyle) -> Any:
    figure, axes = plt.subplots(figsize=_size(view, style), layout="constrained")
    scale = 0.6 if style.column else 1.0
    labels = COLUMN_LABELS if style.column else LABELS
    if view.archive is not None and len(view.archive):
        axes.scatter(*view.archive.T, s=9 * scale, color=ARCHIVE, alpha=0.6, linewidths=0,
                     zorder=2, label=f"{labels['archive']} ({len(view.archive)})")
    path = view.path
    axes.plot(*path.T, color=PATH, lw=1.5 * scale, zorder=3,
              label=f"{labels['path']} ({len(path) - 1} steps)")
    axes.plot(*path[-1], ls="", marker="X", ms=8 * scale, color=PATH, markeredgecolor="white",
              markeredgewidth=0.5, zorder=5, label=labels["end"])
    draw_map(axes, view.map, scale)
    low, high = _extent(view)
    map_axes(axes, view.map, low, high)
    axes.set_title(wrapped(title, style.width))
    handles, names = axes.get_legend_handles_labels()
    legend_below(figure, handles, names)
    return figure


def draw_map(axes: Any, planar: PlanarMapArrays, scale: float) -> None:
    """The walls (black), the start (a green circle) and the goal (a gold star), labelled for
    a legend: what `--maze` draws under the path and evo-qd's archive under its cells."""
    from matplotlib.collections import LineCollection

    axes.add_collection(LineCollection(list(planar.walls.reshape(-1, 2, 2)), colors="black",
                                       linewidths=2.0 * scale, capstyle="round", zorder=4,
                                       label="walls"))
    axes.plot(*planar.start, ls="", marker="o", ms=10 * scale, color=START,
              markeredgecolor="black", markeredgewidth=0.6, zorder=6, label="start")
    axes.plot(*planar.goal, ls="", marker="*", ms=16 * scale, color=GOAL,
              markeredgecolor="black", markeredgewidth=0.6, zorder=6, label="goal")


def map_axes(axes: Any, planar: PlanarMapArrays, low: FloatArray, high: FloatArray) -> None:
    """The map's x and y at equal scale over [low, high], y downwards where the map says so."""
    axes.set_xlim(low[0], high[0])
    axes.set_ylim(*((high[1], low[1]) if planar.y_down else (low[1], high[1])))
    axes.set_aspect("equal")
    axes.set_xlabel("x")
    axes.set_ylabel("y")


def _size(view: MapView, style: PlotStyle) -> tuple[float, float]:
    """The figure's inches: the width of `SIZE` (or the column), and a height that fits the
    map's own shape at that width, so a wide maze (the published medium maze is 2.2 times as
    wide as high) leaves no blank bands above and below it. A square map gets the height of
    `SIZE` (or `COLUMN_HEIGHT`), whose part beyond the width is the title and the legend."""
    width = style.width
    square = COLUMN_HEIGHT if style.column else width + EXTRA_HEIGHT
    low, high = _extent(view)
    aspect = float((high[1] - low[1]) / max(high[0] - low[0], 1e-9))
    return width, (square - width) + width * min(max(aspect, 0.25), 2.0)


def _extent(view: MapView) -> tuple[FloatArray, FloatArray]:
    """The corners of the map, the path and the archive (`map_extent`)."""
    points = [view.path] + ([view.archive] if view.archive is not None else [])
    return map_extent(view.map, points)


def map_extent(planar: PlanarMapArrays, points: list[FloatArray]
               ) -> tuple[FloatArray, FloatArray]:
    """The lower left and upper right corners of the map and `points` (each (n, 2)), with a
    margin (the collection of walls sets no limits)."""
    every = np.concatenate([planar.walls.reshape(-1, 2), planar.start[None, :],
                            planar.goal[None, :], *points])
    low, high = np.min(every, axis=0), np.max(every, axis=0)
    margin = MARGIN * max(float(np.max(high - low)), 1.0)
    return low - margin, high + margin
