"""Deceptive 2-D mazes navigated with rangefinders, after Lehman and Stanley's novelty-search
experiments: the task on which rewarding progress toward the goal leads search astray.

A circular robot (radius `ROBOT_RADIUS`) starts at a fixed pose. Every step it turns by
`action[0] * MAX_TURN` radians and then moves `action[1] * MAX_SPEED` units along its heading
(backwards for a negative speed); a move that would bring its body into a wall is not made (the
robot stays where it is, turned), so it slides along nothing and never passes through a wall.

It sees `RANGEFINDER_ANGLES.size` rangefinders (distance from its centre to the nearest wall along
each ray, divided by `RANGEFINDER_RANGE` and capped at 1) followed by four radar slices toward the
goal (1.0 in the slice that holds the goal's bearing, else 0.0: ahead, left, behind, right, each a
quarter turn centred on its direction), unless made with `radar=False`. Angles are
counter-clockwise with y pointing up.

Reward is the progress toward the goal each step (the previous distance minus the new one), so an
episode's return is the start's distance to the goal minus the final distance: "minus the final
distance", shifted to be 0 for a robot that ends where it began, whichever step ends the episode
(the environment's own limit or `episodes.max_steps`). The episode ends (terminated) once the
robot's centre is within `GOAL_RADIUS` of the goal, so a return of at least
`start distance - GOAL_RADIUS` means the goal was reached (`reached_goal`).

The robot's position is its behaviour state (`behaviour_state`), the usual descriptor for novelty
search and MAP-Elites on this task; with the walls, the start and the goal it makes the maze an
`IPlanarMap`, which `evo plot RUN --maze` draws. The mazes are deceptive by construction: a
wall lies between the start and the goal, and the point nearest to the goal on the start's side
of it is a dead end; the way round leads far from the goal first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

from evo_core.environments.drawing import checked_render_mode
from evo_core.environments.maze_drawing import MazeFrames, sensor_labels

__all__ = ["MazeLayout", "MazeEnv", "MEDIUM", "HARD", "LAYOUTS", "MEDIUM_MAZE", "HARD_MAZE",
           "ROBOT_RADIUS", "MAX_SPEED", "MAX_TURN", "RANGEFINDER_ANGLES", "RANGEFINDER_RANGE",
           "GOAL_RADIUS", "MAX_EPISODE_STEPS", "register", "reached_goal", "Walls"]

FloatArray = NDArray[np.float64]

ROBOT_RADIUS = 8.0
MAX_SPEED = 3.0
#: radians per step at |action[0]| = 1 (about 14 degrees)
MAX_TURN = 0.25
#: relative to the heading: right, front-right, front, front-left, left, behind
RANGEFINDER_ANGLES = np.deg2rad([-90.0, -45.0, 0.0, 45.0, 90.0, 180.0])
RANGEFINDER_RANGE = 100.0
GOAL_RADIUS = 10.0
MAX_EPISODE_STEPS = 400
#: a step has no duration of its own; 50 frames a second (20 ms, which a GIF keeps exactly)
#: plays a 400-step episode in 8 s
RENDER_FPS = 50

MEDIUM_MAZE = "evo/MediumMaze-v0"
HARD_MAZE = "evo/HardMaze-v0"


@dataclass(frozen=True)
class MazeLayout:
    """Walls as line segments `(x1, y1, x2, y2)` inside the box `[0, width] x [0, height]` (whose
    sides are walls too), and the fixed start pose and goal."""

    name: str
    width: float
    height: float
    inner_walls: tuple[tuple[float, float, float, float], ...]
    start: tuple[float, float]
    start_heading: float
    goal: tuple[float, float]

    @property
    def walls(self) -> FloatArray:
        """Every wall, the box's four sides first."""
        w, h = self.width, self.height
        box = [(0.0, 0.0, w, 0.0), (w, 0.0, w, h), (w, h, 0.0, h), (0.0, h, 0.0, 0.0)]
        return np.array(box + list(self.inner_walls), dtype=np.float64)

    @property
    def start_distance(self) -> float:
        return float(np.hypot(self.goal[0] - self.start[0], self.goal[1] - self.start[1]))


#: One divider with its gap at the far right; the goal is straight above the start, behind it.
#: Going up ends against the divider 59 units from the goal; the way round passes 150 units away.
MEDIUM = MazeLayout(
    name="medium", width=200.0, height=200.0,
    inner_walls=((0.0, 120.0, 150.0, 120.0),   # the divider; the gap is x in (150, 200)
                 (100.0, 0.0, 100.0, 55.0)),   # a fin: going east along the floor hits it
    start=(30.0, 30.0), start_heading=0.0, goal=(30.0, 170.0))

#: A divider with its gap at the far right and, above it, a wall that shuts the goal's room off
#: from the east: the goal can be reached only over the top of that wall. Driving up ends under
#: the divider 58 from the goal (a return of 62 of the 110 needed): the trap. Through the gap the
#: robot is about 150 from the goal (a return of -30), and the room beyond ends against the
#: goal room's wall 68 from the goal (a return of 52, less than the trap's), so fitness falls
#: for the whole way round: east along the floor, north through the gap, then west along the
#: top.
HARD = MazeLayout(
    name="hard", width=200.0, height=200.0,
    inner_walls=((0.0, 100.0, 160.0, 100.0),     # the divider; the gap is x in (160, 200)
                 (100.0, 100.0, 100.0, 160.0)),  # the goal room's east wall; over it y > 160
    start=(30.0, 30.0), start_heading=0.0, goal=(40.0, 150.0))

LAYOUTS = {MEDIUM.name: MEDIUM, HARD.name: HARD}


class Walls:
    """Wall segments with what every step needs precomputed, in plain floats.

    Why not numpy: a maze has a handful of walls and six rays, so a step is ~60 ray-wall tests
    and ~10 point-segment distances. As (rays x walls) numpy arrays that was ~25 small array
    operations of a few microseconds each: 170 us a step, measured on the hard maze. As float
    arithmetic, with axis-aligned walls tested by one division each, a step measured 18 us
    (timeit of `MazeEnv.step`; tests/core/environments/test_maze.py checks the readings against
    a reference loop). A brain is batched; an environment step is not, so per-call overhead, not
    arithmetic, is what costs here."""

    def __init__(self, segments: FloatArray, angles: FloatArray = RANGEFINDER_ANGLES,
                 max_range: float = RANGEFINDER_RANGE) -> None:
        self.segments = np.array(segments, dtype=np.float64).reshape(-1, 4)
        #: (x1, y1, dx, dy, 1 / (dx^2 + dy^2)) of each wall
        self._walls = [(float(x1), float(y1), float(x2 - x1), float(y2 - y1),
                        1.0 / float((x2 - x1) ** 2 + (y2 - y1) ** 2))
                       for x1, y1, x2, y2 in self.segments]
        # axis-aligned walls (all of the layouts' walls) need a third of the arithmetic
        self._horizontal = [(y1, min(x1, x1 + dx), max(x1, x1 + dx))
                            for x1, y1, dx, dy, _ in self._walls if dy == 0.0]
        self._vertical = [(x1, min(y1, y1 + dy), max(y1, y1 + dy))
                          for x1, y1, dx, dy, _ in self._walls if dx == 0.0]
        self._oblique = [wall for wall in self._walls if wall[2] != 0.0 and wall[3] != 0.0]
        self._angles = [float(angle) for angle in angles]
        self.max_range = max_range
        self.count = len(self._walls)

    def clearance2(self, point: FloatArray | tuple[float, float]) -> float:
        """The squared distance from `point` to the nearest wall."""
        px, py = float(point[0]), float(point[1])
        nearest = math.inf
        for x1, y1, dx, dy, inverse_length2 in self._walls:
            ox, oy = px - x1, py - y1
            along = (ox * dx + oy * dy) * inverse_length2
            if along > 1.0:
                along = 1.0
            elif along < 0.0:
                along = 0.0
            ox -= along * dx
            oy -= along * dy
            distance2 = ox * ox + oy * oy
            nearest = min(nearest, distance2)
        return nearest

    def ranges_list(self, px: float, py: float, heading: float) -> list[float]:
        """The distance from `(px, py)` to the nearest wall along each rangefinder, capped at
        `max_range`.

        The ray `position + t * ray` meets wall `start + u * edge` where
        `t = (start - position) x edge / (ray x edge)` and `u = (start - position) x ray /
        (ray x edge)`; it hits if `t >= 0` and `0 <= u < 1` (strict `u < 1`: a ray through a
        wall's end point exactly is caught by the wall it meets there, or misses a free end; a
        parallel wall, `ray x edge = 0`, never hits)."""
        return [self._ray(px, py, math.cos(heading + angle), math.sin(heading + angle))
                for angle in self._angles]

    def _ray(self, px: float, py: float, rx: float, ry: float) -> float:
        """The distance along the unit ray `(rx, ry)` to the nearest wall, capped."""
        nearest = self.max_range
        if ry != 0.0:
            for y, low, high in self._horizontal:
                t = (y - py) / ry
                if 0.0 <= t < nearest and low <= px + t * rx <= high:
                    nearest = t
        if rx != 0.0:
            for x, low, high in self._vertical:
                t = (x - px) / rx
                if 0.0 <= t < nearest and low <= py + t * ry <= high:
                    nearest = t
        for x1, y1, dx, dy, _ in self._oblique:
            denominator = rx * dy - ry * dx
            if denominator == 0.0:
                continue
            wx, wy = x1 - px, y1 - py
            t = (wx * dy - wy * dx) / denominator
            if 0.0 <= t < nearest and 0.0 <= (wx * ry - wy * rx) / denominator < 1.0:
                nearest = t
        return nearest

    def ranges(self, position: FloatArray, heading: float) -> FloatArray:
        """`ranges_list` as an array, for a position given as one."""
        return np.array(self.ranges_list(float(position[0]), float(position[1]), heading))


def reached_goal(fitness: float, layout: MazeLayout = MEDIUM) -> bool:
    """Whether an episode's return means the robot reached the goal (see the module's doc)."""
    return fitness >= layout.start_distance - GOAL_RADIUS - 1e-9


class MazeEnv(gym.Env[NDArray[np.float64], NDArray[np.float32]]):
    """One maze; deterministic (the seed of `reset` changes nothing). `radar=False` drops the
    four radar slices: the robot then senses walls only, so nothing but selection tells it
    where the goal is (the benchmark's setting, which keeps "steer toward the goal's quarter"
    from being a shortcut round the maze's deception)."""

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"],  # noqa: RUF012 - gymnasium's Env declares metadata a plain class attribute
                                "render_fps": RENDER_FPS}

    def __init__(self, layout: str = "medium", radar: bool = True,
                 render_mode: str | None = None) -> None:
        if layout not in LAYOUTS:
            raise ValueError(f"unknown maze layout {layout!r}; choose one of {sorted(LAYOUTS)}")
        self.render_mode = checked_render_mode(self.metadata, render_mode)
        self._frames: MazeFrames | None = None
        #: the positions of the frames drawn since the reset (`render`)
        self._path: list[tuple[float, float]] = []
        self.layout = LAYOUTS[layout]
        self.radar = bool(radar)
        sensors = RANGEFINDER_ANGLES.size + (4 if self.radar else 0)
        self.observation_space = gym.spaces.Box(0.0, 1.0, shape=(sensors,), dtype=np.float64)
        self.action_space = gym.spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self._walls = Walls(self.layout.walls)
        self._goal = (float(self.layout.goal[0]), float(self.layout.goal[1]))
        self.x, self.y = self.layout.start
        self.heading = self.layout.start_heading
        self._distance = self.layout.start_distance

    @property
    def position(self) -> FloatArray:
        """The robot's centre (x, y)."""
        return np.array((self.x, self.y))

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[NDArray[np.float64], dict[str, Any]]:
        super().reset(seed=seed)
        self.x, self.y = self.layout.start
        self.heading = self.layout.start_heading
        self._distance = self.layout.start_distance
        self._path = []
        return self._observation(), {}

    def step(self, action: NDArray[np.float32]
             ) -> tuple[NDArray[np.float64], float, bool, bool, dict[str, Any]]:
        turn, speed = (min(1.0, max(-1.0, value)) for value in np.asarray(action).tolist())
        self.heading = (self.heading + turn * MAX_TURN + math.pi) % (2 * math.pi) - math.pi
        step = speed * MAX_SPEED
        moved = (self.x + step * math.cos(self.heading), self.y + step * math.sin(self.heading))
        if self._walls.clearance2(moved) >= ROBOT_RADIUS**2:
            self.x, self.y = moved
        distance = math.hypot(self._goal[0] - self.x, self._goal[1] - self.y)
        reward, self._distance = self._distance - distance, distance
        return self._observation(), reward, distance <= GOAL_RADIUS, False, {}

    def behaviour_state(self) -> FloatArray:
        """The robot's (x, y): where it is, not what it sees."""
        return self.position

    # IPlanarMap: what `evo plot RUN --maze` draws under the robot's path
    def walls(self) -> FloatArray:
        """Every wall, the box's sides first (`MazeLayout.walls`)."""
        return self.layout.walls

    def start_position(self) -> FloatArray:
        return np.array(self.layout.start, dtype=np.float64)

    def goal_position(self) -> FloatArray:
        return np.array(self.layout.goal, dtype=np.float64)

    def y_points_down(self) -> bool:
        """evo's own mazes are drawn with y up (the module's angles are counter-clockwise)."""
        return False

    def observation_labels(self) -> tuple[str, ...]:
        """IObservationLabels: the rangefinders by their angles, then the radar's quarters."""
        return sensor_labels(np.rad2deg(RANGEFINDER_ANGLES).tolist(), RANGEFINDER_RANGE,
                             self.radar)

    def render(self) -> NDArray[np.uint8] | None:
        """The maze, the path so far and the robot with what it senses (`maze_drawing.py`):
        an H x W x 3 array in `render_mode="rgb_array"`, else None."""
        if self.render_mode != "rgb_array":
            return None
        if self._frames is None:
            self._frames = MazeFrames(self.layout.walls, self.layout.start, self.layout.goal,
                                      GOAL_RADIUS, ROBOT_RADIUS,
                                      np.rad2deg(RANGEFINDER_ANGLES).tolist(),
                                      RANGEFINDER_RANGE, y_down=False)
        self._path.append((self.x, self.y))
        return self._frames.picture(
            (self.x, self.y), math.degrees(self.heading),
            self._walls.ranges_list(self.x, self.y, self.heading),
            self._radar_slice() if self.radar else None, self._path)

    def _observation(self) -> NDArray[np.float64]:
        scale = 1.0 / RANGEFINDER_RANGE  # the readings are capped at the range already
        readings = [reading * scale
                    for reading in self._walls.ranges_list(self.x, self.y, self.heading)]
        if self.radar:
            radar = [0.0, 0.0, 0.0, 0.0]
            radar[self._radar_slice()] = 1.0
            readings += radar
        return np.array(readings)

    def _radar_slice(self) -> int:
        """Which quarter around the heading (0 ahead, 1 left, 2 behind, 3 right) holds the
        goal; each is centred on its direction, so "ahead" is [-45, 45) degrees."""
        bearing = math.atan2(self._goal[1] - self.y, self._goal[0] - self.x) - self.heading
        return int(((bearing + math.pi / 4) % (2 * math.pi)) // (math.pi / 2)) % 4


def _make_maze(**kwargs: Any) -> gym.Env[Any, Any]:
    return MazeEnv(**kwargs)


def register() -> None:
    """Register the mazes with gymnasium (idempotent)."""
    for env_id, layout in ((MEDIUM_MAZE, "medium"), (HARD_MAZE, "hard")):
        if env_id not in gym.registry:
            gym.register(env_id, entry_point=_make_maze, kwargs={"layout": layout},
                         max_episode_steps=MAX_EPISODE_STEPS, disable_env_checker=True)
