"""The predecessor's `episode_runner` section."""

from __future__ import annotations

from typing import Any

from evo_core.config.migrate.result import Migration

__all__ = ["migrate_episodes"]

def migrate_episodes(old: dict[str, Any], episodes: dict[str, Any], result: Migration) -> None:
    old = dict(old)
    if "number_fitness_runs" in old:
        episodes["runs"] = old.pop("number_fitness_runs")
    limit = old.pop("max_steps_per_run", 0)
    if limit and limit > 0:
        episodes["max_steps"] = limit
        result.notes.append(f"episodes.max_steps = {limit}: the predecessor ran {limit + 1} "
                            "steps (an off-by-one); evo runs exactly max_steps")
    if "max_steps_penalty" in old:
        episodes["max_steps_penalty"] = float(old.pop("max_steps_penalty"))
    old.pop("reuse_env", None)  # evo always reuses one environment per runner
    for key in old:
        result.dropped.append(f"episode_runner.{key}: no evo equivalent")
