"""envpool runs Atari games by their gymnasium ids, as documented, and leaves no folder behind.

`ALE/Pong-v5` had no envpool environment and envpool's own `Pong-v5` no gymnasium version, so no
Atari id ran although the README lists Atari; and importing envpool made a fixed
`/tmp/envpool-jumanji-matplotlib`, ignoring TMPDIR.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from conftest import requires

from brain_ffnn import FFNNConfig, FFNNTemplate
from evo_core.cli.main import main
from evo_core.config.schema import EpisodesConfig
from evo_core.environments import make_environment
from evo_core.evaluation.batched_episodes import BatchedEpisodeRunner
from evo_core.evaluation.envpool_tasks import envpool_task
from evo_core.evaluation.vector_envs import _envpool, _EnvPoolAdapter, check_vectorize

pytestmark = requires("envpool", "ale_py", reason="envpool or ale-py is not installed")

PONG = "ALE/Pong-v5"


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def pong_task(**changes: object) -> _EnvPoolAdapter:
    task = envpool_task(PONG, list(_envpool().list_all_envs()))
    return _EnvPoolAdapter(replace(task, kwargs={**task.kwargs, **changes}), 1)


def test_an_ale_id_runs_on_envpool_with_the_gymnasium_spaces() -> None:
    check_vectorize(PONG, "envpool")  # the spaces agree: the brain sees what replay shows it
    env = make_environment(PONG)
    template = FFNNTemplate(FFNNConfig(hidden_layers=[]), env.observation_space,
                            env.action_space, np.random.default_rng(0))
    env.close()
    runner = BatchedEpisodeRunner(template, PONG,
                                  EpisodesConfig(vectorize="envpool", max_steps=5, runs=1))
    genomes = np.random.default_rng(1).normal(0, 0.01, (2, template.genome_size))
    try:
        results = runner.evaluate_many(genomes, np.array([3, 4], dtype=np.int64))
    finally:
        runner.close()
    assert [r.steps for r in results] == [5, 5]


def test_envpool_plays_pong_as_documented() -> None:
    """What the mapping's doc says differs, and only that: with sticky actions off, a reset is
    gymnasium's first frame after one no-op frame, and a step of 4 frames gives their reward and
    the maximum of their last two frames, channels last."""
    pool = pong_task(repeat_action_probability=0.0)
    frames = gym.make(PONG, repeat_action_probability=0.0, frameskip=1)
    try:
        observation, _ = pool.reset(seed=1)
        frames.reset(seed=1)
        first = frames.step(0)[0]
        assert np.array_equal(observation[0], first)
        actions = np.random.default_rng(0).integers(0, 6, 40)
        for action in actions.tolist():
            observation, reward, *_ = pool.step(np.array([action]))
            steps = [frames.step(action) for _ in range(4)]
            assert float(reward[0]) == sum(float(step[1]) for step in steps)
            assert np.array_equal(observation[0], np.maximum(steps[-2][0], steps[-1][0]))
    finally:
        pool.close()
        frames.close()


@pytest.mark.parametrize("env_id", ["Pong-v5", "Pong-v4", "PongNoFrameskip-v4"])
def test_other_atari_names_are_refused_naming_the_one_to_use(tmp_path: Path, capsys,
                                                              env_id: str) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({
        "environment": env_id, "generations": 1, "brain": {"type": "ffnn"},
        "optimizer": {"type": "cma-es", "population_size": 4},
        "episodes": {"vectorize": "envpool"}}))
    assert main(["train", str(config), "--quiet", "--out", str(tmp_path / "run")]) == 2
    line = one_line(capsys.readouterr().err)
    assert f"{env_id!r}" in line and 'use environment = "ALE/Pong-v5"' in line
    assert not (tmp_path / "run").exists()


#: records every folder the process makes, from Python's audit events (no race with other
#: processes that may make the same folder in the system's temporary folder)
RECORD_FOLDERS = """
    import json, os, sys
    made = []
    def audit(event, args):
        if event == "os.mkdir":
            made.append(os.fsdecode(args[0]))
    sys.addaudithook(audit)
    from evo_core.cli.main import main
    status = main(sys.argv[1:])
    print(json.dumps({"status": status, "made": [os.path.abspath(p) for p in made],
                      "mplconfigdir": os.environ.get("MPLCONFIGDIR")}))
    """


def test_envpool_makes_no_folder_outside_tmpdir(tmp_path: Path) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({
        "environment": "CartPole-v1", "generations": 1, "brain": {"type": "ffnn"},
        "optimizer": {"type": "mu-lambda", "population_size": 4, "mu": 2},
        "episodes": {"vectorize": "envpool", "max_steps": 20}}))
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    # the folders evo and envpool make, not the interpreter's bytecode (the suite's own cache)
    env = {key: value for key, value in os.environ.items()
           if key not in ("MPLCONFIGDIR", "ENVPOOL_JUMANJI_MPLCONFIGDIR", "PYTHONPYCACHEPREFIX")}
    env.update(TMPDIR=str(temporary), XDG_CONFIG_HOME=str(tmp_path / "config"),
               PYTHONDONTWRITEBYTECODE="1")
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(RECORD_FOLDERS), "train",
                             str(config), "--quiet", "--out", str(tmp_path / "run")],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["status"] == 0
    outside = [p for p in report["made"] if not p.startswith(str(tmp_path))]
    assert outside == [], outside
    assert report["mplconfigdir"] == str(tmp_path / "config" / "matplotlib")
    assert list(temporary.iterdir()) == []
