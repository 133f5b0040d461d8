"""Template state saved with a run: what a seed alone should not be trusted to rebuild.

A template may offer `saved_state() -> dict[str, ndarray]` (CTRNN: its masks) and
`restore(state) -> template`. Run folders store the arrays with every genome and checkpoint, so a
replay or a resume rebuilds exactly the trained brains, even if mask generation changes.
"""

from __future__ import annotations

from typing import Any

from numpy.typing import NDArray

from evo_core.protocols import IBrainTemplate

__all__ = ["template_state", "restored_template"]


def template_state(template: Any) -> dict[str, NDArray[Any]]:
    """The arrays the template asks to be saved (none if it has no `saved_state`)."""
    saved = getattr(template, "saved_state", None)
    return dict(saved()) if callable(saved) else {}


def restored_template(template: IBrainTemplate, state: dict[str, NDArray[Any]]
                      ) -> IBrainTemplate:
    """`template` with saved `state` put back, where both exist."""
    restore = getattr(template, "restore", None)
    if state and callable(restore):
        restored: IBrainTemplate = restore(state)
        return restored
    return template
