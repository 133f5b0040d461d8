"""`evo migrate` writes the predecessor's CNN_CTRNN and ConcatenatedBrain_LSTM as chains with
its sizes, and the results train for a generation (CNN_CTRNN on QbertHard: 64x64x3 frames)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import ROOT, fitness_rows

from evo_core.api import train
from evo_core.composition.config import ChainConfig
from evo_core.composition.template import ChainTemplate
from evo_core.config.migrate import migrate_config
from evo_core.config.schema import validate_config
from evo_core.config.toml_writer import to_toml
from evo_core.hooks.discovery import get_registry

DATA = ROOT / "tests" / "data" / "predecessor"

def migrated(name: str) -> dict[str, Any]:
    config: dict[str, Any] = migrate_config(json.loads((DATA / name).read_text())).config
    # what `evo migrate` writes reads back as the same config
    assert tomllib.loads(to_toml(config)) == json.loads(json.dumps(config))
    return config


def test_cnn_ctrnn_becomes_a_cnn_ctrnn_chain_with_the_predecessor_sizes() -> None:
    config = migrated("cnn_ctrnn.json")
    cnn, ctrnn = config["brain"]["stages"]
    assert config["brain"]["type"] == "chain"
    assert cnn["type"] == "cnn" and cnn["output_size"] == 720
    assert [layer["activation"] for layer in cnn["layers"]] == ["relu", "sigmoid"]
    assert ctrnn["type"] == "ctrnn" and ctrnn["number_neurons"] == 20
    assert ctrnn["w_mask"] == "logarithmic" and "output_size" not in ctrnn
    brain = validate_config({**config, "environment": "CartPole-v1"}, get_registry(),
                            "cnn_ctrnn.toml").brain
    assert isinstance(brain, ChainConfig)
    template = ChainTemplate(brain, gym.spaces.Box(0, 255, (64, 64, 3), np.uint8),
                             gym.spaces.Discrete(6), np.random.default_rng(0))
    front, back = template.stages
    assert front.genome_size == 760
    assert back.input_size == 720  # type: ignore[attr-defined]


def test_concatenated_lstm_becomes_ffnn_lstm_ffnn_with_the_predecessor_sizes() -> None:
    config = migrated("concatenated_brain_lstm.json")
    front, lstm, back = config["brain"]["stages"]
    assert (front["type"], lstm["type"], back["type"]) == ("ffnn", "lstm", "ffnn")
    # the LSTM reads the front's last hidden size, its hidden state is the back's first
    assert front["hidden_layers"] == [16] and front["output_size"] == 16
    assert lstm["output_size"] == 8 and "hidden_size" not in lstm
    assert back["hidden_layers"] == [8] and "output_size" not in back


def test_the_migrated_concatenated_lstm_trains_a_generation(tmp_path: Path) -> None:
    config = migrated("concatenated_brain_lstm.json")
    run = train(config, out=tmp_path / "run",
                overrides={"generations": 1, "episodes.max_steps": 20})
    assert len(fitness_rows(run.path)) == 1
    # CartPole: front 4 -> 16 -> 16, LSTM 16 -> 8 (one layer), back 8 -> 8 -> 2, biases on
    assert run.template().genome_size == (4 * 16 + 16 * 16 + 32) + (4 * 8 * (16 + 8) + 8 * 8) \
        + (8 * 8 + 8 * 2 + 10)


@pytest.mark.slow
def test_the_migrated_cnn_ctrnn_trains_a_generation_on_qbert_hard(tmp_path: Path) -> None:
    pytest.importorskip("ale_py")
    pytest.importorskip("cv2")
    config = migrated("cnn_ctrnn.json")
    assert config["environment"]["id"] == "ALE/Qbert-v5"
    run = train(config, out=tmp_path / "run",
                overrides={"generations": 1, "optimizer.population_size": 4, "optimizer.mu": 2,
                           "episodes.max_steps": 10})
    assert len(fitness_rows(run.path)) == 1
    template: Any = run.template()
    assert template.stages[0].genome_size == 760 and template.stages[1].input_size == 720
