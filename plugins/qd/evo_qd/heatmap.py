"""archive.png: the archive's elites as a heatmap over the first two descriptor values.

It is drawn from the run's checkpoint when training in a process ends (the `evo_run_finished`
event), so it shows exactly the archive a resume continues from, for `evo train`, `evo resume`
and the Python API alike, and the optimizer needs to know nothing about run folders. Training
always writes a checkpoint at its end (interrupted or not), whatever `checkpoint_every` is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

from evo_core import IRun
from evo_qd.optimizer import load_scheduler

__all__ = ["ARCHIVE_IMAGE", "draw_heatmap", "write_heatmap", "heatmap_from_checkpoint"]

ARCHIVE_IMAGE = "archive.png"


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
    title = f"{run.path.name}: generation {generation}"
    return run.write_file(ARCHIVE_IMAGE, lambda handle: draw_heatmap(archive, handle, title))


def write_heatmap(archive: Any, output: Path, title: str = "") -> None:
    """The heatmap of `archive` into the file `output` (a new or replaced PNG)."""
    with output.open("wb") as handle:
        draw_heatmap(archive, handle, title)


def draw_heatmap(archive: Any, handle: BinaryIO, title: str = "") -> None:
    """The elites' fitness per cell (one or two descriptor values; with more, the first two,
    each cell showing the best elite over the others)."""
    import matplotlib

    matplotlib.use("Agg")  # files only; no display needed (servers, CI)
    import matplotlib.pyplot as plt
    from ribs.visualize import grid_archive_heatmap

    figure, axes = plt.subplots(figsize=(6.4, 5.2))
    try:
        shown = archive if archive.measure_dim <= 2 else _first_two(archive)
        grid_archive_heatmap(shown, ax=axes, cbar_kwargs={"label": "fitness of the elite"})
        filled = len(archive)
        # the title holds the run folder's name: drawn as it is, no `$` in it taken for mathtext
        axes.set_title(f"{title}\n{filled} of {archive.cells} cells filled".strip(),
                       parse_math=False)
        axes.set_xlabel("descriptor[0]")
        if shown.measure_dim == 2:
            axes.set_ylabel("descriptor[1]")
        figure.tight_layout()
        figure.savefig(handle, format="png")
    finally:
        plt.close(figure)


def _first_two(archive: Any) -> Any:
    """A 2-D archive of the elites projected onto the first two descriptor values."""
    from ribs.archives import GridArchive

    data = archive.data()
    projected = GridArchive(solution_dim=archive.solution_dim, dims=archive.dims[:2],
                            ranges=list(zip(archive.lower_bounds[:2],
                                            archive.upper_bounds[:2], strict=True)))
    if len(archive):
        projected.add(data["solution"], data["objective"], data["measures"][:, :2])
    return projected
