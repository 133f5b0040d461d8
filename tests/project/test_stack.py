"""The numeric stack a run was computed with: locked by scripts/setup.sh, recorded in config.json,
and compared by replay and resume, which say in one line when the versions differ.

The same seed gives the same run only on the same Python, numpy, pycma and gymnasium: pycma's
updates differ in their last bits between numpy releases and between Python 3.11 and 3.12 (whose
sum() of floats compensates rounding), and a trajectory diverges from there within a few
generations (docs/benchmarks.md). A received or old run folder is replayed or resumed under
other versions by faking its recorded ones in a copy.
"""

from __future__ import annotations

import importlib.metadata
import json
import platform
import shutil
import sys
import warnings
from pathlib import Path
from typing import Any, TextIO

import pytest
from conftest import ROOT, evo_in_process
from packaging.utils import canonicalize_name

from evo_core import api
from evo_core.hooks.discovery import get_registry
from evo_core.results.provenance import NUMERIC_STACK, changed_versions

CONFIG: dict[str, Any] = {
    "environment": "CartPole-v1", "seed": 3, "generations": 2,
    "brain": {"type": "ctrnn", "number_neurons": 3},
    "optimizer": {"type": "cma-es", "population_size": 4},
    "episodes": {"runs": 1, "max_steps": 20},
}
#: what the received copy says it was recorded with: an old numpy, and a version string that
#: would break the line if it were printed as it is
FAKED = {"numpy": "1.0.0", "cma": "3.3\n\x1b[31mred"}


def _installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _lock(path: Path) -> dict[str, str]:
    """A lock file's pins, by canonical name."""
    pins: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version.strip()
    return pins


def test_a_lock_for_the_running_python_pins_the_numeric_stack() -> None:
    lock = ROOT / "requirements" / f"lock-py{sys.version_info[0]}.{sys.version_info[1]}.txt"
    assert lock.is_file(), f"no {lock}: make it with scripts/lock.sh"
    pins = _lock(lock)
    assert {"numpy", "cma", "gymnasium", "jax", "jaxlib"} <= set(pins)
    assert "evo-core" not in pins and "brain-ctrnn" not in pins  # this checkout's, editable
    assert "torch" not in pins  # evo needs none; the machine's torch must not leak in


def test_a_locked_venv_has_the_locked_versions() -> None:
    """scripts/setup.sh writes which lock it installed under (`$VENV/evo-lock`); every locked
    distribution installed here has the locked version."""
    marker = Path(sys.prefix) / "evo-lock"
    if not marker.is_file():
        pytest.skip("this environment was not made by scripts/setup.sh")
    lock = marker.read_text().strip()
    if lock == "none":
        pytest.skip("made with LOCK=none: the newest allowed versions, not a lock")
    pins = _lock(ROOT / lock)
    differing = {name: (version, _installed(name)) for name, version in pins.items()
                 if _installed(name) not in (None, version)}
    assert not differing, f"installed versions differ from {lock}: {differing}"
    assert _installed("numpy") == pins["numpy"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return api.train(CONFIG, out=tmp_path_factory.mktemp("stack") / "run").path


def _received(trained: Path, tmp_path: Path, versions: dict[str, str]) -> Path:
    """A copy of the trained run whose config.json records other `versions`."""
    run = tmp_path / "received"
    shutil.copytree(trained, run)
    config = json.loads((run / "config.json").read_text())
    config["provenance"]["versions"].update(versions)
    (run / "config.json").write_text(json.dumps(config))
    return run


def test_config_json_records_the_numeric_stack(trained: Path) -> None:
    recorded = json.loads((trained / "config.json").read_text())["provenance"]["versions"]
    installed = {name: _installed(name) for name in NUMERIC_STACK if _installed(name)}
    assert {"numpy", "cma", "gymnasium"} <= set(installed)
    assert {name: recorded.get(name) for name in installed} == installed
    assert {"evo-core", "brain-ctrnn"} <= set(recorded)
    assert recorded["python"] == platform.python_version()


@pytest.fixture
def printed_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Warnings printed to stderr as a Python outside pytest prints them (pytest records them),
    each time: what `evo` shows, through its own one-line format."""
    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: TextIO | None = None, line: str | None = None) -> None:
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))
    monkeypatch.setattr(warnings, "showwarning", show)
    warnings.simplefilter("always")


def _version_line(stderr: str, run: Path) -> str:
    """The one line that says the versions differ, checked."""
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if "recorded with" in line]
    assert len(lines) == 1, stderr
    line = lines[0]
    numpy, cma = _installed("numpy"), _installed("cma")
    assert line.startswith(f"evo: warning: {run / 'config.json'}: the run was recorded with "
                           f"numpy 1.0.0, cma '3.3\\n\\x1b[31mred'"), line
    assert f"this installation has numpy {numpy}, cma {cma}" in line
    assert "last bits" in line and "scripts/setup.sh" in line
    return line


@pytest.mark.usefixtures("printed_warnings")
def test_replay_says_in_one_line_which_versions_differ(trained: Path, tmp_path: Path) -> None:
    run = _received(trained, tmp_path, FAKED)
    result = evo_in_process("replay", str(run), "--episodes", "1")
    assert result.returncode == 0, result.stderr  # a warning, not a refusal
    _version_line(result.stderr, run)
    same = evo_in_process("replay", str(trained), "--episodes", "1")
    assert same.returncode == 0 and "recorded with" not in same.stderr, same.stderr


@pytest.mark.usefixtures("printed_warnings")
def test_resume_says_in_one_line_which_versions_differ(trained: Path, tmp_path: Path) -> None:
    run = _received(trained, tmp_path, FAKED)
    result = evo_in_process("resume", str(run), "--generations", "3", "--quiet")
    assert result.returncode == 0, result.stderr
    _version_line(result.stderr, run)
    # the resume recorded this installation's versions: the next one has nothing to say
    again = evo_in_process("resume", str(run), "--generations", "4", "--quiet")
    assert again.returncode == 0 and "recorded with" not in again.stderr, again.stderr


def test_the_api_warns_as_the_command_line_says(trained: Path, tmp_path: Path) -> None:
    run = _received(trained, tmp_path, {"numpy": "1.0.0"})
    with pytest.warns(UserWarning, match=r"recorded with numpy 1\.0\.0, this installation has "
                      rf"numpy {_installed('numpy')}; results may differ"):
        api.Run.open(run).replay(episodes=1)
    with pytest.warns(UserWarning, match=r"recorded with numpy 1\.0\.0"):
        api.resume(run, generations=3)


def test_the_last_stack_that_trained_the_run_counts() -> None:
    """A run resumed on this installation was last computed with it; an older evo recorded no
    numeric stack, and a distribution not installed here is no difference."""
    registry = get_registry()
    now = {"numpy": _installed("numpy"), "cma": _installed("cma")}
    old = {"numpy": "1.0.0", "cma": "3.3", "no-such-package": "1"}
    assert changed_versions({"versions": old, "resumed": [{"versions": now}]}, registry) == []
    assert changed_versions({"versions": now, "resumed": [{"versions": old}]}, registry) == [
        ("numpy", "1.0.0", now["numpy"]), ("cma", "3.3", now["cma"])]
    assert changed_versions({"versions": {"evo-core": "0.0.1"}}, registry)[0][0] == "evo-core"
    hostile: list[Any] = [None, [], {"versions": [1]}, {"resumed": 5}, {"resumed": [None, 1]}]
    assert [changed_versions(record, registry) for record in hostile] == [[]] * len(hostile)
    assert changed_versions({"resumed": 5, "versions": {"numpy": 7}}, registry) == [
        ("numpy", 7, now["numpy"])]
