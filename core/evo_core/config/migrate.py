"""Predecessor configs (NeuroEvolution-CTRNN JSON, docs/predecessor.md) to evo configs.

Every key is either carried over (renamed where evo's name differs) or reported as dropped with
the reason, so a researcher knows exactly what an old experiment becomes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Migration", "migrate_config"]

_BRAIN_TYPES = {"CTRNN": "ctrnn", "FeedForward_NumPy": "ffnn", "FeedForward_PyTorch": "ffnn",
                "LSTM_NumPy": "lstm", "LSTM_PyTorch": "lstm", "LSTMNumPy": "lstm"}
_BRAIN_FIELDS = {
    "ctrnn": {"number_neurons", "delta_t", "neuron_activation", "neuron_activation_inplace",
              "use_bias", "optimize_y0", "optimize_state_boundaries", "clipping_range_min",
              "clipping_range_max", "set_principle_diagonal_elements_of_W_negative",
              "parameter_perturbations", "v_mask", "v_mask_param", "w_mask", "w_mask_param",
              "t_mask", "t_mask_param", "normalize_input", "normalize_input_target"},
    "ffnn": {"hidden_layers", "non_linearity", "use_bias", "normalize_input",
             "normalize_input_target"},
    "lstm": {"lstm_num_layers", "use_bias", "normalize_input", "normalize_input_target"},
}


@dataclass
class Migration:
    config: dict[str, Any]
    dropped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def migrate_config(old: dict[str, Any]) -> Migration:
    result = Migration({})
    config = result.config
    rest = dict(old)
    config["environment"] = rest.pop("environment", None)
    seed = rest.pop("random_seed", None)
    if isinstance(seed, int) and seed > 0:
        config["seed"] = seed
    else:
        config["seed"] = 0
        result.notes.append(f"random_seed {seed!r} meant an unseeded run; evo runs are always "
                            "seeded: seed = 0 (change it for another run)")
    config["generations"] = rest.pop("number_generations", None)
    config["brain"] = _brain(rest.pop("brain", {}), result)
    episodes: dict[str, Any] = {}
    config["optimizer"] = _optimizer(rest.pop("optimizer", {}), config, episodes, result)
    _episodes(rest.pop("episode_runner", {}), episodes, result)
    if episodes:
        config["episodes"] = episodes
    config["processing"] = {"type": "sequential"}
    result.notes.append("processing was a command-line flag; set [processing] type = \"mp\" or "
                        "\"dask\" for parallel evaluation")
    if "novelty" in rest:
        rest.pop("novelty")
        result.dropped.append("novelty: evo has no novelty search yet")
    for key in rest:
        result.dropped.append(f"{key}: not a predecessor setting evo knows")
    return result


def _brain(old: dict[str, Any], result: Migration) -> dict[str, Any]:
    old = dict(old)
    kind = _BRAIN_TYPES.get(str(old.pop("type", "")))
    if kind is None:
        result.dropped.append(f"brain.type {old.get('type')!r}: no evo brain (CNN_CTRNN and "
                              "ConcatenatedBrain_LSTM were not carried over); set brain.type")
        return {"type": "?"}
    brain: dict[str, Any] = {"type": kind}
    for key, value in old.items():
        if key in _BRAIN_FIELDS[kind]:
            if key == "hidden_layers" and value and isinstance(value[0], list):
                value = value[0]
                result.notes.append("brain.hidden_layers was a nested list (design-space "
                                    "format); its first element is used")
            brain[key] = value
        else:
            result.dropped.append(f"brain.{key}: unused by the predecessor's {kind} too")
    if kind == "ffnn":
        brain.setdefault("output_activation", None)
    return {k: v for k, v in brain.items() if v is not None}


def _optimizer(old: dict[str, Any], config: dict[str, Any], episodes: dict[str, Any],
               result: Migration) -> dict[str, Any]:
    old = dict(old)
    kind = old.pop("type", None)
    if "hof_size" in old:
        config["hall_of_fame_size"] = old.pop("hof_size")
    if "checkpoint_frequency" in old:
        frequency = old.pop("checkpoint_frequency")
        config["checkpoint_every"] = frequency if frequency > 0 else 1
    if old.pop("fix_seed_for_generation", True) is False:
        episodes["seed_per"] = "candidate"
    weight = old.pop("efficiency_weight", 0)
    if weight:
        result.dropped.append(f"optimizer.efficiency_weight {weight}: evo ranks by raw fitness")
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


def _episodes(old: dict[str, Any], episodes: dict[str, Any], result: Migration) -> None:
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
