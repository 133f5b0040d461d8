"""An environment registered by a `--plugin` module is made in every worker process.

Such a module is named by nothing a worker unpickles, so workers that do not inherit the main
process's imports (mp with spawn, every Dask worker) used to fail with gymnasium's
`NameNotFound` traceback while brain plugins worked. The commands run as a user runs them, in
their own interpreter: the workers are other processes. The Dask runs start their local cluster
on 127.0.0.1 and stop it when the command ends.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from evo_core.config.schema import EpisodesConfig
from evo_core.errors import UserError
from evo_core.evaluation.episodes import RunnerSpec
from evo_core.running.worker_plugins import PluginsFirst

ENVIRONMENTS = '''
    """An environment registered at import time, as a user's `--plugin` module does it."""
    import multiprocessing

    import gymnasium as gym
    import numpy as np


    class Tiny(gym.Env):
        def __init__(self):
            self.observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float64)
            self.action_space = gym.spaces.Discrete(2)
            self.t = 0

        def reset(self, seed=None, options=None):
            super().reset(seed=seed)
            self.t = 0
            return np.zeros(2), {}

        def step(self, action):
            self.t += 1
            return np.full(2, 0.5), float(action), self.t >= 5, False, {}


    class NoDisplay(Tiny):
        def __init__(self):
            if multiprocessing.parent_process() is not None:
                raise RuntimeError("no display in this process")
            super().__init__()


    gym.register("PluginTiny-v0", entry_point=Tiny)
    gym.register("NoDisplayInWorkers-v0", entry_point=NoDisplay)
    if multiprocessing.parent_process() is None:  # a module that works in the main process only
        gym.register("MainOnly-v0", entry_point=Tiny)
    '''

#: a module that cannot be imported in a worker process
BROKEN_IN_WORKERS = '''
    import multiprocessing
    import my_envs
    if multiprocessing.parent_process() is not None:
        raise ImportError("no licence server on this machine")
    '''

DASK = {"type": "dask", "workers": 1}
MP_SPAWN = {"type": "mp", "workers": 1, "start_method": "spawn"}


def train(folder: Path, environment: str, processing: dict[str, Any],
          plugin: str = "my_envs") -> subprocess.CompletedProcess[str]:
    (folder / "my_envs.py").write_text(textwrap.dedent(ENVIRONMENTS))
    (folder / "broken_in_workers.py").write_text(textwrap.dedent(BROKEN_IN_WORKERS))
    (folder / "c.json").write_text(json.dumps({
        "environment": environment, "generations": 2, "brain": {"type": "ctrnn"},
        "optimizer": {"type": "cma-es", "population_size": 4}, "processing": processing}))
    # found in the working directory, as `--plugin my_envs` finds a user's module
    return subprocess.run([sys.executable, "-m", "evo_core.cli.main", "--plugin", plugin,
                           "train", "c.json", "--quiet", "--out", "run"], cwd=folder,
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=""))


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("processing", [DASK, MP_SPAWN], ids=["dask", "mp-spawn"])
def test_an_environment_from_a_plugin_module_trains_on_workers(
        tmp_path: Path, processing: dict[str, Any]) -> None:
    result = train(tmp_path, "PluginTiny-v0", processing)
    assert result.returncode == 0, result.stderr
    assert len((tmp_path / "run" / "log.csv").read_text().splitlines()) == 3


def test_an_environment_a_dask_worker_cannot_make_is_one_line(tmp_path: Path) -> None:
    result = train(tmp_path, "MainOnly-v0", DASK)
    assert result.returncode == 2
    line = one_line(result.stderr)
    assert line.startswith("evo: error: generation 1: environment 'MainOnly-v0' cannot be made "
                           "in a worker process"), line
    assert "NameNotFound" in line and "--plugin MODULE" in line
    assert line.endswith("no generation finished in run")


def test_a_plugin_module_a_worker_cannot_import_is_one_line(tmp_path: Path) -> None:
    result = train(tmp_path, "PluginTiny-v0", MP_SPAWN, plugin="broken_in_workers")
    assert result.returncode == 2
    line = one_line(result.stderr)
    assert "a worker process (pid" in line and "'broken_in_workers'" in line
    assert "no licence server on this machine" in line


def test_an_environment_that_raises_only_in_a_worker_is_one_line(tmp_path: Path) -> None:
    result = train(tmp_path, "NoDisplayInWorkers-v0", MP_SPAWN)
    assert result.returncode == 2
    line = one_line(result.stderr)
    assert "environment 'NoDisplayInWorkers-v0' cannot be made in a worker process" in line
    assert "RuntimeError: no display in this process" in line


def test_only_a_worker_wraps_the_error(tmp_path: Path) -> None:
    """In the process that made the spec the environment's own error passes through (the
    pre-run probe reports it); in any other process it becomes the one line."""
    inner = RunnerSpec("NoSuchEnvironment-v0", EpisodesConfig())
    with pytest.raises(Exception, match="NoSuchEnvironment") as here:
        PluginsFirst(inner, "NoSuchEnvironment-v0", (), os.getpid()).build(None)  # type: ignore[arg-type]
    assert not isinstance(here.value, UserError)
    with pytest.raises(UserError, match=r"environment .NoSuchEnvironment-v0. cannot be made in "
                                        r"a worker process .*NameNotFound"):
        PluginsFirst(inner, "NoSuchEnvironment-v0", (), -1).build(None)  # type: ignore[arg-type]
