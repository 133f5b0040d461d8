"""evo-jax with brax: a brax config trains, resumes exactly and replays (a few short
episodes of brax/inverted_pendulum: brax's physics compiles slowly on a CPU, ant's in 117 s for
this test against the pendulum's 38, measured on 2 idle cores)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
from conftest import requires

from evo_core import api

pytestmark = [pytest.mark.slow,
              requires("jax", "brax", reason="jax or brax is not installed (pip install "
                       "'evo-jax[brax]')")]


def config_dict(**changes: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "environment": "brax/inverted_pendulum", "seed": 2, "generations": 2,
        "brain": {"type": "ffnn", "hidden_layers": []},
        "optimizer": {"type": "cma-es", "population_size": 4},
        "episodes": {"max_steps": 5, "vectorize": "jax"},
        # one rollout shape: fresh episodes would compile brax's physics again for theirs
        "champion": {"episodes": 0},
    }
    config.update(changes)
    return config


def rows(run: Path) -> list[dict[str, str]]:
    with open(run / "log.csv", newline="") as handle:
        return [{k: v for k, v in row.items() if k != "seconds"} for row in csv.DictReader(handle)]


def test_brax_trains_resumes_and_replays(tmp_path: Path) -> None:
    whole = api.train(config_dict(), out=tmp_path / "whole")
    half = api.train(config_dict(generations=1), out=tmp_path / "half")
    api.resume(half.path, generations=2)
    assert rows(half.path) == rows(whole.path)
    steps = [int(r["steps"]) for r in rows(whole.path)]
    # at most 4 episodes x 5 steps a generation (the pendulum may fall before the 5th)
    assert 4 <= steps[0] <= 20 and 4 <= steps[1] - steps[0] <= 20
    returns = whole.replay(episodes=1, seed=3)
    assert len(returns) == 1
