"""What `evo plot RUN --maze` draws, read from a run folder: the map of an environment that
declares `IPlanarMap` (walls, start, goal), the champion's path (one replayed episode), and the
final positions of the run's novelty archive.

- **The map** comes from the environment the run's config makes (its wrappers too), the
  outermost object of the wrapper chain that declares `IPlanarMap` (as `IBehaviourState` is
  found); an environment that declares none is refused in one line naming it and the protocol.
- **The path** is the champion replayed for one episode by `evo replay`'s machinery
  (`running/replay.py`'s `replay_states`: its runner, the one episode loop of training), the
  behaviour state kept after the reset and after every step (`StateRecorder`): steps + 1
  positions, the first the start. The seed is `evo replay`'s default.
- **The archive** is novelty search's (checkpoint.npz's `novelty.archive`), drawn only where its
  descriptors are final positions: a `[novelty]` table over `[behaviour] source = "state"`,
  `interval = "final"`, whose descriptors are the behaviour state after an episode's last step,
  the map's (x, y). Otherwise (a run without novelty, another descriptor, no checkpoint yet)
  the figure is the map and the path, and `no_archive` says in one line why no archive is
  drawn: the path is worth drawing for any run on a map (fitness-only search's trap).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.config.behaviour import BehaviourConfig
from evo_core.config.schema import ExperimentConfig
from evo_core.contract.protocols import IPlanarMap
from evo_core.environments import make_environment, wrapper_chain
from evo_core.errors import UserError
from evo_core.results.checkpoint import read_run_checkpoint
from evo_core.results.maze_plot import MapView, PlanarMapArrays
from evo_core.results.run_folder import RunFolder
from evo_core.running.replay import Champion, replay_states
from evo_core.running.seeding import REPLAY_SEED

__all__ = ["champion_path", "final_positions", "final_states", "find_planar_map", "map_view",
           "planar_map"]

FloatArray = NDArray[np.float64]


def planar_map(config: ExperimentConfig) -> PlanarMapArrays:
    """The map of the run's environment, or the one-line refusal of one that is no
    `IPlanarMap`."""
    found = find_planar_map(config)
    if found is None:
        raise UserError(f"--maze draws an environment that is a 2-D map; "
                        f"{config.environment.id!r} is not one (it declares no "
                        "evo_core.IPlanarMap: walls(), start_position(), goal_position(), "
                        "y_points_down() and its (x, y) as behaviour_state())")
    return found


def find_planar_map(config: ExperimentConfig) -> PlanarMapArrays | None:
    """The map of the run's environment, or None when it is no `IPlanarMap`. The arrays are
    the environment's code's (installed, not the folder's), but one that breaks the protocol
    is said in one line rather than as matplotlib's traceback."""
    env_id = config.environment.id
    env = make_environment(config.environment)
    try:
        found = next((layer for layer in wrapper_chain(env) if isinstance(layer, IPlanarMap)),
                     None)
        if found is None:
            return None
        walls = _checked(found.walls(), (-1, 4), env_id, "walls()", "(n, 4) segments")
        start = _checked(found.start_position(), (2,), env_id, "start_position()", "(x, y)")
        goal = _checked(found.goal_position(), (2,), env_id, "goal_position()", "(x, y)")
        y_down = found.y_points_down() is True
    finally:
        env.close()
    return PlanarMapArrays(walls, start, goal, y_down)


def final_states(behaviour: BehaviourConfig | None) -> bool:
    """Are the descriptors the environment's behaviour state after an episode's last step
    (`[behaviour] source = "state"`, `interval = "final"`): on an `IPlanarMap`, where the
    episode ended, the map's (x, y)?"""
    return behaviour is not None and behaviour.source == "state" and \
        behaviour.interval == "final"


def _checked(value: Any, shape: tuple[int, ...], env_id: str, method: str, meant: str
             ) -> FloatArray:
    array = np.asarray(value)
    fits = array.ndim == len(shape) and all(want in (-1, got)
                                            for want, got in zip(shape, array.shape))
    if not fits or array.dtype.kind not in "iuf" or not np.isfinite(array).all():
        raise UserError(f"{env_id!r}: its IPlanarMap.{method} gave {array.dtype} of shape "
                        f"{array.shape}, not finite {meant}; the environment breaks the "
                        "protocol")
    return np.array(array, dtype=np.float64)


def champion_path(champion: Champion, seed: int = REPLAY_SEED) -> FloatArray:
    """The champion's positions over one replayed episode from `seed` (steps + 1, 2): the
    behaviour state after the reset, then after each step."""
    path = replay_states(champion, 1, seed)[0]
    if path.shape[1] != 2:
        raise UserError(f"--maze: {champion.config.environment.id!r} gives a behaviour state "
                        f"of {path.shape[1]} values, not the (x, y) of an IPlanarMap; the "
                        "environment breaks the protocol")
    return path


def final_positions(folder: RunFolder, config: ExperimentConfig
                    ) -> tuple[FloatArray | None, str | None]:
    """The archive's final positions (n, 2), or None and why none are drawn (the module's
    docstring). The checkpoint is read as a resume reads it (`read_run_checkpoint`: bounded,
    its run and digest checked); an archive that is not finite (x, y) rows is one line naming
    it."""
    if config.novelty is None:
        return None, "no archive drawn: the run has no [novelty] table"
    if not final_states(config.behaviour):
        return None, ("no archive drawn: its descriptors are not final positions (that needs "
                      "[behaviour] source = \"state\", interval = \"final\")")
    checkpoint = read_run_checkpoint(folder, config.provenance)
    if checkpoint is None:
        return None, "no archive drawn: the run has no checkpoint.npz yet"
    file = folder.checkpoint_file
    archive = checkpoint.novelty.get("archive")
    if archive is None:
        return np.zeros((0, 2)), None
    if not (archive.ndim == 2 and archive.shape[1] == 2 and archive.dtype.kind == "f"
            and np.isfinite(archive).all()):
        raise UserError(f"{file}: novelty.archive ({archive.dtype}, shape {archive.shape}) is "
                        "not finite (x, y) rows of the final positions; the run folder is "
                        "damaged")
    return np.array(archive, dtype=np.float64), None


def map_view(folder: RunFolder, champion: Champion) -> MapView:
    """The map first (a run on no map is refused before anything is replayed), then the
    archive (a damaged checkpoint too), then the path."""
    config = champion.config
    arrays = planar_map(config)
    archive, no_archive = final_positions(folder, config)
    return MapView(config.environment.id, arrays, champion_path(champion), archive,
                   no_archive)
