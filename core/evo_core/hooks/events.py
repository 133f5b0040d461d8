"""Calling the event hooks of one run, one plugin at a time.

pluggy's own hook call stops at the first implementation that raises, so one broken tracker would
end the run, or hide the events from every tracker after it. Here each implementation is called
on its own: a plugin whose hook raises is reported once, as a warning naming it, and its event
hooks are skipped for the rest of the run; training and the other plugins go on.
"""

from __future__ import annotations

import warnings
from typing import Any

import pluggy

__all__ = ["EventRelay"]


class EventRelay:
    """The event hooks of the plugins in `manager`, called with `run`."""

    def __init__(self, manager: pluggy.PluginManager, run: Any) -> None:
        self.manager = manager
        self.run = run
        self.failed: set[str] = set()

    def started(self) -> None:
        self._call(self.manager.hook.evo_run_started, {"run": self.run})

    def generation_finished(self, row: dict[str, Any]) -> None:
        self._call(self.manager.hook.evo_generation_finished, {"run": self.run, "row": dict(row)})

    def finished(self) -> None:
        self._call(self.manager.hook.evo_run_finished, {"run": self.run})

    def _call(self, hook: pluggy.HookCaller, arguments: dict[str, Any]) -> None:
        # pluggy lists implementations last-registered first; events go in discovery order
        for impl in reversed(hook.get_hookimpls()):
            if impl.plugin_name in self.failed:
                continue
            try:
                # pluggy lets an implementation take fewer arguments than the specification
                impl.function(*[arguments[name] for name in impl.argnames])
            except Exception as exc:  # noqa: BLE001 - an observer's bug must not end the run
                self.failed.add(impl.plugin_name)
                warnings.warn(
                    f"{_describe(impl.plugin_name)}: {hook.name}() raised {type(exc).__name__}: "
                    f"{_first_line(exc)}; its event hooks are skipped for the rest of this run",
                    RuntimeWarning, stacklevel=2)


def _describe(plugin_name: str) -> str:
    """'plugin LABEL (DISTRIBUTION)' from discovery's 'DISTRIBUTION:LABEL' registration name."""
    distribution, _, label = plugin_name.partition(":")
    return f"plugin {label!r} ({distribution})" if label else f"plugin {plugin_name!r}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "(no message)"
