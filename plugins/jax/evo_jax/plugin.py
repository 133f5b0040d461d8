"""The entry point module: registers the JAX chunk evaluator and the JAX CMA-ES with evo."""

from __future__ import annotations

from evo_core import IChunkEvaluatorClass, IOptimizerClass, hookimpl
from evo_jax.cma_es import JaxCMAES
from evo_jax.vectorizer import JaxVectorizer


@hookimpl
def evo_chunk_evaluators() -> list[IChunkEvaluatorClass]:
    return [JaxVectorizer]


@hookimpl
def evo_optimizers() -> list[IOptimizerClass]:
    return [JaxCMAES]
