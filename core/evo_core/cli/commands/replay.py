"""`evo replay RUN_DIR`: run the champion on episodes it never trained on."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from evo_core.errors import UserError
from evo_core.hooks.discovery import get_registry
from evo_core.results.run_folder import RunFolder
from evo_core.running.replay import load_champion, replay, write_gif
from evo_core.running.seeding import REPLAY_SEED

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
def _count_or_all(text: str) -> int | None:
    """A positive count, or None for `all`."""
    if text.strip().lower() == "all":
        return None
    try:
        return _positive(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive number or `all`, got {text!r}") \
            from None


def _mean_text(mean: float) -> str:
    """Four decimals without trailing zeros (494.6667, 500); tiny means keep 4 significant
    digits rather than printing as 0."""
    text = f"{mean:.4f}".rstrip("0").rstrip(".")
    return f"{mean:.4g}" if mean != 0 and text in {"0", "-0"} else text


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
                        help="write an animation (the episode, the step and the return so far "
                        "on every frame)")
    parser.add_argument("--render-episodes", type=_count_or_all, default=1, metavar="N|all",
                        help="how many of the episodes, from the first, --render records "
                        "(default 1; `all` for every episode)")
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    if args.render:
        _gif_path(args.render)
    folder = RunFolder.open(args.run_dir)
    champion = load_champion(folder, get_registry(), f"replay {folder.path}")
    record = 0
    if args.render:
        record = args.episodes if args.render_episodes is None else args.render_episodes
    result = replay(champion, args.episodes, args.seed, record)
    for index, value in enumerate(result.returns, 1):
        print(f"episode {index}: return {value:.6g}", file=sys.stderr)
    if args.render:
        write_gif(result.frames, args.render)
        which = ("episode 1" if result.recorded == 1 else f"episodes 1-{result.recorded}")
        hint = "" if result.recorded == args.episodes else "; --render-episodes all records all"
        print(f"animation: {args.render} ({which} of {args.episodes}, {len(result.frames)} "
              f"frames{hint})", file=sys.stderr)
    print(_mean_text(float(np.mean(result.returns))))
    return 0
