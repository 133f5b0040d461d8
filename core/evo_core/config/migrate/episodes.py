"""The predecessor's `episode_runner` section."""

from __future__ import annotations

from typing import Any

from evo_core.config.migrate.result import Migration, is_number

__all__ = ["migrate_episodes"]

def migrate_episodes(old: dict[str, Any], episodes: dict[str, Any], result: Migration) -> None:
    """The episode_runner table's settings into evo's `[episodes]`; a value of a wrong type is
    carried over as it is, for validation to name."""
    old = dict(old)
    if "number_fitness_runs" in old:
        episodes["runs"] = old.pop("number_fitness_runs")
    limit = old.pop("max_steps_per_run", 0)
    if not is_number(limit):
        episodes["max_steps"] = limit
    elif limit > 0:
        episodes["max_steps"] = limit
        result.notes.append(f"episodes.max_steps = {limit}: the predecessor ran {limit + 1} "
                            "steps (an off-by-one); evo runs exactly max_steps")
    if "max_steps_penalty" in old:
        penalty = old.pop("max_steps_penalty")
        try:
            episodes["max_steps_penalty"] = float(penalty) if is_number(penalty) else penalty
        except OverflowError:  # an integer too large for a float: validation names it
            episodes["max_steps_penalty"] = penalty
    old.pop("reuse_env", None)  # evo always reuses one environment per runner
    for key in old:
        result.dropped.append(f"episode_runner.{key}: no evo equivalent")
