"""What `evo replay --render` draws around the environment's frame: the observation the brain
receives and the brain's state, as labelled panels on its right, and the episode, the step
and the return so far in a strip below it, never over the environment's own picture (an Atari
game's score stays in sight).

Left to right: the environment's frame (one under 250 pixels tall, as an Atari game's 160 x
210, scaled up by a whole factor to 400 pixels or more, with square pixels); with `--show-
observation` the observation the brain receives next; with `--show-neurons` one panel per array
of the brain's `trace_state()`, in its order, holding the state the brain reads that
observation with (after a reset, the state it starts from). Every panel is titled
(`observation`, or the array's name: `potential`, `activation`, `output`, ...). A panel of
numbers is a column of cells, one per number (up to `MOST_CELLS`), every cell as wide as every
other panel's, its index at its left (every k-th index where cells are too thin for each to
have one, and each column's first index above it when the numbers wrap into more columns), or,
for an observation whose environment names its numbers (`IObservationLabels`: the double pole's
"x / 4.8 m", ...), its name, and a colour bar at its right that reads a colour as a number. An
image observation (an Atari or procgen frame after the wrappers) is scaled up by a whole factor
with square pixels, so a 16x16 input stays visibly 16x16.

Colours: matplotlib's RdBu_r, the colour map of `evo plot --trace`'s heatmaps: blue negative,
white 0, red positive; grey for NaN. The scales are fixed for the whole video, measured over
the recorded episodes (`ScaleMeter`, which the replay's first pass fills), so one colour is one
number in every frame: a state array's is +-the largest magnitude its numbers reach (one
quantity: potential and activation, a tanh of it, differ wherever the tanh bends), and its
colour bar's ticks are numbers; an observation's numbers are of different quantities (a
CartPole's pole angle stays within 0.2 rad while its speeds reach 2), so each has its own,
+-its own largest magnitude, written at its right ("+-0.21"), and the bar's ticks are fractions
of it (+max, 0, -max); where every number's scale is the same (a maze's sensors, all within [0,
1]) the observation's bar has numbers too. A number beyond its scale (an episode that does not
repeat itself) takes the colour of the bar's end.

Speed: what never changes (titles, indices, colour bars) is drawn once, into the layout's
background (`FrameLayout`); a frame copies it, pastes the picture and the observation image,
fills each panel's cells with one indexed lookup (`numpy`, no loop over the numbers) and
writes the strip's line. The composed frame has even sides, so an MP4 (H.264 in yuv420p)
needs no padding.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.environments.drawing import font
from evo_core.running.video import BACKGROUND, fitted, rgb

__all__ = ["MOST_CELLS", "FrameLayout", "ScaleMeter", "Shown", "colours", "is_image",
           "numbers"]

Image = NDArray[np.uint8]
Box = tuple[int, int, int, int]
#: the most numbers a panel draws (a longer vector: a flattened image without image shape)
MOST_CELLS = 256
#: pixels between panels
GAP = 10
TEXT = (230, 230, 230)
NAN = (128, 128, 128)
OBSERVATION = "observation"
#: the longest title drawn whole
LONGEST_TITLE = 24
#: a frame less tall than this is scaled up by a whole factor to at least `ZOOMED` pixels
SMALL_FRAME, ZOOMED = 250, 400


@dataclass(frozen=True)
class Shown:
    """What one frame shows: the environment's `picture` (None where no frame is drawn: the
    pass that measures the scales), the `observation` the brain receives next (None: not
    shown), the brain's `state` it reads that observation with (None: not shown), and where
    in the replay the frame is."""

    picture: Any
    observation: Any
    state: Mapping[str, NDArray[np.float64]] | None
    episode: int
    of_episodes: int
    step: int
    total: float

    def label(self) -> str:
        return (f"episode {self.episode}/{self.of_episodes}   step {self.step}   "
                f"return {self.total:.6g}")


def is_image(observation: NDArray[Any]) -> bool:
    """Whether an observation is drawn as an image: numbers, H x W or H x W x 1/3/4, both
    sides longer than 1."""
    return (observation.dtype.kind in "biuf"
            and (observation.ndim == 2
                 or (observation.ndim == 3 and observation.shape[2] in (1, 3, 4)))
            and min(observation.shape[:2]) > 1)


def _flat(values: Any) -> NDArray[np.float64]:
    """Up to `MOST_CELLS` numbers of `values`, flattened (anything that is not numbers: one
    NaN, a grey cell)."""
    try:
        array = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        array = np.full(1, np.nan)
    return array[:MOST_CELLS]


def numbers(shown: Shown) -> list[tuple[str, str, NDArray[np.float64]]]:
    """(key, title, numbers) of each panel of numbers, left to right: the observation (when
    shown and not an image), then each state array (its key `state.NAME`, as in a trace
    file)."""
    panels = []
    if shown.observation is not None and not is_image(np.asarray(shown.observation)):
        panels.append((OBSERVATION, "observation", _flat(shown.observation)))
    for name, values in (shown.state or {}).items():
        panels.append((f"state.{name}", name, _flat(values)))
    return panels


class ScaleMeter:
    """The largest magnitude each number of each panel reaches over the frames it is shown
    (`add`, a `FrameRecorder`'s sink): the fixed scales of a video's panels."""

    def __init__(self) -> None:
        self.largest: dict[str, NDArray[np.float64]] = {}

    def add(self, shown: Shown) -> None:
        for key, _, values in numbers(shown):
            magnitude = np.where(np.isfinite(values), np.abs(values), 0.0)
            before = self.largest.get(key)
            if before is not None and before.shape == magnitude.shape:
                magnitude = np.maximum(before, magnitude)
            self.largest[key] = magnitude

    def scales(self) -> dict[str, NDArray[np.float64]]:
        """Each panel's scale of each number (the module docstring): the observation's each
        its own largest magnitude, a state array's all the array's largest; 1 where it was
        0."""
        scales = {}
        for key, largest in self.largest.items():
            top = largest if key == OBSERVATION else np.full_like(largest, float(np.max(largest)))
            scales[key] = np.where(top > 0, top, 1.0)
        return scales


@functools.cache
def _colour_map() -> NDArray[np.uint8]:
    """RdBu_r as 256 RGB rows, from -scale (row 0) to +scale (row 255)."""
    import matplotlib

    table = matplotlib.colormaps["RdBu_r"](np.linspace(0.0, 1.0, 256))[:, :3]
    return np.round(table * 255).astype(np.uint8)


def colours(values: NDArray[np.float64], scale: float | NDArray[np.float64]
            ) -> NDArray[np.uint8]:
    """Each number's colour on the scale +-`scale` (its own, for an array of scales; n x 3):
    clipped at the ends, NaN grey."""
    with np.errstate(invalid="ignore"):
        rows = np.clip(np.rint((values / scale + 1.0) * 127.5), 0, 255)
    table = _colour_map()[np.nan_to_num(rows).astype(np.intp)]
    table[np.isnan(values)] = NAN
    return table


def _number_text(value: float) -> str:
    return f"{value:.3g}".replace("-", "\u2212")


def _short(title: str) -> str:
    return title if len(title) <= LONGEST_TITLE else title[:LONGEST_TITLE - 1] + "\u2026"


@dataclass
class _Cells:
    """A panel of numbers as planned: `rows` x `columns` cells of `cell` pixels (height,
    width), left of a colour bar."""

    key: str
    title: str
    count: int
    #: each number's scale
    scales: NDArray[np.float64]
    #: each row's name (its index where None)
    names: tuple[str, ...] | None
    rows: int
    columns: int
    cell: tuple[int, int]
    label_width: int
    #: the width of the numbers' own scales, written at the cells' right (0: one scale)
    scales_width: int
    tick_width: int
    size: int
    line: int
    left: int = 0
    #: where the cells are on the canvas (left, top), and each cell pixel's number
    #: (`count`: the gaps between cells)
    at: tuple[int, int] = (0, 0)
    lookup: NDArray[np.intp] = field(default_factory=lambda: np.zeros((0, 0), np.intp))

    @property
    def wrapped(self) -> bool:
        return self.columns > 1

    @property
    def shared(self) -> bool:
        """Whether every number has the same scale (the bar's ticks are numbers then)."""
        return bool((self.scales == self.scales[0]).all())

    @property
    def bar_left(self) -> int:
        return self.at[0] + self.columns * self.cell[1] + 6 + self.scales_width
    @property
    def cells_height(self) -> int:
        return self.rows * self.cell[0]

    @property
    def bar_height(self) -> int:
        return max(self.cells_height, 4 * self.line)

    @property
    def top(self) -> int:
        """The cells' top, below the title (and the columns' first indices)."""
        return self.line * (2 if self.wrapped else 1) + 2

    @property
    def width(self) -> int:
        content = (self.label_width + 4 + self.columns * self.cell[1] + 6 + self.scales_width
                   + self.size + 4 + self.tick_width)
        return max(content, int(font(self.size).getlength(_short(self.title))) + 6)

    @property
    def height(self) -> int:
        return self.top + self.bar_height + 2


def _plan_cells(key: str, title: str, count: int, scale: float | NDArray[np.float64],
                names: Sequence[str] | None, area: int, size: int, line: int) -> _Cells:
    """The cells of `count` numbers in `area` pixels of height under the title: one column of
    cells at most 3 lines tall, or, where even 3-pixel cells do not fit, more columns; `names`
    the numbers', used when there is one per number and they fit one column."""
    count = max(1, count)
    rows = max(1, min(count, area // 3))
    columns = -(-count // rows)
    if columns > 1:
        area -= line  # the columns' first indices take a line
        rows = max(1, min(count, area // 3))
        columns = -(-count // rows)
    height = max(3, min(3 * line, area // rows))
    width = 2 * size + 4
    face = font(size)
    named = tuple(names) if names is not None and len(names) == count and columns == 1 \
        else None
    labels = named if named is not None else (str(max(0, rows - 1)),)
    label_width = int(max(face.getlength(label) for label in labels)) + 2
    given = np.asarray(scale, dtype=np.float64).reshape(-1)
    scales = given if given.size == count else \
        np.full(count, float(np.max(given)) if given.size else 1.0)
    scales_width = 0 if (scales == scales[0]).all() else \
        int(max(face.getlength(_own_scale(value)) for value in scales)) + 6
    tick_width = int(max(face.getlength(text) for text in _ticks(scales)))
    return _Cells(key, title, count, scales, named, rows, columns, (height, width),
                  label_width, scales_width, tick_width, size, line)


def _ticks(scales: NDArray[np.float64]) -> tuple[str, str, str]:
    """A colour bar's ticks, top to bottom: the scale's numbers where every number has the
    same, else fractions of each number's own."""
    if (scales == scales[0]).all():
        return f"+{_number_text(float(scales[0]))}", "0", _number_text(-float(scales[0]))
    return "+max", "0", "\u2212max"


def _own_scale(value: float) -> str:
    return "\u00b1" + _number_text(value)


@dataclass
class _Picture:
    """An image observation, scaled by `factor`, at `at` (left, top)."""

    shape: tuple[int, int]
    factor: int
    size: int
    line: int
    left: int = 0

    @property
    def title(self) -> str:
        return f"observation {self.shape[1]}\u00d7{self.shape[0]}"

    @property
    def width(self) -> int:
        return max(self.shape[1] * self.factor,
                   int(font(self.size).getlength(self.title)) + 6)

    @property
    def top(self) -> int:
        return self.line + 2

    @property
    def height(self) -> int:
        return self.top + self.shape[0] * self.factor + 2


def _image_of(observation: Any) -> Image:
    """An image observation as RGB 0..255: floats in [0, 1] are scaled, anything else
    clipped."""
    values = np.asarray(observation, dtype=np.float64)
    finite = values[np.isfinite(values)]
    if np.asarray(observation).dtype.kind == "f" and finite.size and finite.max() <= 1.0:
        values = values * 255.0
    return rgb(np.clip(np.nan_to_num(values), 0, 255).astype(np.uint8))


class FrameLayout:
    """Where everything of a video's frames goes, planned from its first frame (`first`), the
    panels' fixed `scales` and the names of their numbers (`names`, by panel key: the
    observation's, "observation"); `compose` draws a frame. `texts` holds every fixed text's
    box (left, top, right, bottom) and text, for checking that none overlaps another."""

    def __init__(self, first: Shown, scales: Mapping[str, float | NDArray[np.float64]],
                 names: Mapping[str, Sequence[str]] | None = None) -> None:
        picture = rgb(first.picture)
        #: a small frame (ALE's 160 x 210) is scaled up by this whole factor, square pixels
        self.zoom = 1 if picture.shape[0] >= SMALL_FRAME else -(-ZOOMED // picture.shape[0])
        self.picture_shape = (picture.shape[0] * self.zoom, picture.shape[1] * self.zoom)
        height, width = self.picture_shape
        self.size = size = max(10, min(14, height // 28))
        self.line = line = size + 6
        area = max(height, 8 * line) - line - 4
        self.image: _Picture | None = None
        if first.observation is not None and is_image(np.asarray(first.observation)):
            shape = _image_of(first.observation).shape[:2]
            self.image = _Picture((shape[0], shape[1]), max(1, area // shape[0]), size, line)
        self.cells = [_plan_cells(key, title, values.size, scales.get(key, 1.0),
                                  (names or {}).get(key), area, size, line)
                      for key, title, values in numbers(first)]
        panels: list[_Picture | _Cells] = ([self.image] if self.image else []) + \
            list(self.cells)
        left = width
        for panel in panels:
            panel.left = left + GAP
            left = panel.left + panel.width
        body = max([height] + [panel.height for panel in panels])
        self.strip = (body, line + 6)
        full_width = left + (GAP if panels else 0)
        self.shape = (body + self.strip[1] + (body + self.strip[1]) % 2,
                      full_width + full_width % 2)
        self.texts: list[tuple[Box, str]] = []
        self.background = self._background(panels)

    def _background(self, panels: list[_Picture | _Cells]) -> Image:
        from PIL import Image as PILImage
        from PIL import ImageDraw

        canvas = PILImage.new("RGB", (self.shape[1], self.shape[0]), (BACKGROUND,) * 3)
        draw = ImageDraw.Draw(canvas)
        for panel in panels:
            title = panel.title if isinstance(panel, _Picture) else _short(panel.title)
            self._text(draw, (panel.left + panel.width / 2, 2), title, "ma")
            if isinstance(panel, _Cells):
                self._cells_background(draw, panel)
        array = np.array(canvas, dtype=np.uint8)
        for panel in self.cells:
            self._bar(array, panel)
        return array

    def _text(self, draw: Any, at: tuple[float, float], text: str, anchor: str) -> None:
        face = font(self.size)
        draw.text(at, text, fill=TEXT, font=face, anchor=anchor)
        left, top, right, bottom = draw.textbbox(at, text, font=face, anchor=anchor)
        self.texts.append(((int(left), int(top), int(right), int(bottom)), text))

    def _cells_background(self, draw: Any, panel: _Cells) -> None:
        """The panel's indices and its bar's ticks; the cells' lookup."""
        cells_left = panel.left + panel.label_width + 4
        panel.at = (cells_left, panel.top)
        height, width = panel.cell
        every = next(step for step in (1, 2, 5, 10, 20, 50, 100, 200)
                     if step * height >= self.line - 4 or step == 200)
        for row in range(0, panel.rows, every):
            middle = panel.top + row * height + height / 2
            self._text(draw, (cells_left - 4, middle),
                       panel.names[row] if panel.names else str(row), "rm")
            if not panel.shared and row < panel.count:
                self._text(draw, (cells_left + width + 4, middle),
                           _own_scale(float(panel.scales[row])), "lm")
        if panel.wrapped:
            for column in range(panel.columns):
                self._text(draw, (cells_left + column * width + width / 2, self.line + 1),
                           str(column * panel.rows), "ma")
        rows = np.arange(panel.rows * height) // height
        columns = np.arange(panel.columns * width) // width
        index = columns[None, :] * panel.rows + rows[:, None]
        gap = ((np.arange(panel.rows * height) % height == height - 1)[:, None]
               | (np.arange(panel.columns * width) % width == width - 1)[None, :])
        panel.lookup = np.where(gap | (index >= panel.count), panel.count, index)
        heights = (panel.top, panel.top + panel.bar_height / 2, panel.top + panel.bar_height)
        for at, text, anchor in zip(heights, _ticks(panel.scales), ("lt", "lm", "lb")):
            self._text(draw, (panel.bar_left + self.size + 4, at), text, anchor)

    def _bar(self, canvas: Image, panel: _Cells) -> None:
        """The colour bar: +scale at its top, -scale at its bottom (exactly: its ends are the
        scale's)."""
        left, rows = panel.bar_left, panel.bar_height
        canvas[panel.top:panel.top + rows, left:left + self.size] = \
            colours(np.linspace(1.0, -1.0, rows), 1.0)[:, None, :]

    def compose(self, shown: Shown) -> Image:
        """The frame of `shown`: H x W x 3 uint8, `shape`."""
        from PIL import Image as PILImage
        from PIL import ImageDraw

        canvas = self.background.copy()
        height, width = self.picture_shape
        picture = rgb(shown.picture)
        if self.zoom > 1:
            picture = np.repeat(np.repeat(picture, self.zoom, axis=0), self.zoom, axis=1)
        canvas[:height, :width] = fitted(picture, height, width)
        if self.image is not None and shown.observation is not None:
            image = self.image
            scaled = np.repeat(np.repeat(_image_of(shown.observation), image.factor, axis=0),
                               image.factor, axis=1)
            rows, columns = image.shape[0] * image.factor, image.shape[1] * image.factor
            canvas[image.top:image.top + rows, image.left:image.left + columns] = \
                fitted(scaled, rows, columns)
        given = {key: values for key, _, values in numbers(shown)}
        for panel in self.cells:
            values = np.full(panel.count, np.nan)
            have = given.get(panel.key, values)[:panel.count]
            values[:have.size] = have
            palette = np.concatenate([colours(values, panel.scales),
                                      np.full((1, 3), BACKGROUND, np.uint8)])
            rows, columns = panel.lookup.shape
            left, top = panel.at
            canvas[top:top + rows, left:left + columns] = palette[panel.lookup]
        top, strip_height = self.strip
        strip = PILImage.new("RGB", (self.shape[1], strip_height), (BACKGROUND,) * 3)
        ImageDraw.Draw(strip).text((6, strip_height / 2), shown.label(), fill=TEXT,
                                   font=font(self.size), anchor="lm")
        canvas[top:top + strip_height] = np.asarray(strip)
        return canvas
