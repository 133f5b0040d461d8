"""The files of one run, where they live, how they are written and read back, and its lock.

Everything numeric is `.npz` readable with `allow_pickle=False`; brain templates that have state
a seed alone should not be trusted to rebuild (CTRNN masks) save it next to the genomes, under
`template.<name>`, so a replay rebuilds exactly the trained brain; so does, with
`observation_normalization = "running"`, the observation normaliser each kept genome was
evaluated with (`observation_mean`, `observation_std`: results/observation_arrays.py).

A process that trains in a folder holds its lock (`.lock`) for the whole run, so a second `evo
train --out` or `evo resume` of the same folder is refused instead of interleaving two logs. The
lock is a POSIX record lock (`fcntl.lockf`): the kernel drops it when the process ends, however
it ends (kill -9 included), and, unlike `flock`, worker processes forked from the trainer do not
inherit it, so workers outliving a killed trainer cannot keep its folder locked.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.contract.observation_statistics import ObservationNormalizer
from evo_core.errors import UserError
from evo_core.results.files import (
    prefixed,
    refuse_link,
    remove_abandoned_temporaries,
    unprefixed,
    write_json,
    write_npz,
)
from evo_core.results.observation_arrays import NORMALIZER_KEYS
from evo_core.results.reading import JSON_BYTES, load_npz, open_regular, read_whole

__all__ = ["KeptGenome", "RunFolder", "TEMPLATE_GROUP", "LOCK_NAME", "run_file"]

#: Template state is stored under `template.<name>` keys next to the genomes.
TEMPLATE_GROUP = "template"
LOCK_NAME = ".lock"


@dataclass(frozen=True)
class KeptGenome:
    """A genome best.npz or hall_of_fame.npz keeps, with its fitness and what it was evaluated
    with: the template state, and the normaliser's arrays (empty when the run had none;
    unchecked: their size is the environment's, which the reader knows)."""

    genome: NDArray[np.float64]
    fitness: float
    template_state: dict[str, NDArray[Any]]
    normalizer: dict[str, NDArray[Any]]


class RunFolder:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock: int | None = None

    config_file = property(lambda self: self.path / "config.json")
    log_file = property(lambda self: self.path / "log.csv")
    best_file = property(lambda self: self.path / "best.npz")
    hall_of_fame_file = property(lambda self: self.path / "hall_of_fame.npz")
    checkpoint_file = property(lambda self: self.path / "checkpoint.npz")
    plot_file = property(lambda self: self.path / "fitness.png")
    lock_file = property(lambda self: self.path / LOCK_NAME)

    @classmethod
    def create(cls, path: Path) -> RunFolder:
        """A new, empty run folder, locked; an existing non-empty folder is never written into."""
        _refuse_non_empty(path)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"{path}: cannot create the run folder: {exc.strerror}") from None
        if not os.access(path, os.W_OK | os.X_OK):
            raise UserError(f"{path}: the folder is not writable; choose another --out")
        folder = cls(path)
        folder.lock()
        try:
            _refuse_non_empty(path)  # another `evo train --out` may have been quicker
        except BaseException:
            folder.unlock()
            raise
        return folder

    @classmethod
    def open(cls, path: Path) -> RunFolder:
        folder = cls(path)
        if not os.path.lexists(folder.config_file):  # anything else there: read_config says
            raise UserError(f"{path}: not a run folder (no config.json); give a folder made by "
                            "`evo train`")
        return folder

    def lock(self) -> None:
        """Hold the folder's lock until `unlock()` or the end of the process; refused in one
        line while another process holds it."""
        while True:
            try:
                descriptor = open_regular(self.lock_file, os.O_RDWR | os.O_CREAT,
                                          fix="remove it (evo makes the lock file again)")
            except OSError as exc:
                raise UserError(f"{self.lock_file}: cannot open the run's lock file "
                                f"({exc.strerror}); remove it if it is not a plain file") from None
            try:
                fcntl.lockf(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                holder = os.read(descriptor, 32).decode(errors="replace").strip() or "?"
                os.close(descriptor)
                if exc.errno not in (errno.EACCES, errno.EAGAIN):
                    raise UserError(f"{self.lock_file}: cannot lock the run folder "
                                    f"({exc.strerror})") from None
                raise UserError(f"{self.path}: another evo process (pid {holder}) is training in "
                                "this folder; wait for it to finish or stop it first") from None
            # a holder that was releasing may have unlinked the file we locked: lock the live one
            with contextlib.suppress(OSError):
                if os.fstat(descriptor).st_ino == os.stat(self.lock_file,
                                                          follow_symlinks=False).st_ino:
                    break
            os.close(descriptor)
        os.ftruncate(descriptor, 0)
        os.write(descriptor, f"{os.getpid()}\n".encode())
        self._lock = descriptor

    def unlock(self, remove: bool = True) -> None:
        """Release the lock (a finished run leaves no lock file behind)."""
        if self._lock is None:
            return
        if remove:
            with contextlib.suppress(OSError):
                self.lock_file.unlink()
        os.close(self._lock)
        self._lock = None

    def _files(self) -> tuple[Path, ...]:
        return (self.config_file, self.log_file, self.best_file, self.hall_of_fame_file,
                self.checkpoint_file, self.plot_file)

    def own_files(self) -> tuple[Path, ...]:
        """Every file evo keeps here, the lock included: what no command's output may replace
        (`run_file`)."""
        return (*self._files(), self.lock_file)

    def refuse_links(self) -> None:
        """One line if any file evo writes here is a symbolic link someone else planted."""
        for path in self._files():
            refuse_link(path)

    def remove_stale_temporaries(self) -> None:
        """Remove the temporary files a killed process left (call with the lock held: no live
        process is writing them). `evo plot` writes fitness.png without the lock, so of its
        temporaries only those whose writer is gone are removed
        (`remove_abandoned_temporaries` says why that is safe while another `evo plot`
        writes). Unlinking a planted link removes only the link."""
        for path in self._files():
            if path == self.plot_file:
                remove_abandoned_temporaries(path)
                continue
            for stale in self.path.glob(f".{path.name}.*.tmp"):
                with contextlib.suppress(OSError):
                    stale.unlink()

    def write_config(self, config: dict[str, Any]) -> None:
        write_json(self.config_file, config)

    def read_config(self) -> dict[str, Any]:
        text = read_whole(self.config_file, JSON_BYTES, "config.json",
                          f"{self.path}: not a run folder (no config.json); give a folder made "
                          "by `evo train`")
        try:
            data = json.loads(text.decode("utf-8"))
        except (ValueError, RecursionError) as exc:
            raise UserError(f"{self.config_file}: unreadable ({exc}); the run folder is "
                            "damaged") from None
        if not isinstance(data, dict):
            raise UserError(f"{self.config_file}: not a config table; the run folder is damaged")
        return data

    def write_best(self, genome: NDArray[np.float64], fitness: float, generation: int,
                   template_state: dict[str, NDArray[Any]],
                   fresh: tuple[float, int] | None = None,
                   normalizer: ObservationNormalizer | None = None) -> None:
        """best.npz: the champion, its training fitness, the generation that found it, and,
        when it was chosen on fresh episodes (`[champion]`), its fresh score and how many
        episodes that is the mean of; with `observation_normalization = "running"`, the
        normaliser its generation was evaluated with (`observation_mean`, `observation_std`)."""
        scores = {} if fresh is None else {"fresh": np.float64(fresh[0]),
                                           "fresh_episodes": np.int64(fresh[1])}
        normalizers = {} if normalizer is None else dict(zip(
            NORMALIZER_KEYS, (normalizer.mean, normalizer.std)))
        write_npz(self.best_file, {"genome": genome, "fitness": np.float64(fitness),
                                   "generation": np.int64(generation), **scores, **normalizers,
                                   **prefixed(TEMPLATE_GROUP, template_state)})

    def write_hall_of_fame(self, arrays: dict[str, NDArray[Any]],
                           template_state: dict[str, NDArray[Any]]) -> None:
        write_npz(self.hall_of_fame_file,
                  {**arrays, **prefixed(TEMPLATE_GROUP, template_state)})

    def read_hall_of_fame_member(self, rank: int, option: str) -> KeptGenome:
        """The hall of fame's member of `rank` (1 is the best), as `read_best` gives the best;
        `option` names the argument that asked for it (`--hof`, `hof`)."""
        return read_hall_of_fame_member(self, rank, option)

    def read_best(self) -> KeptGenome:
        """best.npz's genome, fitness, template state and normaliser arrays (the genome's size is
        checked against the brain once its template state is restored, the normaliser against
        the environment: `running.replay`)."""
        arrays = load_npz(self.best_file, "the run has not finished a generation yet")
        try:
            genome, fitness = arrays["genome"], arrays["fitness"]
        except KeyError as exc:
            raise UserError(f"{self.best_file}: lacks {exc}; the run folder is damaged") from None
        if genome.dtype.kind not in "fiu" or not np.isfinite(genome).all():
            raise UserError(f"{self.best_file}: genome ({genome.dtype}) holds values that are not "
                            "finite real numbers; the run folder is damaged")
        if fitness.shape != () or fitness.dtype.kind not in "fiu":
            raise UserError(f"{self.best_file}: genome ({genome.dtype}) and fitness "
                            f"({fitness.dtype}, shape {fitness.shape}) must be real numbers, the "
                            "fitness a single one; the run folder is damaged")
        return KeptGenome(np.ascontiguousarray(genome, dtype=np.float64), float(fitness),
                          unprefixed(TEMPLATE_GROUP, arrays),
                          {key: arrays[key] for key in NORMALIZER_KEYS if key in arrays})


def run_file(path: Path) -> Path | None:
    """The file of a run folder that writing `path` would replace, when it is one evo keeps
    there (`RunFolder.own_files`) and its folder is a run folder (a config.json, or the lock of
    a run being made); None otherwise. Links and `..` are resolved first: `--trace t.npz`
    through a link, or `--out RUN/x/../best.npz`, names the file it would replace."""
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):  # a link loop: nothing evo keeps, and the writer refuses it
        return None
    folder = RunFolder(resolved.parent)
    if resolved in folder.own_files() and (os.path.lexists(folder.config_file)
                                           or os.path.lexists(folder.lock_file)):
        return resolved
    return None


def read_hall_of_fame_member(folder: RunFolder, rank: int, option: str) -> KeptGenome:
    """The hall of fame's genome of `rank` (1 is the best), its fitness, and the template state
    and normaliser arrays saved with it (the normaliser's row of the genome, where it has one,
    as the whole array where it has none: `normalizer_problem` refuses it); a UserError names
    the ranks there are, and the argument that asked (`option`: the command line's `--hof`, the
    API's `hof`)."""
    file = folder.hall_of_fame_file
    arrays = load_npz(file, "the run has not finished a generation yet")
    try:
        genomes, fitness = arrays["genomes"], arrays["fitness"]
    except KeyError as exc:
        raise UserError(f"{file}: lacks {exc}; the run folder is damaged") from None
    if genomes.ndim != 2 or fitness.shape != (len(genomes),) or genomes.dtype.kind not in "fiu" \
            or fitness.dtype.kind not in "fiu":
        raise UserError(f"{file}: genomes {genomes.shape} and fitness {fitness.shape} do not "
                        "match; the run folder is damaged")
    if not 1 <= rank <= len(genomes):
        raise UserError(f"{option} {rank}: the hall of fame of {folder.path} holds "
                        f"{len(genomes)} genome{'s' if len(genomes) != 1 else ''}; give a rank "
                        f"from 1 (the best) to {len(genomes)}")
    normalizer = {key: arrays[key][rank - 1] if arrays[key].shape[:1] == (len(genomes),)
                  else arrays[key] for key in NORMALIZER_KEYS if key in arrays}
    return KeptGenome(np.ascontiguousarray(genomes[rank - 1], dtype=np.float64),
                      float(fitness[rank - 1]), unprefixed(TEMPLATE_GROUP, arrays), normalizer)


def _refuse_non_empty(path: Path) -> None:
    if path.exists() and (not path.is_dir() or any(p.name != LOCK_NAME for p in path.iterdir())):
        raise UserError(f"{path}: already exists and is not an empty folder; choose another "
                        "--out, or `evo resume` it")
