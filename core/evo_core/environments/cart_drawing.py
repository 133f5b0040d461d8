"""The frames of evo's cart-pole tasks, `evo/DoublePole-v0` and `evo/CartPoleSwingUp-v0`: a
track with its limits marked, the cart, and its poles hinged on the cart's top, drawn to
scale (600 x 400 pixels, gymnasium's CartPole's size: 111 pixels a metre, the track's limits
0.3 m inside the frame's sides).

Which way a pole leans for a positive angle is the task's own equations' convention, not a
choice of the drawing (`tip_side`): the double pole's (Wieland's) puts the tip at
x + l sin(theta), the swing-up's (EvoJAX's) at x - l sin(theta); in both, pushing the cart
towards +x tips the poles back towards -x, as a real pole does
(tests/core/running/test_env_frames.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evo_core.environments.drawing import Colour, Image, Sketch, View

__all__ = ["CartFrames", "Pole"]

WIDTH, HEIGHT = 600, 400
#: the frame's room beyond the track's limits on each side, in metres
MARGIN = 0.3
#: the track's row, as a fraction of the frame's height from the top
TRACK_ROW = 0.62
CART_SIZE = (0.4, 0.16)  # metres: the poles are hinged at the middle of its top
TRACK: Colour = (0, 0, 0)
LIMIT: Colour = (200, 40, 40)
CART: Colour = (50, 50, 50)
HINGE: Colour = (130, 130, 200)
GUIDE: Colour = (205, 205, 205)
LABEL: Colour = (90, 90, 90)


@dataclass(frozen=True)
class Pole:
    """A pole as drawn: from the hinge to its tip (`length`, metres), `width` metres wide."""

    length: float
    width: float
    colour: Colour


class CartFrames:
    """Draws a cart-pole task's frames: `poles` on a track of +-`track_limit` metres; a pole's
    tip at x + `tip_side` l sin(theta) (the module docstring); `guide` (radians): faint lines
    at +-guide from the hinge, where the task fails."""

    def __init__(self, track_limit: float, poles: Sequence[Pole], tip_side: int,
                 guide: float | None = None) -> None:
        scale = WIDTH / (2 * (track_limit + MARGIN))
        self.view = View(-(track_limit + MARGIN), TRACK_ROW * HEIGHT / scale, scale, WIDTH,
                         HEIGHT)
        self.poles = tuple(poles)
        self.tip_side = tip_side
        self.guide = guide
        self.background = self._background(track_limit)

    def _background(self, limit: float) -> Any:
        """The track, its limits and their labels: what never moves."""
        background = Sketch.blank(self.view)
        sketch = Sketch(self.view, background)
        reach = limit + MARGIN
        sketch.line([(-reach, 0.0), (reach, 0.0)], TRACK, 1)
        below = self.view.pixel(0.0, -CART_SIZE[1])[1] + 4
        for x in (-limit, 0.0, limit):
            colour = LIMIT if x else LABEL
            sketch.line([(x, -0.08), (x, 0.08)], colour, 2)
            sketch.text((self.view.pixel(x, 0.0)[0], below),
                        f"{x:+.1f} m".replace("-", "\u2212") if x else "0", colour, 12, "ma")
        return sketch.image

    def picture(self, x: float, angles: Sequence[float]) -> Image:
        """The frame of the cart at `x` with its poles at `angles` (radians, the task's own)."""
        sketch = Sketch(self.view, self.background)
        half_width, half_height = CART_SIZE[0] / 2, CART_SIZE[1] / 2
        if self.guide is not None:
            for side in (-1.0, 1.0):
                lean = self.tip_side * math.sin(side * self.guide)
                sketch.line([(x, half_height),
                             (x + 1.1 * lean, half_height + 1.1 * math.cos(self.guide))],
                            GUIDE, 1)
        sketch.polygon([(x - half_width, -half_height), (x + half_width, -half_height),
                        (x + half_width, half_height), (x - half_width, half_height)], CART)
        hinge = (x, half_height)
        for pole, angle in zip(self.poles, angles):
            along = (self.tip_side * math.sin(angle), math.cos(angle))
            across = (along[1] * pole.width / 2, -along[0] * pole.width / 2)
            tip = (hinge[0] + along[0] * pole.length, hinge[1] + along[1] * pole.length)
            sketch.polygon([(hinge[0] + across[0], hinge[1] + across[1]),
                            (tip[0] + across[0], tip[1] + across[1]),
                            (tip[0] - across[0], tip[1] - across[1]),
                            (hinge[0] - across[0], hinge[1] - across[1])], pole.colour)
            sketch.circle(tip, pole.width / 2, pole.colour)
        sketch.circle(hinge, 0.02, HINGE)
        return sketch.picture()
