"""The frames of evo's mazes (`evo/MediumMaze-v0`, `evo/HardMaze-v0` and the published v1
mazes): the walls, the goal (its radius, within which the episode ends), the start, the path
so far, and the robot (its body and heading) with what it senses: each rangefinder's ray up to
the wall it meets (a dot where it hits; no dot when nothing is within range) and the radar's
quarter that holds the goal, shaded.

Drawn at 2 pixels a maze unit with the maze's own axes: the published mazes' y grows
downwards, as in their files and in the paper's figures (`IPlanarMap.y_points_down`, as
`evo plot --maze` draws them). The environment hands what it senses (the same functions its
observation comes from), so the picture is what the brain was told.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.environments.drawing import Colour, Image, Sketch, View

__all__ = ["MazeFrames", "sensor_labels"]

#: pixels a maze unit
SCALE = 2.0
#: maze units around the walls
MARGIN = 6.0
WALL: Colour = (20, 20, 20)
GOAL: Colour = (235, 180, 40)
START: Colour = (60, 160, 80)
PATH: Colour = (210, 60, 60)
RAY: Colour = (240, 150, 150)
HIT: Colour = (200, 40, 40)
RADAR: Colour = (200, 235, 200)
ROBOT: Colour = (110, 150, 225)
OUTLINE: Colour = (30, 50, 110)


class MazeFrames:
    """Draws one maze's frames: `walls` (n x 4 segments), `start`, `goal` and `goal_radius`
    (maze units), the robot's `robot_radius`, its rays' directions from the heading
    (`ray_angles`, degrees, counter-clockwise in the maze's axes) and range."""

    def __init__(self, walls: NDArray[np.float64], start: Sequence[float],
                 goal: Sequence[float], goal_radius: float, robot_radius: float,
                 ray_angles: Sequence[float], ray_range: float, y_down: bool) -> None:
        points = np.concatenate([walls.reshape(-1, 2), [start], [goal]])
        self.view = View.around(points.min(axis=0).tolist(), points.max(axis=0).tolist(), SCALE,
                                MARGIN, y_down)
        self.robot_radius = robot_radius
        self.ray_angles = tuple(float(angle) for angle in ray_angles)
        self.ray_range = ray_range
        self.background = self._background(walls, start, goal, goal_radius)

    def _background(self, walls: NDArray[np.float64], start: Sequence[float],
                    goal: Sequence[float], goal_radius: float) -> Any:
        sketch = Sketch(self.view, Sketch.blank(self.view))
        sketch.circle((goal[0], goal[1]), goal_radius, GOAL, outline=(150, 110, 0))
        sketch.circle((start[0], start[1]), 3.0, START)
        for x1, y1, x2, y2 in walls.tolist():
            sketch.line([(x1, y1), (x2, y2)], WALL, 2)
        return sketch.image

    def picture(self, position: Sequence[float], heading: float, ranges: Sequence[float],
                radar: int | None, path: Sequence[tuple[float, float]]) -> Image:
        """The robot at `position` facing `heading` (degrees), its rays `ranges` long (maze
        units; `ray_range` means no wall within range), the radar's quarter `radar` (0 ahead,
        1 left, 2 behind, 3 right; None: no radar), and the `path` so far."""
        sketch = Sketch(self.view, self.background)
        x, y = float(position[0]), float(position[1])
        if radar is not None:
            centre = heading + 90.0 * radar
            sketch.wedge((x, y), 3.0 * self.robot_radius, centre - 45.0, centre + 45.0, RADAR)
        sketch.line(path, PATH, 1.5)
        for angle, reach in zip(self.ray_angles, ranges):
            direction = math.radians(heading + angle)
            end = (x + reach * math.cos(direction), y + reach * math.sin(direction))
            sketch.line([(x, y), end], RAY, 1)
            if reach < self.ray_range:
                sketch.circle(end, 2.0, HIT, pixels=True)
        sketch.circle((x, y), self.robot_radius, ROBOT, outline=OUTLINE)
        ahead = math.radians(heading)
        sketch.line([(x, y), (x + self.robot_radius * math.cos(ahead),
                              y + self.robot_radius * math.sin(ahead))], OUTLINE, 2)
        return sketch.picture()


def sensor_labels(ray_degrees: Sequence[float], ray_range: float,
                  radar: bool) -> tuple[str, ...]:
    """The names of a maze robot's observation (IObservationLabels): each rangefinder by its
    angle from the heading, its reading the distance over the range; then the radar's four
    quarters, by their centres' angles from the heading."""
    rays = tuple(f"ray {angle:+g}\u00b0 / {ray_range:g}".replace("+0", "0")
                 for angle in ray_degrees)
    quarters = ("radar 0\u00b0", "radar +90\u00b0", "radar 180\u00b0", "radar \u221290\u00b0")
    return tuple(label.replace("-", "\u2212") for label in rays) + (quarters if radar else ())
