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
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.results.plot_style import PlotStyle
from evo_core.results.trace_file import STATE_PREFIX

__all__ = ["MOST_HEATMAPS", "MOST_TRACES", "default_output", "trace_figure"]

MOST_HEATMAPS = 4
MOST_TRACES = 6


def _states(arrays: dict[str, NDArray[Any]]) -> list[tuple[str, NDArray[np.float64]]]:
    return [(key[len(STATE_PREFIX):], np.asarray(value, dtype=np.float64))
            for key, value in arrays.items()
            if key.startswith(STATE_PREFIX) and np.ndim(value) == 2 and np.size(value)]


def _boundaries(axes: Any, episode: NDArray[np.int64]) -> None:
    for step in np.flatnonzero(np.diff(episode)) + 1:
        axes.axvline(step - 0.5, color="0.4", lw=0.8, ls=":")


def trace_figure(arrays: dict[str, NDArray[Any]], title: str,
                 style: PlotStyle | None = None) -> Any:
    """The figure of a trace file's arrays (running/tracing.py)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    style = style or PlotStyle()
    with matplotlib.rc_context(style.rc()):
        return _draw(plt, arrays, title, style)


def _draw(plt: Any, arrays: dict[str, NDArray[Any]], title: str, style: PlotStyle) -> Any:
    from matplotlib.ticker import MaxNLocator

    reward = np.asarray(arrays["reward"], dtype=np.float64)
    episode = np.asarray(arrays["episode"], dtype=np.int64)
    states = _states(arrays)
    heatmaps = states[:MOST_HEATMAPS]
    rows = 1 + len(heatmaps) + (1 if states else 0)
    ratios = [1.0] + [1.6] * len(heatmaps) + ([1.2] if states else [])
    width, _ = style.figure_size((9, 4.5))
    height = style.figure_size((9, 4.5))[1] if style.column else 1.2 + 1.5 * sum(ratios)
    figure, panels = plt.subplots(rows, 1, figsize=(width, height), sharex=True, dpi=100,
                                  layout="constrained", height_ratios=ratios, squeeze=False)
    panels = panels[:, 0]
    steps = np.arange(reward.size)
    _reward_panel(panels[0], steps, reward, episode)
    panels[0].set_title(title if states else
                        f"{title} (no brain state: the brain declares no trace_state)")
    for axes, (name, values) in zip(panels[1:], heatmaps):
        _heatmap(figure, axes, name, values)
        _boundaries(axes, episode)
    if states:
        _traces(panels[-1], states[0])
        _boundaries(panels[-1], episode)
    panels[-1].set_xlabel("step")
    panels[-1].xaxis.set_major_locator(MaxNLocator(integer=True))
    return figure


def _reward_panel(axes: Any, steps: NDArray[Any], reward: NDArray[np.float64],
                  episode: NDArray[np.int64]) -> None:
    axes.bar(steps, reward, width=1.0, color="tab:green", alpha=0.6, label="reward")
    axes.set_ylabel("reward")
    right = axes.twinx()
    for number in np.unique(episode):  # the return restarts with every episode
        rows = episode == number
        right.plot(steps[rows], np.cumsum(reward[rows]), color="black", lw=1.0)
    right.set_ylabel("return so far")
    _boundaries(axes, episode)


def _heatmap(figure: Any, axes: Any, name: str, values: NDArray[np.float64]) -> None:
    from matplotlib.ticker import MaxNLocator

    limit = float(np.nanmax(np.abs(values))) if values.size else 1.0
    limit = limit if np.isfinite(limit) and limit > 0 else 1.0
    image = axes.imshow(values.T, aspect="auto", interpolation="nearest", cmap="RdBu_r",
                        vmin=-limit, vmax=limit, origin="lower",
                        extent=(-0.5, values.shape[0] - 0.5, -0.5, values.shape[1] - 0.5))
    axes.set_ylabel(f"{name}\nneuron")
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    figure.colorbar(image, ax=axes, pad=0.01, fraction=0.04)


def _traces(axes: Any, state: tuple[str, NDArray[np.float64]]) -> None:
    name, values = state
    spread = np.nanstd(values, axis=0)
    chosen = np.argsort(-spread, kind="stable")[:MOST_TRACES]
    for neuron in sorted(chosen.tolist()):
        axes.plot(np.arange(values.shape[0]), values[:, neuron], lw=1.0,
                  label=f"{name}[{neuron}]")
    axes.set_ylabel(name)
    axes.legend(loc="upper right", fontsize="x-small", ncols=min(3, len(chosen)))


def default_output(trace_file: Path) -> Path:
    """FILE.npz -> FILE.png beside it."""
    return trace_file.with_suffix(".png")
