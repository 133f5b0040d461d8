"""`evo plot RUN --network`: the champion's network, drawn from the `NetworkGraph` a brain that
declares `INetworkGraph` gives (NEAT), with matplotlib alone (neat-python's drawing needs the
graphviz program).

Layout, in columns left to right: the inputs, the hidden nodes by depth, the outputs. A hidden
node's depth is the length of the longest path of enabled connections that reaches it from the
inputs, back edges left out (`network_layout`); within a column the nodes are ordered by the
mean height of what feeds them (fewer crossings), inputs and outputs in their own order.

Connections: an enabled one is a line whose width is its |weight| relative to the largest drawn
and whose colour is its sign; one that goes back (to a node of the same or an earlier column)
is dashed and curved, so that it is not hidden under a forward one; a self-loop is a dashed
circle above its node. Disabled connections are drawn, dotted and grey, only when asked for.
Node shapes and colours tell inputs, hidden nodes and outputs apart; each node shows its key,
inputs and outputs their labels beside them. The legend says all of this. Node sizes follow
the figure and the tallest column, so that nodes never overlap however many inputs a task
has.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.contract.protocols import NetworkGraph
from evo_core.results.plot_style import LONGEST_LABEL, PlotStyle, legend_below, literal, wrapped

__all__ = ["NEGATIVE", "POSITIVE", "NetworkLayout", "network_figure", "network_layout"]

#: the colours of positive and negative weights (the ends of ColorBrewer's RdBu)
POSITIVE, NEGATIVE = "#2166ac", "#b2182b"
DISABLED = "0.55"
#: the line style of a connection that goes back (recurrent), which is also curved
RECURRENT = (0, (4, 1.5))
#: per kind: matplotlib marker, fill, legend entry
NODE_STYLES = {"input": ("s", "#fdd49e", "input"),
               "hidden": ("o", "white", "hidden"),
               "output": ("D", "#c7e9c0", "output")}
#: largest node (points across) and widest connection (points), before they are fitted
LARGEST_NODE, WIDEST_LINE = 22.0, 3.0
#: how near (in the tallest column's node spacing) a line may pass a node it does not join
NODE_CLEARANCE = 0.35


@dataclass(frozen=True)
class NetworkLayout:
    """Where each node of a graph goes: its column (inputs 0, outputs the last) and its (x, y)
    in data coordinates; and each connection's end nodes as indices into the graph's nodes."""

    columns: NDArray[np.int64]
    positions: NDArray[np.float64]
    sources: NDArray[np.intp]
    targets: NDArray[np.intp]

    def back(self) -> NDArray[np.bool_]:
        """Per connection: does it go back, to a node of the same or an earlier column (drawn
        curved, and left out of the depths)?"""
        back: NDArray[np.bool_] = self.columns[self.sources] >= self.columns[self.targets]
        return back


def network_layout(graph: NetworkGraph) -> NetworkLayout:
    """The columns and positions of the module docstring. Depth is found a level at a time:
    each round places the hidden nodes that no unplaced node feeds, one past the deepest node
    that feeds them. When only cycles are left, one node is placed where a placed node enters
    a cycle (the nearest the inputs, then the least key: in NEAT the oldest), so the
    connections that close the cycle through it become back edges (a cycle no placed node
    enters is entered at its least key). At most one round per hidden node, each a few
    operations on the (small) adjacency matrix."""
    order = np.argsort(graph.keys)
    sources = order[np.searchsorted(graph.keys, graph.sources, sorter=order)]
    targets = order[np.searchsorted(graph.keys, graph.targets, sorter=order)]
    kinds = np.array(graph.kinds, dtype=object)
    hidden, outputs = kinds == "hidden", kinds == "output"
    count = len(graph.keys)
    # what can set a hidden node's depth: enabled links into it from an input or hidden node
    feeding = graph.enabled & hidden[targets] & ~outputs[sources] & (sources != targets)
    adjacency = np.zeros((count, count), dtype=bool)
    adjacency[sources[feeding], targets[feeding]] = True
    depth = np.zeros(count, dtype=np.int64)
    placed = ~hidden
    while not placed.all():
        reach = np.where(adjacency & placed[:, None], depth[:, None] + 1, 1).max(axis=0)
        ready = ~placed & ~(adjacency & ~placed[:, None]).any(axis=0)
        if not ready.any():  # only cycles left: enter one
            entered = ~placed & (adjacency & placed[:, None]).any(axis=0)
            candidates = np.flatnonzero(entered if entered.any() else ~placed)
            first = candidates[np.lexsort((graph.keys[candidates], reach[candidates]))[0]]
            ready = np.arange(count) == first
        depth[ready] = reach[ready]
        placed |= ready
    last = int(depth[hidden].max(initial=0)) + 1
    columns = np.where(outputs, last, depth)
    return NetworkLayout(columns, _positions(graph, columns, sources, targets), sources,
                         targets)


def _positions(graph: NetworkGraph, columns: NDArray[np.int64], sources: NDArray[np.intp],
               targets: NDArray[np.intp]) -> NDArray[np.float64]:
    """x is the column; y spreads each column's nodes evenly over the tallest column's height
    (one unit apart in the tallest), centred on 0, the first on top:
    inputs and outputs in the graph's order, hidden nodes by the mean height of the nodes of
    earlier columns that feed them (those fed by none in the middle), ties by key."""
    count, last = len(columns), int(np.max(columns, initial=0))
    sizes = np.bincount(columns, minlength=last + 1)
    spacing = np.max(sizes, initial=1) / np.maximum(sizes, 1)
    heights = np.zeros(count)
    forward = graph.enabled & (columns[sources] < columns[targets])
    for column in range(last + 1):
        members = np.flatnonzero(columns == column)
        if 0 < column < last:
            into = forward & (columns[sources] < column)
            sums = np.bincount(targets[into], heights[sources[into]], minlength=count)
            feeds = np.bincount(targets[into], minlength=count)
            mean = np.divide(sums, feeds, out=np.zeros(count), where=feeds > 0)
            members = members[np.lexsort((graph.keys[members], -mean[members]))]
        heights[members] = spacing[column] * ((len(members) - 1) / 2 - np.arange(len(members)))
    return np.stack([columns.astype(np.float64), heights], axis=1)


def network_figure(graph: NetworkGraph, title: str | Sequence[str],
                   style: PlotStyle | None = None, show_disabled: bool = False) -> Any:
    """The figure (a matplotlib Figure) of `graph`; `title` (a text, or its lines) is drawn as
    it is (`literal`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    style = style or PlotStyle()
    with matplotlib.rc_context(style.rc()):
        lines = [title] if isinstance(title, str) else list(title)
        return _draw(plt, graph, "\n".join(literal(line) for line in lines), style,
                     show_disabled)


def _draw(plt: Any, graph: NetworkGraph, title: str, style: PlotStyle,
          show_disabled: bool) -> Any:
    layout = network_layout(graph)
    tallest = int(np.max(np.bincount(layout.columns), initial=0))
    # taller once a column holds more nodes than the default height fits legibly
    figure, axes = plt.subplots(figsize=style.figure_size(max(3.6, 1.2 + 0.22 * tallest),
                                                          max(2.8, 1.2 + 0.16 * tallest)),
                                layout="constrained")
    axes.set_axis_off()
    enabled = int(graph.enabled.sum())
    hidden = graph.kinds.count("hidden")
    summary = (f"{_count(len(graph.keys), 'node')} ({hidden} hidden), {enabled} of "
               f"{_count(len(graph.enabled), 'connection')} enabled")
    axes.set_title(f"{wrapped(title, style.width)}\n{summary}")
    if not len(graph.keys):
        axes.text(0.5, 0.5, "the genome expresses no node", ha="center", va="center",
                  transform=axes.transAxes)
        return figure
    width, height = figure.get_size_inches()
    columns = int(np.max(layout.columns)) + 1
    # the node's size in points: room for the tallest column and the columns side by side
    across = min(LARGEST_NODE, 0.55 * height * 72 / tallest, 0.3 * width * 72 / columns)
    font = max(4.0, min(plt.rcParams["font.size"], across * 0.5))
    _connections(axes, graph, layout, across, figure, show_disabled)
    _nodes(axes, graph, layout, across, font)
    spread = (tallest - 1) / 2
    axes.set_xlim(-0.45, columns - 0.55)
    axes.set_ylim(-spread - 0.6, spread + 0.6)
    recurrent = bool((layout.back() & (graph.enabled | show_disabled)).any())
    _legend(figure, graph, show_disabled, recurrent)
    return figure


def _connections(axes: Any, graph: NetworkGraph, layout: NetworkLayout, across: float,
                 figure: Any, show_disabled: bool) -> None:
    """One patch per drawn connection (a network has tens of them, not thousands)."""
    from matplotlib.patches import Circle, FancyArrowPatch
    from matplotlib.transforms import ScaledTranslation

    drawn = graph.enabled | show_disabled
    largest = float(np.abs(graph.weights[graph.enabled]).max(initial=0.0))
    scale = np.abs(graph.weights) / largest if largest > 0 else np.zeros(len(graph.weights))
    widths = 0.3 + (WIDEST_LINE - 0.3) * scale
    colours = np.where(graph.weights >= 0, POSITIVE, NEGATIVE)
    bends = _bends(layout)
    back = layout.back()
    for index in np.flatnonzero(drawn):
        source, target = layout.sources[index], layout.targets[index]
        on = bool(graph.enabled[index])
        width = float(widths[index]) if on else 0.8
        look: dict[str, Any] = {"color": colours[index] if on else DISABLED, "lw": width,
                                "ls": (RECURRENT if back[index] else "-") if on else ":",
                                "alpha": 0.85, "zorder": 1,
                                "clip_on": False}
        (x, y), end = layout.positions[source], layout.positions[target]
        if source == target:  # a circle touching the node's top, in inches
            radius = across / 72 * 0.4
            place = figure.dpi_scale_trans + ScaledTranslation(x, y, axes.transData)
            axes.add_patch(Circle((0.0, across / 72 * 0.5 + radius * 0.8), radius,
                                  transform=place, fill=False, **look))
            continue
        axes.add_patch(FancyArrowPatch(
            (x, y), tuple(end), arrowstyle="-|>", mutation_scale=4 + 2 * width,
            connectionstyle=f"arc3,rad={bends[index]}", shrinkA=across / 2,
            shrinkB=across / 2 + 1, **look))


def _bends(layout: NetworkLayout) -> NDArray[np.float64]:
    """Per connection, the curvature of its arc (matplotlib's `arc3` rad: > 0 bends a
    rightward line down): a back edge's, so it clears the forward ones; a forward one that
    skips columns and would run through a node between, away from that node (a line through
    a node reads as a connection to it); 0, straight, for the rest. A connections x nodes
    comparison: networks are small."""
    back = layout.back()
    start, end = layout.positions[layout.sources], layout.positions[layout.targets]
    x, y = layout.positions[:, 0], layout.positions[:, 1]
    between = (x[None, :] > start[:, :1]) & (x[None, :] < end[:, :1])
    along = (x[None, :] - start[:, :1]) / np.maximum(end[:, :1] - start[:, :1], 1e-9)
    offset = y[None, :] - (start[:, 1:] + along * (end[:, 1:] - start[:, 1:]))
    near = between & (np.abs(offset) < NODE_CLEARANCE)
    nearest = np.where(near, np.abs(offset), np.inf).argmin(axis=1)
    away = np.where(offset[np.arange(len(nearest)), nearest] >= 0, 0.2, -0.2)
    bends: NDArray[np.float64] = np.where(back, 0.35, np.where(near.any(axis=1), away, 0.0))
    return bends


def _nodes(axes: Any, graph: NetworkGraph, layout: NetworkLayout, across: float,
           font: float) -> None:
    kinds = np.array(graph.kinds, dtype=object)
    for kind, (marker, fill, _) in NODE_STYLES.items():
        chosen = kinds == kind
        if chosen.any():
            axes.scatter(*layout.positions[chosen].T, s=across ** 2, marker=marker, c=fill,
                         edgecolors="0.15", linewidths=0.8, zorder=2, clip_on=False)
    for index, (x, y) in enumerate(layout.positions):
        axes.text(x, y, str(graph.keys[index]), ha="center", va="center", fontsize=font,
                  zorder=3)
    if graph.labels is None:
        return
    for index, label in enumerate(graph.labels):
        if label and graph.kinds[index] != "hidden":
            left = graph.kinds[index] == "input"
            axes.annotate(literal(label, LONGEST_LABEL), layout.positions[index],
                          xytext=(-(across * 0.6 + 3) if left else across * 0.75 + 3, 0),
                          textcoords="offset points", ha="right" if left else "left",
                          va="center", annotation_clip=False)


def _legend(figure: Any, graph: NetworkGraph, show_disabled: bool, recurrent: bool) -> None:
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], ls="", marker=marker, markerfacecolor=fill,
                      markeredgecolor="0.15", markersize=7)
               for kind, (marker, fill, _) in NODE_STYLES.items() if kind in graph.kinds]
    labels = [label for kind, (_, _, label) in NODE_STYLES.items() if kind in graph.kinds]
    handles += [Line2D([], [], color=POSITIVE, lw=2), Line2D([], [], color=NEGATIVE, lw=2)]
    labels += ["weight > 0", "weight < 0"]
    if recurrent:
        handles.append(Line2D([], [], color="0.3", lw=1.2, ls=RECURRENT))
        labels.append("recurrent")
    if show_disabled:
        handles.append(Line2D([], [], color=DISABLED, lw=0.8, ls=":"))
        labels.append("disabled")
    largest = float(np.abs(graph.weights[graph.enabled]).max(initial=0.0))
    widest = f" (widest {largest:.3g})" if largest > 0 else ""
    legend_below(figure, handles, labels, title=f"line width: |weight|{widest}")


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")
