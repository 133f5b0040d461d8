"""evo/Procgen-v0: a level per episode, frames resized and scaled; without procgen-gym (Python
< 3.13, or the extra not installed) one line that names Python 3.13 and the extra."""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

from evo_core.config.migrate import environments as migrated
from evo_core.contract.config_models import EnvironmentConfig
from evo_core.environments import make_environment, procgen
from evo_core.environments.extras import missing_extra
from evo_core.errors import UserError

HAS_PROCGEN = importlib.util.find_spec("procgen_gym") is not None
needs_procgen = pytest.mark.skipif(not HAS_PROCGEN, reason="procgen-gym is not installed "
                                   "(Python >= 3.13 with the procgen extra)")


def procgen_table(**kwargs: object) -> EnvironmentConfig:
    return EnvironmentConfig.model_validate({"id": "evo/Procgen-v0", "kwargs": kwargs})


def test_migrate_knows_the_same_games_and_id() -> None:
    assert migrated.GAMES == procgen.GAMES and migrated.PROCGEN == procgen.PROCGEN


@pytest.mark.skipif(HAS_PROCGEN, reason="procgen-gym is installed")
def test_without_procgen_gym_one_line_names_the_extra() -> None:
    with pytest.raises(UserError) as raised:
        make_environment("evo/Procgen-v0")
    message = str(raised.value)
    assert "\n" not in message and "procgen extra" in message
    assert "'evo-core[procgen]'" in message
    if sys.version_info < (3, 13):
        assert "needs Python >= 3.13" in message and "PYTHON=python3.13" in message


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="the message for older Pythons")
def test_the_missing_extra_on_an_old_python_says_which_python() -> None:
    message = str(missing_extra("evo/Procgen-v0", "procgen"))
    assert message.startswith("environment 'evo/Procgen-v0' needs Python >= 3.13 and the "
                              "procgen extra (this is Python 3.")
    assert "atari" in str(missing_extra("ALE/Pong-v5", "atari"))
    assert "Python" not in str(missing_extra("ALE/Pong-v5", "atari"))


@needs_procgen
def test_a_seed_is_a_level_and_a_reset_the_next_one() -> None:
    env = make_environment(procgen_table(game="heist", distribution_mode="easy",
                                         screen_size=32))
    try:
        first, info = env.reset(seed=7)
        assert info["level"] == 7
        assert first.shape == (32, 32, 3) and first.dtype == np.float32
        assert first.min() >= 0.0 and 0.0 < first.max() <= 1.0
        assert env.observation_space.contains(first)
        _, info = env.reset()
        assert info["level"] == 8
        again, _ = env.reset(seed=7)
        assert np.array_equal(first, again)
        observation, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        assert observation.shape == (32, 32, 3) and isinstance(float(reward), float)
        assert not truncated and isinstance(terminated, bool)
    finally:
        env.close()


@needs_procgen
def test_native_frames_are_not_resized() -> None:
    env = make_environment(procgen_table(game="coinrun", distribution_mode="easy"))
    try:
        observation, _ = env.reset(seed=0)
        assert observation.shape == (64, 64, 3)
    finally:
        env.close()


@needs_procgen
def test_an_unknown_game_is_named() -> None:
    with pytest.raises(ValueError, match="unknown procgen game 'pong'"):
        make_environment(procgen_table(game="pong"))
