"""Rebuilding a trained brain from its run folder and running it on new episodes."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from evo_core.config import validate_config
from evo_core.config.schema import ExperimentConfig
from evo_core.contract.protocols import IBrainTemplate
from evo_core.errors import UserError
from evo_core.evaluation.episodes import EpisodeRunner
from evo_core.hooks.registry import Registry
from evo_core.results.files import write_atomic
from evo_core.results.provenance import check_recorded_modules
from evo_core.results.run_folder import RunFolder
from evo_core.results.template_state import restored_template
from evo_core.running.experiment import build_template
from evo_core.running.seeding import Streams

__all__ = ["Champion", "FrameRecorder", "Replay", "load_champion", "replay", "write_gif"]


@dataclass
class Champion:
    config: ExperimentConfig
    template: IBrainTemplate
    genome: np.ndarray
    fitness: float


def load_champion(folder: RunFolder, registry: Registry, command: str = "") -> Champion:
    """The best genome and a template equal to the one it was trained with. The code the run
    recorded must be loaded already (`command` is how the refusal tells to run again)."""
    data = folder.read_config()
    check_recorded_modules(data, registry, folder.config_file, command)
    config = validate_config(data, registry, source=str(folder.config_file))
    _, template = build_template(config, registry, Streams.from_seed(config.seed),
                                 str(folder.config_file))
    genome, fitness, saved = folder.read_best()
    template = restored_template(template, saved, folder.best_file)
    if genome.shape != (template.genome_size,):
        raise UserError(f"{folder.best_file}: genome has shape {genome.shape} but the brain of "
                        f"config.json takes {template.genome_size} genes; was config.json or the "
                        "brain plugin changed since training?")
    return Champion(config, template, genome, fitness)


class FrameRecorder(gym.Wrapper[Any, Any, Any, Any]):
    """Keeps a frame after every reset and step of the first `episodes` episodes, with the
    episode, the step and the return so far drawn on it.

    A wrapper sees every reward, so the episode loop needs no rendering code of its own. Frames
    are kept as palette images (what a GIF stores anyway): a third of the memory of RGB arrays.
    """

    def __init__(self, env: gym.Env[Any, Any], episodes: int, of_episodes: int) -> None:
        super().__init__(env)
        self.record_episodes = episodes
        self.of_episodes = of_episodes
        self.frames: list[Any] = []
        self.episode = 0
        self.step_count = 0
        self.total = 0.0

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        result = self.env.reset(seed=seed, options=options)
        self.episode += 1
        self.step_count, self.total = 0, 0.0
        self._record()
        return result

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        result = self.env.step(action)
        self.step_count += 1
        self.total += float(result[1])
        self._record()
        return result

    def _record(self) -> None:
        if self.episode > self.record_episodes:
            return
        frame = self.env.render()
        if frame is None:
            return
        self.frames.append(_annotated(np.asarray(frame), f"episode {self.episode}/"
                                      f"{self.of_episodes}  step {self.step_count}  "
                                      f"return {self.total:.6g}"))


def _annotated(frame: np.ndarray, text: str) -> Any:
    """`frame` as a palette image with `text` on a dark strip across its top-left corner."""
    from PIL import Image, ImageDraw

    image = Image.fromarray(frame.astype(np.uint8)).convert("RGB")
    font = _font(max(10, image.height // 28))
    draw = ImageDraw.Draw(image)
    left, top, right, bottom = draw.textbbox((4, 3), text, font=font)
    draw.rectangle((0, 0, right + 4, bottom + 3), fill=(32, 32, 32))
    draw.text((4, 3), text, fill=(255, 255, 255), font=font)
    # fast octree: a fifth of the time of the median cut Pillow's GIF writer uses for RGB
    return image.quantize(256, method=Image.Quantize.FASTOCTREE)


@functools.cache
def _font(size: int) -> Any:
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1: its fixed bitmap font
        return ImageFont.load_default()


@contextmanager
def _headless_sdl() -> Iterator[None]:
    """pygame-drawn environments open SDL's video subsystem even for rgb_array frames; its
    Wayland probe prints "error: XDG_RUNTIME_DIR is invalid or not set" on a machine without a
    desktop session. Offscreen rendering needs no video driver: use SDL's dummy one unless the
    user chose another."""
    if "SDL_VIDEODRIVER" in os.environ:
        yield
        return
    os.environ["SDL_VIDEODRIVER"] = "dummy"
    try:
        yield
    finally:
        os.environ.pop("SDL_VIDEODRIVER", None)


@dataclass
class Replay:
    """The returns of every episode, and the annotated frames of the first `recorded` ones."""

    returns: list[float]
    frames: list[Any]
    recorded: int


def replay(champion: Champion, episodes: int, seed: int, record: int = 0) -> Replay:
    """`episodes` episodes (the first seeds the environment, the rest continue); with `record`
    > 0 the frames of the first `record` of them are kept."""
    episodes_config = champion.config.episodes.model_copy(update={"runs": episodes})
    record = min(record, episodes)
    with _headless_sdl() if record else nullcontext():
        runner = EpisodeRunner(champion.template, champion.config.environment, episodes_config,
                               render_mode="rgb_array" if record else None)
        recorder = FrameRecorder(runner.env, record, episodes) if record else None
        if recorder is not None:
            runner.env = recorder
        try:
            returns = [o.total for o in runner.run_episodes(champion.genome, seed)]
        except gym.error.DependencyNotInstalled as exc:
            raise UserError(f"rendering {champion.config.environment.id} needs an extra package: "
                            f"{exc}; or install evo-core[render]") from None
        finally:
            runner.close()
    return Replay(returns, recorder.frames if recorder is not None else [], record)


def write_gif(frames: list[Any], path: Path, fps: int = 30) -> None:
    from PIL import Image

    images = [frame if isinstance(frame, Image.Image) else Image.fromarray(np.asarray(frame))
              for frame in frames if frame is not None]
    if not images:
        raise UserError(f"{path}: the environment rendered no frames (no rgb_array rendering?)")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{path}: cannot write the animation ({exc.strerror or exc})") from None
    write_atomic(path, lambda handle: images[0].save(
        handle, format="GIF", save_all=True, append_images=images[1:], duration=int(1000 / fps),
        loop=0, optimize=False))
