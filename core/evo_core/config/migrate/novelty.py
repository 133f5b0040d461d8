"""The predecessor's `novelty` section: evo's `[behaviour]` and `[novelty]` tables.

A list of values is a design space (the predecessor sampled one per run); this module reports it
as dropped, leaving the key at evo's default, because sampling is not a migration's business.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from evo_core.config.migrate.result import Migration, short_repr

__all__ = ["migrate_novelty"]

_SOURCES = {"action", "observation", "state"}
_DISTANCES = {"euclid": "euclidean", "NCD": "compression", "equal": "equality"}
#: predecessor key -> [novelty] key, carried over as they are
_NOVELTY_KEYS = {"novelty_nearest_k": "k", "max_recorded_behaviors": "archive_size",
                 "recorded_behaviors_per_generation": "per_generation",
                 "novelty_weight": "novelty_weight"}


def migrate_novelty(old: Any, config: dict[str, Any], result: Migration) -> None:
    """Add `behaviour` and `novelty` to `config` for a section that recorded a behaviour. The
    `fitness_shaping` table the optimizer section may have made moves after them, so the file
    reads in order: what is recorded, novelty, then shaping."""
    shaping = config.pop("fitness_shaping", None)
    try:
        _migrate(old, config, result)
    finally:
        if shaping is not None:
            config["fitness_shaping"] = shaping


def _offers_state(environment: Any) -> bool | None:
    """Whether gymnasium's registry says the environment is MuJoCo or Atari, the two kinds the
    predecessor read a state from; None when the id is not registered here (evo's own ids, ALE's
    before ale-py registers them): then `evo train` decides."""
    name = environment.get("id") if isinstance(environment, dict) else environment
    if not isinstance(name, str):
        return None
    try:
        entry = gym.spec(name).entry_point
    except (gym.error.Error, ValueError):
        return None
    if not isinstance(entry, str):
        return None
    return "mujoco" in entry or "ale_py" in entry


def _migrate(old: Any, config: dict[str, Any], result: Migration) -> None:
    if old is None:
        return
    old = result.table(old, "novelty")
    if not old:
        return
    for key, value in list(old.items()):
        if isinstance(value, list):
            old.pop(key)
            result.dropped.append(f"novelty.{key} {short_repr(value)}: a design space (a list of "
                                  "values to sample from); evo's default is used")
    source = old.pop("behavior_source", None)
    if not isinstance(source, str) or source not in _SOURCES:
        result.dropped.append(f"novelty: behavior_source {short_repr(source)} recorded no "
                              "behaviour in the predecessor, so its novelty search compared "
                              "nothing; not carried over (set [behaviour] source and add "
                              "[novelty] to use it)")
        return
    if source == "state" and _offers_state(config.get("environment")) is False:
        environment = config.get("environment")
        environment = short_repr(environment.get("id") if isinstance(environment, dict)
                                 else environment)
        result.dropped.append(f"novelty: behavior_source 'state' of {environment}: the "
                              "predecessor read a state only from MuJoCo and Atari environments; "
                              "not carried over (set [behaviour] source = \"observation\" and "
                              "add [novelty] to use novelty search)")
        return
    behaviour = _behaviour(source, old, result)
    if behaviour is None:
        return
    config["behaviour"] = behaviour
    config["novelty"] = _novelty(old, result)
    result.notes.append("novelty: the archive holds descriptors (the predecessor re-evaluated "
                        "archived genomes every generation), and shaping uses average ranks; "
                        "see docs/novelty.md")


def _behaviour(source: str, old: dict[str, Any], result: Migration) -> dict[str, Any] | None:
    """The `[behaviour]` table of the predecessor's behavioural settings, or None when they
    recorded nothing (then novelty search is not carried over)."""
    behaviour: dict[str, Any] = {"source": source}
    interval = old.pop("behavioral_interval", 1)
    length = old.pop("behavioral_max_length", None)
    if isinstance(interval, int) and interval < 0:
        behaviour["interval"] = "final"
        return behaviour
    if interval == 0:
        result.notes.append("novelty.behavioral_interval 0 crashed the predecessor (a "
                            "modulo by zero); behaviour.interval = 1 (every step)")
        interval = 1
    behaviour["interval"] = interval
    if not isinstance(length, int) or length < 1:
        result.dropped.append(f"novelty: behavioral_max_length {short_repr(length)} recorded "
                              "nothing in the predecessor; not carried over (set [behaviour] "
                              "max_length and add [novelty] to use it)")
        return None
    behaviour["max_length"] = length
    result.notes.append(f"behaviour: the predecessor meant the means of "
                        f"{short_repr(interval)}-step windows, at most {short_repr(length)}, "
                        "but recorded every step (a bug); evo records what was meant, as "
                        "float64 (no float16 overflow)")
    return behaviour


def _novelty(old: dict[str, Any], result: Migration) -> dict[str, Any]:
    """The `[novelty]` table of what is left of the predecessor's novelty settings."""
    novelty: dict[str, Any] = {}
    distance = old.pop("distance", "euclid")
    if isinstance(distance, str) and distance in _DISTANCES:
        novelty["distance"] = _DISTANCES[distance]
    else:
        result.dropped.append(f"novelty.distance {short_repr(distance)}: the predecessor "
                              "refused it; "
                              "evo's default (euclidean) is used")
    for key, new in _NOVELTY_KEYS.items():
        if key in old:
            novelty[new] = old.pop(key)
    if "per_generation" in novelty:
        novelty["insertion"] = "random"
    for key in old:
        result.dropped.append(f"novelty.{key}: not a predecessor novelty setting evo knows")
    return novelty
