"""Rebuilding a trained brain from its run folder and running it on new episodes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from evo_core.config import validate_config
from evo_core.config.schema import ExperimentConfig
from evo_core.contract.protocols import IBrainTemplate
from evo_core.engine.episodes import EpisodeRunner
from evo_core.engine.experiment import build_template
from evo_core.engine.seeding import Streams
from evo_core.errors import UserError
from evo_core.plugins.registry import Registry
from evo_core.results.files import write_atomic
from evo_core.results.run_folder import RunFolder
from evo_core.results.template_state import restored_template

__all__ = ["Champion", "load_champion", "replay", "write_gif"]


@dataclass
class Champion:
    config: ExperimentConfig
    template: IBrainTemplate
    genome: np.ndarray
    fitness: float


def load_champion(folder: RunFolder, registry: Registry) -> Champion:
    """The best genome and a template equal to the one it was trained with."""
    data = folder.read_config()
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


def replay(champion: Champion, episodes: int, seed: int,
           frames: list[Any] | None = None) -> list[float]:
    """Returns of `episodes` episodes; the first seeds the environment, the rest continue."""
    episodes_config = champion.config.episodes.model_copy(update={"runs": episodes})
    runner = EpisodeRunner(champion.template, champion.config.environment, episodes_config,
                           render_mode="rgb_array" if frames is not None else None)
    try:
        return [o.total for o in runner.run_episodes(champion.genome, seed, frames)]
    except gym.error.DependencyNotInstalled as exc:
        raise UserError(f"rendering {champion.config.environment} needs an extra package: "
                        f"{exc}; or install evo-core[render]") from None
    finally:
        runner.close()


def write_gif(frames: list[Any], path: Path, fps: int = 30) -> None:
    from PIL import Image

    images = [Image.fromarray(np.asarray(frame)) for frame in frames if frame is not None]
    if not images:
        raise UserError(f"{path}: the environment rendered no frames (no rgb_array rendering?)")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{path}: cannot write the animation ({exc.strerror or exc})") from None
    write_atomic(path, lambda handle: images[0].save(
        handle, format="GIF", save_all=True, append_images=images[1:], duration=int(1000 / fps),
        loop=0, optimize=False))
