"""Frames for `evo replay --render`: the observation beside the rendered frame, and the GIF or
MP4 file the frames go to as they come.

`--show-observation` puts what the brain received next to what a person sees: an image
observation (H x W, H x W x 1/3/4: Atari frames, procgen) scaled to the frame's height with
nearest-neighbour pixels, so a 16x16 input stays visibly 16x16; any other observation as a
column of cells, one per number, red for positive and blue for negative values (scaled by the
largest magnitude of that step), so a CartPole's four numbers read at a glance.

`video_file` writes each frame into the file when it is rendered, so a replay's memory does not
grow with its frames (keeping them took 3.7 GB for `--render-episodes all`). Every frame takes
the first frame's size: a smaller one is padded with the dark background, a larger one cut
(frames of one environment have one size). A GIF is written here, frame by frame (`_Gif`), with
Pillow quantizing and encoding each; an MP4 by imageio-ffmpeg, whose wheel ships an ffmpeg
binary (the `render` extra): H.264 in yuv420p, which every player plays; that
format needs even sides, so a frame is padded by one dark pixel row or column where needed,
never scaled. Both are written to evo's exclusive temporary and renamed into place
(results/files.py `atomic_file`), as every file evo writes.
"""

from __future__ import annotations

import contextlib
import io
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from numpy.typing import NDArray

from evo_core.errors import UserError
from evo_core.results.files import atomic_file, cannot_write

__all__ = ["beside", "observation_image", "rgb", "video_file"]

Image = NDArray[np.uint8]
GAP = 4
BACKGROUND = 32
#: most numbers drawn as cells; a longer vector (a flattened image without image shape) is cut
MOST_CELLS = 256


def rgb(frame: Any) -> Image:
    """A frame (array, or PIL image of any mode) as an H x W x 3 uint8 array."""
    from PIL import Image as PILImage

    if isinstance(frame, PILImage.Image):  # FrameRecorder keeps palette images
        frame = frame.convert("RGB")
    array = np.asarray(frame)
    if array.ndim == 2:
        array = np.repeat(array[:, :, None], 3, axis=2)
    elif array.shape[2] == 1:
        array = np.repeat(array, 3, axis=2)
    elif array.shape[2] == 4:
        array = array[:, :, :3]
    return np.ascontiguousarray(array, dtype=np.uint8)


def _is_image(observation: NDArray[Any]) -> bool:
    return observation.ndim == 2 or (observation.ndim == 3 and observation.shape[2] in (1, 3, 4))


def _scaled(observation: NDArray[Any]) -> Image:
    """An image observation as 0..255: floats in [0, 1] are scaled, anything else clipped."""
    values = np.asarray(observation, dtype=np.float64)
    finite = values[np.isfinite(values)]
    if observation.dtype.kind == "f" and finite.size and finite.max() <= 1.0:
        values = values * 255.0
    return np.clip(np.nan_to_num(values), 0, 255).astype(np.uint8)


def _cells(values: NDArray[np.float64], height: int) -> Image:
    """One cell per number in a column as tall as `height` (wrapped into more columns when
    the cells would be thinner than 3 pixels)."""
    values = values[:MOST_CELLS]
    count = max(1, values.size)
    rows = max(1, min(count, height // 3))
    columns = -(-count // rows)
    cell = max(1, height // rows)
    scale = float(np.max(np.abs(values))) if values.size else 0.0
    normal = values / scale if scale > 0 else np.zeros_like(values)
    image = np.full((rows * cell, columns * cell, 3), BACKGROUND, dtype=np.uint8)
    for index, value in enumerate(normal):
        row, column = index % rows, index // rows
        strength = round(255 * abs(value))
        colour = (255, 255 - strength, 255 - strength) if value >= 0 else \
            (255 - strength, 255 - strength, 255)
        image[row * cell:(row + 1) * cell - 1, column * cell:(column + 1) * cell - 1] = colour
    return image


def observation_image(observation: Any, height: int) -> Image:
    """What the brain received, drawn about `height` pixels tall (module docstring)."""
    array = np.asarray(observation)
    if array.dtype.kind in "biuf" and _is_image(array) and min(array.shape[:2]) > 1:
        image = rgb(_scaled(array))
        factor = max(1, height // image.shape[0])
        return np.repeat(np.repeat(image, factor, axis=0), factor, axis=1)
    try:
        values = np.asarray(array, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        values = np.zeros(1)
    return _cells(np.nan_to_num(values), height)


def beside(left: Image, right: Image) -> Image:
    """`left` and `right` side by side, top-aligned, on a dark background."""
    height = max(left.shape[0], right.shape[0])
    width = left.shape[1] + GAP + right.shape[1]
    out = np.full((height, width, 3), BACKGROUND, dtype=np.uint8)
    out[:left.shape[0], :left.shape[1]] = left
    out[:right.shape[0], left.shape[1] + GAP:] = right
    return out


def _fitted(frame: Image, height: int, width: int) -> Image:
    """`frame` on a `height` x `width` canvas: padded with the dark background, or cut."""
    if frame.shape[:2] == (height, width):
        return frame
    out = np.full((height, width, 3), BACKGROUND, dtype=np.uint8)
    rows, columns = min(height, frame.shape[0]), min(width, frame.shape[1])
    out[:rows, :columns] = frame[:rows, :columns]
    return out


class _Gif:
    """A GIF89a written frame by frame into an open file (Pillow's own writer keeps every frame
    until the last, 3.7 GB for `--render-episodes all`). Each frame after the first is the box
    in which it differs from the one before, drawn over it (disposal "do not dispose"), with a
    palette of its own: 256 colours by Pillow's fast octree quantizer, encoded by Pillow (a
    one-frame GIF whose palette and image data are copied out)."""

    def __init__(self, handle: BinaryIO, fps: int) -> None:
        self.handle = handle
        self.delay = max(1, round(100 / fps))  # in hundredths of a second
        self.previous: Image | None = None
        self.frames = 0

    def add(self, frame: Any) -> None:
        image = rgb(frame)
        previous = self.previous
        if previous is None:
            height, width = image.shape[:2]
            self.handle.write(b"GIF89a" + struct.pack("<HHBBB", width, height, 0, 0, 0)
                              + b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00")  # loop
            top, left, bottom, right = 0, 0, height, width
        else:
            height, width = previous.shape[:2]
            image = _fitted(image, height, width)
            changed = (image != previous).reshape(height, width * 3)  # rows reduce fast
            rows = np.flatnonzero(changed.any(axis=1))
            if rows.size:
                top, bottom = int(rows[0]), int(rows[-1]) + 1
                columns = np.flatnonzero(
                    changed[top:bottom].any(axis=0).reshape(width, 3).any(axis=1))
                left, right = int(columns[0]), int(columns[-1]) + 1
            else:  # the same picture: one pixel redrawn, so the frame still counts
                top, left, bottom, right = 0, 0, 1, 1
        self.previous = image
        table, bits, data = _encoded(image[top:bottom, left:right])
        self.handle.write(b"\x21\xf9\x04\x04" + struct.pack("<H", self.delay) + b"\x00\x00"
                          + b"\x2c" + struct.pack("<HHHHB", left, top, right - left,
                                                   bottom - top, 0x80 | bits)
                          + table + data)
        self.frames += 1

    def finish(self) -> None:
        self.handle.write(b"\x3b")


def _encoded(image: Image) -> tuple[bytes, int, bytes]:
    """`image` quantized and LZW-encoded by Pillow: its colour table, the table's size and
    interlace fields, and the image data (the code size and the data blocks) of a GIF image
    block."""
    from PIL import Image as PILImage

    buffer = io.BytesIO()
    PILImage.fromarray(image).quantize(256, method=PILImage.Quantize.FASTOCTREE).save(
        buffer, format="GIF", interlace=False)
    gif = buffer.getvalue()
    flags, position = gif[10], 13
    bits = flags & 0x07
    table = gif[position:position + 3 * 2 ** (bits + 1)] if flags & 0x80 else b""
    position += len(table)
    while gif[position] == 0x21:  # extensions: a label, then blocks up to an empty one
        position += 2
        while gif[position]:
            position += gif[position] + 1
        position += 1
    local = gif[position + 9]
    position += 10
    if local & 0x80:  # a table of the image's own
        bits = local & 0x07
        table = gif[position:position + 3 * 2 ** (bits + 1)]
        position += len(table)
    # the last byte is the trailer; the rows' order (interlaced or not) goes with the data
    return table, bits | (local & 0x40), gif[position:-1]


class _Mp4:
    """An H.264 MP4 written by imageio-ffmpeg's ffmpeg into the temporary `name`, frame by
    frame; its size is the first frame's, rounded up to even sides."""

    def __init__(self, name: Path, fps: int) -> None:
        self.name = name
        self.fps = fps
        self.writer: Any = None
        self.size = (0, 0)
        self.frames = 0

    def add(self, frame: Any) -> None:
        image = rgb(frame)
        if self.writer is None:
            import imageio_ffmpeg

            height, width = image.shape[:2]
            self.size = (height + height % 2, width + width % 2)
            # the temporary's name does not end in .mp4: the format is said
            self.writer = imageio_ffmpeg.write_frames(
                str(self.name), (self.size[1], self.size[0]), fps=self.fps, codec="libx264",
                pix_fmt_out="yuv420p", macro_block_size=1, ffmpeg_log_level="error",
                output_params=["-f", "mp4"])
            self.writer.send(None)  # starts ffmpeg
        self.writer.send(_fitted(image, *self.size))
        self.frames += 1

    def finish(self) -> None:
        self.close()

    def close(self) -> None:
        """ffmpeg's input closed, and ffmpeg waited for."""
        if self.writer is not None:
            writer, self.writer = self.writer, None
            writer.close()


@contextlib.contextmanager
def video_file(path: Path, fps: int = 30) -> Iterator[Callable[[Any], None]]:
    """A function that writes a frame to the GIF or MP4 (by `path`'s extension) at `path`,
    as the frames come: memory does not grow with the frames. The file is evo's exclusive
    temporary (results/files.py) until the block ends, then renamed into place, so a link at
    `path` is refused, nothing is left of an interrupted replay, and an unwritable folder or a
    full disk is one line. Every frame takes the first frame's size (padded or cut)."""
    mp4 = path.suffix.lower() == ".mp4"
    if mp4:
        try:
            import imageio_ffmpeg  # noqa: F401  (its ffmpeg binary is what writes)
        except ImportError:
            raise UserError(f"--render {path}: MP4 needs imageio-ffmpeg; install it with pip "
                            "install 'evo-core[render]', or write a .gif") from None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{path}: cannot write the video ({exc.strerror or exc})") from None
    with atomic_file(path) as (handle, temporary):
        writer: _Gif | _Mp4 = _Mp4(temporary, fps) if mp4 else _Gif(handle, fps)

        def add(frame: Any) -> None:
            try:
                writer.add(frame)
            except OSError as exc:  # a full disk; ffmpeg's broken pipe when it failed
                raise cannot_write(path, exc) from None

        try:
            yield add
            if not writer.frames:
                raise UserError(f"{path}: the environment rendered no frames (no rgb_array "
                                "rendering?)")
            try:
                writer.finish()
            except OSError as exc:
                raise cannot_write(path, exc) from None
        finally:
            if isinstance(writer, _Mp4):  # ffmpeg ends with the replay (done already if it ended)
                with contextlib.suppress(Exception):
                    writer.close()
