"""fitness.png: best and mean per generation with a mean ± std band, one colour per run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from evo_core.errors import UserError
from evo_core.results.files import write_atomic
from evo_core.results.log_file import read_log

__all__ = ["plot_runs"]


def _summary(run_dir: Path) -> str:
    """'environment · brain · optimizer' from the run's config.json, if it is readable."""
    try:
        config = json.loads((run_dir / "config.json").read_text(encoding="utf-8"))
        return " · ".join(str(x) for x in (config["environment"], config["brain"]["type"],
                                           config["optimizer"]["type"]))
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def plot_runs(run_dirs: list[Path], output: Path, title: str | None = None) -> Path:
    import matplotlib

    matplotlib.use("Agg")  # files only; no display needed (servers, CI)
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 4.5), dpi=100)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, run_dir in enumerate(run_dirs):
        log = run_dir / "log.csv"
        if not log.is_file():
            raise UserError(f"{run_dir}: no log.csv; is it a run folder made by `evo train`?")
        rows = read_log(log)
        if not rows:
            raise UserError(f"{log}: no generation finished yet; nothing to plot")
        generation = np.array([int(r["generation"]) for r in rows])
        best = np.array([float(r["best"]) for r in rows])
        mean = np.array([float(r["mean"]) for r in rows])
        std = np.array([float(r["std"]) for r in rows])
        colour = colours[index % len(colours)]
        label = run_dir.name if len(run_dirs) > 1 else ""
        axes.plot(generation, best, color=colour, lw=1.8, label=f"{label} best".strip())
        axes.plot(generation, mean, color=colour, lw=1.0, ls="--", label=f"{label} mean".strip())
        axes.fill_between(generation, mean - std, mean + std, color=colour, alpha=0.15, lw=0)
    axes.set_xlabel("generation")
    axes.set_ylabel("fitness (mean episode return)")
    axes.set_title(title or (run_dirs[0].name if len(run_dirs) == 1 else "comparison"))
    if len(run_dirs) == 1:
        axes.text(0.01, 0.98, _summary(run_dirs[0]), transform=axes.transAxes, va="top",
                  fontsize="small", color="0.35")
    axes.grid(alpha=0.3)
    axes.legend(loc="best", fontsize="small")
    figure.subplots_adjust(left=0.11, right=0.97, bottom=0.12, top=0.92)  # tight_layout costs 30 ms
    try:
        try:
            output.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"{output}: cannot write the plot ({exc.strerror or exc})") from None
        write_atomic(output, lambda handle: figure.savefig(handle, format=_format(output)))
    finally:
        plt.close(figure)
    return output


def _format(output: Path) -> str:
    """The image format named by the file's suffix (matplotlib cannot see a name through the
    open temporary file); PNG when there is none."""
    return output.suffix[1:].lower() or "png"
