"""The one rule for a config that came in a run folder: what its declared values may do.

`contract/trust.py` declares, on the fields themselves, the values that name code, a path or
an amount of a resource. This module walks a validated config (every model, every table and
list inside it, plugins' tables included), finds those values, and says which of them a received
folder may not decide on its own: a `module:Env` id whose module is not loaded, a peer to
connect to, a path outside the run folder, an amount above what this machine should spend on a
stranger's word. The caller (`running/received.py`) turns them into one line and a way to give
each value again.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from evo_core.contract.trust import NamesCode, NamesPath, Resource, TrustMarker

__all__ = ["Declared", "Refusal", "declared_values", "refusals", "covers"]


@dataclass(frozen=True)
class Declared:
    """A declared value of a config: where (`key`, dotted as `--set` writes it), what, and its
    declaration."""

    key: str
    value: Any
    marker: TrustMarker


@dataclass(frozen=True)
class Refusal:
    """A received value that needs the user's word: `why` it does, the `module` to load when it
    names one, else the value to give again with `--set` (`placeholder` when the folder's own
    value must not be suggested: an address, a path)."""

    key: str
    value: Any
    why: str
    module: str | None = None
    placeholder: str | None = None


def declared_values(model: BaseModel, prefix: str = "") -> Iterator[Declared]:
    """Every declared value inside `model`, depth first, in field order."""
    for name, field in type(model).model_fields.items():
        key, value = prefix + name, getattr(model, name)
        for marker in field.metadata:
            if isinstance(marker, Resource) and marker.counted is not None:
                yield Declared(key, marker.counted(model), marker)
            elif isinstance(marker, (NamesCode, NamesPath, Resource)):
                yield from _entries(key, value, marker)
        yield from _inside(key, value)


def _entries(key: str, value: Any, marker: TrustMarker) -> Iterator[Declared]:
    if isinstance(marker, Resource) and marker.key is not None:
        if isinstance(value, dict) and marker.key in value:
            yield Declared(f"{key}.{marker.key}", value[marker.key], marker)
        return
    if value is not None:
        yield Declared(key, value, marker)


def _inside(key: str, value: Any) -> Iterator[Declared]:
    if isinstance(value, BaseModel):
        yield from declared_values(value, key + ".")
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _inside(f"{key}[{index}]", item)
    elif isinstance(value, dict):
        for name, item in value.items():
            yield from _inside(f"{key}.{name}", item)


def covers(given: Collection[str], key: str) -> bool:
    """Whether one of the `given` dotted keys sets `key` (itself, or a table or list holding
    it)."""
    return any(key == name or key.startswith((name + ".", name + "[")) for name in given)


def refusals(config: BaseModel, run_dir: Path, *, loaded: Callable[[str], bool],
             given_again: Collection[str] = ()) -> list[Refusal]:
    """The declared values of `config` (read from the folder `run_dir`) that the folder may not
    decide: those the user did not give again (`given_again`, dotted keys), and, for code, whose
    module is not loaded (`loaded(name)`)."""
    found = []
    for declared in declared_values(config):
        if covers(given_again, declared.key):
            continue
        refusal = _judge(declared, run_dir, loaded)
        if refusal is not None:
            found.append(refusal)
    return found


def _judge(declared: Declared, run_dir: Path, loaded: Callable[[str], bool]) -> Refusal | None:
    key, value, marker = declared.key, declared.value, declared.marker
    if isinstance(marker, NamesCode):
        if marker.what == "peer":
            return Refusal(key, value, f"the run reached {marker.label or 'the peer'} "
                           f"{_shown(value)}, and evo connects to no address a run folder names "
                           "(its replies are unpickled)", placeholder="ADDRESS")
        module = str(value).split(":")[0] if marker.what == "module" or ":" in str(value) \
            else None
        if module is None or loaded(module):
            return None
        return Refusal(key, value, f"{_shown(value)} imports the module {_shown(module)}",
                       module=module)
    if isinstance(marker, NamesPath):
        if _inside_folder(str(value), run_dir):
            return None
        return Refusal(key, value, f"{_shown(value)} lies outside the run folder, and evo "
                       "writes nowhere else a run folder names", placeholder="PATH")
    return _judge_amount(key, value, marker)


def _judge_amount(key: str, value: Any, marker: Resource) -> Refusal | None:
    if marker.unlimited is not None and value == marker.unlimited:
        return Refusal(key, value, f"{value!r} sets no limit on {marker.what}")
    amount = _amount(value)
    if amount is None:
        return Refusal(key, value, f"{_shown(value)} is not an amount of {marker.what}")
    most = marker.most()
    if amount <= most:
        return None
    return Refusal(key, value, f"{amount:,} {marker.what} is more than the {most:,} evo spends "
                   "on a received run folder's word")


def _amount(value: Any) -> int | None:
    """An integer amount (the value, or what its declaration counted)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _inside_folder(path: str, run_dir: Path) -> bool:
    """Whether `path` (relative ones start at the working directory, as evo resolves them)
    names a place inside `run_dir`, links and `..` resolved."""
    try:
        target, folder = Path(path).resolve(), run_dir.resolve()
    except (OSError, RuntimeError, ValueError):
        return False
    return target == folder or folder in target.parents


def _shown(value: Any) -> str:
    """A value as a message may quote it: a hostile config can hold any text."""
    text = repr(value)
    return text if len(text) <= 80 else text[:60] + "...'"
