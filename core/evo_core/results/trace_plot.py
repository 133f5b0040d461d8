"""`evo plot RUN --trace FILE.npz`: one replayed episode, step by step.

One figure, its panels sharing the step axis so that everything lines up:

1. the observation the brain received, and 2. the action it chose: a line per value when
   there are at most `MOST_LINES` (CartPole's four observations, its one action), named
   beside the panel; a heatmap of the values otherwise (an image observation, a wide action);
3. the reward of every step and 4. the return so far, each a line (CartPole's reward of 1 a
   step is a flat line, not a solid block of bars);
5. one heatmap per state array of the brain (`state.potential`, `state.layer0.hidden`, ...;
   at most `MOST_HEATMAPS`), neurons up by index, steps across.

Colour carries a number only in the heatmaps, and each has a colour bar right beside it, on a
scale fixed by the whole trace (so the figures of two episodes of one trace compare): centred
on 0 (blue negative, red positive) when the values take both signs, from 0 up otherwise.
Whatever sits beside a panel (a colour bar, the names of its lines) stands in a column of its
own, so no legend covers data and every panel has the same width.

By default the first episode is drawn (`--episode N` another, `--episode all` every episode
end to end, their boundaries dotted): a 500-step episode has a column of pixels per step at the
full width of 16 cm (`PlotStyle`). The title says what ran, which episode, its return and its
length. A trace without brain state (no `ITraceableBrain`) draws the rest and says so.

What is drawn is bounded by the figure, not by the trace: more steps than twice the pixels the
panels have across are drawn in columns of equal numbers of steps (heatmap cells their means,
lines the range each column spans), a state of more than `MOST_NEURONS` neurons in rows of
neighbouring neurons' means, and the episodes' boundaries only while there are at most
`MOST_BOUNDARIES`; the axis labels and the title say which. So a trace of 20 million steps or
300,000 episodes draws in the time of its numpy reductions.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.errors import UserError
from evo_core.results.plot import run_description
from evo_core.results.plot_style import PNG_DPI, PlotStyle, literal, wrapped
from evo_core.results.trace_file import STATE_PREFIX

__all__ = ["MOST_BOUNDARIES", "MOST_HEATMAPS", "MOST_LINES", "MOST_NEURONS", "default_output",
           "trace_figure", "trace_title"]

MOST_HEATMAPS = 4
#: an observation or action of at most this many values is drawn as lines, wider as a heatmap
MOST_LINES = 6
#: episode boundaries drawn at most; beyond, the title says how many episodes there are
MOST_BOUNDARIES = 200
#: heatmap rows at most; a larger state is drawn in rows of the means of neighbouring neurons
MOST_NEURONS = 256
#: steps drawn one by one per pixel of the panels' width at most; beyond, in columns of steps
STEPS_PER_PIXEL = 2
#: the column beside the panels (colour bars, the names of lines), in inches
SIDE = {False: 0.85, True: 0.7}
#: panel heights in inches (full width, column): a line panel, a heatmap
LINE_HEIGHT = {False: 0.8, True: 0.72}
HEATMAP_HEIGHT = {False: 1.05, True: 0.8}
Floats = NDArray[np.float64]


@dataclass(frozen=True)
class _Columns:
    """The steps in columns of `size` steps each (the last may hold fewer): 1 when every step
    has a pixel of its own."""

    steps: int
    size: int

    @classmethod
    def fitting(cls, steps: int, pixels: int) -> _Columns:
        return cls(steps, max(1, -(-steps // max(1, pixels))))

    @property
    def starts(self) -> NDArray[np.intp]:
        return np.arange(0, self.steps, self.size)

    @property
    def centres(self) -> Floats:
        """Each column's middle, in steps."""
        middles: Floats = np.minimum(self.starts + (self.size - 1) / 2, self.steps - 1)
        return middles

    def means(self, values: Floats) -> Floats:
        """Each column's mean along the first axis, NaNs left out (NaN for none)."""
        if self.size == 1:
            return values
        finite = np.isfinite(values)
        sums = np.add.reduceat(np.where(finite, values, 0.0), self.starts, axis=0)
        counted = np.add.reduceat(finite.astype(np.float64), self.starts, axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            means: Floats = sums / counted
        return means

    def ranges(self, values: Floats) -> tuple[Floats, Floats]:
        """Each column's least and greatest value (NaNs left out)."""
        return (np.fmin.reduceat(values, self.starts), np.fmax.reduceat(values, self.starts))


@dataclass(frozen=True)
class _Panel:
    """What one panel draws: its name (the y label), its values (steps, width) and whether as
    a heatmap; `scale` is the colour scale's (low, high), fixed by the whole trace."""

    name: str
    values: Floats
    heatmap: bool
    scale: tuple[float, float] = (0.0, 1.0)


def _finite(values: NDArray[Any]) -> Floats:
    """`values` as floats, infinities as NaN (not drawn, not in any mean)."""
    floats = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(floats)
    return floats if finite.all() else np.where(finite, floats, np.nan)


def _scale(values: Floats) -> tuple[float, float]:
    """A heatmap's colour scale over the whole trace: symmetric about 0 when the values take
    both signs, from 0 to the largest otherwise (1 where there is nothing to scale by)."""
    if not np.isfinite(values).any():
        return -1.0, 1.0
    low, high = float(np.nanmin(values)), float(np.nanmax(values))
    if low >= 0:
        return 0.0, high if high > 0 else 1.0
    if high <= 0:
        return low, 0.0
    limit = max(-low, high)
    return -limit, limit


def _panels(arrays: dict[str, NDArray[Any]], rows: NDArray[np.intp] | slice) -> list[_Panel]:
    """The observation, action and state panels of the rows drawn; each colour scale over
    every row of the trace."""
    panels = []
    for key, name in (("observation", "observation"), ("action", "action")):
        value = arrays.get(key)
        if value is None or value.ndim < 1 or value.size == 0:
            continue
        whole = _finite(value.reshape(value.shape[0], -1))
        if whole.shape[1] == 0:
            continue
        panels.append(_Panel(name, whole[rows], whole.shape[1] > MOST_LINES, _scale(whole)))
    states = [key for key, value in arrays.items()
              if key.startswith(STATE_PREFIX) and np.ndim(value) == 2 and np.size(value)]
    for key in states[:MOST_HEATMAPS]:
        whole = _finite(arrays[key])
        panels.append(_Panel(key[len(STATE_PREFIX):], whole[rows], True, _scale(whole)))
    return panels


def trace_figure(arrays: dict[str, NDArray[Any]], title: str, style: PlotStyle | None = None,
                 episode: int | None = 0, source: str = "--trace") -> Any:
    """The figure of a trace file's arrays (running/tracing.py; checked by
    `trace_file.read_trace`): `episode`'s steps (None: every step). `title` is drawn as it is
    (`literal`); `source` names the file in the one line said of an episode it lacks."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    style = style or PlotStyle()
    episodes = np.asarray(arrays["episode"])
    if episode is None:
        rows: NDArray[np.intp] | slice = slice(None)
    else:
        rows = np.flatnonzero(episodes == episode)
        if rows.size == 0:
            have = np.unique(episodes)
            said = (f"episodes {have[0]} to {have[-1]}" if have.size else "no step")
            raise UserError(f"{source}: has {said}; --episode {episode} is not one of them")
    with matplotlib.rc_context(style.rc()):
        return _draw(plt, arrays, rows, episode, title, style)


def _draw(plt: Any, arrays: dict[str, NDArray[Any]], rows: NDArray[np.intp] | slice,
          episode: int | None, title: str, style: PlotStyle) -> Any:
    reward = _finite(arrays["reward"])[rows]
    episodes = np.asarray(arrays["episode"])[rows]
    panels = _panels(arrays, rows)
    inputs = [panel for panel in panels if panel.name in ("observation", "action")]
    ordered: list[_Panel | str] = [*inputs, "reward", "return so far",
                                   *[panel for panel in panels if panel not in inputs]]
    heights = [HEATMAP_HEIGHT[style.column] if isinstance(panel, _Panel) and panel.heatmap
               else LINE_HEIGHT[style.column] for panel in ordered]
    side = SIDE[style.column]
    figure = plt.figure(figsize=(style.width, 0.75 + sum(heights)), layout="constrained")
    grid = figure.add_gridspec(len(ordered), 2, height_ratios=heights,
                               width_ratios=[style.width - side, side])
    first = figure.add_subplot(grid[0, 0])
    axes = [first] + [figure.add_subplot(grid[i, 0], sharex=first)
                      for i in range(1, len(ordered))]
    sides = [figure.add_subplot(grid[i, 1]) for i in range(len(ordered))]
    columns = _Columns.fitting(reward.size, STEPS_PER_PIXEL * int((style.width - side) * PNG_DPI))
    starts = np.flatnonzero(np.diff(episodes)) + 1  # the first step of each episode but one
    boundaries = starts if starts.size <= MOST_BOUNDARIES else starts[:0]
    for index, (panel, own, beside) in enumerate(zip(ordered, axes, sides)):
        beside.set_axis_off()
        height = heights[index]
        if panel == "reward":
            _line_panel(own, beside, panel, reward[:, None], columns, starts, height)
        elif panel == "return so far":
            _line_panel(own, beside, panel, _return_so_far(reward, starts)[:, None], columns,
                        starts, height)
        elif isinstance(panel, _Panel) and panel.heatmap:
            _heatmap(figure, own, beside, panel, columns, height)
        elif isinstance(panel, _Panel):
            _line_panel(own, beside, panel.name, panel.values, columns, starts, height,
                        steps=panel.name == "action")
        _boundaries(own, boundaries)
        if index < len(ordered) - 1:
            own.tick_params(labelbottom=False)
    _x_axis(axes[-1], columns, episode, style)
    figure.suptitle(_title(title, arrays, episode, reward, starts, panels, style))
    return figure


def _title(title: str, arrays: dict[str, NDArray[Any]], episode: int | None, reward: Floats,
           starts: NDArray[np.intp], panels: list[_Panel], style: PlotStyle) -> str:
    """What ran (`title`, as drawn), then which episode: its return and steps."""
    count = int(np.unique(np.asarray(arrays["episode"])).size)
    total = float(np.nansum(reward))
    if episode is None:
        what = f"{count} episode{'s' if count != 1 else ''}, {reward.size} steps"
        if starts.size > MOST_BOUNDARIES:
            what += ", their boundaries not drawn"
    else:
        what = (f"episode {episode} of {count}: return {total:.6g} in {reward.size} "
                f"step{'s' if reward.size != 1 else ''}")
    if not any(p.name not in ("observation", "action") for p in panels):
        what += "; no brain state (the brain declares no trace_state)"
    return wrapped(literal(title), style.width) + "\n" + wrapped(what, style.width)


def _x_axis(axes: Any, columns: _Columns, episode: int | None, style: PlotStyle) -> None:
    from matplotlib.ticker import MaxNLocator

    name = "step" if episode is None else f"step of episode {episode}"
    if columns.size > 1:
        name += f" (a column: {columns.size} steps, cells their means)"
    axes.set_xlabel(wrapped(name, style.width - SIDE[style.column]))
    axes.xaxis.set_major_locator(MaxNLocator(5 if style.column else 10, integer=True))
    axes.set_xlim(-0.5, columns.steps - 0.5)


def _boundaries(axes: Any, starts: NDArray[np.intp]) -> None:
    """A dotted line before the first step of each episode (one collection, however many)."""
    if starts.size:
        axes.vlines(starts - 0.5, 0, 1, transform=axes.get_xaxis_transform(), color="0.4",
                    lw=0.8, ls=":")


def _line_panel(axes: Any, beside: Any, name: str, values: Floats, columns: _Columns,
                starts: NDArray[np.intp], height: float, steps: bool = False) -> None:
    """A line per value over the steps (the range of each column when columns hold several
    steps), named beside the panel when there are several; `steps`: each value held for its
    step (an action), not joined to the next. The y axis includes 0, so a constant reward is a
    line at its height, not a line in the middle of a magnified nothing."""
    from matplotlib.ticker import MaxNLocator

    several = values.shape[1] > 1
    handles = []
    for index in range(values.shape[1]):
        colour = f"C{index % 10}" if several or name in ("observation", "action") else "black"
        if columns.size == 1:  # broken where an episode starts: nothing joins two episodes
            x = np.insert(np.arange(values.shape[0], dtype=np.float64), starts, np.nan)
            (line,) = axes.plot(x, np.insert(values[:, index], starts, np.nan), color=colour,
                                lw=0.9, drawstyle="steps-mid" if steps else "default")
            handles.append(line)
        else:
            low, high = columns.ranges(values[:, index])
            handles.append(axes.fill_between(columns.centres, low, high, color=colour,
                                             lw=0.5, alpha=0.6, step="mid"))
    finite = values[np.isfinite(values)]
    if finite.size:
        bottom, top = min(0.0, float(np.min(finite))), max(0.0, float(np.max(finite)))
        pad = 0.06 * (top - bottom) if top > bottom else 1.0
        axes.set_ylim(bottom - (pad if bottom < 0 or top == bottom else 0.0), top + pad)
    axes.set_ylabel(wrapped(name, height))
    axes.yaxis.set_major_locator(MaxNLocator(3))
    axes.grid(alpha=0.3)
    if several:
        beside.legend(handles, [f"[{i}]" for i in range(values.shape[1])], loc="center left",
                      borderaxespad=0, handlelength=0.8, handletextpad=0.4,
                      ncols=1 if values.shape[1] <= 3 else 2, columnspacing=0.5,
                      labelspacing=0.2)


def _return_so_far(reward: Floats, starts: NDArray[np.intp]) -> Floats:
    """Each step's return since its episode's first step (NaN rewards count as 0)."""
    totals = np.cumsum(np.nan_to_num(reward, nan=0.0))
    firsts = np.concatenate([[0], starts])
    before = np.concatenate([[0.0], totals])[firsts]  # the total before each episode
    lengths = np.diff(np.concatenate([firsts, [reward.size]]))
    totals -= np.repeat(before, lengths)
    return totals


def _heatmap(figure: Any, axes: Any, beside: Any, panel: _Panel, columns: _Columns,
             height: float) -> None:
    from matplotlib.ticker import MaxNLocator

    values = panel.values
    width = values.shape[1]
    group = -(-width // MOST_NEURONS)
    cells = columns.means(values)
    if group > 1:  # rows of the means of `group` neighbouring values
        cells = _Columns(width, group).means(cells.T).T
    low, high = panel.scale
    diverging = low < 0 < high
    image = axes.imshow(cells.T, aspect="auto", interpolation="nearest",
                        cmap="RdBu_r" if diverging else "viridis", vmin=low, vmax=high,
                        origin="lower", extent=(-0.5, values.shape[0] - 0.5, -0.5, width - 0.5))
    unit = "neuron" if panel.name not in ("observation", "action") else "index"
    label = f"{panel.name} ({unit})" if group == 1 else f"{panel.name} ({unit}s, rows of {group})"
    axes.set_ylabel(wrapped(literal(label), height))
    axes.yaxis.set_major_locator(MaxNLocator(4, integer=True))
    bar = beside.inset_axes((0.0, 0.0, 0.1, 1.0))
    colour_bar = figure.colorbar(image, cax=bar)
    colour_bar.ax.yaxis.set_major_locator(MaxNLocator(4))


def trace_title(run_dir: Path) -> str:
    """What ran (environment · brain, from the run's config.json) and the run's name."""
    description = run_description(run_dir)[:2]
    return " · ".join([*description, run_dir.name]) if description else run_dir.name


def default_output(trace_file: Path) -> Path:
    """FILE.npz -> FILE.png beside it."""
    return trace_file.with_suffix(".png")
