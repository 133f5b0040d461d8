"""The event hooks of one run, called through pluggy with every plugin isolated from the others.

pluggy's hook call stops at the first implementation that raises, so one broken tracker would end
the run, or hide the events from every tracker after it. Discovery therefore registers each
plugin through `isolated()`: a stand-in whose event hook implementations are the plugin's own,
guarded (same name, signature and `hookimpl` options, so `tryfirst`/`trylast`, hookwrappers,
`PluginManager.set_blocked`, tracing and `add_hookcall_monitoring` all work as pluggy documents).
A guarded implementation that raises is reported once by the `EventRelay` calling it, as a
warning naming the plugin; that plugin is left out of the rest of the run's events (through
`PluginManager.subset_hook_caller`) and training and the other plugins go on.

Order: pluggy calls the implementations of a hook last-registered first. Discovery registers the
plugins in reverse, so the events reach them in the order they were discovered (built-ins,
installed plugins by distribution name, then `--plugin`/`EVO_PLUGINS` modules in the order
given); `tryfirst`/`trylast` move a plugin as pluggy documents, and a hookwrapper wraps them all.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import warnings
from collections.abc import Callable, Generator, Iterator
from typing import Any

import pluggy

from evo_core.contract import hookspecs
from evo_core.contract.protocols import IRun
from evo_core.errors import first_line

__all__ = ["EventRelay", "isolated", "plugin_label"]

#: the relay whose call is under way in this thread (a guard reports a failure to it)
_current: contextvars.ContextVar[EventRelay | None] = contextvars.ContextVar(
    "evo_event_relay", default=None)


def plugin_label(plugin_name: str) -> str:
    """'plugin LABEL (DISTRIBUTION)' from discovery's 'DISTRIBUTION:LABEL' registration name."""
    distribution, _, label = plugin_name.partition(":")
    return f"plugin {label!r} ({distribution})" if label else f"plugin {plugin_name!r}"


class EventRelay:
    """The event hooks of the plugins in `manager`, called through pluggy with `run`."""

    def __init__(self, manager: pluggy.PluginManager, run: IRun) -> None:
        self.manager = manager
        self.run = run
        #: registration names of the plugins whose event hooks raised during this run
        self.failed: set[str] = set()

    def started(self) -> None:
        self._call("evo_run_started", run=self.run)

    def generation_finished(self, row: dict[str, Any]) -> None:
        self._call("evo_generation_finished", run=self.run, row=dict(row))

    def finished(self) -> None:
        self._call("evo_run_finished", run=self.run)

    def _call(self, hook_name: str, **arguments: Any) -> None:
        left_out = [self.manager.get_plugin(name) for name in self.failed]
        caller = self.manager.subset_hook_caller(hook_name, remove_plugins=left_out)
        token = _current.set(self)
        try:
            caller(**arguments)
        finally:
            _current.reset(token)

    def report(self, plugin_name: str, hook_name: str, exc: Exception) -> None:
        """A guarded implementation of `plugin_name` raised `exc`: warn once, leave it out."""
        if plugin_name in self.failed:
            return
        self.failed.add(plugin_name)
        warnings.warn(
            f"{plugin_label(plugin_name)}: {hook_name}() raised {type(exc).__name__}: "
            f"{first_line(exc)}; its event hooks are skipped for the rest of this run",
            RuntimeWarning, stacklevel=2)


def _report(plugin_name: str, hook_name: str, exc: Exception) -> None:
    relay = _current.get()
    if relay is None:  # called by someone else than a relay: nothing to isolate it for
        raise exc
    relay.report(plugin_name, hook_name, exc)


def isolated(plugin: object, plugin_name: str, manager: pluggy.PluginManager) -> object:
    """What discovery registers for `plugin`: its hook implementations under their own names,
    the event hooks among them guarded. `manager` parses the `hookimpl` markers."""
    stand_in = _StandIn(plugin)
    for name in dir(plugin):
        options = manager.parse_hookimpl_opts(plugin, name)
        if options is None:
            continue
        function = getattr(plugin, name)
        hook_name = options.get("specname") or name  # pluggy's way of naming the hook otherwise
        if hook_name in hookspecs.EVENT_HOOKS:
            function = _guarded(function, plugin_name, hook_name)
        setattr(stand_in, name, function)
    return stand_in


class _StandIn:
    """What pluggy holds for one plugin: its hook implementations as attributes."""

    def __init__(self, plugin: object) -> None:
        self.plugin = plugin

    def __repr__(self) -> str:
        return f"<evo plugin {self.plugin!r}>"


def _guarded(function: Callable[..., Any], plugin_name: str, hook_name: str
             ) -> Callable[..., Any]:
    """`function` (an event hook implementation) with what it raises reported, not raised.
    `functools.wraps` keeps the signature pluggy validates and the `hookimpl` options."""
    if inspect.isgeneratorfunction(function):
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Generator[None, Any, Any]:
            return (yield from _guarded_wrapper(function(*args, **kwargs), plugin_name,
                                                hook_name))
        return wrapper

    @functools.wraps(function)
    def implementation(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - an observer's bug must not end the run
            _report(plugin_name, hook_name, exc)
            return None
    return implementation


def _guarded_wrapper(teardown: Iterator[Any] | Generator[Any, Any, Any], plugin_name: str,
                     hook_name: str) -> Generator[None, Any, Any]:
    """A hookwrapper's generator, guarded: one that raises before its `yield` lets the call go
    on unwrapped; one that raises after it leaves the result (or the inner call's exception) as
    it was. Works for `wrapper=True` (sent the result, thrown the exception) and old-style
    `hookwrapper=True` (sent a `pluggy.Result`)."""
    assert isinstance(teardown, Generator)
    try:
        next(teardown)
    except Exception as exc:  # noqa: BLE001 - as for an implementation: reported, left out
        _report(plugin_name, hook_name, exc)
        return (yield)
    try:
        outcome = yield
    except Exception as inner:
        try:
            teardown.throw(inner)
        except StopIteration as stop:
            return stop.value
        except Exception as exc:  # noqa: BLE001 - the wrapper's own error is reported
            if exc is not inner:
                _report(plugin_name, hook_name, exc)
            raise inner from None
        teardown.close()
        raise
    try:
        teardown.send(outcome)
    except StopIteration as stop:
        return stop.value if stop.value is not None else outcome
    except Exception as exc:  # noqa: BLE001 - the wrapper's teardown failed: the result stands
        _report(plugin_name, hook_name, exc)
        return outcome
    teardown.close()
    _report(plugin_name, hook_name, RuntimeError("the hookwrapper yields more than once"))
    return outcome
