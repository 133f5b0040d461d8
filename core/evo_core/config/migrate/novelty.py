"""The predecessor's `novelty` section: evo's `[behaviour]` and `[novelty]` tables.

A list of values is a design space (the predecessor sampled one per run); this module reports it
as dropped, leaving the key at evo's default, because sampling is not a migration's business.
"""

from __future__ import annotations

from typing import Any

from evo_core.config.migrate.result import Migration

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


def _migrate(old: Any, config: dict[str, Any], result: Migration) -> None:
    if not isinstance(old, dict) or not old:
        return
    old = dict(old)
    for key, value in list(old.items()):
        if isinstance(value, list):
            old.pop(key)
            result.dropped.append(f"novelty.{key} {value!r}: a design space (a list of values "
                                  "to sample from); evo's default is used")
    source = old.pop("behavior_source", None)
    if source not in _SOURCES:
        result.dropped.append(f"novelty: behavior_source {source!r} recorded no behaviour in the "
                              "predecessor, so its novelty search compared nothing; not carried "
                              "over (set [behaviour] source and add [novelty] to use it)")
        return
    behaviour: dict[str, Any] = {"source": source}
    interval = old.pop("behavioral_interval", 1)
    length = old.pop("behavioral_max_length", None)
    if isinstance(interval, int) and interval < 0:
        behaviour["interval"] = "final"
    else:
        if interval == 0:
            result.notes.append("novelty.behavioral_interval 0 crashed the predecessor (a "
                                "modulo by zero); behaviour.interval = 1 (every step)")
            interval = 1
        behaviour["interval"] = interval
        if not isinstance(length, int) or length < 1:
            result.dropped.append(f"novelty: behavioral_max_length {length!r} recorded nothing "
                                  "in the predecessor; not carried over (set [behaviour] "
                                  "max_length and add [novelty] to use it)")
            return
        behaviour["max_length"] = length
        result.notes.append(f"behaviour: the predecessor meant the means of {interval}-step "
                            f"windows, at most {length}, but recorded every step (a bug); evo "
                            f"records what was meant: {length} window means of {interval} "
                            "steps, as float64 (no float16 overflow)")
    novelty: dict[str, Any] = {}
    distance = old.pop("distance", "euclid")
    if distance in _DISTANCES:
        novelty["distance"] = _DISTANCES[distance]
    else:
        result.dropped.append(f"novelty.distance {distance!r}: the predecessor refused it; "
                              "evo's default (euclidean) is used")
    for key, new in _NOVELTY_KEYS.items():
        if key in old:
            novelty[new] = old.pop(key)
    if "per_generation" in novelty:
        novelty["insertion"] = "random"
    for key in old:
        result.dropped.append(f"novelty.{key}: not a predecessor novelty setting evo knows")
    config["behaviour"] = behaviour
    config["novelty"] = novelty
    result.notes.append("novelty: the archive holds descriptors (the predecessor re-evaluated "
                        "archived genomes every generation), and shaping uses average ranks; "
                        "see docs/novelty.md")
