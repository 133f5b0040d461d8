"""evo from Python: train, resume and inspect runs from notebooks and scripts.

    from evo_core import api

    run = api.train("examples/cartpole_ctrnn.toml", overrides={"generations": 10})
    run.log_frame()          # log.csv as a pandas DataFrame
    run.replay(episodes=5)   # the champion's returns on episodes it never trained on
    run.export("champion.onnx")  # the champion as an ONNX model (evo-core[onnx])

This is the host-side API (the `evo_core` namespace itself is the plugin authors' API). The
`evo` command is a thin layer over it: `evo train` and `evo resume` prepare and run a
`Session` through the same functions, so the same config and seed give the same run folder
either way. A mistake raises `evo_core.UserError` with the one-line message the command prints;
Ctrl-C (KeyboardInterrupt) propagates once the last finished generation is checkpointed, and
`resume` continues from there.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np
from numpy.typing import NDArray

from evo_core.api_arguments import (
    config_argument,
    flag_argument,
    image_argument,
    items_argument,
    number_argument,
    output_argument,
    overrides_argument,
    path_argument,
    text_argument,
    whole_argument,
)
from evo_core.config.schema import ExperimentConfig
from evo_core.contract.protocols import ArchiveGrid, IBrain, IBrainTemplate
from evo_core.errors import UserError
from evo_core.hooks.discovery import get_registry
from evo_core.hooks.events import EventRelay
from evo_core.results.checkpoint import read_run_checkpoint
from evo_core.results.files import write_atomic
from evo_core.results.log_file import (
    CHAMPION_COLUMNS,
    LOG_COLUMNS,
    NOVELTY_COLUMNS,
    STOP_COLUMNS,
    THRESHOLD_COLUMNS,
    read_log,
)
from evo_core.results.plot import plot_runs, save_figure
from evo_core.results.plot_style import PlotStyle
from evo_core.results.reading import load_npz
from evo_core.results.run_folder import RunFolder
from evo_core.results.trace_file import read_trace
from evo_core.results.trace_plot import default_output, trace_figure, trace_title
from evo_core.running.archive_figure import write_archive_figure
from evo_core.running.export import export_run
from evo_core.running.normalization import NormalizedBrain
from evo_core.running.received import OPEN_KEYS, read_received, replay_fix
from evo_core.running.replay import Champion, load_champion, replay
from evo_core.running.seeding import REPLAY_SEED
from evo_core.running.session import NO_CHECKPOINT, Session, prepare_resume, prepare_train
from evo_core.running.tracing import write_trace

if TYPE_CHECKING:
    import pandas

__all__ = ["Run", "Best", "train", "resume", "compare", "export"]

#: a config file (.toml or .json), or a dict of the same structure
ConfigSource = str | os.PathLike[str] | Mapping[str, Any]
PathLike = str | os.PathLike[str]

#: log.csv columns that count things; the others are floats
_INTEGER_COLUMNS = frozenset({"generation", "evaluations", "steps", "archive_size", "solved",
                              "test_episodes"})
#: log.csv's columns after the standard ones, present only when the run configured them
_OPTIONAL_COLUMNS = NOVELTY_COLUMNS + THRESHOLD_COLUMNS + CHAMPION_COLUMNS + STOP_COLUMNS


@dataclass(frozen=True)
class Best:
    """A genome with its fitness (mean return), the generation that first evaluated it, and its
    fresh score (`[champion]`: the mean return of episodes it never trained on; None when it
    played none)."""

    genome: NDArray[np.float64]
    fitness: float
    generation: int
    fresh: float | None = None


class Run:
    """A run folder: its config, its log, its best genomes, and its champion brain.

    Everything is read from the folder when asked for, so a `Run` of a run that is still
    training (in another process, or a tracker's view during training) sees its progress."""

    def __init__(self, path: Path, config: ExperimentConfig) -> None:
        self.path = path
        self.config = config
        self._folder = RunFolder(path)

    @classmethod
    def open(cls, run_dir: PathLike) -> Run:
        """The run in `run_dir`, a folder made by `evo train` or `train()`."""
        folder = RunFolder.open(path_argument(run_dir, "run_dir"))
        config = read_received(folder, get_registry(), keys=OPEN_KEYS, command="",
                               give_again=replay_fix(folder))
        return cls(folder.path, config)

    def __repr__(self) -> str:
        return f"Run({str(self.path)!r})"

    def checkpointed_optimizer(self) -> tuple[int, dict[str, Any]] | None:
        """The generation of the last checkpoint and the optimizer state it holds (what the
        optimizer's `state()` returned), or None before the first checkpoint. A checkpoint that
        is not this run's, or is damaged, raises UserError."""
        checkpoint = read_run_checkpoint(self._folder, self.config.provenance)
        return None if checkpoint is None else (checkpoint.generation, checkpoint.optimizer)

    def write_file(self, name: str, data: bytes | Callable[[BinaryIO], None]) -> Path:
        """Write `data` (or let the callable write into the open file) to the file `name` of the
        run folder, atomically and never through a symbolic link: for a plugin's own files
        (evo-qd's archive.png). `name` is a plain file name."""
        if not name or name != Path(name).name or name in (".", ".."):
            raise UserError(f"{name!r}: a plugin's file in a run folder needs a plain file name")
        path = self.path / name
        write_atomic(path, data)
        return path

    def write_archive_figure(self, archive: ArchiveGrid) -> Path:
        """Draw a QD archive into the run folder's archive.png in the task's own terms (on
        the maze when its descriptor is an `IPlanarMap`'s final position:
        `running/archive_figure.py`); its path. For an optimizer plugin's run-end hook
        (evo-qd's)."""
        if not isinstance(archive, ArchiveGrid):
            raise UserError(f"write_archive_figure: needs an evo_core.ArchiveGrid, got "
                            f"{type(archive).__name__}")
        return write_archive_figure(self.path, self.config, archive)

    @property
    def log(self) -> list[dict[str, int | float]]:
        """log.csv, one dict per finished generation, its values as numbers."""
        path = self._folder.log_file
        rows = read_log(path, f"{self.path}: no log.csv; is it a run folder made by `evo train`?")
        return [_numbers(row, path, line) for line, row in enumerate(rows, start=2)]

    def log_frame(self) -> pandas.DataFrame:
        """log.csv as a pandas DataFrame (needs pandas: `pip install evo-core[pandas]`)."""
        try:
            import pandas
        except ImportError:
            raise UserError("Run.log_frame() needs pandas; install it with "
                            "`pip install 'evo-core[pandas]'`, or use Run.log") from None
        log = self.log
        extra = [column for column in _OPTIONAL_COLUMNS if log and column in log[0]]
        return pandas.DataFrame(log, columns=LOG_COLUMNS + extra)

    @property
    def best(self) -> Best:
        """The best genome ever evaluated (best.npz)."""
        file = self._folder.best_file
        arrays = load_npz(file, "the run has not finished a generation yet")
        try:
            return _best(arrays["genome"], arrays["fitness"], arrays["generation"],
                         arrays.get("fresh"))
        except KeyError as exc:
            raise UserError(f"{file}: lacks {exc}; the run folder is damaged") from None
        except (TypeError, ValueError) as exc:
            raise UserError(f"{file}: {exc}; the run folder is damaged") from None

    @property
    def hall_of_fame(self) -> list[Best]:
        """The best distinct genomes (hall_of_fame.npz), best first."""
        file = self._folder.hall_of_fame_file
        arrays = load_npz(file, "the run has not finished a generation yet")
        try:
            genomes, fitness, generation = (arrays["genomes"], arrays["fitness"],
                                            arrays["generation"])
            if not (genomes.ndim == 2 and len(genomes) == len(fitness) == len(generation)):
                raise ValueError(f"genomes {genomes.shape}, fitness {fitness.shape} and "
                                 f"generation {generation.shape} do not match")
            none = np.zeros(len(fitness))
            fresh, played = arrays.get("fresh", none), arrays.get("fresh_episodes", none)
            if fresh.shape != fitness.shape or played.shape != fitness.shape:
                raise ValueError(f"fresh {fresh.shape} and fresh_episodes {played.shape} do not "
                                 f"match fitness {fitness.shape}")
            return [_best(g, f, n, s if p > 0 else None)
                    for g, f, n, s, p in zip(genomes, fitness, generation, fresh, played)]
        except KeyError as exc:
            raise UserError(f"{file}: lacks {exc}; the run folder is damaged") from None
        except (TypeError, ValueError) as exc:
            raise UserError(f"{file}: {exc}; the run folder is damaged") from None

    def _champion(self, hof: int | None = None, *, replaying: bool = False,
                  max_steps: int | None = None, render_option: str | None = None) -> Champion:
        return load_champion(self._folder, get_registry(), hof, replaying=replaying,
                             max_steps=max_steps, render_option=render_option)

    def template(self) -> IBrainTemplate:
        """The brain template the run trained with, rebuilt with its saved state (masks)."""
        return self._champion().template

    def champion(self, hof: int | None = None) -> IBrain:
        """A fresh brain of the best genome (or of the hall of fame's member of rank `hof`, 1
        the best): `reset()`, then `step(observation)` per step, with the environment's own
        observations. A run with `observation_normalization = "running"` gives a
        `NormalizedBrain`, which normalises them as training did (its `brain` is the
        template's)."""
        champion = self._champion(_rank(hof))
        brain = champion.template.make(champion.genome)
        if champion.normalizer is None:
            return brain
        return NormalizedBrain(brain, champion.normalizer)

    def replay(self, episodes: int = 10, seed: int | None = None,
               render: PathLike | None = None, *, hof: int | None = None,
               trace: PathLike | None = None, show_observation: bool = False,
               show_neurons: bool = False, max_steps: int | None = None) -> list[float]:
        """The champion's returns on `episodes` episodes, as `evo replay`. The default seed lies
        outside the range training draws from (episodes it never trained on). `render` writes
        the first episode as a GIF or, for a name ending in .mp4, an MP4 (evo-core[render]),
        with the observation beside each frame if `show_observation` and the brain's state
        if `show_neurons`; `hof` replays the hall
        of fame's member of that rank (1 is the best); `trace` writes every step's
        observation, action, reward and brain state to that .npz file (`read_trace` reads
        it). `max_steps` ends each episode after that many steps, instead of the run's own
        limits (as `evo replay --max-steps`). Python or package versions other than the run's
        are a UserWarning that names them: the returns may differ in their last bits."""
        count = whole_argument(episodes, "episodes", 1)
        steps = None if max_steps is None else whole_argument(max_steps, "max_steps", 1)
        first = REPLAY_SEED if seed is None else whole_argument(seed, "seed", 0)
        video = None if render is None else output_argument(render, "render", (".gif", ".mp4"))
        trace_file = None if trace is None else output_argument(trace, "trace", (".npz",))
        champion = self._champion(_rank(hof), replaying=True, max_steps=steps,
                                  render_option=None if video is None else "render")
        result = replay(champion, count, first, video,
                        show_observation=flag_argument(show_observation, "show_observation"),
                        trace=trace_file is not None,
                        show_neurons=flag_argument(show_neurons, "show_neurons"))
        if trace_file is not None and result.trace is not None:
            write_trace(result.trace, trace_file)
        return result.returns

    def export(self, out: PathLike, *, hof: int | None = None) -> Path:
        """Write the champion (or the hall of fame's member of rank `hof`, 1 the best) to `out`
        as an ONNX model, as `evo export`: it takes the observation as the run's environment
        gives it and gives the action, one call per step (docs/export.md); needs
        `evo-core[onnx]`. The file's path."""
        file = output_argument(out, "out", (".onnx",))
        return export_run(self._folder, get_registry(), file, _rank(hof)).path

    def plot(self, out: PathLike | None = None, *, smooth: float = 0.0,
             column: bool = False) -> Path:
        """Draw the fitness curves to `out` (default: the run's fitness.png; .pgf for LaTeX);
        `smooth` and `column` as `evo plot --smooth --column`. The file's path."""
        own = self._folder.plot_file
        return plot_runs([self.path], image_argument(out, "out", own) if out is not None
                         else own, style=_style(smooth, column))

    def plot_trace(self, trace: PathLike, out: PathLike | None = None, *,
                   column: bool = False, episode: int | None = 0) -> Path:
        """Draw a trace written by `replay(trace=...)`, as `evo plot RUN --trace FILE`: one
        episode's observation, action, reward and return, and the brain's state over its steps
        (`episode`: from 0; None draws every episode; default output: FILE.png)."""
        file = path_argument(trace, "trace")
        output = image_argument(out if out is not None else default_output(file), "out")
        shown = None if episode is None else whole_argument(episode, "episode", 0)
        style = _style(0.0, column).for_output(output)
        save_figure(trace_figure(read_trace(file), trace_title(self.path), style, shown,
                                 source=f"trace {file}"), output, style)
        return output


def _style(smooth: object, column: object) -> PlotStyle:
    """`smooth` and `column` checked as `evo plot --smooth --column` checks them."""
    return PlotStyle(smooth=number_argument(smooth, "smooth", "generations"),
                     column=flag_argument(column, "column"))


def _rank(hof: object) -> int | None:
    """A hall-of-fame rank: 1 is the best."""
    if hof is None:
        return None
    try:
        return whole_argument(hof, "hof", 1)
    except UserError:
        raise UserError(f"hof: must be a rank of at least 1 (1 is the best), got "
                        f"{hof!r}") from None


def _best(genome: Any, fitness: Any, generation: Any, fresh: Any = None) -> Best:
    vector = np.array(genome, dtype=np.float64)
    if vector.ndim != 1:
        raise ValueError(f"a genome must be a vector, got shape {vector.shape}")
    vector.flags.writeable = False  # Best is a value
    return Best(vector, float(fitness), int(generation),
                None if fresh is None else float(fresh))


def _numbers(row: dict[str, str], path: Path, line: int) -> dict[str, int | float]:
    try:
        columns = LOG_COLUMNS + [c for c in _OPTIONAL_COLUMNS if row.get(c) is not None]
        return {column: int(row[column]) if column in _INTEGER_COLUMNS else float(row[column])
                for column in columns}
    except (KeyError, TypeError, ValueError):
        raise UserError(f"{path}: line {line} is not a row of numbers with the columns "
                        f"{', '.join(LOG_COLUMNS)}; the run folder is damaged") from None


def _run_session(session: Session, *, progress: bool = False) -> Run:
    """Train the session's generations, telling the plugins' event hooks; the finished run."""
    run = Run(session.folder.path, session.config)
    session.run(EventRelay(session.experiment.registry.manager, run), progress)
    return run


def train(config: ConfigSource, *, out: PathLike | None = None,
          overrides: Mapping[str, Any] | None = None, progress: bool = False) -> Run:
    """Run the experiment `config` (a .toml or .json file, or a dict of the same structure) into
    the new or empty folder `out` (default: runs/<time>-<environment>-<brain>), as `evo train`
    does. `overrides` maps dotted keys to values, as `--set` does; `progress` shows a progress
    bar on stderr."""
    checked = config_argument(config)
    folder = None if out is None else path_argument(out, "out")
    shown = flag_argument(progress, "progress")  # before the run folder is made
    return _run_session(prepare_train(checked, out=folder,
                                      overrides=overrides_argument(overrides)), progress=shown)


def resume(run_dir: PathLike, *, generations: int | None = None,
           overrides: Mapping[str, Any] | None = None, progress: bool = False) -> Run:
    """Continue a stopped (or finished, with more `generations`) run exactly, as `evo resume`
    does; `overrides` may change only what `evo resume --set` may. Python or package versions
    other than the run's are a UserWarning that names them: the continued run may then differ
    from an uninterrupted one in its last bits."""
    more = None if generations is None else whole_argument(generations, "generations", 1)
    shown = flag_argument(progress, "progress")
    session = prepare_resume(path_argument(run_dir, "run_dir"), generations=more,
                             overrides=overrides_argument(overrides))
    if session.state.generation == 0:
        warnings.warn(NO_CHECKPOINT, UserWarning, stacklevel=2)
    return _run_session(session, progress=shown)


def compare(runs: Iterable[Run | PathLike], out: PathLike, *, title: str | None = None,
            smooth: float = 0.0, column: bool = False) -> Path:
    """Draw the fitness curves of several runs on one figure, as `evo plot A B --out FILE`
    (`smooth`, `column` as `--smooth`, `--column`)."""
    paths = [run.path if isinstance(run, Run) else path_argument(run, f"runs[{index}]")
             for index, run in enumerate(items_argument(runs, "runs"))]
    if not paths:
        raise UserError("compare: give at least one run")
    return plot_runs(paths, image_argument(out, "out"),
                     None if title is None else text_argument(title, "title"),
                     _style(smooth, column))


def export(run_dir: PathLike, out: PathLike, *, hof: int | None = None) -> Path:
    """Write the champion of the run in `run_dir` to `out` as an ONNX model, as `evo export`
    (`Run.open(run_dir).export(out, hof=hof)`). The file's path."""
    return Run.open(run_dir).export(out, hof=hof)
