"""A signing secret that is not a plain file is refused in one line, never waited on.

A FIFO planted at `$EVO_SECRET_DIR/secret` used to block `open()` until some writer appeared, so
`evo train` and `evo resume` of a CMA-ES run hung before their first generation. The commands run
in their own interpreter, with a bound on waiting that only a hang exceeds.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import run_evo

#: Only a hang takes this long.
HANG = 120.0

CONFIG = {
    "environment": "CartPole-v1", "seed": 4, "generations": 2,
    "brain": {"type": "ctrnn", "number_neurons": 3},
    "optimizer": {"type": "cma-es", "population_size": 8},
    "episodes": {"runs": 1, "max_steps": 30},
    "processing": {"type": "sequential"}}


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def fifo_secret(tmp_path: Path) -> Path:
    folder = tmp_path / "secrets"
    folder.mkdir(mode=0o700)
    os.mkfifo(folder / "secret", 0o600)
    return folder


def test_a_fifo_secret_is_refused_by_train(tmp_path: Path, fifo_secret: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps(CONFIG))
    result = run_evo("train", str(config), "--out", str(tmp_path / "run"), "--quiet",
                     env={"EVO_SECRET_DIR": str(fifo_secret)}, timeout=HANG)
    assert result.returncode == 2
    line = one_line(result.stderr)
    assert str(fifo_secret / "secret") in line and "must be a plain file" in line
    assert not (tmp_path / "run").exists()


def test_a_fifo_secret_is_refused_by_resume(tmp_path: Path, fifo_secret: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps(CONFIG))
    run = tmp_path / "run"
    assert run_evo("train", str(config), "--out", str(run), "--quiet",
                   timeout=HANG).returncode == 0
    result = run_evo("resume", str(run), "--generations", "3", "--quiet",
                     env={"EVO_SECRET_DIR": str(fifo_secret)}, timeout=HANG)
    assert result.returncode == 2
    assert "must be a plain file" in one_line(result.stderr)
