"""A run folder from someone else runs no code: every way of opening one, performed as an attack.

The received folder holds `pwn.py`, a module that writes a marker file when imported, and its
config.json names it as a local plugin (`provenance.local_plugins`, with the folder `.` and with
an absolute folder) or as the module of a `pwn:Name` environment id. The module is made
importable on purpose (the folder on `sys.path`, as `python -m` puts the current folder there):
evo must still not import it, and must say in one line which module to load and how.
"""

from __future__ import annotations

import json
import shutil
import socket
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import brain_plugin_source, run_evo

from evo_core import api
from evo_core.cli.main import main
from evo_core.errors import UserError
from evo_core.running.session import prepare_resume

CONFIG: dict[str, Any] = {
    "environment": "CartPole-v1", "seed": 3, "generations": 2,
    "brain": {"type": "ctrnn", "number_neurons": 3},
    "optimizer": {"type": "mu-lambda", "population_size": 4, "mu": 2},
    "episodes": {"runs": 1, "max_steps": 20},
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return api.train(CONFIG, out=tmp_path_factory.mktemp("trained") / "run").path


@pytest.fixture(autouse=True)
def _no_pwn(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("EVO_PLUGINS", raising=False)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    yield
    sys.modules.pop("pwn", None)


def _hostile(trained: Path, root: Path, how: str = "dot") -> tuple[Path, Path]:
    """A copy of the trained run made hostile; the run folder and the marker pwn.py would write."""
    run = root / "received"
    shutil.copytree(trained, run)
    marker = root / "PWNED"
    (run / "pwn.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    config = json.loads((run / "config.json").read_text())
    if how == "environment":
        config["environment"] = "pwn:CartPole-v1"
    else:
        folder = "." if how == "dot" else str(run.resolve())
        config["provenance"]["local_plugins"] = [{"module": "pwn", "folder": folder}]
    (run / "config.json").write_text(json.dumps(config))
    return run, marker


def _importable(monkeypatch: pytest.MonkeyPatch, run: Path) -> None:
    """The worst case: the hostile module could be imported by name, from the current folder."""
    monkeypatch.chdir(run)
    monkeypatch.syspath_prepend(str(run))


def _one_line(err: str, module: str = "pwn") -> str:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("evo:")]
    assert len(lines) == 1, err
    assert f"--plugin {module}" in lines[0] and f"EVO_PLUGINS={module}" in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("how", ["dot", "absolute", "environment"])
@pytest.mark.parametrize("command", [["replay", "."], ["resume", ".", "--generations", "3"]])
def test_replay_and_resume_import_nothing_the_folder_names(
        trained: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str], how: str, command: list[str]) -> None:
    run, marker = _hostile(trained, tmp_path, how)
    recorded = (run / "config.json").read_text()
    _importable(monkeypatch, run)
    assert main([*command, "--quiet"] if command[0] == "resume" else command) == 2
    _one_line(capsys.readouterr().err)
    assert not marker.exists() and "pwn" not in sys.modules
    assert (run / "config.json").read_text() == recorded  # refused before anything is written


def test_plot_of_a_received_run_and_of_a_sweep_imports_nothing(
        trained: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run, marker = _hostile(trained, tmp_path)
    _importable(monkeypatch, run)
    assert main(["plot", ".", "--out", str(tmp_path / "p.png")]) == 0
    assert (tmp_path / "p.png").is_file()
    assert not marker.exists() and "pwn" not in sys.modules


def _api_calls(tmp_path: Path) -> dict[str, Callable[[Path], object]]:
    return {
        "train(config.json)": lambda run: api.train(run / "config.json", out=tmp_path / "t"),
        "train(dict)": lambda run: api.train(json.loads((run / "config.json").read_text()),
                                             out=tmp_path / "t"),
        "resume": lambda run: api.resume(run, generations=3),
        "prepare_resume": lambda run: prepare_resume(run, generations=3),
        "Run.open": lambda run: api.Run.open(run),
    }


@pytest.mark.parametrize("entry", list(_api_calls(Path())))
def test_every_api_entry_point_refuses_in_one_message(
        trained: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry: str) -> None:
    run, marker = _hostile(trained, tmp_path)
    _importable(monkeypatch, run)
    with pytest.raises(UserError) as raised:
        _api_calls(tmp_path)[entry](run)
    message = str(raised.value)
    assert "\n" not in message
    if entry.startswith("train"):
        assert "has a provenance table" in message and "evo resume" in message
        assert not (tmp_path / "t").exists()
    else:
        assert "--plugin pwn" in message and "EVO_PLUGINS=pwn" in message
    assert not marker.exists() and "pwn" not in sys.modules


@pytest.mark.parametrize("method", ["template", "champion", "replay", "plot", "log", "best",
                                    "hall_of_fame", "compare"])
def test_a_run_opened_before_the_folder_turned_hostile_imports_nothing(
        trained: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str) -> None:
    """A `Run` is read from its folder when asked: whatever the folder holds by then is what
    each method meets."""
    run_dir = tmp_path / "received"
    shutil.copytree(trained, run_dir)
    opened = api.Run.open(run_dir)
    shutil.rmtree(run_dir)
    run_dir, marker = _hostile(trained, tmp_path)
    _importable(monkeypatch, run_dir)
    calls: dict[str, Callable[[], object]] = {
        "template": opened.template, "champion": opened.champion,
        "replay": lambda: opened.replay(episodes=1),
        "plot": lambda: opened.plot(tmp_path / "p.png"),
        "log": lambda: opened.log, "best": lambda: opened.best,
        "hall_of_fame": lambda: opened.hall_of_fame,
        "compare": lambda: api.compare([opened, run_dir], tmp_path / "c.png"),
    }
    if method in {"template", "champion", "replay"}:
        with pytest.raises(UserError, match="--plugin pwn"):
            calls[method]()
    else:
        calls[method]()
    assert not marker.exists() and "pwn" not in sys.modules


def test_a_sweep_rerun_over_a_received_run_imports_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    sweep = tmp_path / "s.json"
    sweep.write_text(json.dumps(dict(CONFIG, sweep={"seeds": 2})))
    out = tmp_path / "sweep"
    assert main(["sweep", str(sweep), "--out", str(out)]) == 0
    run = sorted(p for p in out.iterdir() if p.is_dir())[0]
    marker = tmp_path / "PWNED"
    (run / "pwn.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    config = json.loads((run / "config.json").read_text())
    config["provenance"]["local_plugins"] = [{"module": "pwn", "folder": "."}]
    (run / "config.json").write_text(json.dumps(config))
    (run / "checkpoint.npz").unlink()  # so that the re-run resumes this run
    _importable(monkeypatch, run)
    capsys.readouterr()
    assert main(["sweep", str(sweep), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--plugin pwn" in err and "Traceback" not in err, err
    assert not marker.exists() and "pwn" not in sys.modules


def test_the_cli_in_the_received_folder_imports_nothing(trained: Path, tmp_path: Path) -> None:
    """End to end: `python -m` puts the current folder first on sys.path, so `pwn` is
    importable there; neither replay nor resume imports it, and --plugin loads it on request."""
    run, marker = _hostile(trained, tmp_path)
    for command in (["replay", "."], ["resume", ".", "--generations", "3", "--quiet"]):
        result = run_evo(*command, cwd=run)
        assert result.returncode == 2, result.stderr
        _one_line(result.stderr)
        assert not marker.exists()
    asked = run_evo("--plugin", "pwn", "replay", ".", "--episodes", "1", cwd=run)
    assert asked.returncode == 0, asked.stderr
    assert marker.exists()  # the user's explicit choice loads it


def test_a_run_with_a_local_plugin_names_it_and_replays_with_it(tmp_path: Path) -> None:
    """A run trained with --plugin records the module; replay and resume elsewhere refuse in one
    line naming it, and work when it is loaded again."""
    mods = tmp_path / "mods"
    mods.mkdir()
    (mods / "lin_brain.py").write_text(textwrap.dedent(brain_plugin_source("lin")))
    config = tmp_path / "c.json"
    config.write_text(json.dumps(dict(CONFIG, brain={"type": "lin"})))
    run = tmp_path / "linrun"
    trained = run_evo("--plugin", str(mods / "lin_brain.py"), "train", str(config), "--out",
                      str(run), "--quiet")
    assert trained.returncode == 0, trained.stderr
    recorded = json.loads((run / "config.json").read_text())["provenance"]["local_plugins"]
    assert recorded == [{"module": "lin_brain", "folder": str(mods.resolve())}]
    for command in (["replay", str(run), "--episodes", "1"],
                    ["resume", str(run), "--generations", "3", "--quiet"]):
        refused = run_evo(*command, cwd=tmp_path)
        assert refused.returncode == 2
        assert f"evo --plugin lin_brain {command[0]} {run}" in _one_line(refused.stderr,
                                                                         "lin_brain")
        loaded = run_evo(*command, env={"EVO_PLUGINS": "lin_brain", "PYTHONPATH": str(mods)},
                         cwd=tmp_path)
        assert loaded.returncode == 0, loaded.stderr


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A port that records whether anything connected to it (a planted scheduler address)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.2)
    yield server
    server.close()


def _nobody_connected(server: socket.socket) -> bool:
    try:
        server.accept()[0].close()
    except TimeoutError:
        return True
    return False


def _plant_address(run: Path, server: socket.socket) -> None:
    config = json.loads((run / "config.json").read_text())
    port = server.getsockname()[1]
    config["processing"] = {"type": "dask", "address": f"tcp://127.0.0.1:{port}"}
    (run / "config.json").write_text(json.dumps(config))


def test_resume_reaches_no_scheduler_the_folder_names(
        trained: Path, tmp_path: Path, listener: socket.socket,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A Dask client unpickles what its scheduler sends: a planted address is refused."""
    run = tmp_path / "received"
    shutil.copytree(trained, run)
    _plant_address(run, listener)
    assert main(["resume", str(run), "--generations", "3", "--quiet"]) == 2
    line = _one_line_about(capsys.readouterr().err, "evo connects to no address a run folder")
    assert "--set processing.address=ADDRESS" in line
    with pytest.raises(UserError, match="Dask scheduler"):
        api.resume(run, generations=3)
    assert _nobody_connected(listener)
    assert main(["resume", str(run), "--generations", "3", "--quiet",
                 "--set", 'processing={type="sequential"}']) == 0  # the user's own choice


def test_a_sweep_rerun_uses_the_sweep_files_processing_not_the_folders(
        tmp_path: Path, listener: socket.socket) -> None:
    sweep = tmp_path / "s.json"
    sweep.write_text(json.dumps(dict(CONFIG, sweep={"seeds": 2})))
    out = tmp_path / "sweep"
    assert main(["sweep", str(sweep), "--out", str(out)]) == 0
    run = sorted(p for p in out.iterdir() if p.is_dir())[0]
    reference = (run / "log.csv").read_text()
    _plant_address(run, listener)
    (run / "checkpoint.npz").unlink()  # so that the re-run continues this run
    assert main(["sweep", str(sweep), "--out", str(out)]) == 0
    assert _nobody_connected(listener)
    assert (run / "log.csv").read_text().splitlines()[1].split(",")[:7] == \
        reference.splitlines()[1].split(",")[:7]


def _one_line_about(err: str, text: str) -> str:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("evo:")]
    assert len(lines) == 1 and text in lines[0], err
    return lines[0]
