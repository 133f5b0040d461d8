"""`evo replay RUN_DIR`: run the champion on episodes it never trained on."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from evo_core.engine.replay import load_champion, replay, write_gif
from evo_core.engine.seeding import REPLAY_SEED
from evo_core.errors import UserError
from evo_core.plugins.discovery import get_registry
from evo_core.results.provenance import reload_local_plugins
from evo_core.results.run_folder import RunFolder

__all__ = ["add_parser"]


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _seed(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _gif_path(path: Path) -> Path:
    """Checked before any episode runs, so a bad path costs no replay time."""
    if path.is_dir():
        raise UserError(f"--render {path}: is a folder; give a file name such as "
                        f"{path / 'replay.gif'}")
    if path.suffix.lower() != ".gif":
        raise UserError(f"--render {path}: the animation is a GIF; give a name ending in .gif")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise UserError(f"--render {path}: {parent} is a file, not a folder")
            break
    return path


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "replay", help="run a run's best brain on new episodes and print the mean return",
        description="Rebuild the best brain of RUN_DIR (its masks included) and run it. The "
        "default seed lies outside the range training draws from, so these are episodes the "
        "brain never trained on. Prints each return to stderr and the mean return last.")
    parser.add_argument("run_dir", type=Path, help="a run folder made by `evo train`")
    parser.add_argument("--episodes", type=_positive, default=10, help="episodes (default 10)")
    parser.add_argument("--seed", type=_seed, default=REPLAY_SEED,
                        help=f"seed of the episodes (default {REPLAY_SEED})")
    parser.add_argument("--render", type=Path, metavar="FILE.gif",
                        help="write an animation of the first episode")
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    if args.render:
        _gif_path(args.render)
    folder = RunFolder.open(args.run_dir)
    reload_local_plugins(folder.read_config(), folder.config_file, "replay")
    champion = load_champion(folder, get_registry())
    frames: list[Any] | None = [] if args.render else None
    returns = replay(champion, args.episodes, args.seed, frames)
    for index, value in enumerate(returns, 1):
        print(f"episode {index}: return {value:.6g}", file=sys.stderr)
    if args.render and frames is not None:
        write_gif(frames, args.render)
        print(f"animation: {args.render}", file=sys.stderr)
    print(float(np.mean(returns)))
    return 0
