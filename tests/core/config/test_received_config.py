"""A received config.json decides nothing that reaches past the experiment: every attack of
issue 33 on a config value, performed.

The rule is declared on the fields (`evo_core.contract.trust`) and applied by one walker
(`config/received.py`, `running/received.py`): code anywhere (a champion test's `module:Env`),
paths outside the folder (TensorBoard's logdir), and amounts of this machine's resources
(worker processes, rows, steps of an episode) are refused in one line unless the user gives
them again.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import pytest
from conftest import run_evo
from pydantic import BaseModel

from evo_core import NamesCode, NamesPath, Resource, api
from evo_core.cli.main import main
from evo_core.config.received import declared_values, refusals
from evo_core.errors import UserError

CONFIG: dict[str, Any] = {
    "environment": "CartPole-v1", "seed": 3, "generations": 2,
    "brain": {"type": "ctrnn", "number_neurons": 2},
    "optimizer": {"type": "mu-lambda", "population_size": 4, "mu": 2},
    "episodes": {"runs": 1, "max_steps": 20},
    "stop": {"fitness": 1e9, "champion_tests": [
        {"environment": "CartPole-v1", "episodes": 1, "min_return": 1e9}]},
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return api.train(CONFIG, out=tmp_path_factory.mktemp("trained") / "run").path


@pytest.fixture(autouse=True)
def _no_pwn(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("EVO_PLUGINS", raising=False)
    yield
    sys.modules.pop("pwn", None)


def _received(trained: Path, root: Path, change: dict[str, Any]) -> Path:
    """A copy of the trained run whose config.json has the top-level `change`."""
    run = root / "received"
    shutil.copytree(trained, run)
    config = json.loads((run / "config.json").read_text())
    config.update(change)
    (run / "config.json").write_text(json.dumps(config))
    return run


def _pwn(run: Path, root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """pwn.py in the working folder and on sys.path: importable by name, as `python -m` makes
    the current folder; the marker file it would write."""
    marker = root / "PWNED"
    (run / "pwn.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    monkeypatch.chdir(run)
    monkeypatch.syspath_prepend(str(run))
    return marker


def _one_line(capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("evo:")]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _with_champion_environment(environment: str) -> dict[str, Any]:
    stop = json.loads(json.dumps(CONFIG["stop"]))
    stop["champion_tests"][0]["environment"] = environment
    return {"stop": stop}


@pytest.mark.parametrize("environment", ["pwn:CartPole-v1", "this:X-v0"])
def test_a_champion_tests_module_is_never_imported(
        trained: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], environment: str) -> None:
    """`stop.champion_tests[0].environment = "this:X-v0"` printed the Zen of Python on resume."""
    module = environment.split(":")[0]
    if module in sys.modules:
        pytest.skip(f"{module} was imported by an earlier test: loaded code is the user's")
    run = _received(trained, tmp_path, _with_champion_environment(environment))
    marker = _pwn(run, tmp_path, monkeypatch)
    recorded = (run / "config.json").read_text()
    assert main(["resume", str(run), "--generations", "3", "--quiet"]) == 2
    _one_line(capsys, f"--plugin {module}")
    with pytest.raises(UserError, match=f"--plugin {module}"):
        api.resume(run, generations=3)
    assert not marker.exists() and module not in sys.modules
    assert "Beautiful is better than ugly" not in capsys.readouterr().out
    assert (run / "config.json").read_text() == recorded


def test_a_sweep_rerun_imports_no_champion_tests_module(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    sweep = tmp_path / "s.json"
    sweep.write_text(json.dumps(dict(CONFIG, generations=1, sweep={"seeds": 1})))
    out = tmp_path / "sweep"
    assert main(["sweep", str(sweep), "--out", str(out)]) == 0
    run = next(p for p in out.iterdir() if p.is_dir())
    config = json.loads((run / "config.json").read_text())
    config.update(_with_champion_environment("pwn:CartPole-v1"))
    (run / "config.json").write_text(json.dumps(config))
    (run / "checkpoint.npz").unlink()  # so that the re-run continues this run
    marker = _pwn(run, tmp_path, monkeypatch)
    capsys.readouterr()
    assert main(["sweep", str(sweep), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--plugin pwn" in err and "Traceback" not in err, err
    assert not marker.exists() and "pwn" not in sys.modules


def test_a_tensorboard_logdir_outside_the_folder_is_written_only_when_given_again(
        trained: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    elsewhere = tmp_path / "elsewhere"
    run = _received(trained, tmp_path, {"trackers": {"tensorboard": {"logdir": str(elsewhere)}}})
    assert main(["resume", str(run), "--generations", "3", "--quiet"]) == 2
    _one_line(capsys, "trackers.tensorboard.logdir", "outside the run folder",
              "--set trackers.tensorboard.logdir=PATH")
    assert not elsewhere.exists()
    with pytest.raises(UserError, match=r"trackers\.tensorboard\.logdir"):
        api.resume(run, generations=3)
    assert not elsewhere.exists()
    mine = tmp_path / "mine"
    assert main(["resume", str(run), "--generations", "3", "--quiet",
                 "--set", f"trackers.tensorboard.logdir={mine}"]) == 0
    assert any(mine.rglob("events.out.tfevents.*")) and not elsewhere.exists()


def test_a_logdir_inside_the_run_folder_is_the_folders_own(trained: Path,
                                                           tmp_path: Path) -> None:
    run = tmp_path / "received"
    run = _received(trained, tmp_path, {"trackers": {"tensorboard": {
        "logdir": str(run / "boards")}}})
    api.resume(run, generations=3)
    assert any((run / "boards").rglob("events.out.tfevents.*"))


@pytest.mark.parametrize(("processing", "key"), [
    ({"type": "mp", "workers": 40}, "processing.workers"),
    ({"type": "dask", "workers": 40}, "processing.workers"),
    ({"type": "sequential", "blas_threads": 64}, "processing.blas_threads"),
])
def test_a_received_process_count_is_refused_until_given_again(
        trained: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        processing: dict[str, Any], key: str) -> None:
    """`processing.workers = 40` started 41 processes (4.5 GB) on 2 cores."""
    run = _received(trained, tmp_path, {"processing": processing})
    assert main(["resume", str(run), "--generations", "3", "--quiet"]) == 2
    line = _one_line(capsys, key, "--set", "in Python: resume(..., overrides=")
    assert f"--set {key}=" in line
    assert main(["resume", str(run), "--generations", "3", "--quiet",
                 "--set", 'processing={type="sequential"}']) == 0


def test_received_rows_are_refused(trained: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    run = _received(trained, tmp_path, {"episodes": dict(CONFIG["episodes"],
                                                         batch_rows=10**9)})
    assert main(["resume", str(run), "--generations", "3", "--quiet"]) == 2
    _one_line(capsys, "episodes.batch_rows", "1,000,000,000 rows stepped at once")


PENDULUM: dict[str, Any] = {
    "environment": {"id": "Pendulum-v1", "kwargs": {"max_episode_steps": -1}}, "seed": 1,
    "generations": 1, "brain": {"type": "ctrnn", "number_neurons": 2},
    "optimizer": {"type": "mu-lambda", "population_size": 4, "mu": 2},
    "episodes": {"runs": 1, "max_steps": 10},
}


@pytest.fixture(scope="module")
def endless(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Pendulum run whose episodes end only at max_steps: without it they never end."""
    return api.train(PENDULUM, out=tmp_path_factory.mktemp("endless") / "run").path


def test_a_replay_of_endless_episodes_is_refused_and_bounded_on_request(
        endless: Path, tmp_path: Path) -> None:
    """`max_episode_steps = -1` with `max_steps` unset made `evo replay` run forever."""
    run = tmp_path / "received"
    shutil.copytree(endless, run)
    config = json.loads((run / "config.json").read_text())
    config["episodes"]["max_steps"] = None
    (run / "config.json").write_text(json.dumps(config))
    refused = run_evo("replay", str(run), "--episodes", "1", "--trace", str(tmp_path / "t.npz"),
                      timeout=60)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert "environment.kwargs.max_episode_steps: -1 sets no limit on steps per episode" in \
        refused.stderr and f"evo replay {run} --max-steps N" in refused.stderr
    assert not (tmp_path / "t.npz").exists()
    with pytest.raises(UserError, match=r"max_steps=N"):
        api.Run.open(run).replay(episodes=1)
    trace = tmp_path / "t.npz"
    assert api.Run.open(run).replay(episodes=2, max_steps=7, trace=trace)
    with np.load(trace) as saved:
        assert len(saved["reward"]) == 14
    bounded = run_evo("replay", str(run), "--episodes", "1", "--max-steps", "5", timeout=60)
    assert bounded.returncode == 0, bounded.stderr


def test_a_received_step_limit_is_confirmed_by_giving_the_same_value_again(
        endless: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A key a resume may not change may still be given its own value: that is the user's
    word for a value the folder alone does not decide."""
    run = tmp_path / "received"
    shutil.copytree(endless, run)
    assert main(["resume", str(run), "--generations", "2", "--quiet"]) == 2
    _one_line(capsys, "--set environment.kwargs.max_episode_steps=-1")
    assert main(["resume", str(run), "--generations", "2", "--quiet",
                 "--set", "environment.kwargs.max_episode_steps=5"]) == 2
    _one_line(capsys, "cannot change when resuming")
    assert main(["resume", str(run), "--generations", "2", "--quiet",
                 "--set", "environment.kwargs.max_episode_steps=-1"]) == 0


@pytest.mark.parametrize("provenance", [[1], "x", 3])
def test_a_provenance_that_is_not_a_table_is_one_line(
        trained: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], provenance: Any) -> None:
    run = _received(trained, tmp_path, {"provenance": provenance})
    for command in (["resume", str(run), "--generations", "3", "--quiet"],
                    ["replay", str(run), "--episodes", "1"]):
        assert main(command) == 2
        _one_line(capsys, "provenance")


class _Inner(BaseModel):
    where: Annotated[str | None, NamesPath()] = None
    steps: Annotated[dict[str, Any], Resource("steps", 10, key="limit", unlimited=-1)] = {}


class _Outer(BaseModel):
    module: Annotated[str, NamesCode("module")] = "json"
    cells: Annotated[list[int], Resource("cells", 100, counted=lambda outer: outer.grid())] = \
        [10, 10]

    def grid(self) -> int:
        return int(np.prod(self.cells))
    inner: tuple[_Inner, ...] = ()
    table: dict[str, _Inner] = {}


def test_the_walker_finds_a_declaration_wherever_a_plugin_puts_it(tmp_path: Path) -> None:
    """A field declared tomorrow, in a plugin's table, in a list or a table of tables, is
    covered without anyone listing it."""
    model = _Outer(module="pwn", cells=[11, 10],
                   inner=(_Inner(where=str(tmp_path / "run" / "x")),
                          _Inner(where="/elsewhere", steps={"limit": -1})),
                   table={"a": _Inner(steps={"limit": 11})})
    assert [d.key for d in declared_values(model)] == [
        "module", "cells", "inner[0].where", "inner[1].where", "inner[1].steps.limit",
        "table.a.steps.limit"]
    found = refusals(model, tmp_path / "run", loaded=lambda name: name == "json")
    assert [(r.key, r.module) for r in found] == [
        ("module", "pwn"), ("cells", None), ("inner[1].where", None),
        ("inner[1].steps.limit", None), ("table.a.steps.limit", None)]
    assert refusals(model, tmp_path / "run", loaded=lambda name: True,
                    given_again=["cells", "inner", "table.a"]) == []


def test_a_received_archive_is_counted_in_cells(trained: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """evo-qd's `bins = 400` over two descriptor values is 160,000 cells: the plugin declares
    how its field counts."""
    run = _received(trained, tmp_path, {
        "optimizer": {"type": "map-elites", "population_size": 4, "ranges": [[0, 1], [0, 1]],
                      "bins": 400},
        "behaviour": {"source": "observation", "interval": "final"}})
    assert main(["resume", str(run), "--generations", "3", "--quiet"]) == 2
    _one_line(capsys, "optimizer.bins: 160,000 archive cells is more than the 100,000")


def test_the_schema_shows_every_declaration(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    text = capsys.readouterr().out
    schema = json.loads(text)
    assert "names code (environment)" in text and "names code (peer)" in text
    assert "worker processes" in text and "a path (kept inside a received run folder)" in text
    assert schema
