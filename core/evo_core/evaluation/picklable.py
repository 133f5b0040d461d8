"""Finding the part of an object that pickle cannot handle.

"cannot pickle '_thread.lock' object" does not say where the lock is. Handlers that send the
template to other processes need it picklable, so before a run starts the template is pickled
once, and if that fails its attributes are searched for the culprit, so that the message can
name it (`template.cache.lock`) instead of leaving the plugin's author to guess.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Unpicklable", "find_unpicklable"]


@dataclass(frozen=True)
class Unpicklable:
    """The innermost part of an object that fails to pickle, by its attribute path."""

    path: str
    error: str


def find_unpicklable(value: Any, path: str) -> Unpicklable | None:
    """None if `value` pickles; else the deepest attribute, item or element that does not."""
    return _search(value, path, set())


def _search(value: Any, path: str, seen: set[int]) -> Unpicklable | None:
    try:
        pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        return None
    except Exception as exc:  # noqa: BLE001 - pickle raises TypeError, PicklingError, ...
        message = str(exc).strip().splitlines()
        error = type(exc).__name__ + (f": {message[0]}" if message else "")
    if id(value) in seen:  # a cycle back to a part already being searched
        return None
    seen.add(id(value))
    for child_path, child in _parts(value, path):
        found = _search(child, child_path, seen)
        if found is not None:
            return found
    return Unpicklable(path, error)  # nothing inside fails alone: this object is the culprit


def _parts(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """What pickle would pickle along with `value`, as far as plain objects show it."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield f"{path}[{key!r}]", item
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield f"{path}[{index}]", item
    elif isinstance(value, (set, frozenset)):
        for item in value:
            yield f"{path} (an element)", item
    else:
        yield from _attributes(value, path)


def _attributes(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """An object's attributes, in its `__dict__` and in the slots of its classes."""
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict):
        for name, item in attributes.items():
            yield f"{path}.{name}", item
    for cls in type(value).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in ("__dict__", "__weakref__") and hasattr(value, name):
                yield f"{path}.{name}", getattr(value, name)
