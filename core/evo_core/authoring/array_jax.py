"""The JAX form of a template (`IJaxTemplate`), declared or derived from an `IArrayBrain`.

`vectorize = "jax"` (evo-jax) compiles a chunk's episodes into one function and maps the brain
over rows with `jax.vmap`. A template that declares `IJaxTemplate` gives its functions itself;
an `IArrayBrain` gets them here, generically: its `params`, `initial_state` and `forward`
called with `jax.numpy` on one row (a leading axis of 1, which `vmap` maps over), between the
JAX forms of its encoder and decoder. Its arithmetic is the numpy brain's, traced; results
agree with `make()` to float32's or float64's rounding.

A brain that draws noise has no JAX form yet: its numbers come from numpy Generators per
episode, which a compiled function does not repeat. jax is imported inside the functions.
"""

from __future__ import annotations

from typing import Any

from evo_core.authoring.derived_forms import DerivedForm
from evo_core.authoring.rows_spaces import decode_rows, encode_rows
from evo_core.contract.protocols import IArrayBrain, IBrainTemplate, IJaxTemplate

__all__ = ["ArrayBrainJax", "jax_form"]


class ArrayBrainJax(DerivedForm):
    """The `IJaxTemplate` of an `IArrayBrain`."""

    form = "JAX"
    cannot_repeat = "have no JAX form"
    instead = "make it draw none"

    def jax_unsupported(self) -> str | None:
        return self.unsupported()

    def jax_params(self, genome: Any) -> Any:
        import jax.numpy as jnp

        return self.template.params(jnp, genome.reshape(1, -1))

    def jax_init_state(self, params: Any) -> Any:
        import jax.numpy as jnp

        return self.template.initial_state(jnp, params)

    def jax_step(self, params: Any, state: Any, observation: Any) -> tuple[Any, Any]:
        import jax.numpy as jnp

        template = self.template
        inputs = encode_rows(jnp, template.encoder, jnp.asarray(observation)[None])
        state, outputs = template.forward(jnp, params, state, inputs, None)
        return state, decode_rows(jnp, template.decoder, outputs)[0]


def jax_form(template: IBrainTemplate) -> IJaxTemplate | None:
    """The template's JAX form: its own when it declares one, else derived from its array
    functions, else None (it has none)."""
    if isinstance(template, IJaxTemplate):
        return template
    if isinstance(template, IArrayBrain):
        return ArrayBrainJax(template)
    return None
