"""`environment` as an id or as a table (id, kwargs, wrappers): one model, validated strictly,
trained, recorded, resumed and made the same way in every process; a missing extra is named."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from conftest import fitness_rows

from evo_core.cli.main import main
from evo_core.config import validate_config
from evo_core.contract.config_models import EnvironmentConfig
from evo_core.environments import make_environment, probe_spaces
from evo_core.errors import UserError
from evo_core.hooks.discovery import get_registry
from evo_core.wrappers.frame_stack import FrameStackWrapper
from evo_core.wrappers.stand_still_stop import StandStillStop

BASE: dict[str, Any] = {
    "seed": 3, "generations": 2,
    "brain": {"type": "ffnn", "hidden_layers": [3]},
    "optimizer": {"type": "cma-es", "population_size": 4},
    "episodes": {"max_steps": 40},
}
SUTTON_BARTO = {"id": "CartPole-v1", "kwargs": {"sutton_barto_reward": True}}


def config(environment: object, **changes: object) -> dict[str, Any]:
    return {**BASE, "environment": environment, **changes}


def validated(environment: object) -> EnvironmentConfig:
    return validate_config(config(environment), get_registry(), "test.toml").environment


def train(tmp_path: Path, name: str, data: dict[str, Any], *extra: str) -> tuple[int, Path]:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    out = tmp_path / name
    return main(["train", str(path), "--quiet", "--out", str(out), *extra]), out


def refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], environment: object) -> str:
    """The one line `evo train` prints for a config with this environment; no run folder."""
    code, out = train(tmp_path, "refused", config(environment))
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(lines) == 1, lines
    assert not out.exists()
    return lines[0]


def test_an_id_and_a_table_are_one_model() -> None:
    plain = validated("CartPole-v1")
    table = validated({"id": "CartPole-v1"})
    assert type(plain) is type(table) and plain == table
    assert isinstance(plain, EnvironmentConfig) and plain.kwargs == {} and plain.wrappers == ()
    assert str(plain) == "CartPole-v1"  # messages name the environment by its id
    wrapped = validated({"id": "CartPole-v1", "kwargs": {"sutton_barto_reward": True},
                         "wrappers": [{"type": "frame-stack", "stack_size": 2}]})
    assert wrapped.kwargs == {"sutton_barto_reward": True}
    assert [w.type for w in wrapped.wrappers] == ["frame-stack"]


def test_config_json_keeps_a_bare_id_and_resolves_a_table() -> None:
    """A run without kwargs or wrappers records the id as before (older run folders resume);
    a table is recorded with every wrapper default filled in."""
    registry = get_registry()
    plain = validate_config(config({"id": "CartPole-v1"}), registry, "t").model_dump(mode="json")
    assert plain["environment"] == "CartPole-v1"
    table = {"id": "CartPole-v1", "wrappers": [{"type": "stand-still-stop", "index": 1}]}
    dumped = validate_config(config(table), registry, "t").model_dump(mode="json")
    assert dumped["environment"] == {
        "id": "CartPole-v1", "kwargs": {},
        "wrappers": [{"type": "stand-still-stop", "index": 1, "min_speed": 1e-4, "steps": 50,
                      "penalty": -100.0}]}
    assert validate_config(dumped, registry, "t").model_dump(mode="json") == dumped


def test_the_environment_travels_to_workers_by_pickle() -> None:
    """The schema's model is built at run time; what a worker unpickles is the base model with
    the same values, and it makes the same environment."""
    environment = validated({"id": "CartPole-v1", "kwargs": {"max_episode_steps": 7},
                             "wrappers": [{"type": "frame-stack", "stack_size": 3}]})
    copy = pickle.loads(pickle.dumps(environment))
    assert type(copy) is EnvironmentConfig and type(environment) is not EnvironmentConfig
    assert copy.model_dump(mode="json") == environment.model_dump(mode="json")
    assert hash(copy) == hash(environment)  # a RunnerSpec holding it stays hashable
    env = make_environment(copy)
    try:
        assert isinstance(env, FrameStackWrapper) and env.observation_space.shape == (3, 4)
        env.reset(seed=0)
        steps = 0
        while True:
            steps += 1
            _, _, terminated, truncated, _ = env.step(0)
            if terminated or truncated:
                break
        assert steps <= 7  # the kwargs reached gymnasium.make
    finally:
        env.close()


def test_wrappers_apply_in_order_first_innermost() -> None:
    environment = validated({"id": "CartPole-v1", "wrappers": [
        {"type": "frame-stack", "stack_size": 2}, {"type": "stand-still-stop", "index": 7}]})
    env = make_environment(environment)
    try:
        assert isinstance(env, StandStillStop) and isinstance(env.env, FrameStackWrapper)
    finally:
        env.close()
    # index 7 exists only in the stacked observation (2 x 4 entries): the order mattered
    with pytest.raises(UserError, match=r"environment.wrappers\[0\] \(stand-still-stop\) "
                       "cannot wrap CartPole-v1: index 7 is outside the observation"):
        make_environment(validated({"id": "CartPole-v1", "wrappers": [
            {"type": "stand-still-stop", "index": 7}, {"type": "frame-stack", "stack_size": 2}]}))


def test_kwargs_change_what_trains(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """CartPole's Sutton-Barto reward (0 per step, -1 on failure) instead of +1 per step (every
    return at least 1): the log shows it, config.json records the table, a resume continues
    it, and a resume that changes the kwargs is refused, naming them."""
    code, sutton = train(tmp_path, "sutton", config(SUTTON_BARTO))
    assert code == 0
    assert main(["resume", str(sutton), "--generations", "3", "--quiet"]) == 0
    capsys.readouterr()
    rows = fitness_rows(sutton)
    assert len(rows) == 3
    assert all(-1 <= float(row[col]) <= 0 for row in rows for col in (2, 3, 5))
    recorded = json.loads((sutton / "config.json").read_text())
    assert recorded["environment"] == {**SUTTON_BARTO, "wrappers": []}
    recorded["environment"]["kwargs"]["sutton_barto_reward"] = False
    (sutton / "config.json").write_text(json.dumps(recorded))
    assert main(["resume", str(sutton), "--generations", "4", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "environment.kwargs.sutton_barto_reward is false but the run was " \
        "trained with true" in err[0]


def test_set_reaches_into_an_environment_given_as_an_id(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    code, out = train(tmp_path, "set", config("CartPole-v1", generations=1),
                      "--set", "environment.kwargs.sutton_barto_reward=true")
    assert code == 0
    capsys.readouterr()
    recorded = json.loads((out / "config.json").read_text())["environment"]
    assert recorded["kwargs"] == {"sutton_barto_reward": True}


@pytest.mark.parametrize(("environment", "expected"), [
    ({"id": "CartPole-v1", "wrappers": [{"type": "frame-stak", "stack_size": 2}]},
     "environment.wrappers[0].type: unknown wrapper type 'frame-stak' (did you mean "
     "'frame-stack'?); installed: atari-preprocessing, frame-stack"),
    ({"id": "ALE/Qbert-v5", "wrappers": [{"type": "qbert-hard"},
                                         {"type": "atari-preprocessing", "screen_size": 0}]},
     "environment.wrappers[1].screen_size: must be greater than or equal to 1, got 0"),
    ({"id": "ALE/Qbert-v5", "wrappers": [{"type": "atari-preprocessing", "screen_sise": 64}]},
     "environment.wrappers[0].screen_sise: unknown key (did you mean 'screen_size'?)"),
    ({"id": "CartPole-v1", "wrappers": [{"stack_size": 2}]},
     "environment.wrappers[0].type: missing; set it to one of: atari-preprocessing"),
    ({"id": "CartPole-v1", "wrapper": []},
     "environment.wrapper: unknown key (did you mean 'wrappers'?); allowed keys: id, kwargs, "
     "wrappers"),
    ({"id": "CartPole-v1", "kwargs": {"render_mode": "human"}},
     "environment.kwargs: render_mode cannot be set here"),
    ({"id": "CartPole-v1", "kwargs": {"length": [0.5, float("nan")]}},
     "environment.kwargs: length[1] must be a finite number, not nan"),
    (7, "environment: must be a gymnasium id (a string) or a table with id, kwargs and wrappers"),
])
def test_config_mistakes_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      environment: object, expected: str) -> None:
    line = refused(tmp_path, capsys, environment)
    assert line.startswith(f"evo: error: {tmp_path / 'refused.json'}: {expected}"), line


@pytest.mark.parametrize(("environment", "expected"), [
    ({"id": "CartPole-v1", "kwargs": {"gravity": 3.0}},
     "environment.kwargs: CartPole-v1 rejected them: TypeError:"),
    ({"id": "CartPole-v1", "wrappers": [{"type": "qbert-hard"}]},
     "environment.wrappers[0] (qbert-hard) cannot wrap CartPole-v1: qbert-hard filters "
     "Qbert's rewards"),
    ({"id": "ALE/Qbert-v5", "wrappers": [{"type": "atari-preprocessing"}]},
     "environment.wrappers[0] (atari-preprocessing) cannot wrap ALE/Qbert-v5: Disable "
     "frame-skipping in the original env"),
    ({"id": "CartPol-v1"}, "environment: Environment `CartPol` doesn't exist. Did you mean: "
     "`CartPole`?"),
])
def test_environment_mistakes_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           environment: object, expected: str) -> None:
    """What only making the environment finds (at config time, before any run folder)."""
    line = refused(tmp_path, capsys, environment)
    assert line.startswith(f"evo: error: {tmp_path / 'refused.json'}: {expected}"), line


def _without_modules(monkeypatch: pytest.MonkeyPatch, missing: str, *packages: str) -> None:
    """As if `missing` were not installed and `packages` never imported."""
    monkeypatch.setitem(sys.modules, missing, None)  # `import missing` raises ImportError
    for name in list(sys.modules):
        if any(name == p or name.startswith(p + ".") for p in packages):
            monkeypatch.delitem(sys.modules, name)


@pytest.mark.parametrize(("env_id", "missing", "packages", "extra"), [
    ("BipedalWalker-v3", "Box2D", ("gymnasium.envs.box2d",), "box2d"),
    ("Reacher-v5", "mujoco", ("gymnasium.envs.mujoco",), "mujoco"),
])
def test_a_missing_extra_is_named(monkeypatch: pytest.MonkeyPatch, env_id: str, missing: str,
                                  packages: tuple[str, ...], extra: str) -> None:
    _without_modules(monkeypatch, missing, *packages)
    with pytest.raises(UserError) as error:
        probe_spaces(env_id, "walker.toml")
    assert str(error.value) == (f"walker.toml: environment {env_id!r} needs the {extra} extra, "
                                f"which is not installed; install it with pip install "
                                f"'evo-core[{extra}]'")


def test_a_missing_atari_extra_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_modules(monkeypatch, "ale_py")
    for env_id in [key for key in gym.registry if key.startswith("ALE/")]:
        monkeypatch.delitem(gym.registry, env_id)  # as before ale-py registered them
    with pytest.raises(UserError) as error:
        probe_spaces("ALE/Qbert-v5", "qbert.toml")
    message = str(error.value)
    assert message.startswith("qbert.toml: environment 'ALE/Qbert-v5' needs the atari extra")
    assert message.endswith("install it with pip install 'evo-core[atari]'")
    assert "\n" not in message


def test_atari_ids_exist_without_importing_ale_py_first() -> None:
    """gymnasium 1.x does not import ale-py itself: make_environment does, for an unknown id
    (in a fresh interpreter, where nothing imported it yet)."""
    code = ("import sys\nfrom evo_core.environments import probe_spaces\n"
            "assert 'ale_py' not in sys.modules\n"
            "observation, action = probe_spaces('ALE/Qbert-v5')\n"
            "print(observation.shape, action)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(210, 160, 3) Discrete(6)"
    assert result.stderr == ""  # ale-py's banner is silenced


def test_an_unversioned_id_is_said_once(tmp_path: Path) -> None:
    # gymnasium warned at every make: the probe, the runner, and each worker process
    path = tmp_path / "c.json"
    path.write_text(json.dumps(config("CartPole")))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["train", str(path), "--quiet", "--out", str(tmp_path / "run")]) == 0
    said = [str(warning.message) for warning in caught if "version" in str(warning.message)]
    assert len(said) == 1, said
    assert said[0].startswith(f"{path}: environment 'CartPole' names no version; evo makes "
                              "CartPole-v1, the latest installed")
    with warnings.catch_warnings():  # every other make, in any process
        warnings.simplefilter("error")
        env = make_environment("CartPole")
    assert env.spec is not None and env.spec.id == "CartPole-v1"
    env.close()
