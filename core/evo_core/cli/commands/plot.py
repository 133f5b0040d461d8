"""`evo plot RUN_DIR [RUN_DIR ...]`: fitness curves, several runs on one figure to compare; or
`evo plot SWEEP_DIR`: a sweep's settings, each as a mean over its seeds; `--trace`: a replay's
trace; `--network`: the champion's network (a brain that declares `INetworkGraph`); `--maze`:
the map of an environment that declares `IPlanarMap`, with the champion's path and the novelty
archive's final positions."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evo_core.api_arguments import image_argument
from evo_core.cli.commands.replay import hof_rank, step_limit
from evo_core.errors import UserError
from evo_core.results.plot_style import PlotStyle, check_pgf

if TYPE_CHECKING:
    from evo_core.results.run_folder import RunFolder

__all__ = ["add_parser"]


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "plot", help="plot best and mean fitness per generation",
        description="Draw best and mean fitness per generation over the band of the "
        "population's mean ± one standard deviation. One run: written to "
        "RUN_DIR/fitness.png; several: one figure to compare, written to --out. A sweep folder "
        "(made by `evo sweep`): each setting's mean best fitness over its seeds with a 95 % "
        "confidence band, a panel per setting, written to SWEEP_DIR/fitness.png. --trace, "
        "--network and --maze draw other figures of one run. Every figure is 16 cm wide "
        "(--column: 8 cm) with 8 pt text, to include at its natural size.")
    parser.add_argument("run_dirs", type=Path, nargs="+", metavar="RUN_DIR")
    parser.add_argument("--out", type=Path, help="output file; its extension picks the format "
                        "(.png, .svg, .pdf, .pgf for LaTeX: \\input it; default: "
                        "RUN_DIR/fitness.png for one run, comparison.png for several, "
                        "FILE.png for --trace FILE.npz)")
    parser.add_argument("--title", help="figure title (default: the run folder's name and "
                        "what ran, environment · brain · optimizer, or what compared runs "
                        "share)")
    parser.add_argument("--smooth", type=_sigma, default=0.0, metavar="SIGMA",
                        help="smooth the mean curves with a Gaussian of SIGMA generations, the "
                        "raw ones kept faint beneath; the best of a generation is drawn as it "
                        "is (default 0: raw only)")
    parser.add_argument("--column", action="store_true",
                        help="an 8 cm wide figure (one column of a paper) instead of 16 cm "
                        "(its full text width); 8 pt text either way: include it at 100 %%")
    parser.add_argument("--trace", type=Path, metavar="FILE.npz",
                        help="draw a trace of `evo replay RUN --trace FILE.npz` instead: one "
                        "episode's observation, action, reward and return, and a heatmap of "
                        "each state array of the brain, over its steps")
    parser.add_argument("--episode", type=_episode, metavar="N",
                        help="with --trace: the episode to draw, from 0 (default 0); "
                        "--episode all draws every episode of the trace end to end")
    parser.add_argument("--network", action="store_true",
                        help="draw the run's best genome as a network instead: inputs, hidden "
                        "nodes by depth and outputs, enabled connections with |weight| as "
                        "width and sign as colour (brains that describe a graph: NEAT); "
                        "default output RUN_DIR/network.png")
    parser.add_argument("--maze", action="store_true",
                        help="draw the run's map instead (an environment that declares "
                        "IPlanarMap: evo's mazes): the walls, start and goal, the best "
                        "genome's path over one replayed episode, and the final positions of "
                        "the novelty archive (runs with [novelty] on [behaviour] source = "
                        "\"state\", interval = \"final\"); default output RUN_DIR/maze.png")
    parser.add_argument("--hof", type=hof_rank, metavar="N",
                        help="with --network or --maze: draw the hall of fame's member of rank "
                        "N (1 is the best) instead of the best genome")
    parser.add_argument("--disabled", action="store_true",
                        help="with --network: draw the disabled connections too, dotted grey")
    parser.add_argument("--max-steps", type=step_limit, metavar="N",
                        help="with --maze: end the replayed episode after N steps (default: "
                        "the run's own limits, as `evo replay`)")
    parser.set_defaults(run=_run)


def _sigma(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of generations, got {text!r}") \
            from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of generations >= 0, got {text}")
    return value


def _episode(text: str) -> int | str:
    """`--episode`: a whole number >= 0, or `all`."""
    if text == "all":
        return text
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an episode number (from 0) or all, got "
                                         f"{text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an episode number from 0, got {text}")
    return value


def _output(path: Path, own: Path | None = None) -> Path:
    """`--out` with `.png` added when it has no extension; an extension matplotlib cannot
    write, or a file a run folder keeps other than `own`, is an error before anything is
    drawn (the API's check, under the option's name)."""
    return image_argument(path, "--out", own)


def _plot_trace(args: argparse.Namespace, style: PlotStyle) -> int:
    from evo_core.results.plot import save_figure
    from evo_core.results.trace_file import read_trace
    from evo_core.results.trace_plot import default_output, trace_figure, trace_title

    if len(args.run_dirs) != 1:
        raise UserError("--trace draws one replay of one run; give one RUN_DIR")
    out = _output(args.out) if args.out else \
        image_argument(default_output(args.trace), "the figure of --trace")
    style = style.for_output(out)
    if style.pgf:
        check_pgf(out)
    arrays = read_trace(args.trace)
    episode = 0 if args.episode is None else None if args.episode == "all" else args.episode
    title = args.title or trace_title(args.run_dirs[0])
    save_figure(trace_figure(arrays, title, style, episode=episode,
                             source=f"--trace {args.trace}"), out, style)
    print(out)
    return 0


def _champion_figure(args: argparse.Namespace, option: str, stem: str
                     ) -> tuple[RunFolder, Path]:
    """The run folder and the output of a figure of one run's champion (`--network`,
    `--maze`): one RUN_DIR, none of the options that draw over steps or generations, and the
    output checked before anything is read (default RUN_DIR/STEM.png, STEM-hofN.png with
    `--hof N`)."""
    from evo_core.results.run_folder import RunFolder

    if len(args.run_dirs) != 1:
        raise UserError(f"{option} draws the champion of one run; give one RUN_DIR (and "
                        "--out FILE for the figure)")
    if args.trace is not None or args.smooth:
        other = "--trace" if args.trace is not None else "--smooth"
        raise UserError(f"{other} draws over steps or generations; {option} draws a "
                        "genome: give one of them")
    run_dir = args.run_dirs[0]
    name = f"{stem}.png" if args.hof is None else f"{stem}-hof{args.hof}.png"
    out = _output(args.out) if args.out else image_argument(run_dir / name,
                                                            f"the figure of {option}")
    return RunFolder.open(run_dir), out


def _checked_style(style: PlotStyle, out: Path) -> PlotStyle:
    """The style for `out`; a .pgf without a TeX system is one line before anything is read."""
    style = style.for_output(out)
    if style.pgf:
        check_pgf(out)
    return style


def _plot_network(args: argparse.Namespace, style: PlotStyle) -> int:
    """The champion's graph: the genome read through the run folder's trust boundary, as
    `evo replay` reads it (`load_champion`), drawn when its template declares
    `INetworkGraph`."""
    from evo_core.contract.protocols import INetworkGraph
    from evo_core.hooks.discovery import get_registry
    from evo_core.results.network_plot import network_figure
    from evo_core.results.plot import save_figure
    from evo_core.running.replay import load_champion

    folder, out = _champion_figure(args, "--network", "network")
    style = _checked_style(style, out)
    run_dir = args.run_dirs[0]
    champion = load_champion(folder, get_registry(), args.hof,
                             f"plot {folder.path} --network", hof_option="--hof")
    if not isinstance(champion.template, INetworkGraph):
        raise UserError(f"{folder.path}: its brain {champion.config.brain.type!r} does not "
                        "describe its genome as a graph; only brains that do (NEAT) can be "
                        "drawn with --network")
    title = [args.title] if args.title else [
        *_described(run_dir), f"{run_dir.name}: {_which(args)} (fitness {champion.fitness:.6g})"]
    graph = champion.template.network_graph(champion.genome)
    save_figure(network_figure(graph, title, style, show_disabled=args.disabled), out, style)
    print(out)
    return 0


def _plot_maze(args: argparse.Namespace, style: PlotStyle) -> int:
    """The run's map with the champion's path and the archive's final positions: the champion
    read through the run folder's trust boundary as `evo replay` reads it and replayed for one
    episode, the map and the archive as `running/planar_map.py` says. Why no archive is drawn,
    when none is, is one line on stderr: the map and the path are the figure still."""
    from evo_core.hooks.discovery import get_registry
    from evo_core.results.maze_plot import maze_figure
    from evo_core.results.plot import save_figure
    from evo_core.running.planar_map import map_view
    from evo_core.running.replay import load_champion

    folder, out = _champion_figure(args, "--maze", "maze")
    style = _checked_style(style, out)
    champion = load_champion(folder, get_registry(), args.hof, f"plot {folder.path} --maze",
                             hof_option="--hof", replaying=True, max_steps=args.max_steps)
    view = map_view(folder, champion)
    if view.no_archive is not None:
        print(f"{folder.path}: {view.no_archive}", file=sys.stderr)
    title = [args.title] if args.title else [
        *(_described(folder.path) or [view.environment]),
        f"{folder.path.name}: {_which(args)} (fitness {champion.fitness:.6g})"]
    save_figure(maze_figure(view, title, style), out, style)
    print(out)
    return 0


def _champion_figure_of(args: argparse.Namespace
                        ) -> Callable[[argparse.Namespace, PlotStyle], int] | None:
    """The figure of a champion the options ask for (`--network`, `--maze`), or None; an
    option of one given without it is one line naming what to add."""
    if args.network and args.maze:
        raise UserError("--network and --maze draw different figures; give one of them")
    if args.disabled and not args.network:
        raise UserError("--disabled chooses what --network draws; add --network")
    if args.episode is not None and args.trace is None:
        raise UserError("--episode chooses the episode --trace draws; add --trace FILE.npz")
    if args.max_steps is not None and not args.maze:
        raise UserError("--max-steps bounds the episode --maze replays; add --maze")
    if args.network:
        return _plot_network
    if args.maze:
        return _plot_maze
    if args.hof is not None:
        raise UserError("--hof chooses the genome --network or --maze draws; add one of them")
    return None


def _described(run_dir: Path) -> list[str]:
    """What ran, environment · brain · optimizer, as a title's first line ([] if unknown)."""
    from evo_core.results.plot import run_description

    description = run_description(run_dir)
    return [" · ".join(description)] if description else []


def _which(args: argparse.Namespace) -> str:
    """The champion a figure draws, for its title."""
    return "best genome" if args.hof is None else f"hall of fame #{args.hof}"


def _run(args: argparse.Namespace) -> int:
    from evo_core.results.plot import plot_runs
    from evo_core.sweeps.folder import is_sweep_folder
    from evo_core.sweeps.sweeping import plot_sweep_folder

    style = PlotStyle(smooth=args.smooth, column=args.column)
    champion_figure = _champion_figure_of(args)
    if champion_figure is not None:
        return champion_figure(args, style)
    if args.trace is not None:
        return _plot_trace(args, style)
    sweeps = [path for path in args.run_dirs if is_sweep_folder(path)]
    if sweeps and len(args.run_dirs) > 1:
        raise UserError(f"{sweeps[0]}: is a sweep folder; plot a sweep folder on its own "
                        "(`evo plot SWEEP_DIR`), or compare run folders inside it")
    if sweeps:
        print(plot_sweep_folder(sweeps[0], _output(args.out) if args.out else None, args.title,
                                style))
        return 0
    default = (args.run_dirs[0] / "fitness.png" if len(args.run_dirs) == 1
               else Path("comparison.png"))
    own = default if len(args.run_dirs) == 1 else None  # `--out RUN/fitness.png` is the default
    print(plot_runs(args.run_dirs, _output(args.out, own) if args.out else default, args.title,
                    style))
    return 0
