"""Read-only templates: set-up state that cannot change after construction.

The predecessor's masks were class variables that any code could change at run time, and nobody
could tell whether a worker held the same ones as the main process. A template is frozen once its
outermost `__init__` returns: attribute assignment raises and every numpy array it holds, however
deeply, is made read-only. Unpickling re-freezes, since numpy restores arrays writeable.
"""

from __future__ import annotations

import copy
import functools
import types
from collections.abc import Callable, Iterator
from typing import Any, Self

import gymnasium as gym
import numpy as np
from pydantic import BaseModel

__all__ = ["Frozen", "freeze_arrays", "reachable_arrays"]


def reachable_arrays(value: Any, path: str = "template") -> Iterator[tuple[str, np.ndarray]]:
    """Every numpy array reachable from `value` through containers and plain objects' attributes,
    each once, with the path that reaches it (`template.masks['w']`).

    Freezing uses it to make them read-only and the conformance checker to find one that is not,
    so both agree on what "held by the template" means. Spaces, pydantic models, Generators and
    classes are not entered: other libraries own them, or they are immutable already. The walk
    keeps its own stack, so deep structures cannot exhaust the recursion limit.
    """
    seen: set[int] = set()
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, np.ndarray):
            yield where, item
            continue
        children: list[tuple[str, Any]]
        if isinstance(item, (list, tuple)):
            children = [(f"{where}[{index}]", each) for index, each in enumerate(item)]
        elif isinstance(item, (set, frozenset)):
            children = [(f"{where}{{...}}", each) for each in item]
        elif isinstance(item, dict):
            children = [(f"{where}[{key!r}]", each) for key, each in item.items()]
        elif isinstance(item, _OPAQUE):
            continue
        else:
            children = [(f"{where}.{name}", each) for name, each in _attributes(item)]
        stack.extend(reversed(children))  # depth-first in declaration order


#: Not entered by `reachable_arrays`.
_OPAQUE = (gym.Space, BaseModel, np.random.Generator, type, types.ModuleType)


def _attributes(value: Any) -> list[tuple[str, Any]]:
    """An object's instance attributes, from `__dict__` and from `__slots__`, read without
    calling its `__getattr__`."""
    found: list[tuple[str, Any]] = []
    try:
        instance_dict = object.__getattribute__(value, "__dict__")
    except AttributeError:  # no instance dictionary (builtins, slotted classes)
        instance_dict = None
    if isinstance(instance_dict, dict):
        found.extend(instance_dict.items())
    for cls in type(value).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name in ("__dict__", "__weakref__"):
                continue
            if name.startswith("__") and not name.endswith("__"):  # stored name-mangled
                name = f"_{cls.__name__.lstrip('_')}{name}"
            try:
                found.append((name, object.__getattribute__(value, name)))
            except AttributeError:  # a slot never assigned
                continue
    return found


def freeze_arrays(value: Any) -> None:
    """Make every numpy array reachable from `value` (containers and plain objects) read-only."""
    for _, array in reachable_arrays(value):
        array.setflags(write=False)


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
