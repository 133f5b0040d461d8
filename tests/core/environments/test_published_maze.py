"""The published mazes (`evo/MediumMaze-v1`, `evo/HardMaze-v1`): sensors against a reference
loop, the dynamics and the score by hand, the vector environment against the single one bit for
bit, and the native rows' behaviour state against the per-genome runner's."""

from __future__ import annotations

import math
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from brain_ffnn import FFNNConfig, FFNNTemplate
from evo_core.config.behaviour import BehaviourConfig
from evo_core.config.schema import EpisodesConfig
from evo_core.contract.protocols import IBehaviourState, IVectorBehaviourState
from evo_core.environments.making import make_environment
from evo_core.environments.published_maze import (
    FITNESS_BASE,
    HARD,
    HARD_MAZE,
    MAZES,
    MEDIUM,
    MEDIUM_MAZE,
    RANGEFINDER_ANGLES,
    ROBOT_RADIUS,
    PublishedMaze,
    PublishedMazeEnv,
    Robots,
    solved,
)
from evo_core.environments.registration import register_all
from evo_core.evaluation.batched_episodes import BatchedEpisodeRunner
from evo_core.evaluation.episodes import EpisodeRunner

register_all()


def ray_by_loop(x: float, y: float, angle: float, walls: np.ndarray) -> float:
    """The distance to the nearest wall along the ray at `angle` degrees, by solving each
    wall's 2 x 2 system (another route to the intersection than the environment's)."""
    direction = np.array([math.cos(math.radians(angle)), math.sin(math.radians(angle))])
    nearest = 100.0
    for x1, y1, x2, y2 in walls:
        matrix = np.array([[direction[0], x1 - x2], [direction[1], y1 - y2]])
        if abs(np.linalg.det(matrix)) < 1e-12:
            continue
        t, u = np.linalg.solve(matrix, np.array([x1 - x, y1 - y]))
        if t >= 0 and -1e-12 <= u <= 1 + 1e-12:
            nearest = min(nearest, t)
    return nearest / 100.0


def clearance_by_search(x: float, y: float, walls: np.ndarray) -> float:
    """The distance to the nearest wall, by sampling each wall at 20,001 points."""
    s = np.linspace(0.0, 1.0, 20001)[:, None]
    points = walls[:, None, :2] + s[None] * (walls[:, None, 2:] - walls[:, None, :2])
    return float(np.min(np.hypot(points[..., 0] - x, points[..., 1] - y)))


@pytest.mark.parametrize("maze", [HARD, MEDIUM], ids=["hard", "medium"])
def test_sensors_at_random_poses_match_a_reference_loop(maze) -> None:
    rng = np.random.default_rng(3)
    robots = Robots(maze, 40)
    walls = maze.walls
    low, high = walls[:, [0, 2]].min(), walls[:, [0, 2]].max()
    robots.x = rng.uniform(low, high, 40)
    robots.y = rng.uniform(walls[:, [1, 3]].min(), walls[:, [1, 3]].max(), 40)
    robots.heading = rng.uniform(0, 360, 40)
    sensors = robots.sensors()
    for row in range(40):
        x, y, heading = robots.x[row], robots.y[row], robots.heading[row]
        expected = [ray_by_loop(x, y, heading + a, walls) for a in RANGEFINDER_ANGLES]
        np.testing.assert_allclose(sensors[row, :6], expected, rtol=1e-9, atol=1e-12)
        bearing = math.degrees(math.atan2(maze.goal[1] - y, maze.goal[0] - x)) - heading
        relative = bearing % 360
        slice_ = next(i for i, (a, b) in enumerate(((315, 405), (45, 135), (135, 225),
                                                    (225, 315)))
                      if a <= relative < b or a <= relative + 360 < b)
        assert sensors[row, 6:].tolist() == [float(i == slice_) for i in range(4)]


def test_a_ray_along_a_walls_own_line_reads_no_wall() -> None:
    """Heading exactly east on the line of a horizontal wall that lies behind: the ray and the
    wall are parallel and collinear (0 x inf is NaN in the arithmetic), and the reading is the
    range, not NaN."""
    maze = PublishedMaze("line", ((0, 50, 100, 50), (0, 0, 0, 100)), (150.0, 50.0), 0.0,
                         (10.0, 10.0))
    sensors = Robots(maze, 1).sensors()
    assert np.isfinite(sensors).all() and sensors[0, 2] == 1.0


def test_hard_maze_start_observation_by_hand() -> None:
    env = PublishedMazeEnv("hard")
    observation, info = env.reset()
    assert info["position"].tolist() == [36.0, 184.0]
    # heading 0 (east); the goal (31, 20) is 91.7 degrees clockwise: the radar's right slice
    assert observation[6:].tolist() == [0.0, 0.0, 0.0, 1.0]
    # right (south, -y) meets the wall (56, 54)-(56, 157)? no: x = 36 lies west of it; the
    # nearest wall straight south is (6, 80)-(33, 121) beyond the range; behind (west) meets
    # the wall (4, 49)-(7, 202) at x = 4 + 3 (184 - 49) / 153 = 6.647
    assert observation[5] == pytest.approx((36 - (4 + 3 * (184 - 49) / 153)) / 100)
    assert observation.shape == (10,) and observation.dtype == np.float64


def test_dynamics_by_hand() -> None:
    robots = Robots(HARD, 1)
    robots.step(np.array([[1.0, 1.0]]))  # angular 0.5, speed 0.5; moved along heading 0
    assert (robots.x[0], robots.y[0], robots.heading[0]) == (36.5, 184.0, 0.5)
    robots.step(np.array([[1.0, 1.0]]))  # angular 1.0, speed 1.0 along 0.5 degrees
    assert robots.x[0] == pytest.approx(36.5 + math.cos(math.radians(0.5)))
    assert robots.y[0] == pytest.approx(184.0 + math.sin(math.radians(0.5)))
    assert robots.heading[0] == 1.5
    for _ in range(10):  # saturate at 3 and 3
        robots.step(np.array([[1.0, 1.0]]))
    assert robots.angular[0] == 3.0 and robots.speed[0] == 3.0
    robots.step(np.array([[0.0, 0.0]]))
    assert robots.angular[0] == 2.5 and robots.speed[0] == 2.5
    robots.heading[:] = 359.0
    robots.angular[:] = 2.5
    robots.step(np.array([[0.5, 0.5]]))
    assert robots.heading[0] == pytest.approx(1.5)  # wrapped


@pytest.mark.parametrize("maze", [HARD, MEDIUM], ids=["hard", "medium"])
def test_walls_are_never_nearer_than_the_radius(maze) -> None:
    """Random drivers for 400 steps: every position keeps the radius from every wall, and a
    blocked move still turns the robot."""
    rng = np.random.default_rng(5)
    robots = Robots(maze, 64)
    walls = maze.walls
    blocked_turned = 0
    for _ in range(400):
        before = robots.positions, robots.heading.copy()
        robots.step(rng.uniform(0, 1, (64, 2)))
        stayed = (robots.positions == before[0]).all(axis=1) & (robots.speed != 0)
        blocked_turned += int(np.count_nonzero(stayed & (robots.heading != before[1])))
        assert (robots._clearance2(robots.x, robots.y) >= ROBOT_RADIUS**2).all()
    assert blocked_turned > 0
    row = int(np.argmin(robots._clearance2(robots.x, robots.y)))
    assert clearance_by_search(robots.x[row], robots.y[row], walls) >= ROBOT_RADIUS - 1e-3


def test_start_poses_are_free() -> None:
    for maze in MAZES.values():
        x, y = maze.start
        assert clearance_by_search(x, y, maze.walls) >= ROBOT_RADIUS


def test_return_is_300_minus_the_final_distance_and_the_goal_ends_the_episode() -> None:
    env = gym.make(MEDIUM_MAZE)
    env.reset()
    rng = np.random.default_rng(0)
    total, steps = 0.0, 0
    while True:
        _, reward, terminated, truncated, info = env.step(rng.uniform(0, 1, 2))
        total, steps = total + float(reward), steps + 1
        if terminated or truncated:
            break
    assert truncated and steps == 400
    final = np.hypot(*(info["position"] - np.array(MEDIUM.goal)))
    assert total == pytest.approx(FITNESS_BASE - final, abs=1e-9)
    assert not solved(total)
    # a robot that arrives within 5 units ends its episode, solved
    robots = Robots(MEDIUM, 1)
    robots.x[:], robots.y[:] = MEDIUM.goal[0] - 8.0, MEDIUM.goal[1]
    _, reached = robots.step(np.array([[0.5, 1.0]]))  # speed 0.5 east
    assert not reached[0]
    for _ in range(3):
        _, reached = robots.step(np.array([[0.5, 1.0]]))  # 1.0, 1.5, 2.0
    assert reached[0] and solved(FITNESS_BASE - robots.distance[0])


def test_vector_environment_is_the_single_one_bit_for_bit() -> None:
    """8 rows of random actions through two episodes each (400-step truncation and the
    next-step autoreset) against 8 single environments under gymnasium's TimeLimit."""
    rng = np.random.default_rng(1)
    actions = rng.uniform(0, 1, (805, 8, 2)).astype(np.float32)
    vector = gym.make_vec(HARD_MAZE, num_envs=8, vectorization_mode="vector_entry_point")
    assert isinstance(vector, IVectorBehaviourState)
    observations, _ = vector.reset(seed=0)
    singles = [gym.make(HARD_MAZE) for _ in range(8)]
    expected = np.stack([env.reset()[0] for env in singles])
    assert (observations == expected).all()
    ended = np.zeros(8, dtype=bool)
    for step in actions:
        observations, rewards, terminated, truncated, _ = vector.step(step)
        for row, env in enumerate(singles):
            if ended[row]:
                obs, _ = env.reset()
                reward, term, trunc = 0.0, False, False
            else:
                obs, stepped, term, trunc, _ = env.step(step[row])
                reward = float(stepped)
            assert (obs == observations[row]).all()
            assert (reward, term, trunc) == (rewards[row], terminated[row], truncated[row])
            single = env.unwrapped
            assert isinstance(single, PublishedMazeEnv)
            assert (vector.behaviour_states()[row] == single.behaviour_state()).all()
        ended = terminated | truncated
    assert truncated.sum() == 0 and np.count_nonzero(ended) == 0  # 805 = 2 x 400 + 5
    vector.close()


def test_registered_ids_pass_gymnasiums_checker() -> None:
    for env_id in (MEDIUM_MAZE, HARD_MAZE):
        env = gym.make(env_id)
        assert env.spec is not None and env.spec.max_episode_steps == 400
        assert env.action_space == gym.spaces.Box(0.0, 1.0, (2,), np.float32)
        assert isinstance(env.unwrapped, IBehaviourState)
        check_env(env.unwrapped, skip_render_check=True)


def test_native_rows_record_the_final_position_as_the_per_genome_runner_does() -> None:
    env = gym.make(HARD_MAZE)
    template = FFNNTemplate(FFNNConfig(hidden_layers=[4]), env.observation_space,
                            env.action_space, np.random.default_rng(0))
    env.close()
    rng = np.random.default_rng(2)
    genomes = rng.normal(0, 2, (12, template.genome_size))
    seeds = np.arange(12, dtype=np.int64)
    behaviour = BehaviourConfig(source="state", interval="final")
    episodes = EpisodesConfig(max_steps=150)
    lone = EpisodeRunner(template, HARD_MAZE, episodes, behaviour=behaviour)
    expected = [lone.evaluate(genome, int(seed)) for genome, seed in zip(genomes, seeds)]
    lone.close()
    native = BatchedEpisodeRunner(template, HARD_MAZE,
                                  EpisodesConfig(max_steps=150, vectorize="native",
                                                 batch_rows=5), behaviour=behaviour)
    try:
        results = native.evaluate_many(genomes, seeds)
    finally:
        native.close()
    assert [r.fitness for r in results] == [r.fitness for r in expected]
    descriptors = [np.asarray(r.descriptor).tolist() for r in results]
    assert descriptors == [np.asarray(r.descriptor).tolist() for r in expected]
    assert len({tuple(d) for d in descriptors}) > 6  # the robots went different ways


def test_the_v0_mazes_are_not_called_out_of_date() -> None:
    """v1 is Lehman and Stanley's maze, not a fix of evo's own v0: gymnasium's "out of date,
    consider upgrading" would be wrong advice."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make_environment("evo/HardMaze-v0").close()
        make_environment("evo/MediumMaze-v0").close()
    assert not [w for w in caught if "out of date" in str(w.message)]
