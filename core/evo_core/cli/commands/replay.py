"""`evo replay RUN_DIR`: run the champion on episodes it never trained on."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from evo_core.engine.replay import load_champion, replay, write_gif
from evo_core.engine.seeding import REPLAY_SEED
from evo_core.plugins.discovery import get_registry
from evo_core.results.run_folder import RunFolder

__all__ = ["add_parser"]


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "replay", help="run a run's best brain on new episodes and print the mean return",
        description="Rebuild the best brain of RUN_DIR (its masks included) and run it. The "
        "default seed lies outside the range training draws from, so these are episodes the "
        "brain never trained on. Prints each return to stderr and the mean return last.")
    parser.add_argument("run_dir", type=Path, help="a run folder made by `evo train`")
    parser.add_argument("--episodes", type=_positive, default=10, help="episodes (default 10)")
    parser.add_argument("--seed", type=int, default=REPLAY_SEED,
                        help=f"seed of the episodes (default {REPLAY_SEED})")
    parser.add_argument("--render", type=Path, metavar="FILE.gif",
                        help="write an animation of the first episode")
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    champion = load_champion(RunFolder.open(args.run_dir), get_registry())
    frames: list[Any] | None = [] if args.render else None
    returns = replay(champion, args.episodes, args.seed, frames)
    for index, value in enumerate(returns, 1):
        print(f"episode {index}: return {value:.6g}", file=sys.stderr)
    if args.render and frames is not None:
        write_gif(frames, args.render)
        print(f"animation: {args.render}", file=sys.stderr)
    print(float(np.mean(returns)))
    return 0
