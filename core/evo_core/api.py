"""evo from Python: train, resume and inspect runs from notebooks and scripts.

    from evo_core import api

    run = api.train("examples/cartpole_ctrnn.toml", overrides={"generations": 10})
    run.log_frame()          # log.csv as a pandas DataFrame
    run.replay(episodes=5)   # the champion's returns on episodes it never trained on

This is the host-side API (the `evo_core` namespace itself is the plugin authors' API). The
`evo` command is a thin layer over it: `evo train` and `evo resume` prepare and run a
`Session` through the same functions, so the same config and seed give the same run folder
either way. A mistake raises `evo_core.UserError` with the one-line message the command prints;
Ctrl-C (KeyboardInterrupt) propagates once the last finished generation is checkpointed, and
`resume` continues from there.
"""

from __future__ import annotations

import numbers
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from evo_core.config import read_config_file, validate_config
from evo_core.config.schema import ExperimentConfig
from evo_core.contract.protocols import IBrain, IBrainTemplate
from evo_core.errors import UserError
from evo_core.hooks.discovery import get_registry
from evo_core.hooks.events import EventRelay
from evo_core.results.files import load_npz
from evo_core.results.log_file import LOG_COLUMNS, NOVELTY_COLUMNS, STOP_COLUMNS, read_log
from evo_core.results.plot import plot_runs
from evo_core.results.run_folder import RunFolder
from evo_core.running.replay import Champion, load_champion, replay, write_gif
from evo_core.running.seeding import REPLAY_SEED
from evo_core.running.session import Session, new_session, resume_session

if TYPE_CHECKING:
    import pandas

__all__ = ["Run", "Best", "train", "resume", "compare", "prepare_train", "prepare_resume",
           "run_session", "NO_CHECKPOINT"]

#: a config file (.toml or .json), or a dict of the same structure
ConfigSource = str | os.PathLike[str] | Mapping[str, Any]
PathLike = str | os.PathLike[str]

#: log.csv columns that count things; the others are floats
_INTEGER_COLUMNS = frozenset({"generation", "evaluations", "steps", "archive_size", "solved",
                              "test_episodes"})
#: log.csv's columns after the standard ones, present only when the run configured them
_OPTIONAL_COLUMNS = NOVELTY_COLUMNS + STOP_COLUMNS


@dataclass(frozen=True)
class Best:
    """A genome with its fitness (mean return) and the generation that first evaluated it."""

    genome: NDArray[np.float64]
    fitness: float
    generation: int


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
        folder = RunFolder.open(Path(run_dir))
        config = validate_config(folder.read_config(), get_registry(),
                                 source=str(folder.config_file))
        return cls(folder.path, config)

    def __repr__(self) -> str:
        return f"Run({str(self.path)!r})"

    @property
    def log(self) -> list[dict[str, int | float]]:
        """log.csv, one dict per finished generation, its values as numbers."""
        path = self._folder.log_file
        if not path.is_file():
            raise UserError(f"{self.path}: no log.csv; is it a run folder made by `evo train`?")
        try:
            rows = read_log(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"{path}: unreadable ({exc}); the run folder is damaged") from None
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
            return _best(arrays["genome"], arrays["fitness"], arrays["generation"])
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
            return [_best(g, f, n) for g, f, n in zip(genomes, fitness, generation)]
        except KeyError as exc:
            raise UserError(f"{file}: lacks {exc}; the run folder is damaged") from None
        except (TypeError, ValueError) as exc:
            raise UserError(f"{file}: {exc}; the run folder is damaged") from None

    def _champion(self) -> Champion:
        return load_champion(self._folder, get_registry())

    def template(self) -> IBrainTemplate:
        """The brain template the run trained with, rebuilt with its saved state (masks)."""
        return self._champion().template

    def champion(self) -> IBrain:
        """A fresh brain of the best genome: `reset()`, then `step(observation)` per step."""
        champion = self._champion()
        return champion.template.make(champion.genome)

    def replay(self, episodes: int = 10, seed: int | None = None,
               render: PathLike | None = None) -> list[float]:
        """The champion's returns on `episodes` episodes. The default seed lies outside the range
        training draws from (episodes it never trained on); `render` writes an animated GIF of
        the first episode."""
        if not _whole(episodes, 1):
            raise UserError(f"episodes: must be a whole number of at least 1, got {episodes!r}")
        if seed is not None and not _whole(seed, 0):
            raise UserError(f"seed: must be a whole number of at least 0, got {seed!r}")
        champion = self._champion()
        result = replay(champion, int(episodes), REPLAY_SEED if seed is None else int(seed),
                        1 if render is not None else 0)
        if render is not None:
            write_gif(result.frames, Path(render))
        return result.returns

    def plot(self, out: PathLike | None = None) -> Path:
        """Draw the fitness curves to `out` (default: the run's fitness.png); the file's path."""
        return plot_runs([self.path], Path(out) if out is not None else self._folder.plot_file)


def _whole(value: object, least: int) -> bool:
    """An integer (numpy's too, not a bool) of at least `least`."""
    return (isinstance(value, numbers.Integral) and not isinstance(value, bool)
            and int(value) >= least)


def _best(genome: Any, fitness: Any, generation: Any) -> Best:
    vector = np.array(genome, dtype=np.float64)
    if vector.ndim != 1:
        raise ValueError(f"a genome must be a vector, got shape {vector.shape}")
    vector.flags.writeable = False  # Best is a value
    return Best(vector, float(fitness), int(generation))


def _numbers(row: dict[str, str], path: Path, line: int) -> dict[str, int | float]:
    try:
        columns = LOG_COLUMNS + [c for c in _OPTIONAL_COLUMNS if row.get(c) is not None]
        return {column: int(row[column]) if column in _INTEGER_COLUMNS else float(row[column])
                for column in columns}
    except (KeyError, TypeError, ValueError):
        raise UserError(f"{path}: line {line} is not a row of numbers with the columns "
                        f"{', '.join(LOG_COLUMNS)}; the run folder is damaged") from None


def _pairs(overrides: Mapping[str, Any] | None) -> list[tuple[str, Any]]:
    if overrides is None:
        return []
    if not isinstance(overrides, Mapping):
        raise UserError("overrides: must be a dict of dotted keys to values, e.g. "
                        "{'generations': 50, 'brain.number_neurons': 20}")
    return [(str(key), value) for key, value in overrides.items()]


def prepare_train(config: ConfigSource, *, out: PathLike | None = None,
                  overrides: Sequence[tuple[str, Any]] = (),
                  override_texts: Mapping[str, str] | None = None) -> Session:
    """A new run, validated, built and with its folder written, ready for `run_session`.
    `override_texts` (dotted key -> the assignment as typed) lets messages quote `--set`."""
    registry = get_registry()
    folder = Path(out) if out is not None else None
    if isinstance(config, Mapping):
        return new_session(dict(config), registry, source="config", config_file=None,
                           out=folder, overrides=overrides, override_texts=override_texts)
    path = Path(config)
    return new_session(read_config_file(path), registry, source=str(path), config_file=path,
                       out=folder, overrides=overrides, override_texts=override_texts)


def prepare_resume(run_dir: PathLike, *, generations: int | None = None,
                   overrides: Sequence[tuple[str, Any]] = (),
                   override_texts: Mapping[str, str] | None = None) -> Session:
    """A stopped or finished run restored from its checkpoint, ready for `run_session`."""
    return resume_session(Path(run_dir), generations=generations, overrides=overrides,
                          override_texts=override_texts)


#: what resuming a run without a checkpoint means
NO_CHECKPOINT = "no checkpoint yet; the run starts again from generation 1"


def run_session(session: Session, *, progress: bool = False) -> Run:
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
    return run_session(prepare_train(config, out=out, overrides=_pairs(overrides)),
                       progress=progress)


def resume(run_dir: PathLike, *, generations: int | None = None,
           overrides: Mapping[str, Any] | None = None, progress: bool = False) -> Run:
    """Continue a stopped (or finished, with more `generations`) run exactly, as `evo resume`
    does; `overrides` may change only what `evo resume --set` may."""
    session = prepare_resume(run_dir, generations=generations, overrides=_pairs(overrides))
    if session.state.generation == 0:
        warnings.warn(NO_CHECKPOINT, UserWarning, stacklevel=2)
    return run_session(session, progress=progress)


def compare(runs: Iterable[Run | PathLike], out: PathLike, *, title: str | None = None) -> Path:
    """Draw the fitness curves of several runs on one figure, as `evo plot A B --out FILE`."""
    paths = [run.path if isinstance(run, Run) else Path(run) for run in runs]
    if not paths:
        raise UserError("compare: give at least one run")
    return plot_runs(paths, Path(out), title)
