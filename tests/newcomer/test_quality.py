"""Quality bars that take a while: the README's main job really solves CartPole."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ROOT, run_evo


@pytest.mark.slow
def test_readme_main_job_champion_replays_to_475(tmp_path: Path) -> None:
    out = tmp_path / "run"
    trained = run_evo("train", str(ROOT / "examples" / "cartpole_ctrnn.toml"), "--out", str(out),
                      "--quiet", timeout=600)
    assert trained.returncode == 0, trained.stderr
    assert trained.stdout.strip().splitlines()[-1] == str(out)
    replayed = run_evo("replay", str(out), "--episodes", "10")
    assert replayed.returncode == 0, replayed.stderr
    assert float(replayed.stdout.strip()) >= 475
