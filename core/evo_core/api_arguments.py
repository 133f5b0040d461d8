"""The Python API's argument checks: a wrong argument is a `UserError` with the CLI's line.

The command line's arguments arrive as text and argparse and the commands check them; the API's
arrive as any Python value. Unchecked, `train(None)` or `Run.open(42)` failed inside pathlib
with a TypeError, `out="a\\0b"` with a ValueError, matplotlib refused `plot(out="x.txt")` in its
own words after the figure was drawn, `replay(render="x.txt")` wrote a GIF under that name, and
`compare("good")` took each character for a run folder. Every entry point of `evo_core.api`
checks its arguments here first, so each mistake is the one line the CLI prints for it, with
the API's argument name where the CLI names its flag.
"""

from __future__ import annotations

import math
import numbers
import os
import reprlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evo_core.errors import UserError
from evo_core.results.run_folder import run_file

__all__ = ["config_argument", "flag_argument", "image_argument", "output_argument",
           "items_argument", "number_argument", "overrides_argument", "path_argument",
           "text_argument", "whole_argument"]

_short = reprlib.Repr()
_short.maxstring = _short.maxother = 60


def _shown(value: object) -> str:
    """`value`'s type and a bounded repr, for a message about a wrong argument."""
    return f"{type(value).__name__} {_short.repr(value)}"


def path_argument(value: object, name: str) -> Path:
    """`value` as a path: a str or an os.PathLike of a str, not empty, without NUL."""
    text = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    if not isinstance(text, str):
        raise UserError(f"{name}: must be a path (a str or pathlib.Path), got {_shown(value)}")
    if not text:
        raise UserError(f"{name}: is empty; give a file or folder name")
    if "\0" in text:
        raise UserError(f"{name}: {_short.repr(text)} contains a NUL character, which no file "
                        "name can hold")
    return Path(text)


def config_argument(value: object) -> Path | Mapping[str, Any]:
    """A config: the path of a .toml or .json file, or a dict of the same structure."""
    if isinstance(value, Mapping):
        return value
    if not isinstance(value, (str, os.PathLike)):
        raise UserError(f"config: must be a config file's path (.toml or .json) or a dict of "
                        f"the same structure, got {_shown(value)}")
    return path_argument(value, "config")


def _not_a_run_file(path: Path, name: str, own: Path | None = None) -> None:
    """A UserError if writing `path` would replace a file a run folder keeps (its config,
    log, genomes, checkpoint, figure or lock: `results.run_folder.run_file`), unless it is
    `own`, the one such file the command writes anyway (`evo plot RUN`'s fitness.png). No
    command but training writes those, and a replay or a figure never holds the run's lock."""
    replaced = run_file(path)
    if replaced is not None and (own is None or replaced != own.resolve()):
        raise UserError(f"{name} {path}: would replace {replaced.name} of the run folder "
                        f"{replaced.parent}, a file evo keeps there; give another name")


def image_argument(value: object, name: str, own: Path | None = None) -> Path:
    """An image to write, as `evo plot --out` takes it: `.png` added when the name has no
    extension; an extension matplotlib cannot write refused before anything is drawn, and so
    is a file of a run folder (but `own`: `_not_a_run_file`)."""
    path = path_argument(value, name)
    if not path.suffix:
        path = path.with_name(path.name + ".png")
    else:
        from matplotlib.figure import Figure

        formats = Figure().canvas.get_supported_filetypes()
        if path.suffix[1:].lower() not in formats:
            raise UserError(f"{name} {path}: cannot write {path.suffix!r} images; use one of "
                            f"{', '.join('.' + f for f in sorted(formats))}")
    _not_a_run_file(path, name, own)
    return path


def output_argument(value: object, name: str, suffixes: tuple[str, ...]) -> Path:
    """A file to write, named with one of `suffixes` (`evo replay --render`, `--trace`);
    checked before any episode runs, so a bad path costs no replay time. The command line's
    options are checked here too, so both say the same. A file of a run folder is refused
    (`_not_a_run_file`): `--trace RUN/checkpoint.npz` would replace the run's checkpoint."""
    path = path_argument(value, name)
    if path.is_dir():
        raise UserError(f"{name} {path}: is a folder; give a file name such as "
                        f"{path / ('replay' + suffixes[0])}")
    if path.suffix.lower() not in suffixes:
        raise UserError(f"{name} {path}: give a name ending in {' or '.join(suffixes)}")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise UserError(f"{name} {path}: {parent} is a file, not a folder")
            break
    _not_a_run_file(path, name)
    return path


def whole_argument(value: object, name: str, least: int) -> int:
    """An integer (numpy's too, never a bool) of at least `least`."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) \
            and int(value) >= least:
        return int(value)
    raise UserError(f"{name}: must be a whole number of at least {least}, got {_shown(value)}")


def number_argument(value: object, name: str, what: str) -> float:
    """A finite real number (numpy's too, never a bool) of at least 0; `what` it counts."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        number = float(value)
        if math.isfinite(number) and number >= 0:
            return number
    raise UserError(f"{name}: must be a number of {what} >= 0, got {_shown(value)}")


def flag_argument(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise UserError(f"{name}: must be True or False, got {_shown(value)}")
    return value


def text_argument(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise UserError(f"{name}: must be a str, got {_shown(value)}")
    return value


def items_argument(value: object, name: str) -> list[object]:
    """A collection of things (runs): a list, a tuple or any other iterable, but not a single
    path, whose characters or parts would each be taken for one."""
    if isinstance(value, (str, bytes, os.PathLike, Mapping)) or not isinstance(value, Iterable):
        raise UserError(f"{name}: must be a list of runs (Run objects or run folders), got "
                        f"{_shown(value)}; for one run pass [it]")
    return list(value)


def overrides_argument(value: object) -> list[tuple[str, Any]]:
    """`overrides`, a dict of dotted keys to values (as `--set KEY=VALUE` gives them)."""
    if value is None:
        return []
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise UserError("overrides: must be a dict of dotted keys to values, e.g. "
                        "{'generations': 50, 'brain.number_neurons': 20}")
    return list(value.items())
