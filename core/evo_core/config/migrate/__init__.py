"""Predecessor configs (NeuroEvolution-CTRNN JSON, docs/predecessor.md) to evo configs.

Every key is either carried over (renamed where evo's name differs) or reported as dropped with
the reason, so a researcher knows exactly what an old experiment becomes.
"""

from __future__ import annotations

from typing import Any

from evo_core.config.migrate.brains import migrate_brain
from evo_core.config.migrate.chains import frame_of
from evo_core.config.migrate.design_space import is_design_space, migrate_design_space
from evo_core.config.migrate.environments import migrate_environment
from evo_core.config.migrate.episodes import migrate_episodes
from evo_core.config.migrate.novelty import migrate_novelty
from evo_core.config.migrate.optimizers import migrate_optimizer
from evo_core.config.migrate.result import Migration
from evo_core.errors import UserError

__all__ = ["MAX_DEPTH", "Migration", "migrate_config"]

#: deepest nesting of tables and lists a predecessor config may have: its own are at most five
#: levels deep (a design space's list of brain tables with lists inside), and the migration
#: walks them recursively, so a deeper one is refused rather than met with a RecursionError
MAX_DEPTH = 32


def migrate_config(old: dict[str, Any]) -> Migration:
    """`old` as an evo config; a design space (lists of alternatives) as a sweep file's. A
    config nested deeper than `MAX_DEPTH` is a UserError."""
    _check_depth(old)
    if is_design_space(old):
        return migrate_design_space(old, _migrate_one)
    return _migrate_one(old)


def _migrate_one(old: dict[str, Any]) -> Migration:
    result = Migration({})
    config = result.config
    rest = dict(old)
    runner = result.table(rest.pop("episode_runner", {}), "episode_runner")
    config["environment"] = migrate_environment(rest.pop("environment", None), runner, result)
    seed = rest.pop("random_seed", None)
    if isinstance(seed, int) and seed > 0:
        config["seed"] = seed
    else:
        config["seed"] = 0
        result.notes.append(f"random_seed {seed!r} meant an unseeded run; evo runs are always "
                            "seeded: seed = 0 (change it for another run)")
    config["generations"] = _generations(rest.pop("number_generations", None), result)
    config["brain"] = migrate_brain(rest.pop("brain", {}), result,
                                    frame=frame_of(config["environment"]))
    episodes: dict[str, Any] = {}
    config["optimizer"] = migrate_optimizer(rest.pop("optimizer", {}), config, episodes, result)
    migrate_episodes(runner, episodes, result)
    if episodes:
        config["episodes"] = episodes
    config["processing"] = {"type": "sequential"}
    result.notes.append("processing was a command-line flag; set [processing] type = \"mp\" or "
                        "\"dask\" for parallel evaluation")
    migrate_novelty(rest.pop("novelty", None), config, result)
    for key in rest:
        result.dropped.append(f"{key}: not a predecessor setting evo knows")
    return result




def _generations(value: Any, result: Migration) -> Any:
    """`number_generations`; 0 becomes 1 with a note. The predecessor's training loops were
    `range(initial_generation, number_generations)`: with 0 they ran no generation and wrote
    an empty hall of fame. Its one such config (reverse_fixed.json) was read by a script that
    evaluated a hand-built CTRNN instead of training, so there is no outcome to reproduce; the
    nearest run evo has is one generation. Anything else is left for validation to name."""
    if value == 0 and isinstance(value, int) and not isinstance(value, bool):
        result.notes.append("number_generations 0: the predecessor trained no generation with "
                            "it (its loop ran zero times, the hall of fame stayed empty; the "
                            "config set up a hand-built CTRNN for a script); evo runs at least "
                            "one: generations = 1 (raise it to train)")
        return 1
    return value


def _check_depth(old: dict[str, Any]) -> None:
    """Refuse tables and lists nested more than `MAX_DEPTH` deep (walked without recursion)."""
    stack: list[tuple[Any, tuple[str, ...]]] = [(old, ())]
    while stack:
        value, path = stack.pop()
        if len(path) > MAX_DEPTH:
            shown = ".".join(path[:4])
            raise UserError(f"{shown}...: tables and lists nested more than {MAX_DEPTH} deep; a "
                            "predecessor config has at most a few levels, so this is not one")
        if isinstance(value, dict):
            stack.extend((item, (*path, str(key))) for key, item in value.items())
        elif isinstance(value, list):
            stack.extend((item, (*path, f"[{index}]")) for index, item in enumerate(value))
