"""Recognising a predecessor (NeuroEvolution-CTRNN) config given where an evo config belongs.

Such a file fails validation with one error per renamed key (`random_seed: unknown key`,
`brain.type: unknown brain type 'CTRNN'`, ...), none of which says what to do. Its top-level
keys give it away; validation then says the one thing that helps: run `evo migrate`.
"""

from __future__ import annotations

from typing import Any

from evo_core.errors import UserError

__all__ = ["PREDECESSOR_KEYS", "refuse_predecessor"]

#: top-level keys only the predecessor's configs have (evo: generations, seed, [episodes])
PREDECESSOR_KEYS = ("number_generations", "random_seed", "episode_runner")


def refuse_predecessor(data: dict[str, Any], source: str) -> None:
    """A UserError telling to `evo migrate` a config that has the predecessor's keys."""
    found = [key for key in PREDECESSOR_KEYS if key in data]
    if not found:
        return
    path = source if source.endswith((".json", ".toml")) else "FILE"
    raise UserError(f"{source}: a NeuroEvolution-CTRNN config (it has {', '.join(found)}), not "
                    f"an evo config; turn it into one with `evo migrate {path}` (see "
                    "docs/migrating.md)")
