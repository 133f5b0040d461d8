"""`evo migrate`: predecessor configs become valid evo configs, and every drop is reported."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from shared_configs import CTRNN_CMA

from evo_core.cli.main import main

FFNN_MU = {
    "environment": "Pendulum-v1", "random_seed": 0, "number_generations": 10,
    "optimizer": {"type": "MU_ES", "mu": 10, "lambda_": 40, "mutpb": 0.7,
                  "initial_gene_range": 2, "tournsize": 3, "extra_from_hof": 1,
                  "strategy_parameter_per_gene": True},
    "brain": {"type": "FeedForward_NumPy", "hidden_layers": [[16, 16]], "non_linearity": "tanh",
              "use_bias": True, "normalize_input": False, "normalize_input_target": 1,
              "indirect_encoding": False, "cppn_hidden_layers": []},
    "episode_runner": {"reuse_env": True, "number_fitness_runs": 1, "max_steps_per_run": 100,
                       "max_steps_penalty": -5},
    "novelty": {"distance": "euclid"},
}


def migrate(tmp_path: Path, old: dict[str, Any], capsys: pytest.CaptureFixture[str]
            ) -> tuple[dict[str, Any], str]:
    source = tmp_path / "old.json"
    source.write_text(json.dumps(old))
    assert main(["migrate", str(source)]) == 0
    captured = capsys.readouterr()
    out = Path(captured.out.strip())
    assert out == tmp_path / "old.toml"
    return tomllib.loads(out.read_text()), captured.err


def test_ctrnn_cma(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config, err = migrate(tmp_path, CTRNN_CMA, capsys)
    assert config["seed"] == 123 and config["generations"] == 50
    assert config["brain"]["type"] == "ctrnn" and config["brain"]["w_mask"] == "logarithmic"
    assert config["optimizer"] == {"type": "cma-es", "population_size": 20, "sigma": 1.0, "mu": 5}
    assert config["hall_of_fame_size"] == 3 and config["episodes"]["seed_per"] == "candidate"
    assert "max_steps" not in config["episodes"]
    assert "dropped" not in err


def test_ffnn_mu_es_reports_every_drop(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config, err = migrate(tmp_path, FFNN_MU, capsys)
    assert config["brain"]["hidden_layers"] == [16, 16]
    assert config["optimizer"]["type"] == "mu-lambda"
    assert config["optimizer"]["population_size"] == 40
    assert config["episodes"] == {"runs": 1, "max_steps": 100, "max_steps_penalty": -5.0}
    for text in ("brain.indirect_encoding", "brain.cppn_hidden_layers",
                 "optimizer.extra_from_hof", "novelty"):
        assert f"dropped: {text}" in err
    assert "random_seed 0 meant an unseeded run" in err and "ran 101 steps" in err
    # the result trains
    out = tmp_path / "run"
    assert main(["train", str(tmp_path / "old.toml"), "--set", "generations=1", "--set",
                 "optimizer.population_size=4", "--set", "optimizer.mu=2", "--quiet",
                 "--out", str(out)]) == 0


def test_unsupported_brain_is_a_clear_error(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    old = dict(CTRNN_CMA, brain={"type": "HebbianNet"})
    source = tmp_path / "old.json"
    source.write_text(json.dumps(old))
    assert main(["migrate", str(source)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    # what was dropped first, then the one error line; nothing written
    assert "dropped: brain.type 'HebbianNet'" in err[0]
    assert err[-1].startswith("evo: ") and "brain.type" in err[-1] and "(migrated)" in err[-1]
    assert sum(line.startswith("evo: ") for line in err) == 1
    assert not (tmp_path / "old.toml").exists()
