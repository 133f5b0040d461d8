"""Flattening what the behaviour recorder receives: gymnasium's order, Discrete as its index,
and the predecessor configs whose image observations and Tuple actions used to stop training."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from conftest import ROOT

from evo_core.cli.main import main
from evo_core.config.behaviour import BehaviourConfig
from evo_core.config.schema import validate_config
from evo_core.environments import make_environment
from evo_core.errors import UserError
from evo_core.evaluation.behaviour import RowBehaviour, check_behaviour
from evo_core.evaluation.flattening import flat_state, flattener
from evo_core.hooks.discovery import get_registry

CORPUS = ROOT / "tests" / "data" / "predecessor"
spaces = gym.spaces


def test_box_image_is_raveled_in_c_order() -> None:
    width, flatten = flattener(spaces.Box(0, 255, (2, 2, 3), np.uint8), "observation")
    image = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    assert width == 12
    assert flatten(image).tolist() == list(range(12))
    assert flatten(image).dtype == np.float64


def test_tuple_and_dict_follow_gymnasium_order_with_discrete_as_index() -> None:
    space = spaces.Dict({"b": spaces.Box(-1, 1, (2,)), "a": spaces.Discrete(5, start=1),
                         "c": spaces.Tuple((spaces.Discrete(2), spaces.MultiBinary(3)))})
    width, flatten = flattener(space, "observation")
    value = {"a": 4, "b": np.array([0.5, -0.5]), "c": (1, np.array([1, 0, 1]))}
    assert width == 1 + 2 + 1 + 3
    # gymnasium sorts a Dict's keys: a, b, c; the same order as spaces.flatten
    assert flatten(value).tolist() == [4.0, 0.5, -0.5, 1.0, 1.0, 0.0, 1.0]
    onehot: Any = spaces.flatten(space, value)
    assert onehot.size == 5 + 2 + 2 + 3  # gymnasium's one-hot form, which evo does not use
    assert flatten(value)[1:3].tolist() == onehot[5:7].tolist()


def test_spaces_without_a_fixed_length_are_one_line() -> None:
    with pytest.raises(UserError, match=r"behaviour\.source = 'action': the action space Text"):
        flattener(spaces.Tuple((spaces.Discrete(2), spaces.Text(5))), "action")


def test_state_is_flattened_from_its_value() -> None:
    assert flat_state(np.ones((2, 3), dtype=np.uint8)).shape == (6,)


def migrated_environment(tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
                         ) -> tuple[Any, dict[str, Any]]:
    source = tmp_path / name
    shutil.copy(CORPUS / name, source)
    assert main(["migrate", str(source)]) == 0, capsys.readouterr().err
    data = tomllib.loads(source.with_suffix(".toml").read_text())
    config = validate_config(data, get_registry(), name)
    return config.environment, data["behaviour"]


@pytest.mark.parametrize("name", ["qbert_hard_novel.json", "qbert_mu_novel.json"])
def test_qbert_images_are_recorded_flat(tmp_path: Path, name: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A 16x16x3 Atari frame used to fail to broadcast into the 768-number buffer."""
    pytest.importorskip("ale_py")
    environment, behaviour = migrated_environment(tmp_path, name, capsys)
    config = BehaviourConfig(**behaviour)
    check_behaviour(config, environment, name)
    env = make_environment(environment)
    try:
        recorder = RowBehaviour(config, env, 1)
        observation, _ = env.reset(seed=0)
        assert observation.shape == (16, 16, 3)
        recorder.begin([0])
        for _ in range(3):
            action = env.action_space.sample()
            observation, *_ = env.step(action)
            recorder.record([0], [observation], [action])
        descriptor = recorder.end(0)
    finally:
        env.close()
    assert descriptor.shape == (768,)  # interval "final": the last frame, flattened
    assert descriptor.tolist() == np.asarray(observation, dtype=np.float64).ravel().tolist()


def test_reverse_tuple_actions_are_recorded(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """reverse_novel.json records Tuple(Discrete(2), Discrete(2), Discrete(2)) actions."""
    environment, behaviour = migrated_environment(tmp_path, "reverse_novel.json", capsys)
    config = BehaviourConfig(**behaviour)
    check_behaviour(config, environment, "reverse_novel.json")
    env = make_environment(environment)
    try:
        assert isinstance(env.action_space, spaces.Tuple)
        recorder = RowBehaviour(config, env, 1)
        env.reset(seed=0)
        recorder.begin([0])
        env.step((1, 0, 1))
        recorder.record([0], [None], [(1, 0, 1)])
        assert recorder.end(0).tolist() == [1.0, 0.0, 1.0]
    finally:
        env.close()
