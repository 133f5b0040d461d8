"""The deceptive mazes: sensors computed by hand, scripted drives, collisions, the goal."""

from __future__ import annotations

import math

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from evo_core.contract.protocols import IBehaviourState
from evo_core.environments import make_environment
from evo_core.environments.maze import (
    GOAL_RADIUS,
    HARD,
    HARD_MAZE,
    MAX_EPISODE_STEPS,
    MAX_TURN,
    MEDIUM,
    MEDIUM_MAZE,
    MazeEnv,
    Walls,
    reached_goal,
)


def drive(env: MazeEnv, turn: float = 0.0, speed: float = 0.0, steps: int = 1
          ) -> tuple[float, bool]:
    """`steps` identical actions; the summed reward and whether the episode terminated."""
    total = 0.0
    for _ in range(steps):
        _, reward, terminated, truncated, _ = env.step(np.array([turn, speed], dtype=np.float32))
        assert not truncated
        total += reward
        if terminated:
            return total, True
    return total, False


def turn_by(env: MazeEnv, angle: float) -> None:
    """Turn on the spot by `angle` radians in equal steps of at most MAX_TURN."""
    steps = math.ceil(abs(angle) / MAX_TURN)
    drive(env, turn=angle / steps / MAX_TURN, steps=steps)


def test_start_observation_by_hand():
    env = MazeEnv("medium")
    observation, _ = env.reset(seed=3)
    # robot at (30, 30) facing east; fin at x = 100 (y 0..55), divider at y = 120, box 0..200
    expected = [30 / 100,                  # right: the floor, 30 below
                30 * math.sqrt(2) / 100,   # front-right: the floor, 30 below along a diagonal
                70 / 100,                  # front: the fin, 70 ahead
                1.0,                       # front-left: the divider, 127 away: out of range
                90 / 100,                  # left: the divider, 90 above
                30 / 100,                  # behind: the west wall
                0.0, 1.0, 0.0, 0.0]        # the goal (30, 170) is to the left
    np.testing.assert_allclose(observation, expected, atol=1e-12)
    assert env.observation_space.contains(observation)
    assert isinstance(env, IBehaviourState)
    state = env.behaviour_state()
    np.testing.assert_array_equal(state, [30.0, 30.0])
    state[0] = 99.0  # a copy: recording it cannot move the robot
    np.testing.assert_array_equal(env.behaviour_state(), [30.0, 30.0])


def test_straight_ahead_stops_at_the_fin():
    env = MazeEnv("medium")
    env.reset()
    total, terminated = drive(env, speed=1.0, steps=25)
    # 3 units a step while the body (radius 8) clears the fin at x = 100: 20 steps, to x = 90
    np.testing.assert_allclose(env.behaviour_state(), [90.0, 30.0], atol=1e-9)
    assert not terminated
    assert total == pytest.approx(MEDIUM.start_distance - math.hypot(60.0, 140.0))
    observation = env._observation()
    assert observation[2] == pytest.approx(10 / 100)  # the fin, 10 ahead of the centre


def test_reversing_into_a_wall_stops_short_of_it():
    env = MazeEnv("medium")
    env.reset()
    drive(env, speed=-1.0, steps=12)
    np.testing.assert_allclose(env.behaviour_state(), [9.0, 30.0], atol=1e-9)


def test_going_north_is_the_dead_end_under_the_divider():
    env = MazeEnv("medium")
    env.reset()
    turn_by(env, math.pi / 2)
    total, terminated = drive(env, speed=1.0, steps=40)
    x, y = env.behaviour_state()
    assert x == pytest.approx(30.0, abs=1e-4)
    assert y == pytest.approx(111.0, abs=1e-4)  # 27 steps of 3; the divider is at 120
    assert not terminated
    assert total == pytest.approx(MEDIUM.start_distance - 59.0, abs=1e-4)
    assert not reached_goal(total, MEDIUM)
    observation = env._observation()
    assert observation[6:].tolist() == [1.0, 0.0, 0.0, 0.0]  # the goal is straight ahead


def test_the_way_round_reaches_the_goal_and_ends_the_episode():
    env = MazeEnv("medium")
    env.reset()
    total = 0.0
    turn_by(env, math.pi / 2)
    total += drive(env, speed=1.0, steps=23)[0]        # north to y = 99, above the fin
    turn_by(env, -math.pi / 2)
    total += drive(env, speed=1.0, steps=48)[0]        # east to x = 174, past the divider
    turn_by(env, math.pi / 2)
    total += drive(env, speed=1.0, steps=24)[0]        # north to y = 171
    turn_by(env, math.pi / 2)
    gained, terminated = drive(env, speed=1.0, steps=60)  # west along the goal's corridor
    total += gained
    assert terminated
    x, y = env.behaviour_state()
    assert math.hypot(x - 30.0, y - 170.0) <= GOAL_RADIUS
    assert x > 30.0  # it stopped on entering the goal's radius, not after passing it
    assert reached_goal(total, MEDIUM)


OBLIQUE_WALLS = np.concatenate([HARD.walls, [[20.0, 180.0, 120.0, 90.0],
                                               [150.0, 20.0, 190.0, 110.0]]])


@pytest.mark.parametrize("walls", [HARD.walls, OBLIQUE_WALLS], ids=["hard", "oblique"])
def test_sensors_match_a_loop_over_walls(walls):
    rng = np.random.default_rng(0)
    fast_walls = Walls(walls)
    for _ in range(20):
        position = rng.uniform(1.0, 199.0, size=2)
        heading = float(rng.uniform(-math.pi, math.pi))
        fast = fast_walls.ranges(position, heading)
        for reading, angle in zip(fast, np.deg2rad([-90.0, -45.0, 0.0, 45.0, 90.0, 180.0])):
            assert reading == pytest.approx(_ray_by_loop(position, heading + angle, walls))
        nearest = min(_segment_distance_by_search(position, wall) for wall in walls)
        assert math.sqrt(fast_walls.clearance2(position)) == pytest.approx(nearest, abs=1e-9)


def _ray_by_loop(position, angle, walls, max_range=100.0):
    best = max_range
    direction = np.array([math.cos(angle), math.sin(angle)])
    for x1, y1, x2, y2 in walls:
        matrix = np.array([[direction[0], x1 - x2], [direction[1], y1 - y2]])
        if abs(np.linalg.det(matrix)) < 1e-12:
            continue
        t, u = np.linalg.solve(matrix, np.array([x1, y1]) - position)
        if t >= 0 and 0 <= u <= 1:
            best = min(best, t)
    return best


def _segment_distance_by_search(position, wall):
    """Ternary search along the segment (the distance is convex along it)."""
    start, end = np.array(wall[:2]), np.array(wall[2:])
    low, high = 0.0, 1.0
    for _ in range(100):
        a, b = low + (high - low) / 3, high - (high - low) / 3
        if np.hypot(*(start + a * (end - start) - position)) \
                < np.hypot(*(start + b * (end - start) - position)):
            high = b
        else:
            low = a
    return float(np.hypot(*(start + low * (end - start) - position)))


def test_registered_ids_step_limit_and_check_env():
    for env_id, layout in ((MEDIUM_MAZE, MEDIUM), (HARD_MAZE, HARD)):
        env = make_environment(env_id)
        try:
            observation, _ = env.reset(seed=0)
            assert observation.shape == (10,)
            maze = env.unwrapped
            assert isinstance(maze, MazeEnv)
            assert tuple(maze.behaviour_state()) == layout.start
            steps, truncated = 0, False
            while not truncated:
                _, _, terminated, truncated, _ = env.step(np.array([1.0, 1.0], np.float32))
                assert not terminated
                steps += 1
            assert steps == MAX_EPISODE_STEPS
        finally:
            env.close()
    check_env(MazeEnv("hard"), skip_render_check=True)


def test_unknown_layout_is_refused():
    with pytest.raises(ValueError, match="unknown maze layout 'easy'"):
        MazeEnv("easy")


def test_without_radar_the_robot_senses_walls_only():
    with_radar, without = MazeEnv("hard"), MazeEnv("hard", radar=False)
    seen, _ = without.reset()
    assert without.observation_space.shape == (6,) and seen.shape == (6,)
    assert np.array_equal(seen, with_radar.reset()[0][:6])


def test_hard_maze_going_north_is_the_trap_and_the_way_round_scores_worse_first():
    trapped = MazeEnv("hard", radar=False)
    trapped.reset()
    turn_by(trapped, math.pi / 2)
    total, _ = drive(trapped, speed=1.0, steps=40)
    np.testing.assert_allclose(trapped.behaviour_state(), [30.0, 90.0], atol=1e-4)
    assert total == pytest.approx(HARD.start_distance - math.hypot(10.0, 60.0), abs=1e-4)
    assert not reached_goal(total, HARD)

    env = MazeEnv("hard", radar=False)
    env.reset()
    total = drive(env, speed=1.0, steps=50)[0]          # east to x = 180
    turn_by(env, math.pi / 2)
    total += drive(env, speed=1.0, steps=50)[0]         # north through the gap to y = 180
    np.testing.assert_allclose(env.behaviour_state(), [180.0, 180.0], atol=1e-4)
    assert total < 0.0  # farther from the goal than the start: fitness fell all the way
    turn_by(env, math.pi / 2)
    total += drive(env, speed=1.0, steps=45)[0]         # west over the goal room's wall
    turn_by(env, math.pi / 2)
    gained, terminated = drive(env, speed=1.0, steps=15)  # south into the goal room
    assert terminated
    assert reached_goal(total + gained, HARD)
