"""Plugin code that exits or raises while a run is set up is that plugin's error, in one line.

`sys.exit()` in an environment's, a wrapper's or a brain template's constructor ended `evo train`
silently with the plugin's status; a template raising KeyboardInterrupt printed "interrupted"
as if the user had pressed Ctrl-C; an environment whose constructor or `behaviour_state()`
raised in the checks before the run printed a raw traceback. Each is now one `evo: error:` line
naming the environment, wrapper or brain and what it did, exit status 2, no run folder.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from evo_core.cli.main import main

MODULE = "hostile_setup"

PLUGIN = '''
    """Environments, a wrapper and a brain that misbehave while a run is set up."""
    import sys
    from typing import Any, ClassVar, Literal

    import gymnasium as gym
    import numpy as np

    from evo_core import BrainConfig, BrainTemplateBase, WrapperConfig, hookimpl


    def misbehave(how):
        if how == "exit":
            sys.exit(3)
        if how == "interrupt":
            raise KeyboardInterrupt("raised by the plugin")
        if how == "type":
            raise TypeError("an argument is missing")
        raise RuntimeError("no licence for this environment")


    class Env(gym.Env):
        observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float64)
        action_space = gym.spaces.Discrete(2)

        def __init__(self, fail_in="", how="raise"):
            self.fail_in, self.how = fail_in, how
            if fail_in == "init":
                misbehave(how)

        def reset(self, seed=None, options=None):
            super().reset(seed=seed)
            return np.zeros(2), {}

        def step(self, action):
            return np.zeros(2), 1.0, True, False, {}

        def behaviour_state(self):
            if self.fail_in == "state":
                misbehave(self.how)
            return np.zeros(2)


    for how in ("exit", "interrupt", "raise", "type"):
        for where in ("init", "state"):
            env_id = f"evo_test/Fails-{where}-{how}-v0"
            if env_id not in gym.registry:
                gym.register(env_id, entry_point=Env, kwargs={"fail_in": where, "how": how})
    if "evo_test/Fine-v0" not in gym.registry:
        gym.register("evo_test/Fine-v0", entry_point=Env)


    class ExitingConfig(WrapperConfig):
        """A wrapper that exits when made."""
        type: Literal["exiting"] = "exiting"
        how: str = "exit"


    class Exiting(gym.Wrapper):
        config_model: ClassVar[type[WrapperConfig]] = ExitingConfig

        def __init__(self, config, env):
            super().__init__(env)
            misbehave(config.how)


    class MisbehavingConfig(BrainConfig):
        """A brain template that misbehaves when made."""
        type: Literal["misbehaving"] = "misbehaving"
        how: str = "exit"


    class Misbehaving(BrainTemplateBase):
        config_model = MisbehavingConfig

        def __init__(self, config, observation_space, action_space, rng):
            misbehave(config.how)

        @property
        def genome_size(self):
            return 1

        def build(self, genome):
            raise AssertionError("never built")


    @hookimpl
    def evo_wrappers():
        return [Exiting]


    @hookimpl
    def evo_brain_templates():
        return [Misbehaving]
    '''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / f"{MODULE}.py").write_text(textwrap.dedent(PLUGIN))
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("EVO_PLUGINS", MODULE)


def train(tmp_path: Path, capsys: pytest.CaptureFixture[str], environment: Any,
          brain: dict[str, Any] | None = None, **more: Any) -> str:
    """The one line `evo train` prints for the config, after checking it exits with 2 and makes
    no run folder."""
    config = tmp_path / "c.json"
    config.write_text(json.dumps({
        "environment": environment, "generations": 1, "brain": brain or {"type": "ffnn"},
        "optimizer": {"type": "mu-lambda", "population_size": 4, "mu": 2}, **more}))
    capsys.readouterr()
    status = main(["train", str(config), "--quiet", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and "Traceback" not in err, (status, err)
    assert not (tmp_path / "run").exists()
    return lines[0]


@pytest.mark.parametrize("how,said", [
    ("exit", "SystemExit: it called sys.exit(3)"),
    ("interrupt", "KeyboardInterrupt: raised by the plugin"),
    ("raise", "RuntimeError: no licence for this environment"),
    ("type", "TypeError: an argument is missing")])
def test_an_environment_constructor_that_exits_or_raises(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], plugin: None, how: str,
        said: str) -> None:
    env_id = f"evo_test/Fails-init-{how}-v0"
    line = train(tmp_path, capsys, env_id)
    assert line.startswith(f"evo: error: {tmp_path / 'c.json'}: environment {env_id!r}"), line
    assert said in line and "interrupted" not in line


@pytest.mark.parametrize("how,said", [
    ("exit", "SystemExit: it called sys.exit(3)"),
    ("interrupt", "KeyboardInterrupt: raised by the plugin")])
def test_a_wrapper_constructor_that_exits(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          plugin: None, how: str, said: str) -> None:
    line = train(tmp_path, capsys, {"id": "evo_test/Fine-v0",
                                    "wrappers": [{"type": "exiting", "how": how}]})
    assert "environment.wrappers[0] (exiting)" in line and f"local module {MODULE}" in line
    assert said in line


@pytest.mark.parametrize("how,said", [
    ("exit", "SystemExit: it called sys.exit(3)"),
    ("interrupt", "KeyboardInterrupt: raised by the plugin")])
def test_a_template_constructor_that_exits_or_interrupts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], plugin: None, how: str,
        said: str) -> None:
    line = train(tmp_path, capsys, "evo_test/Fine-v0", {"type": "misbehaving", "how": how})
    assert f"brain 'misbehaving' (local module {MODULE})" in line and said in line
    assert "interrupted" not in line


@pytest.mark.parametrize("how,said", [
    ("exit", "SystemExit: it called sys.exit(3)"),
    ("raise", "RuntimeError: no licence for this environment")])
def test_behaviour_state_that_raises_before_the_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], plugin: None, how: str,
        said: str) -> None:
    env_id = f"evo_test/Fails-state-{how}-v0"
    line = train(tmp_path, capsys, env_id,
                 behaviour={"source": "state", "max_length": 4}, novelty={"k": 2})
    assert f"environment {env_id!r}" in line and said in line and "behaviour_state()" in line
