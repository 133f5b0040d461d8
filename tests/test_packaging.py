"""Every distribution builds a wheel and an sdist; the wheels alone make a working evo.

Each distribution is built as `python -m build` builds it (an sdist, then the wheel from the
unpacked sdist, so a file missing from the sdist fails the build), from a copy of the checkout
(nothing is written into the repository, and no build folder left there by an earlier build is
seen). The backends run in one virtualenv per distinct `[build-system] requires`, holding exactly
those requirements: what `build`'s isolated environments hold, made once instead of twice per
distribution.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
import tomllib
import venv
from collections.abc import Iterable
from pathlib import Path

import build
import pytest
from conftest import ROOT

DISTRIBUTIONS = {"evo-core": Path("."), "brain-ctrnn": Path("plugins", "ctrnn"),
                 "brain-ffnn": Path("plugins", "ffnn"), "brain-lstm": Path("plugins", "lstm"),
                 "brain-cnn": Path("plugins", "cnn"),
                 "evo-tensorboard": Path("plugins", "tensorboard")}

#: what a checkout holds that a fresh clone does not (.gitignore's entries and git itself)
NOT_IN_A_CLONE = shutil.ignore_patterns(".git", ".venv*", "__pycache__", "*.egg-info", "build",
                                        "dist", "runs", ".*_cache", "MUJOCO_LOG.TXT")


def build_environment(root: Path, requires: tuple[str, ...]) -> Path:
    """A virtualenv with exactly `requires` installed; its python."""
    venv.EnvBuilder(with_pip=False).create(root)
    python = root / "bin" / "python"
    install(python, requires)
    return python


def install(python: Path, requirements: Iterable[str]) -> None:
    """pip install `requirements` into the virtualenv of `python` (nothing if there are none)."""
    requirements = sorted(requirements)
    if not requirements:
        return
    result = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                             "-q", "--disable-pip-version-check", *requirements],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]


def build_sdist_then_wheel(source: Path, python: Path, dist: Path, work: Path) -> None:
    """`python -m build --outdir dist source` with the backend run by `python`: the backend's
    own requirements for each build (`get_requires_for_build_*`) installed first, as `build`
    does in its isolated environments."""
    builder = build.ProjectBuilder(source, python_executable=str(python))
    install(python, builder.get_requires_for_build("sdist"))
    sdist = Path(builder.build("sdist", dist))
    with tarfile.open(sdist) as archive:
        archive.extractall(work, filter="data")
    unpacked = build.ProjectBuilder(work / sdist.name.removesuffix(".tar.gz"),
                                    python_executable=str(python))
    install(python, unpacked.get_requires_for_build("wheel"))
    unpacked.build("wheel", dist)


@pytest.mark.slow
def test_wheels_install_into_a_fresh_virtualenv(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT, checkout, ignore=NOT_IN_A_CLONE)
    dist = tmp_path / "dist"
    environments: dict[tuple[str, ...], Path] = {}
    for name, folder in DISTRIBUTIONS.items():
        source = checkout / folder
        with open(source / "pyproject.toml", "rb") as handle:
            requires = tuple(sorted(tomllib.load(handle)["build-system"]["requires"]))
        if requires not in environments:
            environments[requires] = build_environment(
                tmp_path / f"build-env-{len(environments)}", requires)
        build_sdist_then_wheel(source, environments[requires], dist, tmp_path / "unpacked" / name)
    wheels = sorted(dist.glob("*.whl"))
    sdists = sorted(dist.glob("*.tar.gz"))
    assert len(wheels) == len(sdists) == len(DISTRIBUTIONS), [p.name for p in dist.iterdir()]
    fresh = tmp_path / "fresh"
    venv.EnvBuilder(with_pip=True).create(fresh)
    install = subprocess.run([str(fresh / "bin" / "python"), "-m", "pip", "install", "-q",
                              "--disable-pip-version-check", *map(str, wheels)],
                             capture_output=True, text=True, timeout=900)
    assert install.returncode == 0, install.stderr[-3000:]
    evo = str(fresh / "bin" / "evo")
    listed = subprocess.run([evo, "list-brains", "--json"], capture_output=True, text=True,
                            cwd=tmp_path, timeout=120)
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert {name: rows[name]["status"] for name in ("ctrnn", "ffnn", "lstm", "cnn", "chain")} \
        == {"ctrnn": "ok", "ffnn": "ok", "lstm": "ok", "cnn": "ok", "chain": "ok"}
    config = tmp_path / "c.toml"
    config.write_text('environment = "CartPole-v1"\ngenerations = 2\n[brain]\ntype = "ctrnn"\n'
                      '[optimizer]\ntype = "cma-es"\npopulation_size = 6\n')
    trained = subprocess.run([evo, "train", str(config), "--quiet", "--out", "run"],
                             capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert trained.returncode == 0, trained.stderr
    assert (tmp_path / "run" / "fitness.png").exists()
