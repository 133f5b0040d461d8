"""`evo replay RUN_DIR`: run the champion on episodes it never trained on."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from evo_core.api_arguments import output_argument
from evo_core.errors import UserError
from evo_core.running.seeding import REPLAY_SEED

if TYPE_CHECKING:  # the command's module is imported to build the parser: numpy waits
    from evo_core.running.video import Video

__all__ = ["add_parser", "hof_rank", "step_limit"]


def _whole(least: int, meaning: str) -> Callable[[str], int]:
    """argparse's type of an option that takes a whole number of at least `least`; anything
    else is refused saying what the option takes (`meaning`), not argparse's "invalid _positive
    value"."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = least - 1
        if value < least:
            raise argparse.ArgumentTypeError(f"must be {meaning}, got {text!r}")
        return value
    return parse


_positive = _whole(1, "a whole number of at least 1")
_seed = _whole(0, "a whole number of 0 or more")
#: `--hof N`, of `evo replay` and of `evo plot --network`
hof_rank = _whole(1, "a rank in the hall of fame, a whole number from 1 (1 is the best)")
#: `--max-steps N`, of `evo replay` and of `evo plot --maze`
step_limit = _positive


def _count_or_all(text: str) -> int | None:
    """A positive count, or None for `all`."""
    if text.strip().lower() == "all":
        return None
    try:
        return _positive(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"must be a positive number or `all`, got {text!r}") \
            from None


def _mean_text(mean: float) -> str:
    """Four decimals without trailing zeros (494.6667, 500); tiny means keep 4 significant
    digits rather than printing as 0."""
    text = f"{mean:.4f}".rstrip("0").rstrip(".")
    return f"{mean:.4g}" if mean != 0 and text in {"0", "-0"} else text


def _animation_text(recorded: int, episodes: int, video: Video) -> str:
    """What the animation holds: which episodes, how many frames at what rate (and, for a GIF
    of more frames a second than it can show, how many it keeps)."""
    which = "episode 1" if recorded == 1 else f"episodes 1-{recorded}"
    frames = f"{video.frames} frames at {float(video.fps):.4g} a second"
    if video.written != video.frames:
        frames += (f"; the GIF keeps {video.written} of them, as browsers show a GIF frame "
                   "20 ms at least (an MP4 keeps all)")
    hint = "" if recorded == episodes else "; --render-episodes all records all"
    return f"{which} of {episodes}, {frames}{hint}"


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
    parser.add_argument("--max-steps", type=step_limit, metavar="N",
                        help="end each episode after N steps (default: the run's own limits, "
                        "episodes.max_steps and the environment's time limit)")
    parser.add_argument("--hof", type=hof_rank, metavar="N",
                        help="replay the hall of fame's member of rank N (1 is the best) "
                        "instead of the best genome")
    parser.add_argument("--render", type=Path, metavar="FILE.gif|FILE.mp4",
                        help="write an animation, a GIF or an MP4 by the extension (the "
                        "episode, the step and the return so far on every frame; MP4 needs "
                        "evo-core[render])")
    parser.add_argument("--show-observation", action="store_true",
                        help="with --render: draw the observation the brain received beside "
                        "each frame (images scaled up, other observations as coloured cells)")
    parser.add_argument("--show-neurons", action="store_true",
                        help="with --render: draw the brain's state beside each frame, one "
                        "column of cells per state array (a brain with ITraceableBrain)")
    parser.add_argument("--trace", type=Path, metavar="FILE.npz",
                        help="write every step's observation, action, reward and the brain's "
                        "internal state to FILE.npz (numpy.load reads it; `evo plot RUN "
                        "--trace FILE.npz` draws it)")
    parser.add_argument("--render-episodes", type=_count_or_all, default=1, metavar="N|all",
                        help="how many of the episodes, from the first, --render records "
                        "(default 1; `all` for every episode)")
    parser.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from evo_core.hooks.discovery import get_registry
    from evo_core.results.run_folder import RunFolder
    from evo_core.running.replay import load_champion, replay
    from evo_core.running.tracing import write_trace

    if args.render:
        output_argument(args.render, "--render", (".gif", ".mp4"))
    elif args.show_observation or args.show_neurons:
        option = "--show-observation" if args.show_observation else "--show-neurons"
        raise UserError(f"{option} draws beside the rendered frames; add --render FILE.gif or "
                        "FILE.mp4")
    if args.trace:
        output_argument(args.trace, "--trace", (".npz",))
    folder = RunFolder.open(args.run_dir)
    champion = load_champion(folder, get_registry(), args.hof, f"replay {folder.path}",
                             hof_option="--hof", replaying=True, max_steps=args.max_steps,
                             render_option="--render" if args.render else None)
    record = args.episodes if args.render_episodes is None else args.render_episodes
    result = replay(champion, args.episodes, args.seed, args.render, record,
                    args.show_observation, trace=args.trace is not None,
                    show_neurons=args.show_neurons)
    for index, value in enumerate(result.returns, 1):
        print(f"episode {index}: return {value:.6g}", file=sys.stderr)
    if args.trace is not None and result.trace is not None:
        write_trace(result.trace, args.trace)
        kept = "with the brain's state" if result.trace.traceable else \
            "without brain state (the brain declares no ITraceableBrain.trace_state)"
        print(f"trace: {args.trace} ({len(result.trace.rewards)} steps, {kept})",
              file=sys.stderr)
    if args.render and result.video is not None:
        text = _animation_text(result.recorded, args.episodes, result.video)
        print(f"animation: {args.render} ({text})", file=sys.stderr)
    print(_mean_text(float(np.mean(result.returns))))
    return 0
