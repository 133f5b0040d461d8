"""`evo plot RUN --trace FILE.npz`: the brain's activity over a replayed episode.

One figure, its panels sharing the step axis so that everything lines up with the reward:

1. the reward of every step (bars) and the return so far (a line, right axis);
2. one heatmap per state array of the trace (`state.potential`, `state.layer0.hidden`, ...; at
   most four), neurons down, steps across, a diverging colour map centred on 0 so that sign
   and size read at once;
3. a few traces: the neurons of the first array whose values vary most over the episode (at
   most six), as lines.

Episode boundaries are dotted vertical lines. A trace without brain state (the brain declares
no `ITraceableBrain`) still draws the reward and says so.

What is drawn is bounded by the figure, not by the trace: a trace of more steps than the figure
is pixels wide is drawn in columns of equal numbers of steps (the bars and heatmap cells are
their means, the return and the neurons' lines the range they span in each column), a state of
more than `MOST_NEURONS` neurons in rows of neurons' means, and the episodes' boundaries only
while there are at most `MOST_BOUNDARIES`; the axis labels and the title say which. So a trace
of 20 million steps or 300,000 episodes draws in the time of its numpy reductions (a
matplotlib artist per step or per episode took minutes).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.results.plot_style import PlotStyle, literal
from evo_core.results.trace_file import STATE_PREFIX

__all__ = ["MOST_BOUNDARIES", "MOST_HEATMAPS", "MOST_NEURONS", "MOST_TRACES", "default_output",
           "trace_figure"]

MOST_HEATMAPS = 4
MOST_TRACES = 6
#: episode boundaries drawn at most; beyond, the title says how many episodes there are
MOST_BOUNDARIES = 200
#: heatmap rows at most; a larger state is drawn in rows of the means of neighbouring neurons
MOST_NEURONS = 256
#: steps the choice of the neurons drawn as lines looks at, at most (evenly spread)
MOST_SAMPLES = 100_000
#: the figure's resolution: a column of steps per pixel of its width
DPI = 100


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
    def centres(self) -> NDArray[np.float64]:
        """Each column's middle, in steps."""
        middles: NDArray[np.float64] = np.minimum(self.starts + (self.size - 1) / 2,
                                                  self.steps - 1)
        return middles

    @property
    def edges(self) -> NDArray[np.float64]:
        """Where the columns begin and the last ends, on the step axis."""
        return np.append(self.starts, self.steps) - 0.5

    def means(self, values: NDArray[np.float64]) -> NDArray[np.float64]:
        """Each column's mean along the first axis, NaNs left out (NaN for none)."""
        if self.size == 1:
            return values
        finite = np.isfinite(values)
        if finite.all():
            shape = (-1,) + (1,) * (values.ndim - 1)
            counts = np.diff(np.append(self.starts, self.steps)).reshape(shape)
            summed: NDArray[np.float64] = np.add.reduceat(values, self.starts, axis=0) / counts
            return summed
        sums = np.add.reduceat(np.where(finite, values, 0.0), self.starts, axis=0)
        counted = np.add.reduceat(finite.astype(np.float64), self.starts, axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            means: NDArray[np.float64] = sums / counted
        return means

    def ranges(self, values: NDArray[np.float64]) -> tuple[NDArray[np.float64],
                                                            NDArray[np.float64]]:
        """Each column's least and greatest value (NaNs left out)."""
        return (np.fmin.reduceat(values, self.starts), np.fmax.reduceat(values, self.starts))


def _state_keys(arrays: dict[str, NDArray[Any]]) -> list[str]:
    return [key for key, value in arrays.items()
            if key.startswith(STATE_PREFIX) and np.ndim(value) == 2 and np.size(value)]


def _finite(values: NDArray[Any]) -> NDArray[np.float64]:
    """`values` as floats, infinities as NaN (not drawn, not in any mean)."""
    floats = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(floats)
    return floats if finite.all() else np.where(finite, floats, np.nan)


def trace_figure(arrays: dict[str, NDArray[Any]], title: str,
                 style: PlotStyle | None = None) -> Any:
    """The figure of a trace file's arrays (running/tracing.py; checked by
    `trace_file.read_trace`). `title` is drawn as it is (`literal`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    style = style or PlotStyle()
    with matplotlib.rc_context(style.rc()):
        return _draw(plt, arrays, title, style)


def _draw(plt: Any, arrays: dict[str, NDArray[Any]], title: str, style: PlotStyle) -> Any:
    from matplotlib.ticker import MaxNLocator

    reward = _finite(arrays["reward"])
    episode = np.asarray(arrays["episode"])
    keys = _state_keys(arrays)
    heatmaps = [(key[len(STATE_PREFIX):], _finite(arrays[key])) for key in keys[:MOST_HEATMAPS]]
    rows = 1 + len(heatmaps) + (1 if heatmaps else 0)
    ratios = [1.0] + [1.6] * len(heatmaps) + ([1.2] if heatmaps else [])
    width, _ = style.figure_size((9, 4.5))
    height = style.figure_size((9, 4.5))[1] if style.column else 1.2 + 1.5 * sum(ratios)
    figure, panels = plt.subplots(rows, 1, figsize=(width, height), sharex=True, dpi=DPI,
                                  layout="constrained", height_ratios=ratios, squeeze=False)
    panels = panels[:, 0]
    columns = _Columns.fitting(reward.size, int(width * DPI))
    starts = np.flatnonzero(np.diff(episode)) + 1  # the first step of every episode but the first
    boundaries = starts if starts.size <= MOST_BOUNDARIES else starts[:0]
    _reward_panel(panels[0], columns, reward, starts, boundaries)
    notes = [] if heatmaps else ["no brain state: the brain declares no trace_state"]
    if starts.size > MOST_BOUNDARIES:
        notes.append(f"{starts.size + 1} episodes, their boundaries not drawn")
    panels[0].set_title(literal(title) + (f" ({'; '.join(notes)})" if notes else ""))
    for axes, (name, values) in zip(panels[1:], heatmaps):
        _heatmap(figure, axes, name, values, columns)
        _boundaries(axes, boundaries)
    if heatmaps:
        _traces(panels[-1], heatmaps[0], columns)
        _boundaries(panels[-1], boundaries)
    panels[-1].set_xlabel("step" if columns.size == 1 else
                          f"step (a column: {columns.size} steps, bars and cells their means)")
    panels[-1].xaxis.set_major_locator(MaxNLocator(integer=True))
    return figure


def _boundaries(axes: Any, starts: NDArray[np.intp]) -> None:
    """A dotted line before the first step of each episode (one collection, however many)."""
    if starts.size:
        axes.vlines(starts - 0.5, 0, 1, transform=axes.get_xaxis_transform(), color="0.4",
                    lw=0.8, ls=":")


def _reward_panel(axes: Any, columns: _Columns, reward: NDArray[np.float64],
                  starts: NDArray[np.intp], boundaries: NDArray[np.intp]) -> None:
    # one artist for all the bars (a bar patch each took seconds for a few thousand)
    axes.stairs(np.nan_to_num(columns.means(reward), nan=0.0), columns.edges, fill=True,
                color="tab:green", alpha=0.6, label="reward")
    axes.set_ylabel("reward")
    right = axes.twinx()
    so_far = _return_so_far(reward, starts)
    if columns.size == 1:  # one line, broken where an episode starts (the return restarts)
        x = np.insert(np.arange(reward.size, dtype=np.float64), starts, np.nan)
        right.plot(x, np.insert(so_far, starts, np.nan), color="black", lw=1.0)
    else:
        low, high = columns.ranges(so_far)
        right.fill_between(columns.centres, low, high, color="black", alpha=0.6, lw=0.5,
                           step="mid")
    right.set_ylabel("return so far")
    _boundaries(axes, boundaries)


def _return_so_far(reward: NDArray[np.float64],
                   starts: NDArray[np.intp]) -> NDArray[np.float64]:
    """Each step's return since its episode's first step (NaN rewards count as 0)."""
    totals = np.cumsum(np.nan_to_num(reward, nan=0.0) if np.isnan(reward).any() else reward)
    firsts = np.concatenate([[0], starts])
    before = np.concatenate([[0.0], totals])[firsts]  # the total before each episode
    lengths = np.diff(np.concatenate([firsts, [reward.size]]))
    totals -= np.repeat(before, lengths)
    return totals


def _heatmap(figure: Any, axes: Any, name: str, values: NDArray[np.float64],
             columns: _Columns) -> None:
    from matplotlib.ticker import MaxNLocator

    neurons = values.shape[1]
    group = -(-neurons // MOST_NEURONS)
    cells = columns.means(values)
    if group > 1:  # rows of the means of `group` neighbouring neurons
        cells = _Columns(neurons, group).means(cells.T).T
    limit = float(np.nanmax(np.abs(cells))) if np.isfinite(cells).any() else 1.0
    limit = limit if np.isfinite(limit) and limit > 0 else 1.0
    image = axes.imshow(cells.T, aspect="auto", interpolation="nearest", cmap="RdBu_r",
                        vmin=-limit, vmax=limit, origin="lower",
                        extent=(-0.5, values.shape[0] - 0.5, -0.5, neurons - 0.5))
    axes.set_ylabel(f"{literal(name)}\nneuron" if group == 1 else
                    f"{literal(name)}\nneuron (a row: {group})")
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    figure.colorbar(image, ax=axes, pad=0.01, fraction=0.04)


def _traces(axes: Any, state: tuple[str, NDArray[np.float64]], columns: _Columns) -> None:
    name, values = state
    # which neurons vary most, judged on at most MOST_SAMPLES steps spread over the trace
    sample = values[::max(1, -(-values.shape[0] // MOST_SAMPLES))]
    with warnings.catch_warnings():  # a neuron that is NaN throughout has no spread: last
        warnings.simplefilter("ignore", RuntimeWarning)
        spread = np.nan_to_num(np.nanstd(sample, axis=0), nan=-1.0)
    chosen = np.argsort(-spread, kind="stable")[:MOST_TRACES]
    shown = literal(name)
    for neuron in sorted(chosen.tolist()):
        if columns.size == 1:
            axes.plot(np.arange(values.shape[0]), values[:, neuron], lw=1.0,
                      label=f"{shown}[{neuron}]")
        else:
            low, high = columns.ranges(values[:, neuron])
            axes.fill_between(columns.centres, low, high, lw=0.5, alpha=0.6, step="mid",
                              label=f"{shown}[{neuron}]")
    axes.set_ylabel(shown)
    axes.legend(loc="upper right", fontsize="x-small", ncols=min(3, len(chosen)))


def default_output(trace_file: Path) -> Path:
    """FILE.npz -> FILE.png beside it."""
    return trace_file.with_suffix(".png")
