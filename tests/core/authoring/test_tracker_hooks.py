"""`tracker_hooks`: a tracker plugin's four hooks from its table and its tracker: the table
registered, one tracker per run folder opened only for a run whose config has the table, every
row recorded, closed once with how training ended; and a module made of that one line is a
plugin discovery registers."""

from __future__ import annotations

import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

from evo_core import TrackerConfig, tracker_hooks
from evo_core.hooks.discovery import load_registry
from evo_core.hooks.events import EventRelay


class CountingConfig(TrackerConfig):
    type: Literal["counting"] = "counting"


class OtherConfig(TrackerConfig):
    type: Literal["other"] = "other"


@dataclass
class Counting:
    config: CountingConfig
    path: Path
    rows: list[int] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)

    def record(self, row: dict[str, Any]) -> None:
        self.rows.append(int(row["generation"]))

    def close(self, status: str) -> None:
        self.closed.append(status)


class Trackers:
    def __init__(self, tables: dict[str, TrackerConfig]) -> None:
        self.tables = tables

    def enabled(self) -> dict[str, TrackerConfig]:
        return self.tables


@dataclass
class Config:
    trackers: Trackers


@dataclass
class FakeRun:
    """What the hooks read of an `IRun`: its folder and its config's `[trackers]`."""

    path: Path
    config: Config


def run_with(path: str, *tables: Any) -> Any:
    return FakeRun(Path(path), Config(Trackers({table.type: table for table in tables})))


@pytest.fixture
def opened() -> list[Counting]:
    return []


@pytest.fixture
def hooks(opened: list[Counting]) -> Any:
    def open_tracker(config: CountingConfig, run: Any) -> Counting:
        opened.append(Counting(config, run.path))
        return opened[-1]

    return tracker_hooks(CountingConfig, open_tracker)


def test_each_run_with_the_table_gets_its_own_tracker(hooks: Any, opened: list[Counting]
                                                       ) -> None:
    assert hooks.evo_trackers() == [CountingConfig]
    first, second = run_with("a", CountingConfig()), run_with("b", OtherConfig(),
                                                              CountingConfig())
    without = run_with("c", OtherConfig())
    for run in (first, second, without):
        hooks.evo_run_started(run)
    assert [tracker.path for tracker in opened] == [Path("a"), Path("b")]
    for generation in (1, 2):
        for run in (first, second, without):
            hooks.evo_generation_finished(run, {"generation": generation})
    hooks.evo_generation_finished(second, {"generation": 3})
    hooks.evo_run_finished(first)
    hooks.evo_run_finished(without)
    assert (opened[0].rows, opened[0].closed) == ([1, 2], ["FINISHED"])
    assert (opened[1].rows, opened[1].closed) == ([1, 2, 3], [])
    hooks.evo_run_finished(first)  # closed once: the run's tracker is gone
    assert opened[0].closed == ["FINISHED"]


@pytest.mark.parametrize(("stopped_by", "status"), [
    (KeyboardInterrupt(), "KILLED"), (ValueError("disk full"), "FAILED")])
def test_a_run_stopped_by_an_exception_closes_with_its_status(
        hooks: Any, opened: list[Counting], stopped_by: BaseException, status: str) -> None:
    run = run_with("a", CountingConfig())
    hooks.evo_run_started(run)
    try:
        raise stopped_by
    except BaseException:  # noqa: BLE001 - as training calls evo_run_finished when stopped
        hooks.evo_run_finished(run)
    assert opened[0].closed == [status]


PLUGIN = '''
from typing import Literal

from evo_core import TrackerConfig, tracker_hooks

seen = []


class JournalConfig(TrackerConfig):
    type: Literal["journal"] = "journal"


class Journal:
    def __init__(self, config, run):
        seen.append(("opened", str(run.path)))

    def record(self, row):
        seen.append(("row", row["generation"]))

    def close(self, status):
        seen.append(("closed", status))


evo_trackers, evo_run_started, evo_generation_finished, evo_run_finished = tracker_hooks(
    JournalConfig, Journal)
'''


def test_a_module_of_that_line_is_a_tracker_plugin(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "journal_tracker.py").write_text(textwrap.dedent(PLUGIN))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        registry = load_registry(local_modules=["journal_tracker"])
        module = sys.modules["journal_tracker"]
        table: Any = module.JournalConfig()
        assert registry.get("tracker", "journal").config_model is type(table)
        for name, _ in registry.manager.list_name_plugin():  # the installed trackers and QD
            if not name.startswith("local module "):        # would read more of the run
                registry.manager.set_blocked(name)
        run = run_with(str(tmp_path), table)
        relay = EventRelay(registry.manager, run)
        relay.started()
        relay.generation_finished({"generation": 1})
        relay.finished()
        assert module.seen == [("opened", str(tmp_path)), ("row", 1), ("closed", "FINISHED")]
    finally:
        sys.modules.pop("journal_tracker", None)
