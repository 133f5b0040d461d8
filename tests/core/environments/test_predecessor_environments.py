"""evo's versions of the predecessor's environments: ReacherMemory(Dynamic) and Reverse(Shaped).

Each is checked with known actions against a known return or observation, with gymnasium's own
environment checker, and by one generation of training."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from evo_core.cli.main import main
from evo_core.environments import make_environment
from evo_core.environments.reacher_memory import TARGET_ENTRIES
from evo_core.environments.reacher_memory_dynamic import ReacherMemoryDynamic
from evo_core.environments.reverse import ReverseEnv

IDS = ["evo/ReacherMemory-v0", "evo/ReacherMemoryDynamic-v0", "evo/Reverse-v0",
       "evo/ReverseShaped-v0"]
REACHER_IDS = IDS[:2]


def needs_mujoco(environment: str) -> None:
    if "Reacher" in environment:
        pytest.importorskip("mujoco", reason="MuJoCo is not installed (evo-core[mujoco])")


def make(environment: str, **kwargs: Any) -> gym.Env[Any, Any]:
    needs_mujoco(environment)
    make_environment(environment).close()  # registers evo's ids
    return gym.make(environment, **kwargs)


# --------------------------------------------------------------------------- ReacherMemory


def plain_reacher(seed: int) -> tuple[gym.Env[Any, Any], Any]:
    from gymnasium.envs.mujoco.reacher_v5 import ReacherEnv

    env = ReacherEnv()
    observation, _ = env.reset(seed=seed)
    return env, observation


def test_reacher_memory_phases_against_plain_reacher() -> None:
    """O=3, M=2, A=4 with the action (0.5, -0.3) on every step: the first five steps move
    nothing and earn 0, the four act steps are exactly Reacher-v5's with that action, the target
    entries vanish from the observation of step 3 on, and the episode has 9 steps."""
    env = make("evo/ReacherMemory-v0", observation_frames=3, memory_frames=2, action_frames=4)
    reference, expected_first = plain_reacher(seed=7)
    observation, _ = env.reset(seed=7)
    np.testing.assert_array_equal(observation, expected_first)
    assert np.all(observation[list(TARGET_ENTRIES)] != 0)
    action = np.array([0.5, -0.3], dtype=np.float32)
    rewards, phases = [], []
    for t in range(9):
        observation, reward, terminated, truncated, info = env.step(action)
        expected, _expected_reward, *_ = reference.step(action if t >= 5 else np.zeros(2))
        hidden = observation[list(TARGET_ENTRIES)]
        if t < 3:
            np.testing.assert_array_equal(observation, expected)
        else:
            assert np.all(hidden == 0.0)
            visible = [i for i in range(10) if i not in TARGET_ENTRIES]
            np.testing.assert_array_equal(observation[visible], expected[visible])
        rewards.append(reward)
        phases.append(info["phase"])
        assert not terminated
        assert truncated == (t == 8)
    assert rewards[:5] == [0.0] * 5 and all(float(r) < 0 for r in rewards[5:])
    assert phases == ["observe"] * 3 + ["remember"] * 2 + ["act"] * 4
    env.close()
    reference.close()


def test_reacher_memory_with_the_target_shown_is_reacher_in_the_same_phases() -> None:
    """hide_target = false: the same phases and rewards, every observation Reacher-v5's own."""
    env = make("evo/ReacherMemory-v0", observation_frames=2, memory_frames=2, action_frames=3,
               hide_target=False)
    reference, expected_first = plain_reacher(seed=5)
    observation, _ = env.reset(seed=5)
    np.testing.assert_array_equal(observation, expected_first)
    action = np.array([0.4, 0.2], dtype=np.float32)
    for t in range(7):
        observation, reward, _, truncated, _ = env.step(action)
        expected, expected_reward, *_ = reference.step(action if t >= 4 else np.zeros(2))
        np.testing.assert_array_equal(observation, expected)
        assert reward == (float(expected_reward) if t >= 4 else 0.0)
        assert truncated == (t == 6)
    with pytest.raises(ValueError, match="hide_target"):
        make("evo/ReacherMemory-v0", hide_target="no")
    env.close()
    reference.close()


def test_reacher_memory_return_is_reachers_over_the_act_steps() -> None:
    """The whole episode's return equals plain Reacher-v5's return over the act phase after
    O + M motionless steps: no act step is lost, none added."""
    env = make("evo/ReacherMemory-v0", observation_frames=2, memory_frames=3, action_frames=6)
    reference, _ = plain_reacher(seed=3)
    env.reset(seed=3)
    actions = np.random.default_rng(0).uniform(-1, 1, size=(11, 2)).astype(np.float32)
    total, expected, steps = 0.0, 0.0, 0
    done = False
    while not done:
        _, reward, terminated, truncated, _ = env.step(actions[steps])
        _, reference_reward, *_ = reference.step(actions[steps] if steps >= 5 else np.zeros(2))
        if steps >= 5:
            expected += float(reference_reward)
        total += float(reward)
        steps += 1
        done = terminated or truncated
    assert steps == 11
    assert total == pytest.approx(expected, rel=0, abs=1e-12) and total < 0
    env.close()
    reference.close()


def test_reacher_memory_phases_are_validated() -> None:
    needs_mujoco("Reacher")
    with pytest.raises(ValueError, match="memory_frames"):
        make("evo/ReacherMemory-v0", memory_frames=0)


def episode_length(env: gym.Env[Any, Any]) -> int:
    steps, done = 0, False
    while not done:
        _, _, terminated, truncated, _ = env.step(np.zeros(2, dtype=np.float32))
        steps += 1
        done = terminated or truncated
    return steps


def test_reacher_memory_dynamic_draws_the_remember_phase_from_its_seed() -> None:
    env = make("evo/ReacherMemoryDynamic-v0", observation_frames=1, memory_frames=4,
               action_frames=1)
    drawn = []
    for episode in range(12):
        _, info = env.reset(seed=100 + episode)
        drawn.append(info["memory_frames"])
        assert episode_length(env) == 1 + info["memory_frames"] + 1
    assert set(drawn) == {4, 5, 6}
    again = [env.reset(seed=100 + episode)[1]["memory_frames"] for episode in range(12)]
    assert again == drawn
    env.close()


def curriculum_of(env: gym.Env[Any, Any]) -> ReacherMemoryDynamic:
    """The curriculum wrapper inside what gym.make returned."""
    while not isinstance(env, ReacherMemoryDynamic):
        assert isinstance(env, gym.Wrapper)
        env = env.env
    return env


def test_reacher_memory_dynamic_promotes_after_a_window_of_good_episodes() -> None:
    """last=2, max_bad=1: two finished episodes that are not bad raise the minimum by one; an
    episode cut short does not count, and bad episodes block the promotion."""
    good = make("evo/ReacherMemoryDynamic-v0", observation_frames=1, memory_frames=3,
                action_frames=1, last=2, max_bad=1, bad_return=-7.5)
    curriculum = curriculum_of(good)
    good.reset(seed=1)
    good.step(np.zeros(2, dtype=np.float32))  # cut short: does not count
    good.reset(seed=2)
    episode_length(good)
    good.reset(seed=3)
    assert curriculum.memory_frames_min == 3
    episode_length(good)
    good.reset(seed=4)
    assert curriculum.memory_frames_min == 4 and curriculum.returns == []
    good.close()
    bad = make("evo/ReacherMemoryDynamic-v0", observation_frames=1, memory_frames=3,
               action_frames=1, last=2, max_bad=1, bad_return=0.0)
    for seed in range(4):
        bad.reset(seed=seed)
        episode_length(bad)
    bad.reset(seed=9)
    assert curriculum_of(bad).memory_frames_min == 3
    bad.close()


# --------------------------------------------------------------------------- Reverse


def reverse(**kwargs: Any) -> ReverseEnv:
    return ReverseEnv(**kwargs)


def test_writing_the_reversed_tape_earns_one_per_symbol() -> None:
    env = reverse(base=3, min_length=5)
    observation, info = env.reset(seed=11)
    tape = list(env.input_data)
    assert len(tape) == info["length"] and 5 <= len(tape) <= 7
    assert observation == tape[0]
    # read to the end of the tape first, seeing every symbol, then write while moving left
    seen = [int(observation)]
    for _ in range(len(tape) - 1):
        observation, reward, terminated, truncated, _ = env.step((1, 0, 0))
        seen.append(int(observation))
        assert reward == 0.0 and not terminated and not truncated
    assert seen == tape
    total, steps = 0.0, 0
    for symbol in reversed(seen):
        _, reward, terminated, truncated, _ = env.step((0, 1, symbol))
        total += float(reward)
        steps += 1
        assert reward == 1.0 and not truncated
    assert terminated and steps == len(tape) and total == len(tape)


def test_a_wrong_symbol_ends_the_episode_with_minus_a_half() -> None:
    env = reverse(base=2, min_length=4)
    env.reset(seed=5)
    wrong = 1 - int(env.target[0])
    _, reward, terminated, truncated, _ = env.step((1, 1, wrong))
    assert (reward, terminated, truncated) == (-0.5, True, False)


def test_the_read_head_sees_the_blank_off_the_tape_and_time_runs_out() -> None:
    env = reverse(base=2, min_length=3)
    observation, _ = env.reset(seed=0)
    length = len(env.input_data)
    observation, *_ = env.step((0, 0, 0))  # left of the first symbol
    assert observation == 2  # the blank, `base`
    for _ in range(2 * length + 3):
        _, reward, terminated, truncated, _ = env.step((1, 0, 0))
        assert reward == 0.0 and not terminated and not truncated
    _, reward, terminated, truncated, _ = env.step((1, 0, 0))
    assert (reward, truncated) == (-1.0, True)


def test_reverse_shaped_penalises_where_the_read_head_is() -> None:
    """Failing on the first step while moving right: -0.5, minus |len - read - write| with both
    heads at 1, minus 1 for not moving left."""
    env = make("evo/ReverseShaped-v0")
    env.reset(seed=4)
    task = env.unwrapped
    assert isinstance(task, ReverseEnv)
    length = len(task.target)
    assert task.min_length == 7 and task.last == 15 and 7 <= length <= 9
    _, reward, terminated, _, _ = env.step((1, 1, 1 - int(task.target[0])))
    assert terminated and reward == pytest.approx(-0.5 - abs(length - 2) - 1)
    # moving left instead: no extra -1, the read head at -1
    env.reset(seed=4)
    _, reward, _, _, _ = env.step((0, 1, 1 - int(task.target[0])))
    assert reward == pytest.approx(-0.5 - abs(length - 0))
    env.close()


def solve(env: ReverseEnv) -> None:
    for symbol in env.target:
        env.step((0, 1, int(symbol)))


def test_reverse_curriculum_lengthens_the_tape_after_a_window_of_solved_episodes() -> None:
    env = reverse(min_length=2, last=2)
    env.reset(seed=1)
    solve(env)
    env.reset()
    env.step((0, 1, 1 - int(env.target[0])))  # a failure fills the window with a shortfall
    env.reset()
    assert env.min_length == 2
    solve(env)
    env.reset()
    solve(env)
    env.reset()
    assert env.min_length == 3 and 3 <= len(env.target) <= 5


def test_reverse_same_seed_same_tape() -> None:
    first, second = reverse(base=4, min_length=6), reverse(base=4, min_length=6)
    first.reset(seed=21)
    second.reset(seed=21)
    np.testing.assert_array_equal(first.input_data, second.input_data)


# --------------------------------------------------------------------------- all four


@pytest.mark.parametrize("environment", IDS)
def test_gymnasiums_environment_checker_passes(environment: str) -> None:
    env = make(environment)
    with warnings.catch_warnings():
        # the checker asks for the unwrapped env; ours are wrappers by design (the MuJoCo env
        # stays `unwrapped`), and Reacher's Box is unbounded
        warnings.simplefilter("ignore", UserWarning)
        check_env(env.unwrapped if environment == "evo/Reverse-v0" else env,
                  skip_render_check=True)
    env.close()


CONFIG = """\
environment = "{environment}"
seed = 3
generations = 1

[brain]
type = "{brain}"

[optimizer]
type = "cma-es"
population_size = 4
sigma = 0.5

[episodes]
max_steps = 40
"""


@pytest.mark.parametrize(("environment", "brain"),
                         [("evo/ReacherMemory-v0", "ctrnn"),
                          ("evo/ReacherMemoryDynamic-v0", "lstm"),
                          ("evo/Reverse-v0", "ffnn"), ("evo/ReverseShaped-v0", "ctrnn")])
def test_one_generation_trains(tmp_path: Path, environment: str, brain: str) -> None:
    needs_mujoco(environment)
    config = tmp_path / "config.toml"
    config.write_text(CONFIG.format(environment=environment, brain=brain))
    out = tmp_path / "run"
    assert main(["train", str(config), "--quiet", "--out", str(out)]) == 0
    rows = (out / "log.csv").read_text().splitlines()
    assert len(rows) == 2 and rows[1].startswith("1,4,")
