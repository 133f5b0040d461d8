"""What evo's own environments draw their `rgb_array` frames with: Pillow, which matplotlib
already installs, so no extra is needed to watch them.

Pillow's shapes are not anti-aliased, so a frame is drawn `SUPERSAMPLE` times larger and
reduced by averaging blocks of pixels (`Image.reduce`): smooth edges for the cost of drawing a
larger picture. The parts that never move (a track, a maze's walls) are drawn once into a
background that each frame starts from as a copy, so a frame costs only its moving parts
(about 2 ms for the double pole's 600 x 400, which keeps a 1,000-step replay within seconds).

Text uses DejaVu Sans, the font matplotlib ships and draws `evo plot`'s figures with (Greek
letters and the minus sign included), or Pillow's default font where that file is missing.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["SUPERSAMPLE", "Sketch", "View", "checked_render_mode", "font"]

#: frames are drawn this many times larger, then reduced: anti-aliasing
SUPERSAMPLE = 2
Colour = tuple[int, int, int]
Image = NDArray[np.uint8]


def checked_render_mode(metadata: dict[str, Any], render_mode: str | None) -> str | None:
    """`render_mode` when the environment's `metadata` lists it (or None); anything else a
    ValueError naming the modes there are, as gymnasium's own environments refuse it."""
    modes = metadata.get("render_modes", [])
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode must be one of {modes} or None, got {render_mode!r}")
    return render_mode


@functools.cache
def font(size: int) -> Any:
    """DejaVu Sans of `size` pixels (the module docstring), one object per size."""
    from PIL import ImageFont

    try:
        import matplotlib

        path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"
        return ImageFont.truetype(str(path), size)
    except (ImportError, OSError):
        try:
            return ImageFont.load_default(size=size)
        except TypeError:  # Pillow < 10.1: its fixed bitmap font
            return ImageFont.load_default()


@dataclass(frozen=True)
class View:
    """A rectangle of a world's plane on a frame of `width` x `height` pixels: the world point
    (`left`, `top`) at the frame's top-left corner, `scale` pixels per world unit, y up (or down,
    as on a screen, with `y_down`)."""

    left: float
    top: float
    scale: float
    width: int
    height: int
    y_down: bool = False

    @classmethod
    def around(cls, low: Sequence[float], high: Sequence[float], scale: float, margin: float,
               y_down: bool = False) -> View:
        """The view of the box from `low` to `high` (world x, y), `margin` world units on each
        side, at `scale`."""
        width = round((high[0] - low[0] + 2 * margin) * scale)
        height = round((high[1] - low[1] + 2 * margin) * scale)
        top = low[1] - margin if y_down else high[1] + margin
        return cls(low[0] - margin, top, scale, width, height, y_down)

    def pixel(self, x: float, y: float) -> tuple[float, float]:
        """World (x, y) in the frame's pixels (column, row)."""
        row = (y - self.top) if self.y_down else (self.top - y)
        return ((x - self.left) * self.scale, row * self.scale)

    def angle(self, degrees: float) -> float:
        """A world direction (counter-clockwise from +x in the world's own axes) as Pillow's
        angles, which turn clockwise on the screen: the same number when y points down."""
        return degrees if self.y_down else -degrees


class Sketch:
    """One frame being drawn: the background's copy, shapes in world units, and the reduced
    RGB array (`picture`)."""

    def __init__(self, view: View, background: Any) -> None:
        from PIL import ImageDraw

        self.view = view
        self.image = background.copy()
        self.draw = ImageDraw.Draw(self.image)

    def _at(self, x: float, y: float) -> tuple[float, float]:
        """World (x, y) on the supersampled canvas."""
        column, row = self.view.pixel(x, y)
        return column * SUPERSAMPLE, row * SUPERSAMPLE

    @staticmethod
    def blank(view: View, colour: Colour = (255, 255, 255)) -> Any:
        """A supersampled background of one colour, for `Sketch` to start from."""
        from PIL import Image as PILImage

        return PILImage.new("RGB", (view.width * SUPERSAMPLE, view.height * SUPERSAMPLE),
                            colour)

    def line(self, points: Iterable[tuple[float, float]], colour: Colour,
             width: float) -> None:
        """A polyline through world `points`, `width` frame pixels wide."""
        pixels = [self._at(x, y) for x, y in points]
        if len(pixels) > 1:
            self.draw.line(pixels, fill=colour, width=max(1, round(width * SUPERSAMPLE)),
                           joint="curve")

    def polygon(self, points: Iterable[tuple[float, float]], colour: Colour,
                outline: Colour | None = None, width: float = 1) -> None:
        """A filled polygon, its `outline` `width` frame pixels wide."""
        self.draw.polygon([self._at(x, y) for x, y in points], fill=colour,
                          outline=outline, width=max(1, round(width * SUPERSAMPLE)))

    def circle(self, centre: tuple[float, float], radius: float, colour: Colour | None,
               outline: Colour | None = None, pixels: bool = False) -> None:
        """A disc of `radius` world units (frame pixels with `pixels`)."""
        x, y = self._at(*centre)
        r = radius * SUPERSAMPLE * (1.0 if pixels else self.view.scale)
        self.draw.ellipse((x - r, y - r, x + r, y + r), fill=colour, outline=outline,
                          width=SUPERSAMPLE)

    def wedge(self, centre: tuple[float, float], radius: float, start: float, end: float,
              colour: Colour) -> None:
        """The slice of a disc (world units) from world direction `start` to `end` degrees,
        counter-clockwise."""
        x, y = self._at(*centre)
        r = radius * SUPERSAMPLE * self.view.scale
        first, last = sorted((self.view.angle(start), self.view.angle(end)))
        self.draw.pieslice((x - r, y - r, x + r, y + r), first, last, fill=colour)

    def text(self, position: tuple[float, float], text: str, colour: Colour, size: int,
             anchor: str = "la") -> None:
        """`text` at frame pixel `position` (not world units), `size` pixels tall."""
        self.draw.text((position[0] * SUPERSAMPLE, position[1] * SUPERSAMPLE), text,
                       fill=colour, font=font(size * SUPERSAMPLE), anchor=anchor)

    def picture(self) -> Image:
        """The frame: H x W x 3 uint8."""
        return np.asarray(self.image.reduce(SUPERSAMPLE), dtype=np.uint8)
