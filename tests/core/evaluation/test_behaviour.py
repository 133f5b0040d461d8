"""Behaviour descriptors: window means, padding, episodes combined, the state hook, and the
config that asks for them."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from behaviour_envs import CountingEnv, MinusOneState, ScriptedTemplate

from evo_core.cli.main import main
from evo_core.config.behaviour import BehaviourConfig
from evo_core.config.schema import EpisodesConfig
from evo_core.contract.protocols import EvaluationResult, IBehaviourState
from evo_core.errors import UserError
from evo_core.evaluation.behaviour import (
    RowBehaviour,
    WindowRecorder,
    mean_of_episodes,
    state_provider,
)
from evo_core.evaluation.episodes import EpisodeRunner, RunnerSpec

COUNTING = "behaviour_envs:Counting-v0"


def descriptor(result: EvaluationResult) -> list[float]:
    assert result.descriptor is not None
    return list(result.descriptor)


def recorded(recorder: WindowRecorder, values: list[Any]) -> list[float]:
    recorder.begin()
    for value in values:
        recorder.record(value)
    return list(recorder.end())


def test_window_means_and_the_partial_last_window() -> None:
    recorder = WindowRecorder(interval=2, windows=3, width=1)
    assert recorded(recorder, [1, 2, 3, 4, 5, 6]) == [1.5, 3.5, 5.5]
    assert recorded(recorder, [1, 2, 3, 4, 5, 6, 100, 100]) == [1.5, 3.5, 5.5]  # first 3 kept
    assert recorded(recorder, [1, 2, 3, 4, 6]) == [1.5, 3.5, 6.0]  # partial: mean of what it has


def test_short_episodes_repeat_their_last_window() -> None:
    recorder = WindowRecorder(interval=2, windows=4, width=2)
    assert recorded(recorder, [[1, 10], [3, 30], [5, 50]]) == [2, 20, 5, 50, 5, 50, 5, 50]
    assert recorded(recorder, []) == [0.0] * 8  # not a single step: zeros


def test_final_value_and_nonfinite_values() -> None:
    final = WindowRecorder(interval=None, windows=7, width=2)
    assert final.length == 2
    assert recorded(final, [[1, 2], [3, 4], [5, 6]]) == [5, 6]
    recorder = WindowRecorder(interval=1, windows=3, width=1)
    assert recorded(recorder, [1.0, np.nan, np.inf]) == [1.0, 0.0, 0.0]


def test_the_recorder_starts_afresh_and_returns_float64() -> None:
    recorder = WindowRecorder(interval=3, windows=2, width=1)
    recorded(recorder, [9, 9, 9, 9])
    recorder.begin()
    recorder.record(np.float32(0.5))
    out = recorder.end()
    assert out.dtype == np.float64 and list(out) == [0.5, 0.5]


def runner(source: str, interval: int | str = 2, max_length: int | None = 4, runs: int = 1,
           environment: str = COUNTING) -> EpisodeRunner:
    behaviour = BehaviourConfig(source=source, interval=interval, max_length=max_length)
    return RunnerSpec(environment, EpisodesConfig(runs=runs), behaviour).build(
        ScriptedTemplate(5))


GENOME = np.array([0.25, 0.5, -1.0, 0.75, 0.125])  # dyadic: the means are exact


def test_runner_records_actions_of_a_known_sequence() -> None:
    evaluator = runner("action")
    try:
        result = evaluator.evaluate(GENOME, seed=3)
    finally:
        evaluator.close()
    assert result.steps == 5 and result.fitness == float(GENOME.sum())
    # windows (0.25, 0.5), (-1, 0.75), (0.125); the fourth repeats the third
    assert descriptor(result) == [0.375, -0.125, 0.125, 0.125]


def test_runner_records_observations_and_averages_episodes() -> None:
    evaluator = runner("observation", interval=5, max_length=1, runs=3)
    try:
        result = evaluator.evaluate(GENOME, seed=3)
    finally:
        evaluator.close()
    # observations [t, action] for t = 1..5, one window; three equal episodes
    assert descriptor(result) == [3.0, float(GENOME.mean())]
    assert result.steps == 15


def test_episodes_of_one_evaluation_are_averaged() -> None:
    env = CountingEnv()
    behaviour = RowBehaviour(BehaviourConfig(source="action", interval=1, max_length=2), env, 1)
    episodes = []
    for actions in ([1.0, 3.0], [5.0]):  # the second episode is one step long
        behaviour.begin([0])
        for action in actions:
            behaviour.record([0], None, [np.array([action])])
        episodes.append(behaviour.end(0))
    assert list(mean_of_episodes(episodes)) == [3.0, 4.0]  # mean of [1, 3] and [5, 5]


def test_interval_final_keeps_the_last_value() -> None:
    evaluator = runner("observation", interval="final", max_length=None)
    try:
        assert descriptor(evaluator.evaluate(GENOME, seed=0)) == [5.0, 0.125]
    finally:
        evaluator.close()


def test_state_from_the_environment_and_from_an_outer_wrapper() -> None:
    env = gym.make("behaviour_envs:StatefulCounting-v0")
    assert isinstance(env.unwrapped, IBehaviourState)
    provider = state_provider(env)
    assert provider is not None
    env.reset()
    env.step(np.array([0.0]))
    assert list(provider()) == [10.0]
    wrapped = MinusOneState(env)  # the outermost hook wins
    provider = state_provider(wrapped)
    assert provider is not None and list(provider()) == [-1.0]
    assert state_provider(gym.make("CartPole-v1")) is None


def test_runner_records_the_state_hook() -> None:
    evaluator = runner("state", interval=2, max_length=2,
                       environment="behaviour_envs:StatefulCounting-v0")
    try:
        assert descriptor(evaluator.evaluate(GENOME, seed=0)) == [15.0, 35.0]
    finally:
        evaluator.close()


def test_no_state_is_a_one_line_error() -> None:
    with pytest.raises(UserError, match=r"^behaviour.source = \"state\": environment "
                       r"'CartPole-v1' offers no state .*IBehaviourState") as caught:
        runner("state", environment="CartPole-v1")
    assert "\n" not in str(caught.value)


def test_mujoco_qpos_is_the_builtin_state() -> None:
    pytest.importorskip("mujoco")
    env = gym.make("InvertedPendulum-v5")
    provider = state_provider(env)
    assert provider is not None
    env.reset(seed=0)
    unwrapped: Any = env.unwrapped
    assert np.array_equal(provider(), unwrapped.data.qpos)


def test_atari_ram_is_the_builtin_state() -> None:
    ale_py = pytest.importorskip("ale_py")
    gym.register_envs(ale_py)
    env = gym.make("ALE/Pong-v5")
    provider = state_provider(env)
    assert provider is not None
    env.reset(seed=0)
    unwrapped: Any = env.unwrapped
    assert np.array_equal(provider(), unwrapped.ale.getRAM()) and len(provider()) == 128


def test_results_with_descriptors_compare_and_pickle() -> None:
    a = EvaluationResult(1.0, 5, 0, np.array([1.0, 2.0]))
    assert a == pickle.loads(pickle.dumps(a))
    assert a != EvaluationResult(1.0, 5, 0, np.array([1.0, 2.5]))
    assert a != EvaluationResult(1.0, 5, 0)
    assert EvaluationResult(1.0, 5) == EvaluationResult(1.0, 5)


def test_runner_without_behaviour_returns_no_descriptor() -> None:
    evaluator = RunnerSpec(COUNTING, EpisodesConfig()).build(ScriptedTemplate(5))
    try:
        assert evaluator.evaluate(GENOME, seed=0).descriptor is None
    finally:
        evaluator.close()


BASE = {"environment": "CartPole-v1", "generations": 1,
        "brain": {"type": "ffnn", "hidden_layers": []},
        "optimizer": {"type": "cma-es", "population_size": 4},
        "episodes": {"max_steps": 5}}


@pytest.mark.parametrize(("tables", "message"), [
    ({"behaviour": {"source": "action"}},
     "behaviour.max_length: required key is missing"),
    ({"behaviour": {"source": "action", "interval": 0, "max_length": 2}},
     "behaviour.interval: must be a whole number of steps >= 1"),
    ({"behaviour": {"source": "state", "max_length": 2}},
     "environment 'CartPole-v1' offers no state"),
    ({"novelty": {"k": 3}}, "[novelty] needs a [behaviour] table"),
    ({"behaviour": {"source": "action", "max_length": 2},
      "novelty": {"insertion": "threshold"}},
     "novelty.threshold: required with insertion = \"threshold\""),
])
def test_config_mistakes_are_one_line(tmp_path: Path, tables: dict[str, Any], message: str,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "c.json"
    config.write_text(json.dumps(BASE | tables))
    assert main(["train", str(config), "--out", str(tmp_path / "run"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert not (tmp_path / "run").exists()
