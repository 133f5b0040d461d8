"""Lehman and Stanley's mazes as published (`evo/MediumMaze-v1`, `evo/HardMaze-v1`): the walls,
robot, sensors, dynamics and score of their novelty-search experiments, as their released code
sets them up (the numbers are in the layouts and constants below; issue 37 lists them).

The robot (radius `ROBOT_RADIUS`) has an angular velocity and a speed that its two outputs
o1, o2 in [0, 1] push each step: angular velocity += o1 - 0.5, speed += o2 - 0.5, each clamped
to [-`MAX_ANGULAR_VELOCITY`, `MAX_ANGULAR_VELOCITY`] and [-`MAX_SPEED`, `MAX_SPEED`]. It moves by
speed along the heading it had before the turn, then turns by the angular velocity (degrees,
wrapped to [0, 360)). A move that would leave any wall closer than the radius to its centre is
not made (the turn is). Angles are counter-clockwise from +x in the maze's own coordinates.

It senses ten values: six rangefinders at `RANGEFINDER_ANGLES` degrees from the heading, each
the distance to the nearest wall along its ray over `RANGEFINDER_RANGE` (1.0 when no wall is
within range), then four radar slices toward the goal, [315, 405), [45, 135), [135, 225) and
[225, 315) degrees from the heading, 1.0 in the slice that holds the goal's bearing. (The
2008 release wrote a radar value over one rangefinder; the 2014 release wires the ten distinct
values, as here.)

An episode's return is the published fitness, 300 minus the final distance to the goal
(`FITNESS_BASE`): each step's reward is the progress toward the goal, and the first step's
also carries `FITNESS_BASE` minus the start's distance, so the return is that fitness whichever
step ends the episode (the 400-step limit, `episodes.max_steps`, or the goal). The published
floor of 0.1 never binds here: no point of either maze is 299.9 from its goal. The episode
ends (terminated) once the centre is within `GOAL_RADIUS` of the goal, where a run counts as
solved (`solved`). The position (x, y) is the behaviour state and `info["position"]`.

The simulation is written once, over arrays of robots (`Robots`): the single environment
steps one row of it and the vector environment (`episodes.vectorize = "native"`) steps a whole
population's, so both give the same numbers bit for bit, and a step of 250 robots costs about
as many numpy calls as a step of one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from numpy.typing import NDArray

from evo_core.environments.drawing import checked_render_mode
from evo_core.environments.maze_drawing import MazeFrames, sensor_labels

__all__ = ["PublishedMaze", "MEDIUM", "HARD", "MAZES", "MEDIUM_MAZE", "HARD_MAZE", "Robots",
           "PublishedMazeEnv", "PublishedMazeVectorEnv", "register", "solved",
           "ROBOT_RADIUS", "RANGEFINDER_ANGLES", "RANGEFINDER_RANGE", "MAX_SPEED",
           "MAX_ANGULAR_VELOCITY", "GOAL_RADIUS", "FITNESS_BASE", "MAX_EPISODE_STEPS"]

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

ROBOT_RADIUS = 8.0
#: degrees from the heading: right, front-right, front, front-left, left, behind
RANGEFINDER_ANGLES = np.array([-90.0, -45.0, 0.0, 45.0, 90.0, -180.0])
RANGEFINDER_RANGE = 100.0
MAX_SPEED = 3.0
#: degrees per step
MAX_ANGULAR_VELOCITY = 3.0
GOAL_RADIUS = 5.0
FITNESS_BASE = 300.0
MAX_EPISODE_STEPS = 400
SENSORS = RANGEFINDER_ANGLES.size + 4

MEDIUM_MAZE = "evo/MediumMaze-v1"
HARD_MAZE = "evo/HardMaze-v1"


@dataclass(frozen=True)
class PublishedMaze:
    """A maze file of the release: wall segments (x1, y1, x2, y2), the start pose and the
    goal."""

    name: str
    segments: tuple[tuple[float, float, float, float], ...]
    start: tuple[float, float]
    start_heading: float
    goal: tuple[float, float]

    @property
    def walls(self) -> FloatArray:
        return np.array(self.segments, dtype=np.float64)

    @property
    def start_distance(self) -> float:
        return float(np.hypot(self.goal[0] - self.start[0], self.goal[1] - self.start[1]))


HARD = PublishedMaze(
    name="hard",
    segments=((41, 5, 3, 8), (3, 8, 4, 49), (4, 49, 57, 53), (4, 49, 7, 202),
              (7, 202, 195, 198), (195, 198, 186, 8), (186, 8, 39, 5), (56, 54, 56, 157),
              (57, 106, 158, 162), (77, 201, 108, 164), (6, 80, 33, 121), (192, 146, 87, 91),
              (56, 55, 133, 30)),
    start=(36.0, 184.0), start_heading=0.0, goal=(31.0, 20.0))

MEDIUM = PublishedMaze(
    name="medium",
    segments=((293, 7, 289, 130), (289, 130, 6, 134), (6, 134, 8, 5), (8, 5, 292, 7),
              (241, 130, 58, 65), (114, 7, 73, 42), (130, 91, 107, 46), (196, 8, 139, 51),
              (219, 122, 182, 63), (267, 9, 214, 63), (271, 129, 237, 88)),
    start=(30.0, 22.0), start_heading=0.0, goal=(270.0, 100.0))

MAZES = {MEDIUM.name: MEDIUM, HARD.name: HARD}


def solved(fitness: float) -> bool:
    """Whether an episode's return (the published fitness) means the robot reached the goal."""
    return fitness >= FITNESS_BASE - GOAL_RADIUS - 1e-9


class Robots:
    """`count` robots in one maze: their state as arrays, and the step and sensors of all of
    them at once (rows are independent: a row's numbers do not depend on the others')."""

    def __init__(self, maze: PublishedMaze, count: int) -> None:
        self.maze = maze
        walls = maze.walls
        self._x1, self._y1 = walls[:, 0], walls[:, 1]
        self._ex, self._ey = walls[:, 2] - walls[:, 0], walls[:, 3] - walls[:, 1]
        self._inverse_length2 = 1.0 / (self._ex**2 + self._ey**2)
        self._goal = np.array(maze.goal, dtype=np.float64)
        self.x = np.full(count, maze.start[0])
        self.y = np.full(count, maze.start[1])
        self.heading = np.full(count, maze.start_heading)
        self.speed = np.zeros(count)
        self.angular = np.zeros(count)
        self.distance = np.full(count, maze.start_distance)
        #: steps since the row's reset
        self.steps = np.zeros(count, dtype=np.int64)
        shape = (len(walls), RANGEFINDER_ANGLES.size, count)
        self._buffers = (*(np.empty(shape) for _ in range(4)),
                         *(np.empty(shape, dtype=bool) for _ in range(2)))

    def reset(self, rows: BoolArray | slice = slice(None)) -> None:
        maze = self.maze
        self.x[rows], self.y[rows] = maze.start
        self.heading[rows] = maze.start_heading
        self.speed[rows] = 0.0
        self.angular[rows] = 0.0
        self.distance[rows] = maze.start_distance
        self.steps[rows] = 0

    @property
    def positions(self) -> FloatArray:
        return np.stack([self.x, self.y], axis=1)

    def step(self, actions: NDArray[np.floating[Any]]) -> tuple[FloatArray, BoolArray]:
        """Every robot's step from its outputs (rows x 2, clipped to [0, 1]): the rewards and
        which robots reached the goal."""
        outputs = np.clip(np.asarray(actions, dtype=np.float64), 0.0, 1.0)
        limit = MAX_ANGULAR_VELOCITY
        self.angular = np.clip(self.angular + (outputs[:, 0] - 0.5), -limit, limit)
        self.speed = np.clip(self.speed + (outputs[:, 1] - 0.5), -MAX_SPEED, MAX_SPEED)
        radians = np.deg2rad(self.heading)
        x = self.x + np.cos(radians) * self.speed
        y = self.y + np.sin(radians) * self.speed
        self.heading = np.mod(self.heading + self.angular, 360.0)
        free = self._clearance2(x, y) >= ROBOT_RADIUS**2
        self.x = np.where(free, x, self.x)
        self.y = np.where(free, y, self.y)
        distance = np.hypot(self._goal[0] - self.x, self._goal[1] - self.y)
        rewards = self.distance - distance
        rewards += np.where(self.steps == 0, FITNESS_BASE - self.maze.start_distance, 0.0)
        self.distance = distance
        self.steps += 1
        return rewards, distance <= GOAL_RADIUS

    def sensors(self) -> FloatArray:
        """rows x 10: the rangefinders over their range, then the radar slices."""
        return np.concatenate([self._rangefinders(), self._radar()], axis=1)

    def _clearance2(self, x: FloatArray, y: FloatArray) -> FloatArray:
        """The squared distance from each (x, y) to its nearest wall: the point's offset from
        each wall's nearest point, walls x robots (the inner loops along the robots, as in
        `_rangefinders`: 42 against 72 us at 250 robots)."""
        x1, y1 = self._x1[:, None], self._y1[:, None]
        ex, ey = self._ex[:, None], self._ey[:, None]
        ox, oy = x - x1, y - y1
        along = np.clip((ox * ex + oy * ey) * self._inverse_length2[:, None], 0.0, 1.0)
        ox -= along * ex
        oy -= along * ey
        nearest: FloatArray = np.min(ox * ox + oy * oy, axis=0)
        return nearest

    def _rangefinders(self) -> FloatArray:
        """The ray `position + t * ray` meets wall `start + u * edge` at
        `t = (start - position) x edge / (ray x edge)`, `u = (start - position) x ray /
        (ray x edge)`; it hits when t >= 0 and 0 <= u <= 1 (a parallel wall, ray x edge = 0,
        gives no finite t and never hits).

        Laid out walls x rays x robots, so every operation's inner loop runs along the robots
        and the nearest wall is a reduction over the first axis; and computed into buffers
        made once: at 250 robots each such array is 156 KB, and allocating fresh ones every
        step (page faults, not arithmetic) tripled the time, 770 against 240 us measured."""
        angles = np.deg2rad(RANGEFINDER_ANGLES[:, None] + self.heading)
        rx, ry = np.cos(angles), np.sin(angles)                   # rays x robots
        ex, ey = self._ex[:, None, None], self._ey[:, None, None]
        wx = (self._x1[:, None] - self.x)[:, None, :]             # walls x 1 x robots
        wy = (self._y1[:, None] - self.y)[:, None, :]
        inverse, t, u, scratch, hits, other = self._buffers       # walls x rays x robots
        with np.errstate(divide="ignore", invalid="ignore"):
            np.multiply(rx, ey, out=inverse)
            np.multiply(ry, ex, out=scratch)
            np.subtract(inverse, scratch, out=inverse)
            np.divide(1.0, inverse, out=inverse)
            np.multiply(wx * ey - wy * ex, inverse, out=t)
            np.multiply(wx, ry, out=u)
            np.multiply(wy, rx, out=scratch)
            np.subtract(u, scratch, out=u)
            np.multiply(u, inverse, out=u)
            np.greater_equal(t, 0.0, out=hits)    # a NaN (a ray along a wall's own line,
            np.greater_equal(u, 0.0, out=other)   # 0 x inf) is no hit
            np.logical_and(hits, other, out=hits)
            np.less_equal(u, 1.0, out=other)
            np.logical_and(hits, other, out=hits)
            np.logical_not(hits, out=hits)
        np.copyto(t, RANGEFINDER_RANGE, where=hits)
        nearest = np.min(t, axis=0)
        return np.ascontiguousarray(nearest.T) / RANGEFINDER_RANGE

    def _radar(self) -> FloatArray:
        bearing = np.rad2deg(np.arctan2(self._goal[1] - self.y, self._goal[0] - self.x))
        relative = np.mod(bearing - self.heading, 360.0)
        slices = np.floor_divide(np.mod(relative + 45.0, 360.0), 90.0).astype(np.intp)
        radar = np.zeros((len(slices), 4))
        radar[np.arange(len(slices)), np.minimum(slices, 3)] = 1.0
        return radar


def _spaces() -> tuple[gym.spaces.Box, gym.spaces.Box]:
    return (gym.spaces.Box(0.0, 1.0, shape=(SENSORS,), dtype=np.float64),
            gym.spaces.Box(0.0, 1.0, shape=(2,), dtype=np.float32))


def _maze(layout: str) -> PublishedMaze:
    if layout not in MAZES:
        raise ValueError(f"unknown maze layout {layout!r}; choose one of {sorted(MAZES)}")
    return MAZES[layout]


class PublishedMazeEnv(gym.Env[FloatArray, NDArray[np.float32]]):
    """One robot in a published maze; deterministic (the seed of `reset` changes nothing)."""

    #: a step has no duration of its own: 50 frames a second, as evo's v0 mazes
    metadata: dict[str, Any] = {"render_modes": ["rgb_array"],  # noqa: RUF012 - gymnasium's Env declares metadata a plain class attribute
                                "render_fps": 50}

    def __init__(self, layout: str = "hard", render_mode: str | None = None) -> None:
        self.maze = _maze(layout)
        self.render_mode = checked_render_mode(self.metadata, render_mode)
        self._frames: MazeFrames | None = None
        #: the positions of the frames drawn since the reset (`render`)
        self._path: list[tuple[float, float]] = []
        self.observation_space, self.action_space = _spaces()
        self._robots = Robots(self.maze, 1)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[FloatArray, dict[str, Any]]:
        super().reset(seed=seed)
        self._robots.reset()
        self._path = []
        return self._robots.sensors()[0], {"position": self.behaviour_state()}

    def step(self, action: NDArray[np.float32]
             ) -> tuple[FloatArray, float, bool, bool, dict[str, Any]]:
        rewards, reached = self._robots.step(np.asarray(action).reshape(1, 2))
        return (self._robots.sensors()[0], float(rewards[0]), bool(reached[0]), False,
                {"position": self.behaviour_state()})

    def observation_labels(self) -> tuple[str, ...]:
        """IObservationLabels: the rangefinders by their angles, then the radar's quarters."""
        return sensor_labels(RANGEFINDER_ANGLES.tolist(), RANGEFINDER_RANGE, True)

    def render(self) -> NDArray[np.uint8] | None:
        """The maze, the path so far and the robot with what it senses (`maze_drawing.py`,
        y downwards as in the paper): an H x W x 3 array in `render_mode="rgb_array"`, else
        None."""
        if self.render_mode != "rgb_array":
            return None
        if self._frames is None:
            self._frames = MazeFrames(self.maze.walls, self.maze.start, self.maze.goal,
                                      GOAL_RADIUS, ROBOT_RADIUS, RANGEFINDER_ANGLES.tolist(),
                                      RANGEFINDER_RANGE, y_down=True)
        robots = self._robots
        x, y = float(robots.x[0]), float(robots.y[0])
        self._path.append((x, y))
        sensed = robots.sensors()[0]
        rays = RANGEFINDER_ANGLES.size
        return self._frames.picture((x, y), float(robots.heading[0]),
                                    (sensed[:rays] * RANGEFINDER_RANGE).tolist(),
                                    int(np.argmax(sensed[rays:])), self._path)

    def behaviour_state(self) -> FloatArray:
        """The robot's (x, y)."""
        position: FloatArray = self._robots.positions[0]
        return position

    def walls(self) -> FloatArray:
        """IPlanarMap: the maze file's segments."""
        return self.maze.walls

    def start_position(self) -> FloatArray:
        return np.array(self.maze.start, dtype=np.float64)

    def goal_position(self) -> FloatArray:
        return np.array(self.maze.goal, dtype=np.float64)

    def y_points_down(self) -> bool:
        """The maze files' coordinates are a screen's: drawn so, the hard maze's start is at
        the bottom left and its goal at the top left, as the paper shows them."""
        return True


class PublishedMazeVectorEnv(VectorEnv[FloatArray, NDArray[np.float32], NDArray[Any]]):
    """`num_envs` robots stepped as one array (gymnasium's next-step autoreset: an environment
    that ended is reset by the following step, whose action it ignores)."""

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.NEXT_STEP}  # noqa: RUF012 - gymnasium's VectorEnv declares metadata a plain class attribute

    def __init__(self, num_envs: int = 1, layout: str = "hard",
                 max_episode_steps: int = MAX_EPISODE_STEPS) -> None:
        self.maze = _maze(layout)
        self.num_envs = num_envs
        self.max_episode_steps = max_episode_steps
        self.single_observation_space, self.single_action_space = _spaces()
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space,
                                                              num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, num_envs)
        self._robots = Robots(self.maze, num_envs)
        self._ended = np.zeros(num_envs, dtype=bool)

    def reset(self, *, seed: int | list[int] | None = None,
              options: dict[str, Any] | None = None) -> tuple[FloatArray, dict[str, Any]]:
        self._robots.reset()
        self._ended[:] = False
        return self._robots.sensors(), self._info()

    def step(self, actions: NDArray[np.float32]
             ) -> tuple[FloatArray, NDArray[Any], NDArray[Any], NDArray[Any], dict[str, Any]]:
        robots, ended = self._robots, self._ended
        rewards, terminated = robots.step(actions)
        if ended.any():  # the rows that ended last step start again instead
            robots.reset(ended)
            rewards[ended] = 0.0
            terminated[ended] = False
        truncated = (robots.steps >= self.max_episode_steps) & ~terminated
        self._ended = terminated | truncated
        return robots.sensors(), rewards, terminated, truncated, self._info()

    def behaviour_states(self) -> FloatArray:
        """Every robot's (x, y), one row each."""
        return self._robots.positions

    def _info(self) -> dict[str, Any]:
        return {"position": self._robots.positions, "_position": np.ones(self.num_envs, bool)}


def _make_maze(**kwargs: Any) -> gym.Env[Any, Any]:
    return PublishedMazeEnv(**kwargs)


def _make_vector(**kwargs: Any) -> PublishedMazeVectorEnv:
    return PublishedMazeVectorEnv(**kwargs)


def register() -> None:
    """Register the published mazes with gymnasium (idempotent)."""
    for env_id, layout in ((MEDIUM_MAZE, "medium"), (HARD_MAZE, "hard")):
        if env_id not in gym.registry:
            gym.register(env_id, entry_point=_make_maze, vector_entry_point=_make_vector,
                         kwargs={"layout": layout}, max_episode_steps=MAX_EPISODE_STEPS,
                         disable_env_checker=True)
