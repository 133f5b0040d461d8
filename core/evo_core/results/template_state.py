"""Template state saved with a run: what a seed alone should not be trusted to rebuild.

A template that implements `IStatefulTemplate` (CTRNN: its masks) has its `saved_state()` arrays
stored with every genome and checkpoint, so a replay or a resume rebuilds exactly the trained
brains, even if the way the state is generated changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from numpy.typing import NDArray

from evo_core.contract.protocols import IBrainTemplate, IStatefulTemplate
from evo_core.errors import UserError

__all__ = ["template_state", "restored_template"]


def template_state(template: IBrainTemplate) -> dict[str, NDArray[Any]]:
    """The arrays the template asks to be saved (none if it has no state)."""
    return dict(template.saved_state()) if isinstance(template, IStatefulTemplate) else {}


def restored_template(template: IBrainTemplate, state: dict[str, NDArray[Any]],
                      source: Path) -> IBrainTemplate:
    """`template` with saved `state` (read from `source`) put back, where both exist. State that
    does not fit means config.json, the file or the plugin changed since training."""
    if state and isinstance(template, IStatefulTemplate):
        try:
            return template.restore(state)
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(f"{source}: its saved brain state does not fit the brain of "
                            f"config.json ({type(exc).__name__}: {exc}); was config.json or the "
                            "brain plugin changed since training?") from None
    return template
