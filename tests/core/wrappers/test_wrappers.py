"""Wrappers as plugins: listed, described by the schema, loaded from a local module (the one of
docs/writing-a-wrapper.md) in every worker; each built-in wrapper on known actions gives a known
return or observation."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import ROOT, fitness_rows, run_evo

from evo_core.cli.main import main
from evo_core.contract.config_models import EnvironmentConfig, WrapperConfig
from evo_core.environments import make_environment
from evo_core.errors import UserError
from evo_core.wrappers.atari_preprocessing import AtariPreprocessingConfig
from evo_core.wrappers.frame_stack import FrameStackConfig
from evo_core.wrappers.qbert_hard import FILTERED_REWARDS, QbertHardConfig
from evo_core.wrappers.scale_observation import ScaleObservationConfig
from evo_core.wrappers.stand_still_stop import StandStillStopConfig

BUILT_IN = ["atari-preprocessing", "frame-stack", "qbert-hard", "scale-observation",
            "stand-still-stop"]
DOC = ROOT / "docs" / "writing-a-wrapper.md"
#: Qbert, frame by frame: each action held for 8 frames (the first for 7); with seed 5 and no
#: sticky actions the player lands on cubes (25 each) and catches a 300 at frame 327
QBERT_ACTIONS = [0, 4, 4, 0, 4, 2, 3, 3, 1, 5, 0, 1, 2, 3, 2, 0, 0, 0, 0, 0, 5, 1, 3, 4, 1, 1,
                 2, 1, 5, 1, 5, 4, 5, 0, 2, 3, 2, 3, 4, 3, 0, 5, 3]
QBERT_FRAMES = 340
QBERT_KWARGS: dict[str, Any] = {"frameskip": 1, "repeat_action_probability": 0.0}


def doc_file(name: str) -> str:
    """The `# file: NAME` block of docs/writing-a-wrapper.md."""
    for body in re.findall(r"^```\w+\n(.*?)^```", DOC.read_text(), flags=re.S | re.M):
        if body.startswith(f"# file: {name}\n"):
            return str(body)
    raise AssertionError(f"no `# file: {name}` block in {DOC}")


def test_the_docs_qbert_table_validates_and_makes_qbert() -> None:
    """The first example of docs/writing-a-wrapper.md: qbert-hard inside atari-preprocessing."""
    import tomllib

    from evo_core.config import validate_config
    from evo_core.hooks.discovery import get_registry

    block = re.findall(r"^```toml\n(.*?)^```", DOC.read_text(), flags=re.S | re.M)[0]
    data = {"generations": 1, "brain": {"type": "ffnn"},
            "optimizer": {"type": "cma-es", "population_size": 4}, **tomllib.loads(block)}
    environment = validate_config(data, get_registry(), str(DOC)).environment
    env = make_environment(environment)
    try:
        assert env.observation_space.shape == (64, 64)
        assert env.observation_space.dtype == np.float32
    finally:
        env.close()


def made(env_id: str, *wrappers: WrapperConfig, **kwargs: Any) -> gym.Env[Any, Any]:
    return make_environment(EnvironmentConfig(id=env_id, kwargs=kwargs, wrappers=wrappers))


def test_list_wrappers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list-wrappers", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    core = [row for row in rows if row["distribution"] == "evo-core"]
    assert [row["name"] for row in core] == BUILT_IN
    assert all(row["status"] == "ok" and row["description"] for row in core)
    assert main(["list-wrappers"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["NAME", "DISTRIBUTION", "VERSION", "STATUS", "DESCRIPTION"]
    assert [line.split()[0] for line in table[1:6]] == BUILT_IN


def test_schema_describes_the_environment_and_its_wrappers(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    environment = schema["$defs"]["EnvironmentConfig"]["anyOf"]
    assert environment[0]["type"] == "string"
    table = environment[1]
    assert table["required"] == ["id"] and table["additionalProperties"] is False
    items = table["properties"]["wrappers"]["items"]
    assert items["discriminator"]["propertyName"] == "type"
    assert sorted(items["discriminator"]["mapping"]) == BUILT_IN
    atari = schema["$defs"]["AtariPreprocessingConfig"]["properties"]
    assert {name: atari[name]["default"] for name in atari if name != "type"} == {
        "noop_max": 30, "frame_skip": 4, "screen_size": 84, "terminal_on_life_loss": False,
        "grayscale_obs": True, "grayscale_newaxis": False, "scale_obs": False}


PLUGIN = ("--plugin", "my_wrappers.py")


def _doc_files(folder: Path) -> None:
    (folder / "my_wrappers.py").write_text(doc_file("my_wrappers.py"))
    (folder / "cartpole.toml").write_text(doc_file("cartpole.toml"))


def test_a_local_wrapper_plugin_is_listed(tmp_path: Path) -> None:
    """The module of docs/writing-a-wrapper.md, through --plugin."""
    _doc_files(tmp_path)
    listed = run_evo(*PLUGIN, "list-wrappers", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in listed.json()}
    assert rows["scale-reward"]["distribution"] == "local module my_wrappers.py"
    assert rows["scale-reward"]["description"] == "Every reward multiplied by a factor."
    assert rows["scale-reward"]["status"] == "ok" and set(BUILT_IN) < set(rows)


@pytest.mark.slow
def test_a_local_wrapper_plugin_trains_in_workers_too(tmp_path: Path) -> None:
    """The doc's config and module: applied alike by the sequential handler and in mp's worker
    processes (which load the module themselves)."""
    _doc_files(tmp_path)
    plugin = PLUGIN

    def train(name: str, *settings: str) -> Any:
        args = [item for setting in settings for item in ("--set", setting)]
        result = run_evo(*plugin, "train", "cartpole.toml", "--quiet", "--out", name, *args,
                         cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        return fitness_rows(tmp_path / name)

    plain = train("plain", "environment.wrappers=[]")
    scaled = train("scaled")
    in_workers = train("mp", 'processing.type="mp"', "processing.workers=2")
    assert in_workers == scaled
    for plain_row, scaled_row in zip(plain, scaled):
        assert scaled_row[:2] == plain_row[:2]  # generation, evaluations
        for column in (2, 3, 5, 6):  # best, mean, worst, best_ever: CMA-ES ranks, so the
            # same genomes ran, and each return is a hundredth
            assert float(scaled_row[column]) == pytest.approx(float(plain_row[column]) / 100)
    assert max(float(row[2]) for row in plain) > 1


def test_a_wrapper_field_mistake_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                          ) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps({
        "environment": {"id": "CartPole-v1", "wrappers": [
            {"type": "frame-stack", "stack_size": 2}, {"type": "stand-still-stop", "stps": 3}]},
        "generations": 1, "brain": {"type": "ffnn"},
        "optimizer": {"type": "cma-es", "population_size": 4}}))
    assert main(["train", str(config), "--quiet", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"evo: error: {config}: environment.wrappers[1].stps: unknown key (did you "
                   "mean 'steps'?); allowed keys: index, min_speed, penalty, steps, type"]
    assert not (tmp_path / "run").exists()


def _qbert_rewards(*wrappers: WrapperConfig) -> list[float]:
    env = made("ALE/Qbert-v5", *wrappers, **QBERT_KWARGS)
    try:
        env.reset(seed=5)
        rewards = []
        for frame in range(1, QBERT_FRAMES + 1):
            _, reward, terminated, truncated, _ = env.step(QBERT_ACTIONS[frame // 8])
            rewards.append(float(reward))
            assert not (terminated or truncated)
        return rewards
    finally:
        env.close()


def test_qbert_hard_zeroes_the_filtered_rewards_and_keeps_the_others() -> None:
    plain = _qbert_rewards()
    hard = _qbert_rewards(QbertHardConfig())
    assert [r for r in plain if r] == [25.0, 25.0, 300.0, 25.0]  # the known run
    assert plain[326] == 300.0 and hard[326] == 0.0
    assert [r for r in hard if r] == [25.0, 25.0, 25.0]
    assert all(h == (0.0 if p in FILTERED_REWARDS else p) for p, h in zip(plain, hard))


def test_qbert_hard_refuses_skipped_frames() -> None:
    with pytest.raises(Exception, match="environment skips 4 frames per step"):
        made("ALE/Qbert-v5", QbertHardConfig(), frameskip=4)
    with pytest.raises(Exception, match="atari-preprocessing before it in the list skips"):
        made("ALE/Qbert-v5", AtariPreprocessingConfig(), QbertHardConfig(), **QBERT_KWARGS)


@pytest.mark.parametrize(("fields", "shape", "dtype", "high"), [
    ({}, (84, 84), np.uint8, 255),
    ({"screen_size": 64, "grayscale_newaxis": True}, (64, 64, 1), np.uint8, 255),
    ({"screen_size": 64, "grayscale_obs": False, "scale_obs": True}, (64, 64, 3), np.float32,
     1.0),
])
def test_atari_preprocessing_observations(fields: dict[str, Any], shape: tuple[int, ...],
                                          dtype: type[np.generic], high: float) -> None:
    env = made("ALE/Qbert-v5", QbertHardConfig(), AtariPreprocessingConfig(**fields),
               **QBERT_KWARGS)
    try:
        assert env.observation_space.shape == shape and env.observation_space.dtype == dtype
        observation, _ = env.reset(seed=1)
        observations = [observation]
        for action in (0, 2, 3, 5, 4):
            observations.append(env.step(action)[0])
        for observation in observations:
            assert observation.shape == shape and observation.dtype == dtype
            assert observation.min() >= 0 and observation.max() <= high
            assert env.observation_space.contains(observation)
        assert observations[-1].max() > 0.1 * high  # a picture, not a blank frame
    finally:
        env.close()


def test_frame_stack_observations() -> None:
    env = made("CartPole-v1", FrameStackConfig(stack_size=3))
    try:
        first, _ = env.reset(seed=4)
        inner: Any = env.unwrapped  # CartPoleEnv, whose `state` is the observation
        assert first.shape == (3, 4)
        np.testing.assert_array_equal(first, np.stack([inner.state] * 3).astype(np.float32))
        second = env.step(1)[0]
        np.testing.assert_array_equal(second[:2], first[1:])  # padded with the reset one
        np.testing.assert_array_equal(second[2], np.asarray(inner.state, dtype=np.float32))
        third = env.step(0)[0]
        np.testing.assert_array_equal(third[:2], second[1:])
    finally:
        env.close()


def test_stand_still_stop_ends_a_walker_that_stands_still() -> None:
    """BipedalWalker with its legs held apart comes to rest: without the wrapper the episode
    goes on; with it, it ends on the 51st consecutive step of |hull speed| < 1e-4 (the speed is
    observation[2]), with -100 as that step's reward, and every earlier reward unchanged."""
    action = np.array([-1.0, 1.0, 1.0, 1.0], dtype=np.float32)
    plain = made("BipedalWalker-v3")
    wrapped = made("BipedalWalker-v3", StandStillStopConfig())
    try:
        plain.reset(seed=0)
        wrapped.reset(seed=0)
        still = 0
        for step in range(1, 400):
            observation, reward, terminated, truncated, _ = plain.step(action)
            assert not (terminated or truncated)  # it neither falls nor gets anywhere
            still = still + 1 if abs(observation[2]) < 1e-4 else 0
            wrapped_step = wrapped.step(action)
            np.testing.assert_array_equal(wrapped_step[0], observation)
            if still == 51:
                assert wrapped_step[1:4] == (-100.0, True, False)
                assert 51 < step < 300
                break
            assert wrapped_step[1:4] == (reward, False, False)
        else:
            raise AssertionError("the walker never stood still")
    finally:
        plain.close()
        wrapped.close()


def test_scale_observation_maps_every_observation_and_the_bounds() -> None:
    """CartPole's observation (position and angle bounded, the two speeds not), each entry
    scaled and shifted by its own numbers: a negative scale swaps the bounds, a zero one blanks
    the entry to its offset, infinite bounds stay infinite."""
    scale, offset = [2.0, 0.5, -10.0, 0.0], [0.0, 1.0, 3.0, -2.0]
    plain = made("CartPole-v1")
    scaled = made("CartPole-v1", ScaleObservationConfig(scale=scale, offset=offset))
    try:
        space = scaled.observation_space
        assert isinstance(space, gym.spaces.Box)
        inner = plain.observation_space
        assert isinstance(inner, gym.spaces.Box)
        np.testing.assert_allclose(space.low, [2 * inner.low[0], -np.inf,
                                               -10 * inner.high[2] + 3, -2.0], rtol=1e-6)
        np.testing.assert_allclose(space.high, [2 * inner.high[0], np.inf,
                                                -10 * inner.low[2] + 3, -2.0], rtol=1e-6)
        observations = [(plain.reset(seed=3)[0], scaled.reset(seed=3)[0])]
        observations += [(plain.step(action)[0], scaled.step(action)[0])
                         for action in (1, 1, 0, 1, 0, 0)]
        for raw, mapped in observations:
            np.testing.assert_allclose(mapped, np.array(scale) * raw + np.array(offset),
                                       rtol=1e-6)
            assert mapped[3] == -2.0 and space.contains(mapped)
    finally:
        plain.close()
        scaled.close()


def test_scale_observation_with_one_number_scales_every_entry() -> None:
    env = made("CartPole-v1", ScaleObservationConfig(scale=0.5))
    plain = made("CartPole-v1")
    try:
        np.testing.assert_allclose(env.reset(seed=1)[0], 0.5 * plain.reset(seed=1)[0])
    finally:
        env.close()
        plain.close()


def test_scale_observation_mistakes_are_named() -> None:
    with pytest.raises(ValueError, match="finite"):
        ScaleObservationConfig(scale=[1.0, float("inf")])
    with pytest.raises(ValueError, match="finite"):
        ScaleObservationConfig(offset=float("nan"))
    with pytest.raises(UserError, match=r"wrappers\[0\] \(scale-observation\).*scale has 3 "
                       r"entries, the observation 4; give 4 numbers"):
        made("CartPole-v1", ScaleObservationConfig(scale=[1.0, 2.0, 3.0]))
    with pytest.raises(UserError, match="maps a Box observation, not Discrete"):
        made("FrozenLake-v1", ScaleObservationConfig())
