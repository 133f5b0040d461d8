"""Deceptive 2-D mazes navigated with rangefinders, after Lehman and Stanley's novelty-search
experiments: the task on which rewarding progress toward the goal leads search astray.

A circular robot (radius `ROBOT_RADIUS`) starts at a fixed pose. Every step it turns by
`action[0] * MAX_TURN` radians and then moves `action[1] * MAX_SPEED` units along its heading
(backwards for a negative speed); a move that would bring its body into a wall is not made (the
robot stays where it is, turned), so it slides along nothing and never passes through a wall.

It sees `RANGEFINDER_ANGLES.size` rangefinders (distance from its centre to the nearest wall along
each ray, divided by `RANGEFINDER_RANGE` and capped at 1) followed by four radar slices toward the
goal (1.0 in the slice that holds the goal's bearing, else 0.0: ahead, left, behind, right, each a
quarter turn centred on its direction). Angles are counter-clockwise with y pointing up.

Reward is the progress toward the goal each step (the previous distance minus the new one), so an
episode's return is the start's distance to the goal minus the final distance: "minus the final
distance", shifted to be 0 for a robot that ends where it began, whichever step ends the episode
(the environment's own limit or `episodes.max_steps`). The episode ends (terminated) once the
robot's centre is within `GOAL_RADIUS` of the goal, so a return of at least
`start distance - GOAL_RADIUS` means the goal was reached (`reached_goal`).

The robot's position is its behaviour state (`behaviour_state`), the usual descriptor for novelty
search and MAP-Elites on this task. The mazes are deceptive by construction: a wall lies between
the start and the goal, and the point nearest to the goal on the start's side of it is a dead
end; the way round leads far from the goal first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from numpy.typing import NDArray

__all__ = ["MazeLayout", "MazeEnv", "MEDIUM", "HARD", "LAYOUTS", "MEDIUM_MAZE", "HARD_MAZE",
           "ROBOT_RADIUS", "MAX_SPEED", "MAX_TURN", "RANGEFINDER_ANGLES", "RANGEFINDER_RANGE",
           "GOAL_RADIUS", "MAX_EPISODE_STEPS", "register", "reached_goal", "rangefinder_readings",
           "radar_slices", "segment_distances"]

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
    walls: FloatArray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        w, h = self.width, self.height
        box = [(0.0, 0.0, w, 0.0), (w, 0.0, w, h), (w, h, 0.0, h), (0.0, h, 0.0, 0.0)]
        object.__setattr__(self, "walls",
                           np.array(box + list(self.inner_walls), dtype=np.float64))

    @property
    def start_distance(self) -> float:
        return float(np.hypot(self.goal[0] - self.start[0], self.goal[1] - self.start[1]))


#: One divider with its gap at the far right; the goal is straight above the start, behind it.
#: Going up ends against the divider 58 units from the goal; the way round passes 150 units away.
MEDIUM = MazeLayout(
    name="medium", width=200.0, height=200.0,
    inner_walls=((0.0, 120.0, 150.0, 120.0),   # the divider; the gap is x in (150, 200)
                 (100.0, 0.0, 100.0, 55.0)),   # a fin: going east along the floor hits it
    start=(30.0, 30.0), start_heading=0.0, goal=(30.0, 170.0))

#: Two dividers with gaps at opposite ends (an S): the corridor in the middle ends right below
#: the goal, a second, closer dead end after the first.
HARD = MazeLayout(
    name="hard", width=200.0, height=200.0,
    inner_walls=((0.0, 70.0, 150.0, 70.0),     # gap at the right
                 (50.0, 135.0, 200.0, 135.0)),  # gap at the left
    start=(30.0, 30.0), start_heading=0.0, goal=(170.0, 170.0))

LAYOUTS = {MEDIUM.name: MEDIUM, HARD.name: HARD}


def segment_distances(point: FloatArray, walls: FloatArray) -> FloatArray:
    """The distance from `point` to each wall segment (all walls at once)."""
    start, direction = walls[:, :2], walls[:, 2:] - walls[:, :2]
    length2 = np.einsum("ij,ij->i", direction, direction)
    along = np.einsum("ij,ij->i", point - start, direction) / length2
    closest = start + np.clip(along, 0.0, 1.0)[:, None] * direction
    offset = point - closest
    distances: FloatArray = np.sqrt(np.einsum("ij,ij->i", offset, offset))
    return distances


def rangefinder_readings(position: FloatArray, heading: float, walls: FloatArray,
                         angles: FloatArray = RANGEFINDER_ANGLES,
                         max_range: float = RANGEFINDER_RANGE) -> FloatArray:
    """The distance from `position` to the nearest wall along each ray, capped at `max_range`
    (rays x walls in one array operation)."""
    theta = heading + angles
    rays = np.stack([np.cos(theta), np.sin(theta)], axis=1)           # (R, 2), unit length
    start, edge = walls[:, :2], walls[:, 2:] - walls[:, :2]             # (W, 2)
    to_start = start - position                                         # (W, 2)
    # position + t * ray = start + u * edge, solved with 2-D cross products
    denominator = rays[:, None, 0] * edge[None, :, 1] - rays[:, None, 1] * edge[None, :, 0]
    t_numerator = to_start[None, :, 0] * edge[None, :, 1] - to_start[None, :, 1] * edge[None, :, 0]
    u_numerator = to_start[None, :, 0] * rays[:, None, 1] - to_start[None, :, 1] * rays[:, None, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = t_numerator / denominator
        u = u_numerator / denominator
    hit = (denominator != 0.0) & (t >= 0.0) & (u >= 0.0) & (u <= 1.0)
    distances: FloatArray = np.where(hit, t, np.inf).min(axis=1)
    return np.minimum(distances, max_range)


def radar_slices(position: FloatArray, heading: float, goal: FloatArray) -> FloatArray:
    """One-hot: which quarter around the heading (ahead, left, behind, right) the goal is in."""
    bearing = np.arctan2(goal[1] - position[1], goal[0] - position[0]) - heading
    # shift by an eighth turn so that "ahead" is [-45, 45) degrees, then take the quarter
    quarter = int(np.floor(((bearing + np.pi / 4) % (2 * np.pi)) / (np.pi / 2))) % 4
    slices = np.zeros(4, dtype=np.float64)
    slices[quarter] = 1.0
    return slices


def reached_goal(fitness: float, layout: MazeLayout = MEDIUM) -> bool:
    """Whether an episode's return means the robot reached the goal (see the module's doc)."""
    return fitness >= layout.start_distance - GOAL_RADIUS - 1e-9


class MazeEnv(gym.Env[NDArray[np.float64], NDArray[np.float32]]):
    """One maze; deterministic (the seed of `reset` changes nothing)."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, layout: str = "medium") -> None:
        if layout not in LAYOUTS:
            raise ValueError(f"unknown maze layout {layout!r}; choose one of {sorted(LAYOUTS)}")
        self.layout = LAYOUTS[layout]
        sensors = RANGEFINDER_ANGLES.size + 4
        self.observation_space = gym.spaces.Box(0.0, 1.0, shape=(sensors,), dtype=np.float64)
        self.action_space = gym.spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self._goal = np.array(self.layout.goal, dtype=np.float64)
        self.position = np.array(self.layout.start, dtype=np.float64)
        self.heading = self.layout.start_heading
        self._distance = self.layout.start_distance

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[NDArray[np.float64], dict[str, Any]]:
        super().reset(seed=seed)
        self.position = np.array(self.layout.start, dtype=np.float64)
        self.heading = self.layout.start_heading
        self._distance = self.layout.start_distance
        return self._observation(), {}

    def step(self, action: NDArray[np.float32]
             ) -> tuple[NDArray[np.float64], float, bool, bool, dict[str, Any]]:
        turn, speed = np.clip(np.asarray(action, dtype=np.float64).reshape(2), -1.0, 1.0)
        self.heading = float((self.heading + turn * MAX_TURN + np.pi) % (2 * np.pi) - np.pi)
        moved = self.position + speed * MAX_SPEED * np.array(
            [np.cos(self.heading), np.sin(self.heading)])
        if segment_distances(moved, self.layout.walls).min() >= ROBOT_RADIUS:
            self.position = moved
        distance = float(np.hypot(*(self._goal - self.position)))
        reward, self._distance = self._distance - distance, distance
        return self._observation(), reward, distance <= GOAL_RADIUS, False, {}

    def behaviour_state(self) -> FloatArray:
        """The robot's (x, y): where it is, not what it sees."""
        return self.position.copy()

    def _observation(self) -> NDArray[np.float64]:
        ranges = rangefinder_readings(self.position, self.heading, self.layout.walls)
        return np.concatenate([ranges / RANGEFINDER_RANGE,
                               radar_slices(self.position, self.heading, self._goal)])


def register() -> None:
    """Register the mazes with gymnasium (idempotent)."""
    for env_id, layout in ((MEDIUM_MAZE, "medium"), (HARD_MAZE, "hard")):
        if env_id not in gym.registry:
            gym.register(env_id, entry_point=MazeEnv, kwargs={"layout": layout},
                         max_episode_steps=MAX_EPISODE_STEPS, disable_env_checker=True)
