"""Which behaviour the batched modes can record (the recording itself is the engine's:
evaluation/behaviour.py's `RowBehaviour`, one recorder for all rows).

Rows of "sync" have their own environments, so every source works there; the rows of "native"
and "envpool" share one vector environment, which records the `state` source only if it offers
every row's state (`IVectorBehaviourState`, as the published mazes' does).
"""

from __future__ import annotations

from typing import Any

from evo_core.config.behaviour import BehaviourConfig
from evo_core.contract.protocols import IVectorBehaviourState
from evo_core.errors import UserError

__all__ = ["check_batched_behaviour"]


def check_batched_behaviour(behaviour: BehaviourConfig | None, vectorize: str,
                            vector_env: Any = None) -> None:
    """The one-line error for a behaviour a batched mode cannot record (the experiment puts
    the config file in front of it); `vector_env` is one of the mode's vector environments."""
    if behaviour is None or behaviour.source != "state" or vectorize == "sync" or \
            isinstance(vector_env, IVectorBehaviourState):
        return
    raise UserError(f"behaviour.source = \"state\" needs each candidate's own environment, "
                    f"or a vector environment that offers every row's state "
                    f"(IVectorBehaviourState), which episodes.vectorize = {vectorize!r} does not "
                    "have here; use episodes.vectorize = \"sync\" (or \"off\"), or source = "
                    "\"observation\" or \"action\"")
