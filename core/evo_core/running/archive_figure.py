"""What a QD archive's axes mean, read from the run's config, and its archive.png
(`IRun.write_archive_figure`, which evo-qd calls when a run ends).

A declared capability decides, not the environment's name: when the descriptor is the
environment's behaviour state after an episode's last step (`[behaviour] source = "state"`,
`interval = "final"`, `planar_map.final_states`) and the environment is an `IPlanarMap`
(`planar_map.find_planar_map`), whose behaviour state is its (x, y), the archive is drawn on
the map. Otherwise each axis names its descriptor value by what `[behaviour]` records: which
value of the observation, the action or the state, after the last step or as the mean over
which window of steps (docs/behaviour.md: a descriptor is the windows one after another, each
the source's flattened values).
"""

from __future__ import annotations

from pathlib import Path

from evo_core.config.behaviour import BehaviourConfig
from evo_core.config.schema import ExperimentConfig
from evo_core.contract.protocols import ArchiveGrid
from evo_core.environments import probe_spaces
from evo_core.evaluation.flattening import flattener
from evo_core.results.archive_plot import ArchiveAxes, archive_figure
from evo_core.results.plot import run_description, save_figure
from evo_core.results.plot_style import PlotStyle
from evo_core.running.planar_map import final_states, find_planar_map

__all__ = ["ARCHIVE_IMAGE", "archive_axes", "write_archive_figure"]

ARCHIVE_IMAGE = "archive.png"


def archive_axes(config: ExperimentConfig, dimensions: int) -> ArchiveAxes:
    """The names of a grid's first `dimensions` descriptor values, and the map they are a
    position on, if any (module docstring)."""
    behaviour = config.behaviour
    if final_states(behaviour) and dimensions == 2:
        planar = find_planar_map(config)
        if planar is not None:
            return ArchiveAxes(("x", "y"), planar)
    return ArchiveAxes(tuple(_value_name(config, behaviour, index)
                             for index in range(dimensions)))


def _value_name(config: ExperimentConfig, behaviour: BehaviourConfig | None, index: int
                ) -> str:
    """Descriptor value `index`, in words."""
    if behaviour is None:
        return f"descriptor[{index}]"
    source = behaviour.source
    if behaviour.interval == "final":
        return f"{source}[{index}] after the last step"
    width = _source_width(config, source)
    if width is None:
        return (f"descriptor[{index}]: a mean {source} value over windows of "
                f"{behaviour.interval} steps")
    window, value = divmod(index, width)
    first = window * behaviour.interval
    return f"{source}[{value}], mean over steps {first + 1}–{first + behaviour.interval}"


def _source_width(config: ExperimentConfig, source: str) -> int | None:
    """How many values the source records per step: the flattened observation or action
    (the environment's spaces); None for the state, whose width only a step tells."""
    if source == "state":
        return None
    observation, action = probe_spaces(config.environment)
    width, _ = flattener(observation if source == "observation" else action, source)
    return width


def write_archive_figure(folder: Path, config: ExperimentConfig, grid: ArchiveGrid,
                         style: PlotStyle | None = None) -> Path:
    """Draw `grid` into the run folder's archive.png, atomically; its path."""
    output = folder / ARCHIVE_IMAGE
    style = (style or PlotStyle()).for_output(output)
    description = " · ".join(run_description(folder))
    title = f"{folder.name}: {description}" if description else folder.name
    figure = archive_figure(grid, archive_axes(config, grid.objective.ndim), title, style)
    save_figure(figure, output, style)
    return output
