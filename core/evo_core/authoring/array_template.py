"""An optional base class for a brain written once (`IArrayBrain`): `BrainTemplateBase` whose
`make()` is the lone brain of the array functions.

Subclass it, set `config_model`, and write `genome_size`, `params`, `initial_state` and
`forward` (and `noise_size` and `trace` where the defaults do not fit). The batch and the JAX
form are derived from the same functions by the core, so a subclass that changes `forward`
(another activation, say) changes every form at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.authoring.array_brain import ArrayBrain, array_brain
from evo_core.authoring.template_base import BrainTemplateBase, ConfigT

__all__ = ["ArrayBrainTemplate"]


class ArrayBrainTemplate(BrainTemplateBase[ConfigT]):
    """`BrainTemplateBase` for an `IArrayBrain`: `build` makes the derived lone brain."""

    @property
    def noise_size(self) -> int:
        """No noise unless a subclass draws some."""
        return 0

    def build(self, genome: NDArray[np.float64]) -> ArrayBrain:
        return array_brain(self, genome)

    def params(self, xp: Any, genomes: Any) -> dict[str, Any]:
        raise NotImplementedError(f"{type(self).__name__} must define params(xp, genomes)")

    def initial_state(self, xp: Any, params: dict[str, Any]) -> dict[str, Any]:
        """No state unless a subclass keeps one."""
        return {}

    def forward(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any,
                noise: Any) -> tuple[dict[str, Any], Any]:
        raise NotImplementedError(f"{type(self).__name__} must define forward(xp, params, "
                                  "state, inputs, noise)")

    def trace(self, xp: Any, params: dict[str, Any], state: dict[str, Any], inputs: Any
              ) -> dict[str, Any]:
        """The state itself."""
        return state
