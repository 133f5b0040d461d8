"""Spaces the brain was not built for are the environment's fault, and said so.

A native vector environment whose spaces are not the single environment's trained in silence (a
Discrete(3) vector environment for a Box(2,) task) and is now refused before the run; an
environment that returns an observation outside its observation space's shape made the brain
raise, and the run blamed the brain's plugin: every runner now blames the environment.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import gymnasium as gym
import numpy as np
import pytest

from brain_ffnn import FFNNConfig, FFNNTemplate
from evo_core.cli.main import main
from evo_core.config.schema import EpisodesConfig
from evo_core.errors import CandidateFailure, UserError
from evo_core.evaluation.batched_episodes import BatchedEpisodeRunner
from evo_core.evaluation.episodes import EpisodeRunner
from evo_core.evaluation.vector_envs import check_vectorize
from evo_core.handlers.chunks import Chunk, evaluate_chunk

MISMATCHED = "evo_test/MismatchedVector-v0"
WRONG_SHAPE = "evo_test/WrongShape-v0"
BOX2 = gym.spaces.Box(-1.0, 1.0, (2,), np.float64)


class Task(gym.Env[np.ndarray, np.ndarray]):
    """A Box(2,) task with Box(2,) actions; `size` is the shape of what it really returns."""

    observation_space = BOX2
    action_space = BOX2

    def __init__(self, size: int = 2) -> None:
        self.size, self.t = size, 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(self.size), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.t += 1
        return np.zeros(self.size), 1.0, self.t >= 4, False, {}


class Vector(gym.vector.VectorEnv[np.ndarray, np.ndarray, np.ndarray]):
    """A vector version that declares `action` as its actions and returns observations of
    `size` entries."""

    def __init__(self, num_envs: int = 1, action: gym.Space[Any] = BOX2, size: int = 2,
                 **kwargs: Any) -> None:
        self.metadata = {"autoreset_mode": gym.vector.AutoresetMode.NEXT_STEP}
        self.num_envs, self.size = num_envs, size
        self.single_observation_space, self.single_action_space = BOX2, action
        self.observation_space = gym.vector.utils.batch_space(BOX2, num_envs)
        self.action_space = gym.vector.utils.batch_space(action, num_envs)
        self.t = 0

    def reset(self, *, seed: Any = None, options: Any = None) -> tuple[np.ndarray, dict[str, Any]]:
        self.t = 0
        return np.zeros((self.num_envs, self.size)), {}

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                  np.ndarray, dict[str, Any]]:
        self.t += 1
        done = np.full(self.num_envs, self.t >= 4)
        return (np.zeros((self.num_envs, self.size)), np.ones(self.num_envs), done,
                np.zeros(self.num_envs, dtype=bool), {})


class MismatchedVector(Vector):
    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        super().__init__(num_envs, action=gym.spaces.Discrete(3))


class WrongShape(Task):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(size=3)


class WrongShapeVector(Vector):
    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        super().__init__(num_envs, size=3)


for env_id, single, vector in ((MISMATCHED, Task, MismatchedVector),
                               (WRONG_SHAPE, WrongShape, WrongShapeVector)):
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=cast(Any, single), vector_entry_point=cast(Any, vector))


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def write_config(tmp_path: Path, environment: str, vectorize: str) -> Path:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({
        "environment": environment, "generations": 2, "brain": {"type": "ffnn"},
        "optimizer": {"type": "cma-es", "population_size": 4},
        "episodes": {"vectorize": vectorize, "runs": 1}}))
    return config


def test_a_vector_environment_with_other_actions_is_refused(tmp_path: Path, capsys) -> None:
    with pytest.raises(UserError, match=r"vector environment of 'evo_test/MismatchedVector-v0' "
                                        r"has actions Discrete\(3\), but .* itself has Box"):
        check_vectorize(MISMATCHED, "native")
    config = write_config(tmp_path, MISMATCHED, "native")
    assert main(["train", str(config), "--quiet", "--out", str(tmp_path / "run")]) == 2
    line = one_line(capsys.readouterr().err)
    assert MISMATCHED in line and "Discrete(3)" in line and '"sync"' in line
    assert not (tmp_path / "run").exists()


def template() -> FFNNTemplate:
    return FFNNTemplate(FFNNConfig(hidden_layers=[3]), BOX2, BOX2, np.random.default_rng(0))


@pytest.mark.parametrize("vectorize", ["off", "sync", "native"])
def test_an_observation_of_the_wrong_shape_is_the_environments(vectorize: str) -> None:
    brains = template()
    episodes = EpisodesConfig(vectorize=vectorize, runs=2)
    runner = EpisodeRunner(brains, WRONG_SHAPE, episodes) if vectorize == "off" else \
        BatchedEpisodeRunner(brains, WRONG_SHAPE, episodes)
    genomes = np.random.default_rng(1).normal(size=(3, brains.genome_size))
    try:
        with pytest.raises(CandidateFailure) as failure:
            evaluate_chunk(runner, Chunk(np.arange(3), genomes, np.arange(3, dtype=np.int64)))
    finally:
        runner.close()
    assert failure.value.source == "environment"
    assert failure.value.error.startswith(
        "ObservationShapeError: it returned an observation of shape (3,), but its "
        "observation_space Box(-1.0, 1.0, (2,), float64) has shape (2,)"), failure.value.error


def test_a_run_blames_the_environment_for_the_wrong_shape(tmp_path: Path, capsys) -> None:
    config = write_config(tmp_path, WRONG_SHAPE, "off")
    assert main(["train", str(config), "--quiet", "--out", str(tmp_path / "run")]) == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith(f"evo: error: environment {WRONG_SHAPE!r} raised "
                           "ObservationShapeError: it returned an observation of shape (3,)"), last
    assert "brain" not in last.split(" on generation")[0]
