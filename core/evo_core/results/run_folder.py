"""The files of one run, where they live, and how they are written and read back.

Everything numeric is `.npz` readable with `allow_pickle=False`; brain templates that have state
a seed alone should not be trusted to rebuild (CTRNN masks) save it next to the genomes, under
`template.<name>`, so a replay rebuilds exactly the trained brain.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.errors import UserError
from evo_core.results.files import write_json, write_npz

__all__ = ["RunFolder", "TEMPLATE_PREFIX"]

TEMPLATE_PREFIX = "template."


class RunFolder:
    def __init__(self, path: Path) -> None:
        self.path = path

    config_file = property(lambda self: self.path / "config.json")
    log_file = property(lambda self: self.path / "log.csv")
    best_file = property(lambda self: self.path / "best.npz")
    hall_of_fame_file = property(lambda self: self.path / "hall_of_fame.npz")
    checkpoint_file = property(lambda self: self.path / "checkpoint.npz")
    plot_file = property(lambda self: self.path / "fitness.png")

    @classmethod
    def create(cls, path: Path) -> RunFolder:
        """A new, empty run folder; an existing non-empty folder is never written into."""
        if path.exists() and (not path.is_dir() or any(path.iterdir())):
            raise UserError(f"{path}: already exists and is not an empty folder; choose another "
                            "--out, or `evo resume` it")
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"{path}: cannot create the run folder: {exc.strerror}") from None
        if not os.access(path, os.W_OK | os.X_OK):
            raise UserError(f"{path}: the folder is not writable; choose another --out")
        return cls(path)

    @classmethod
    def open(cls, path: Path) -> RunFolder:
        folder = cls(path)
        if not folder.config_file.is_file():
            raise UserError(f"{path}: not a run folder (no config.json); give a folder made by "
                            "`evo train`")
        return folder

    def write_config(self, config: dict[str, Any]) -> None:
        write_json(self.config_file, config)

    def read_config(self) -> dict[str, Any]:
        try:
            data = json.loads(self.config_file.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise UserError(f"{self.config_file}: unreadable ({exc}); the run folder is "
                            "damaged") from None
        if not isinstance(data, dict):
            raise UserError(f"{self.config_file}: not a config table; the run folder is damaged")
        return data

    def write_best(self, genome: NDArray[np.float64], fitness: float, generation: int,
                   template_state: dict[str, NDArray[Any]]) -> None:
        write_npz(self.best_file, {"genome": genome, "fitness": np.float64(fitness),
                                   "generation": np.int64(generation),
                                   **_prefixed(template_state)})

    def write_hall_of_fame(self, arrays: dict[str, NDArray[Any]],
                           template_state: dict[str, NDArray[Any]]) -> None:
        write_npz(self.hall_of_fame_file, {**arrays, **_prefixed(template_state)})

    def read_best(self) -> tuple[NDArray[np.float64], float, dict[str, NDArray[Any]]]:
        arrays = load_npz(self.best_file, "the run has not finished a generation yet")
        template = {k[len(TEMPLATE_PREFIX):]: v for k, v in arrays.items()
                    if k.startswith(TEMPLATE_PREFIX)}
        try:
            genome, fitness = arrays["genome"], arrays["fitness"]
        except KeyError as exc:
            raise UserError(f"{self.best_file}: lacks {exc}; the run folder is damaged") from None
        if genome.dtype.kind not in "fiu" or fitness.shape != () or fitness.dtype.kind not in "fiu":
            raise UserError(f"{self.best_file}: genome ({genome.dtype}) and fitness "
                            f"({fitness.dtype}, shape {fitness.shape}) must be real numbers, the "
                            "fitness a single one; the run folder is damaged")
        return np.ascontiguousarray(genome, dtype=np.float64), float(fitness), template


def _prefixed(state: dict[str, NDArray[Any]]) -> dict[str, NDArray[Any]]:
    return {TEMPLATE_PREFIX + name: value for name, value in state.items()}


def load_npz(path: Path, missing_hint: str) -> dict[str, NDArray[Any]]:
    """All arrays of an `.npz`, never unpickling; errors name the file."""
    if not path.is_file():
        raise UserError(f"{path}: missing; {missing_hint}")
    try:
        with np.load(path, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise UserError(f"{path}: unreadable ({exc}); the file is truncated or not an .npz") \
            from None
