"""`--plugin` (and EVO_PLUGINS) takes a module name, a .py file or a package folder, so a local
plugin works from any folder, worker processes included."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from conftest import brain_plugin_source, run_evo


def brains(result_stdout: str) -> list[str]:
    return [row["name"] for row in json.loads(result_stdout)]


@pytest.mark.parametrize("spec", ["plugins/my_linear.py", "{abs}/plugins/my_linear.py"])
def test_a_py_file_from_another_folder(tmp_path: Path, spec: str) -> None:
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "my_linear.py").write_text(
        textwrap.dedent(brain_plugin_source("my_linear")))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cwd = tmp_path if "{abs}" not in spec else elsewhere
    result = run_evo("--plugin", spec.format(abs=tmp_path), "list-brains", "--json", cwd=cwd)
    assert result.returncode == 0, result.stderr
    assert "my_linear" in brains(result.stdout)


def test_a_package_folder_trains_in_worker_processes(tmp_path: Path) -> None:
    package = tmp_path / "lib" / "linear_pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent(brain_plugin_source("pkg_linear")))
    config = tmp_path / "c.toml"
    config.write_text('environment = "CartPole-v1"\ngenerations = 1\n[brain]\ntype = "pkg_linear"'
                      '\n[optimizer]\ntype = "cma-es"\npopulation_size = 4\n[episodes]\n'
                      'max_steps = 20\n[processing]\ntype = "mp"\nworkers = 2\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run_evo("--plugin", str(package), "train", str(config), "--quiet", "--out",
                     str(tmp_path / "run"), cwd=elsewhere)
    assert result.returncode == 0, result.stderr
    assert len((tmp_path / "run" / "log.csv").read_text().splitlines()) == 2


def test_a_path_that_is_no_module_is_named(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    for spec in ("missing.py", str(tmp_path / "folder")):
        result = run_evo("--strict", "--plugin", spec, "list-brains", cwd=tmp_path)
        assert result.returncode == 2
        assert f"{spec} is neither a .py file nor a package folder" in result.stderr
