"""Which behaviour the batched modes can record (the recording itself is the engine's:
evaluation/behaviour.py's `RowBehaviour`, one recorder for all rows).

Rows of "sync" have their own environments, so every source works there; the rows of "native"
and "envpool" share one vector environment, which offers no per-row state, so the `state`
source is refused for them.
"""

from __future__ import annotations

from evo_core.config.behaviour import BehaviourConfig
from evo_core.errors import UserError

__all__ = ["check_batched_behaviour"]


def check_batched_behaviour(behaviour: BehaviourConfig | None, vectorize: str) -> None:
    """The one-line error for a behaviour a batched mode cannot record (the experiment puts
    the config file in front of it)."""
    if behaviour is not None and behaviour.source == "state" and vectorize != "sync":
        raise UserError(f"behaviour.source = \"state\" needs each candidate's own "
                        f"environment, which episodes.vectorize = {vectorize!r} does not have; "
                        "use episodes.vectorize = \"sync\" (or \"off\"), or source = "
                        "\"observation\" or \"action\"")
