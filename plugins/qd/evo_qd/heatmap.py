"""archive.png: the archive's elites over the first two descriptor values, drawn by the core in
the task's terms (`IRun.write_archive_figure`: over the maze's walls when the descriptor is
the robot's final position).

It is drawn from the run's checkpoint when training in a process ends (the `evo_run_finished`
event), so it shows exactly the archive a resume continues from, for `evo train`, `evo resume`
and the Python API alike, and the optimizer needs to know nothing about run folders. Training
always writes a checkpoint at its end (interrupted or not), whatever `checkpoint_every` is.
This module only turns pyribs' archive into the `ArchiveGrid` the core draws.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from evo_core import ArchiveGrid, IRun
from evo_qd.optimizer import load_scheduler

__all__ = ["archive_grid", "heatmap_from_checkpoint"]


def heatmap_from_checkpoint(run: IRun) -> Path | None:
    """Draw the run folder's archive.png from its checkpoint; None without a checkpoint."""
    from ribs.archives import GridArchive

    checkpointed = run.checkpointed_optimizer()
    if checkpointed is None:
        return None
    generation, state = checkpointed
    archive = load_scheduler(state).archive
    if not isinstance(archive, GridArchive):
        return None
    return run.write_archive_figure(archive_grid(archive, generation))


def archive_grid(archive: Any, generation: int) -> ArchiveGrid:
    """A pyribs GridArchive as the grid its figure draws: each cell's elite's objective over
    the first one or two descriptor values (NaN: empty), with more values the best elite over
    the others (one `fmax.at` over the elites)."""
    shown = min(archive.measure_dim, 2)
    dims = tuple(int(d) for d in archive.dims[:shown])
    objective = np.full(dims, np.nan)
    data = archive.data()
    if len(archive):
        cells = np.asarray(archive.int_to_grid_index(data["index"]))[:, :shown]
        np.fmax.at(objective, tuple(cells.T), np.asarray(data["objective"], dtype=np.float64))
    return ArchiveGrid(objective, np.asarray(archive.lower_bounds[:shown]),
                       np.asarray(archive.upper_bounds[:shown]), generation, len(archive),
                       int(archive.cells), int(archive.measure_dim))
