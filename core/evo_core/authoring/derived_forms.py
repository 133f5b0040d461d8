"""What the forms derived from an `IArrayBrain` share, JAX's (`array_jax.py`) and ONNX's
(`array_onnx.py`): the template's `make` and `genome_size`, and the refusal of what neither
can repeat (a brain that draws noise: its numbers come from numpy Generators per episode) or
encode (spaces `rows_spaces.py` has no form for), each said in the words of its form.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from evo_core.authoring.rows_spaces import space_support
from evo_core.contract.protocols import IArrayBrain, IBrain

__all__ = ["DerivedForm"]


class DerivedForm:
    """A form of `template` other than numpy's; `make` and `genome_size` are the template's."""

    #: the form's name in refusals ("JAX", "ONNX")
    form: ClassVar[str]
    #: what cannot repeat numpy's draws, and what to do instead, for the noise refusal
    cannot_repeat: ClassVar[str]
    instead: ClassVar[str]

    def __init__(self, template: IArrayBrain) -> None:
        self.template = template

    @property
    def genome_size(self) -> int:
        return self.template.genome_size

    def make(self, genome: NDArray[np.float64]) -> IBrain:
        return self.template.make(genome)

    def unsupported(self) -> str | None:
        """Why the template has no such form, or None."""
        template = self.template
        if template.noise_size:
            return (f"{type(template).__name__} draws {template.noise_size} random numbers per "
                    f"step from numpy Generators, which {self.cannot_repeat}; {self.instead} "
                    "(a CTRNN: brain.parameter_perturbations = 0)")
        return space_support(template.observation_space, template.action_space, self.form)
