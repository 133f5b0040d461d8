"""The run events go through pluggy: in discovery order, wrapped by hookwrappers, moved by
tryfirst, seen by pluggy's monitoring, skipped for a blocked plugin, and a plugin whose hook
raises is reported once and left out while the others go on."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pluggy
import pytest

from evo_core.hooks.discovery import load_registry
from evo_core.hooks.events import EventRelay
from evo_core.hooks.registry import Registry

#: every plugin module of these tests appends (its name, the event) here
JOURNAL = "events_journal"

OBSERVER = '''
from evo_core import hookimpl
from events_journal import calls

@hookimpl{options}
def evo_run_started(run):
    calls.append(("{name}", "started"))

@hookimpl{options}
def evo_generation_finished(run, row):
    calls.append(("{name}", row["generation"]))
    {fail}

@hookimpl
def evo_run_finished(run):
    calls.append(("{name}", "finished"))
'''

WRAPPER = '''
from evo_core import hookimpl
from events_journal import calls

@hookimpl(wrapper=True)
def evo_generation_finished(row):
    calls.append(("wrapper", "before"))
    result = yield
    calls.append(("wrapper", "after"))
    return result
'''


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str]]]:
    """The journal the test's plugin modules write to (their folder on sys.path)."""
    (tmp_path / f"{JOURNAL}.py").write_text("calls = []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    import events_journal  # type: ignore[import-not-found]  # written just above

    yield events_journal.calls
    for name in set(sys.modules) - before:
        del sys.modules[name]


def write(folder: Path, name: str, source: str) -> str:
    (folder / f"{name}.py").write_text(textwrap.dedent(source))
    return name


def observer(folder: Path, name: str, options: str = "", fail: str = "") -> str:
    return write(folder, name, OBSERVER.format(name=name, options=options, fail=fail))


def relay(registry: Registry) -> EventRelay:
    """The events of a run nobody reads (`run=None`) for the test's own plugins: the installed
    ones (evo-tensorboard, evo-qd) are blocked, pluggy's way of leaving a plugin out."""
    for name, _ in registry.manager.list_name_plugin():
        if not name.startswith("local module "):
            registry.manager.set_blocked(name)
    return EventRelay(registry.manager, run=None)  # type: ignore[arg-type]


def events(relay: EventRelay, generations: int = 2) -> None:
    relay.started()
    for generation in range(1, generations + 1):
        relay.generation_finished({"generation": generation})
    relay.finished()


def test_events_run_in_the_order_the_plugins_were_given(tmp_path: Path, plugins: list[Any]
                                                        ) -> None:
    names = [observer(tmp_path, name) for name in ("c_first", "a_second", "b_third")]
    events(relay(load_registry(local_modules=names)), generations=1)
    assert plugins == [(name, event) for event in ("started", 1, "finished") for name in names]


def test_tryfirst_moves_a_plugin_ahead(tmp_path: Path, plugins: list[Any]) -> None:
    names = [observer(tmp_path, "one"), observer(tmp_path, "two", options="(tryfirst=True)")]
    relay(load_registry(local_modules=names)).generation_finished({"generation": 1})
    assert plugins == [("two", 1), ("one", 1)]


def test_a_hookwrapper_wraps_every_plugin(tmp_path: Path, plugins: list[Any]) -> None:
    names = [observer(tmp_path, "one"), write(tmp_path, "wrapping", WRAPPER),
             observer(tmp_path, "two")]
    relay(load_registry(local_modules=names)).generation_finished({"generation": 1})
    assert plugins == [("wrapper", "before"), ("one", 1), ("two", 1), ("wrapper", "after")]


def test_a_raising_plugin_is_reported_once_and_left_out(tmp_path: Path, plugins: list[Any]
                                                         ) -> None:
    names = [observer(tmp_path, "steady"),
             observer(tmp_path, "broken", fail='raise ValueError("server down")'),
             write(tmp_path, "wrapping", WRAPPER), observer(tmp_path, "after")]
    with pytest.warns(RuntimeWarning) as caught:
        events(relay(load_registry(local_modules=names)), generations=3)
    messages = [str(warning.message) for warning in caught]
    assert messages == [
        "plugin 'broken' (local module broken): evo_generation_finished() raised ValueError: "
        "server down; its event hooks are skipped for the rest of this run"]
    # the plugins after it still heard generation 1, the wrapper saw it end, and from then on
    # the broken plugin hears nothing (not even its own run_finished)
    assert plugins[:4] == [("steady", "started"), ("broken", "started"), ("after", "started"),
                           ("wrapper", "before")]
    assert plugins[4:8] == [("steady", 1), ("broken", 1), ("after", 1), ("wrapper", "after")]
    assert ("broken", 2) not in plugins and ("broken", "finished") not in plugins
    assert plugins[-2:] == [("steady", "finished"), ("after", "finished")]


def test_a_wrapper_that_raises_leaves_the_call_as_it_was(tmp_path: Path, plugins: list[Any]
                                                          ) -> None:
    raising = WRAPPER.replace('calls.append(("wrapper", "after"))', 'raise OSError("disk full")')
    names = [write(tmp_path, "wrapping", raising), observer(tmp_path, "one")]
    the_relay = relay(load_registry(local_modules=names))
    with pytest.warns(RuntimeWarning, match=r"plugin 'wrapping'.*OSError: disk full"):
        the_relay.generation_finished({"generation": 1})
    the_relay.generation_finished({"generation": 2})
    assert plugins == [("wrapper", "before"), ("one", 1), ("one", 2)]


def test_pluggy_monitoring_and_blocking_apply(tmp_path: Path, plugins: list[Any]) -> None:
    names = [observer(tmp_path, "one"), observer(tmp_path, "two")]
    registry = load_registry(local_modules=names)
    seen: list[str] = []

    def before(hook_name: str, implementations: Any, kwargs: Any) -> None:
        seen.append(hook_name)

    def after(outcome: pluggy.Result[Any], hook_name: str, implementations: Any,
              kwargs: Any) -> None:
        pass

    the_relay = relay(registry)
    undo = registry.manager.add_hookcall_monitoring(before, after)
    registry.manager.set_blocked("local module one:one")
    try:
        the_relay.generation_finished({"generation": 1})
    finally:
        undo()
    assert seen == ["evo_generation_finished"]
    assert plugins == [("two", 1)]


def test_a_guarded_hook_called_outside_a_relay_raises(tmp_path: Path, plugins: list[Any]
                                                      ) -> None:
    registry = load_registry(local_modules=[observer(tmp_path, "loud", fail="1 / 0")])
    relay(registry)  # blocks the installed plugins
    with pytest.raises(ZeroDivisionError):
        registry.manager.hook.evo_generation_finished(run=None, row={"generation": 1})


def test_an_implementation_named_through_specname_is_guarded(tmp_path: Path, plugins: list[Any]
                                                              ) -> None:
    names = [write(tmp_path, "renamed", """
        from evo_core import hookimpl
        from events_journal import calls

        @hookimpl(specname="evo_generation_finished")
        def on_generation(row):
            calls.append(("renamed", row["generation"]))
            raise KeyError("oops")
        """), observer(tmp_path, "after")]
    the_relay = relay(load_registry(local_modules=names))
    with pytest.warns(RuntimeWarning, match=r"plugin 'renamed'.*evo_generation_finished\(\)"):
        the_relay.generation_finished({"generation": 1})
    the_relay.generation_finished({"generation": 2})
    assert plugins == [("renamed", 1), ("after", 1), ("after", 2)]
