"""archive.png: a quality-diversity archive (an `ArchiveGrid`, evo-qd's) drawn in the task's
own terms.

Each cell of the grid over the first two descriptor values is coloured by the fitness of its
elite, on a colour bar beside the axes whose scale runs from the archive's least to its
greatest elite; an empty cell is left blank (white), so where the search never went shows. The
axes are named for what the descriptor means (`ArchiveAxes`, `running/archive_figure.py`):
on a map (an `IPlanarMap` whose final position is the descriptor) they are the map's x and y
at equal scale, the cells lie under the maze's walls with its start and goal marked, as `evo
plot --maze` draws them (`maze_plot.draw_map`), y downwards where the map says so; otherwise
each axis says which value of which source it is. A descriptor of one value is a bar per
filled cell, as high as its elite's fitness. The title says what ran, the generation and how
many cells are filled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.contract.protocols import ArchiveGrid
from evo_core.results.maze_plot import PlanarMapArrays, draw_map, map_axes, map_extent
from evo_core.results.plot_style import PlotStyle, legend_below, literal, wrapped

__all__ = ["ArchiveAxes", "EMPTY_LABEL", "FITNESS_LABEL", "archive_figure"]

#: the colour bar's label
FITNESS_LABEL = "fitness of the cell's elite (mean return)"
EMPTY_LABEL = "empty cell (white)"
Floats = NDArray[np.float64]


@dataclass(frozen=True)
class ArchiveAxes:
    """What the grid's dimensions mean: one name per dimension, and the map the descriptor is
    a position on (None when it is none)."""

    names: tuple[str, ...]
    map: PlanarMapArrays | None = None


def archive_figure(grid: ArchiveGrid, meaning: ArchiveAxes, title: str,
                   style: PlotStyle | None = None) -> Any:
    """The figure (a matplotlib Figure) of `grid`; `title` is drawn as it is (`literal`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    style = style or PlotStyle()
    with matplotlib.rc_context(style.rc()):
        return _draw(plt, grid, meaning, literal(title), style)


def _edges(grid: ArchiveGrid) -> list[Floats]:
    return [np.linspace(grid.lower[d], grid.upper[d], grid.objective.shape[d] + 1)
            for d in range(grid.objective.ndim)]


def _draw(plt: Any, grid: ArchiveGrid, meaning: ArchiveAxes, title: str,
          style: PlotStyle) -> Any:
    figure, axes = plt.subplots(figsize=_size(grid, meaning.map, style), layout="constrained")
    if grid.objective.ndim == 1:
        _bars(axes, grid, meaning, style)
    else:
        _cells(figure, axes, grid, meaning, style)
    axes.set_title(wrapped(title + "\n" + _filled(grid), style.width))
    return figure


def _bars(axes: Any, grid: ArchiveGrid, meaning: ArchiveAxes, style: PlotStyle) -> None:
    """One descriptor value: a bar per filled cell, as high as its elite's fitness (height
    carries the number; no colour needed)."""
    (edges,) = _edges(grid)
    filled = np.isfinite(grid.objective)
    axes.bar(edges[:-1][filled], grid.objective[filled], width=np.diff(edges)[filled],
             align="edge", color="tab:blue", edgecolor="white", lw=0.3)
    axes.set_xlim(edges[0], edges[-1])
    axes.set_xlabel(wrapped(literal(meaning.names[0]), style.width * 0.8))
    axes.set_ylabel(wrapped(FITNESS_LABEL, 1.6))
    axes.grid(alpha=0.3, axis="y")


def _cells(figure: Any, axes: Any, grid: ArchiveGrid, meaning: ArchiveAxes,
           style: PlotStyle) -> None:
    """Two descriptor values: a cell per grid cell coloured by its elite's fitness, on the map
    when there is one."""
    from matplotlib.patches import Patch

    x_edges, y_edges = _edges(grid)
    filled = np.isfinite(grid.objective)
    low = float(np.min(grid.objective[filled])) if filled.any() else 0.0
    high = float(np.max(grid.objective[filled])) if filled.any() else 1.0
    high = high if high > low else low + 1.0
    mesh = axes.pcolormesh(x_edges, y_edges, np.ma.masked_invalid(grid.objective.T),
                           cmap="viridis", vmin=low, vmax=high, zorder=1, rasterized=True)
    axes.add_patch(_outline(x_edges, y_edges))
    handles: list[Any] = [Patch(facecolor="white", edgecolor="0.5", lw=0.6)]
    labels = [EMPTY_LABEL]
    planar = meaning.map
    if planar is not None:
        draw_map(axes, planar, 0.6 if style.column else 1.0)
        map_axes(axes, planar, *map_extent(planar, [_corners(grid)]))
        more, names = axes.get_legend_handles_labels()
        handles, labels = more + handles, names + labels
    else:
        axes.set_xlim(x_edges[0], x_edges[-1])
        axes.set_ylim(y_edges[0], y_edges[-1])
        axes.set_xlabel(wrapped(literal(meaning.names[0]), style.width * 0.8))
        axes.set_ylabel(wrapped(literal(meaning.names[1]), 2.0))
    # beside the axes as drawn (an equal-aspect map is narrower or shorter than its slot),
    # as tall as they are
    colour_bar = figure.colorbar(mesh, cax=axes.inset_axes((1.03, 0.0, 0.035, 1.0)))
    colour_bar.set_label(wrapped(FITNESS_LABEL, 2.0))
    legend_below(figure, handles, labels)


def _corners(grid: ArchiveGrid) -> Floats:
    """The lower left and upper right corners of the grid's range, (2, 2)."""
    return np.stack([grid.lower, grid.upper])


def _outline(x_edges: Floats, y_edges: Floats) -> Any:
    """The archive's range, a thin grey frame: where a cell could be."""
    from matplotlib.patches import Rectangle

    return Rectangle((x_edges[0], y_edges[0]), x_edges[-1] - x_edges[0],
                     y_edges[-1] - y_edges[0], fill=False, edgecolor="0.5", lw=0.6, zorder=2)


def _filled(grid: ArchiveGrid) -> str:
    said = f"generation {grid.generation}: {grid.filled} of {grid.cells} cells filled"
    if grid.descriptors > grid.objective.ndim:
        said += (f"; each the best over descriptor values {grid.objective.ndim + 1}"
                 f"–{grid.descriptors}")
    return said


def _size(grid: ArchiveGrid, planar: PlanarMapArrays | None, style: PlotStyle
          ) -> tuple[float, float]:
    """The width of the style; a height that fits the map's (or the grid's) shape at that
    width beside the colour bar, above the legend and below the title."""
    width = style.width
    if grid.objective.ndim == 1:
        return style.figure_size(2.6, 2.2)
    if planar is not None:
        low, high = map_extent(planar, [_corners(grid)])
        aspect = float((high[1] - low[1]) / max(high[0] - low[0], 1e-9))
    else:
        aspect = 0.75
    plot = (width - (0.9 if style.column else 1.1)) * min(max(aspect, 0.25), 1.5)
    return width, plot + (1.3 if style.column else 1.2)
