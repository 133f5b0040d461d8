"""The name that selects evo-jax: `episodes.vectorize = "jax"`."""

from __future__ import annotations

from typing import Literal

from evo_core import VectorizerConfig

__all__ = ["JaxVectorizeConfig"]


class JaxVectorizeConfig(VectorizerConfig):
    """Episodes of a chunk compiled with JAX (gymnax and brax environments, CPU or GPU)."""

    type: Literal["jax"] = "jax"
