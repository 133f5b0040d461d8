"""The entry point module: registers the JAX chunk evaluator with evo."""

from __future__ import annotations

from evo_core import IChunkEvaluatorClass, hookimpl
from evo_jax.vectorizer import JaxVectorizer


@hookimpl
def evo_chunk_evaluators() -> list[IChunkEvaluatorClass]:
    return [JaxVectorizer]
