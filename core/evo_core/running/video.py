"""Frames for `evo replay --render`: the observation beside the rendered frame, and MP4 files.

`--show-observation` puts what the brain received next to what a person sees: an image
observation (H x W, H x W x 1/3/4: Atari frames, procgen) scaled to the frame's height with
nearest-neighbour pixels, so a 16x16 input stays visibly 16x16; any other observation as a
column of cells, one per number, red for positive and blue for negative values (scaled by the
largest magnitude of that step), so a CartPole's four numbers read at a glance.

MP4 is written by imageio through imageio-ffmpeg, whose wheel ships an ffmpeg binary (the
`render` extra): H.264 in yuv420p, which every player plays; that format needs even sides, so a
frame is padded by one dark pixel row or column where needed, never scaled.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.errors import UserError

__all__ = ["beside", "observation_image", "rgb", "write_mp4"]

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


def _even(frame: Image, height: int, width: int) -> Image:
    if frame.shape[:2] == (height, width):
        return frame
    out = np.full((height, width, 3), BACKGROUND, dtype=np.uint8)
    out[:frame.shape[0], :frame.shape[1]] = frame
    return out


def write_mp4(frames: list[Any], path: Path, fps: int = 30) -> None:
    """An H.264 MP4 of `frames` (all padded to the largest, with even sides)."""
    try:
        import imageio.v2 as imageio
        import imageio_ffmpeg  # noqa: F401  (its ffmpeg binary is what writes)
    except ImportError:
        raise UserError(f"--render {path}: MP4 needs imageio and imageio-ffmpeg; install them "
                        "with pip install 'evo-core[render]', or write a .gif") from None
    images = [rgb(frame) for frame in frames if frame is not None]
    if not images:
        raise UserError(f"{path}: the environment rendered no frames (no rgb_array rendering?)")
    height = max(image.shape[0] for image in images)
    width = max(image.shape[1] for image in images)
    height, width = height + height % 2, width + width % 2
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{path}: cannot write the video ({exc.strerror or exc})") from None

    # ffmpeg writes to a path of its own: a temporary one beside `path`, renamed into place
    # when complete, so an interrupted replay leaves no half video
    descriptor, temporary = tempfile.mkstemp(suffix=".mp4", prefix=f".{path.name}.",
                                             dir=path.parent)
    os.close(descriptor)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(temporary, 0o666 & ~umask)  # mkstemp's 0600 is for secrets, not videos
    try:
        writer = imageio.get_writer(temporary, format="FFMPEG", mode="I", fps=fps,
                                    codec="libx264", pixelformat="yuv420p",
                                    macro_block_size=1, ffmpeg_log_level="error")
        try:
            for image in images:
                writer.append_data(_even(image, height, width))
        finally:
            writer.close()
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
