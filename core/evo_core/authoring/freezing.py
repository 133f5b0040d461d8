"""Read-only templates: set-up state that cannot change after construction.

The predecessor's masks were class variables that any code could change at run time, and nobody
could tell whether a worker held the same ones as the main process. A template is frozen once its
outermost `__init__` returns: attribute assignment raises and every numpy array it holds, however
deeply, is made read-only. Unpickling re-freezes, since numpy restores arrays writeable.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any, Self

import gymnasium as gym
import numpy as np
from pydantic import BaseModel

__all__ = ["Frozen", "freeze_arrays"]


def freeze_arrays(value: Any, _seen: set[int] | None = None) -> None:
    """Make every numpy array reachable from `value` (containers and plain objects) read-only."""
    seen = set() if _seen is None else _seen
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        value.setflags(write=False)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            freeze_arrays(item, seen)
    elif isinstance(value, dict):
        for item in value.values():
            freeze_arrays(item, seen)
    elif isinstance(value, (gym.Space, BaseModel, np.random.Generator, type)):
        return  # owned by other libraries, or immutable already
    elif hasattr(value, "__dict__"):
        for item in vars(value).values():
            freeze_arrays(item, seen)


class Frozen:
    """Base class: instances are immutable after construction, also after unpickling."""

    __frozen: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__init__ = _freeze_after(cls.__dict__["__init__"])  # type: ignore[method-assign]

    def __setattr__(self, name: str, value: Any) -> None:
        if self.__dict__.get("_Frozen__frozen", False):
            raise AttributeError(
                f"{type(self).__name__} is immutable: set {name!r} in __init__, or build a new "
                "template (templates are shared by every brain and every worker)")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot delete {name!r}")

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        freeze_arrays(self)

    def derive(self, change: Callable[[Self], None]) -> Self:
        """A shallow copy on which `change` may set attributes, frozen again afterwards.

        This is how a template makes a variant of itself (for example `restore` with saved
        masks) without calling `__init__` again, whose signature a subclass may have changed.
        """
        clone = copy.copy(self)
        object.__setattr__(clone, "_Frozen__frozen", False)
        change(clone)
        clone._freeze()
        return clone

    def _freeze(self) -> None:
        freeze_arrays(self)
        object.__setattr__(self, "_Frozen__frozen", True)


def _freeze_after(init: Callable[..., None]) -> Callable[..., None]:
    """Wrap an `__init__` so the object freezes when the outermost constructor returns."""

    @functools.wraps(init)
    def wrapped(self: Frozen, *args: Any, **kwargs: Any) -> None:
        depth = self.__dict__.get("_Frozen__depth", 0)
        object.__setattr__(self, "_Frozen__depth", depth + 1)
        try:
            init(self, *args, **kwargs)
        finally:
            object.__setattr__(self, "_Frozen__depth", depth)
        if depth == 0:
            self._freeze()

    return wrapped
