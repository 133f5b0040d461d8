"""Every distribution builds a wheel and an sdist; the wheels alone make a working evo."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from conftest import ROOT

DISTRIBUTIONS = {"evo-core": ROOT, "brain-ctrnn": ROOT / "plugins" / "ctrnn",
                 "brain-ffnn": ROOT / "plugins" / "ffnn", "brain-lstm": ROOT / "plugins" / "lstm",
                 "brain-cnn": ROOT / "plugins" / "cnn",
                 "evo-tensorboard": ROOT / "plugins" / "tensorboard"}


@pytest.mark.slow
def test_wheels_install_into_a_fresh_virtualenv(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    for name, source in DISTRIBUTIONS.items():
        result = subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist),
                                 str(source)], capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, f"{name}: {result.stderr[-2000:]}"
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
