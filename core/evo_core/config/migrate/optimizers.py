"""The predecessor's `optimizer` section, with the run-wide settings it also held (hall of fame
size, checkpoint frequency, seeding per generation)."""

from __future__ import annotations

from typing import Any

from evo_core.config.migrate.result import Migration, is_number

__all__ = ["migrate_optimizer"]


def migrate_optimizer(old: Any, config: dict[str, Any], episodes: dict[str, Any],
                      result: Migration) -> dict[str, Any]:
    old = result.table(old, "optimizer")
    kind = old.pop("type", None)
    _run_wide(old, config, episodes, result)
    if kind == "CMA_ES":
        optimizer = {"type": "cma-es", "population_size": old.pop("population_size", None),
                     "sigma": old.pop("sigma", None)}
        mu = old.pop("mu", 0)
        if mu:
            optimizer["mu"] = mu
    elif kind == "MU_ES":
        optimizer = {"type": "mu-lambda", "population_size": old.pop("lambda_", None)}
        for key in ("mu", "mutpb", "initial_gene_range", "tournsize",
                    "strategy_parameter_per_gene"):
            if key in old:
                optimizer[key] = old.pop(key)
        if old.pop("extra_from_hof", 0):
            result.dropped.append("optimizer.extra_from_hof: its parents came from the "
                                  "population, not the hall of fame (a bug); not carried over")
    else:
        result.dropped.append(f"optimizer.type {kind!r}: unknown; set optimizer.type")
        return {"type": "?"}
    for key in old:
        result.dropped.append(f"optimizer.{key}: not an evo optimizer setting")
    return {k: v for k, v in optimizer.items() if v is not None}


def _run_wide(old: dict[str, Any], config: dict[str, Any], episodes: dict[str, Any],
              result: Migration) -> None:
    """The run-wide settings the predecessor kept in its optimizer section, moved to theirs."""
    if "hof_size" in old:
        config["hall_of_fame_size"] = old.pop("hof_size")
    if "checkpoint_frequency" in old:
        frequency = old.pop("checkpoint_frequency")
        # 0 (never) becomes 1 so the run can resume; a wrong type is left to validation
        config["checkpoint_every"] = 1 if is_number(frequency) and frequency <= 0 else frequency
    if old.pop("fix_seed_for_generation", True) is False:
        episodes["seed_per"] = "candidate"
    weight = old.pop("efficiency_weight", 0)
    if isinstance(weight, list):
        result.dropped.append(f"optimizer.efficiency_weight {weight!r}: a design space (a list "
                              "of values to sample from); not carried over")
    elif weight:
        config["fitness_shaping"] = {"efficiency_weight": weight}
