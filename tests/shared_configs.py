"""Configs and helpers that tests in several folders share (pytest puts tests/ on sys.path,
as for conftest.py): a predecessor config the migration and the attacks read, the maze config
of evo-qd's tests and attacks, the API's small CTRNN run and a `--plugin` module loader."""

from __future__ import annotations

import importlib
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

__all__ = ["CTRNN_CMA", "config_dict", "local_plugin", "maze_config", "write_config"]

CTRNN_CMA = {
    "environment": "CartPole-v1", "random_seed": 123, "number_generations": 50,
    "optimizer": {"type": "CMA_ES", "population_size": 20, "sigma": 1.0, "mu": 5, "hof_size": 3,
                  "checkpoint_frequency": 0, "fix_seed_for_generation": False},
    "brain": {"type": "CTRNN", "number_neurons": 5, "delta_t": 0.05, "neuron_activation": "relu",
              "normalize_input": False, "normalize_input_target": 2, "use_bias": True,
              "optimize_state_boundaries": "legacy", "optimize_y0": True,
              "set_principle_diagonal_elements_of_W_negative": True, "w_mask": "logarithmic",
              "w_mask_param": 2},
    "episode_runner": {"reuse_env": True, "number_fitness_runs": 3, "max_steps_per_run": 0},
}


def maze_config(optimizer: dict[str, Any], **top: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "environment": "evo/MediumMaze-v0", "seed": 3, "generations": 3,
        "brain": {"type": "ffnn", "hidden_layers": []},
        "optimizer": {"population_size": 8, "ranges": [[0, 200], [0, 200]], "bins": 10,
                      **optimizer},
        "behaviour": {"source": "state", "interval": "final"},
        "episodes": {"max_steps": 40}}
    config.update(top)
    return config


def config_dict(**changes: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "environment": "CartPole-v1", "seed": 5, "generations": 3,
        "brain": {"type": "ctrnn", "number_neurons": 4, "w_mask": "random", "w_mask_param": 0.5},
        "optimizer": {"type": "cma-es", "population_size": 6},
        "episodes": {"runs": 2, "max_steps": 100},
    }
    config.update(changes)
    return config


def write_config(path: Path, **changes: Any) -> Path:
    path.write_text(json.dumps(config_dict(**changes)))
    return path


def local_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str) -> Any:
    """A plugin module `name` loaded as `--plugin` would (EVO_PLUGINS); the module itself."""
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("EVO_PLUGINS", name)
    monkeypatch.delitem(sys.modules, name, raising=False)
    return importlib.import_module(name)
