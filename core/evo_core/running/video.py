"""The GIF or MP4 file of `evo replay --render`, written frame by frame, at the environment's
own frame rate.

`video_file` writes each frame into the file when it is rendered, so a replay's memory does not
grow with its frames (keeping them took 3.7 GB for `--render-episodes all`). Every frame takes
the first frame's size: a smaller one is padded with the dark background, a larger one cut
(frames of one environment have one size). A GIF is written here, frame by frame (`_Gif`), with
Pillow quantizing and encoding each; an MP4 by imageio-ffmpeg, whose wheel ships an ffmpeg
binary (the `render` extra): H.264 in yuv420p, which every player plays; that
format needs even sides, so a frame is padded by one dark pixel row or column where needed,
never scaled (the replay's composed frames have even sides already). Both are written to evo's
exclusive temporary and renamed into place (results/files.py `atomic_file`), as every file evo
writes.

Time: the file plays the episode in real time at the rate it is given (`environments/
rendering.py`'s `frame_rate`: the environment's `render_fps`). An MP4 takes the rate as an
exact fraction (50/1, 100/1, 30000/1001). A GIF's frame durations are whole hundredths of a
second, and browsers show a duration under 2 hundredths as 10, so `GifClock` gives frame i
the time from round(100 i / fps) to the start of the next frame it keeps: 50 frames a second
are 2 hundredths each, exactly; 30 are 3, 4, 3, 3, 4, 3, ... (each frame within 5 ms of its
time, and no drift: every third frame is exactly on time); above 50 a second a frame that
would last under 2 hundredths is left out of the GIF (100 a second keeps every other frame,
each 20 ms), so it still plays in real time, and the MP4 keeps every frame.
"""

from __future__ import annotations

import contextlib
import io
import math
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from numpy.typing import NDArray

from evo_core.errors import UserError
from evo_core.results.files import atomic_file, cannot_write

__all__ = ["BACKGROUND", "GifClock", "Video", "fitted", "rgb", "video_file"]

Image = NDArray[np.uint8]
BACKGROUND = 32
#: the shortest GIF frame browsers show as given, in hundredths of a second
SHORTEST_GIF_DELAY = 2


def rgb(frame: Any) -> Image:
    """A frame (array, or PIL image of any mode) as an H x W x 3 uint8 array."""
    from PIL import Image as PILImage

    if isinstance(frame, PILImage.Image):
        frame = frame.convert("RGB")
    array = np.asarray(frame)
    if array.ndim == 2:
        array = np.repeat(array[:, :, None], 3, axis=2)
    elif array.shape[2] == 1:
        array = np.repeat(array, 3, axis=2)
    elif array.shape[2] == 4:
        array = array[:, :, :3]
    return np.ascontiguousarray(array, dtype=np.uint8)


class GifClock:
    """Which frames of a stream at `fps` a GIF keeps, and for how many hundredths of a second
    each (the module docstring)."""

    def __init__(self, fps: Fraction) -> None:
        self.fps = fps
        self._next_kept = 0

    def _start(self, index: int) -> int:
        """Frame `index`'s time in whole hundredths (halves rounded up)."""
        return math.floor(Fraction(100 * index) / self.fps + Fraction(1, 2))

    def delay(self, index: int) -> int | None:
        """The duration of frame `index` (frames come in order from 0), or None: left out."""
        if index != self._next_kept:
            return None
        start = self._start(index)
        following = index + 1
        while self._start(following) - start < SHORTEST_GIF_DELAY:
            following += 1
        self._next_kept = following
        return self._start(following) - start


def fitted(frame: Image, height: int, width: int) -> Image:
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

    def __init__(self, handle: BinaryIO, fps: Fraction) -> None:
        self.handle = handle
        self.clock = GifClock(fps)
        self.previous: Image | None = None
        self.frames = 0  # given
        self.written = 0

    def add(self, frame: Any) -> None:
        delay = self.clock.delay(self.frames)
        self.frames += 1
        if delay is None:
            return
        image = rgb(frame)
        previous = self.previous
        if previous is None:
            height, width = image.shape[:2]
            self.handle.write(b"GIF89a" + struct.pack("<HHBBB", width, height, 0, 0, 0)
                              + b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00")  # loop
            top, left, bottom, right = 0, 0, height, width
        else:
            height, width = previous.shape[:2]
            image = fitted(image, height, width)
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
        self.handle.write(b"\x21\xf9\x04\x04" + struct.pack("<H", delay) + b"\x00\x00"
                          + b"\x2c" + struct.pack("<HHHHB", left, top, right - left,
                                                   bottom - top, 0x80 | bits)
                          + table + data)
        self.written += 1

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

    def __init__(self, name: Path, fps: Fraction) -> None:
        self.name = name
        self.fps = fps
        self.writer: Any = None
        self.size = (0, 0)
        self.frames = 0

    @property
    def written(self) -> int:
        return self.frames

    def add(self, frame: Any) -> None:
        image = rgb(frame)
        if self.writer is None:
            import imageio_ffmpeg

            height, width = image.shape[:2]
            self.size = (height + height % 2, width + width % 2)
            # the temporary's name does not end in .mp4: the format is said
            self.writer = imageio_ffmpeg.write_frames(
                str(self.name), (self.size[1], self.size[0]),
                fps=int(self.fps) if self.fps.denominator == 1 else self.fps, codec="libx264",
                pix_fmt_out="yuv420p", macro_block_size=1, ffmpeg_log_level="error",
                output_params=["-f", "mp4"])
            self.writer.send(None)  # starts ffmpeg
        self.writer.send(fitted(image, *self.size))
        self.frames += 1

    def finish(self) -> None:
        self.close()

    def close(self) -> None:
        """ffmpeg's input closed, and ffmpeg waited for."""
        if self.writer is not None:
            writer, self.writer = self.writer, None
            writer.close()


@dataclass
class Video:
    """What `video_file` wrote: the frames given (`frames`), the frames in the file
    (`written`: fewer in a GIF of more than 50 frames a second) and the rate it plays at."""

    fps: Fraction
    frames: int = 0
    written: int = 0


@contextlib.contextmanager
def video_file(path: Path, fps: Fraction | int) -> Iterator[tuple[Callable[[Any], None], Video]]:
    """A function that writes a frame to the GIF or MP4 (by `path`'s extension) at `path`,
    as the frames come (memory does not grow with the frames), played at `fps` frames a
    second, and the `Video` it fills in once the file is complete. The file is evo's exclusive
    temporary (results/files.py) until the block ends, then renamed into place, so a link at
    `path` is refused, nothing is left of an interrupted replay, and an unwritable folder or a
    full disk is one line. Every frame takes the first frame's size (padded or cut)."""
    rate = Fraction(fps)
    if rate <= 0:
        raise ValueError(f"fps must be positive, got {fps!r}")
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
    video = Video(rate)
    with atomic_file(path) as (handle, temporary):
        writer: _Gif | _Mp4 = _Mp4(temporary, rate) if mp4 else _Gif(handle, rate)

        def add(frame: Any) -> None:
            try:
                writer.add(frame)
            except OSError as exc:  # a full disk; ffmpeg's broken pipe when it failed
                raise cannot_write(path, exc) from None

        try:
            yield add, video
            if not writer.frames:
                raise UserError(f"{path}: the environment rendered no frames (no rgb_array "
                                "rendering?)")
            try:
                writer.finish()
            except OSError as exc:
                raise cannot_write(path, exc) from None
            video.frames, video.written = writer.frames, writer.written
        finally:
            if isinstance(writer, _Mp4):  # ffmpeg ends with the replay (done already if it ended)
                with contextlib.suppress(Exception):
                    writer.close()
