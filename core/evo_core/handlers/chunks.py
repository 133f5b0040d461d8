"""Evaluating a chunk of candidates: the one piece of work every handler ships.

A task carries a chunk (indices, genomes, seeds), not one genome: per-task overhead is paid
once per chunk. Whatever a brain or the environment raises is turned into a `CandidateFailure`
naming the candidate and the culprit, with the traceback as text, so it crosses process
boundaries intact. That includes `SystemExit` (a plugin calling `sys.exit()`) and a
KeyboardInterrupt the code raised itself: only an interrupt of the process passes through.
A chunk carries the generation's `EvaluationContext` too (an empty one for a plain
`IHandler.evaluate`), handed to the evaluator before its candidates.
"""

from __future__ import annotations

import itertools
import traceback
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from evo_core.contract.observation_statistics import EvaluationContext
from evo_core.contract.protocols import (
    EvaluationResult,
    IBatchEvaluator,
    IContextEvaluator,
    IEvaluator,
)
from evo_core.errors import (
    BatchRowFailed,
    CandidateFailure,
    EnvironmentRaised,
    UserError,
    describe,
)
from evo_core.interrupts import is_interrupt

__all__ = ["Chunk", "split", "evaluate_chunk", "hand_context"]


@dataclass(frozen=True)
class Chunk:
    indices: NDArray[np.int64]
    genomes: NDArray[np.float64]
    seeds: NDArray[np.int64]
    #: the generation's context, handed to the evaluator first (a plain `evaluate`'s is empty)
    context: EvaluationContext = field(default_factory=EvaluationContext)


def split(genomes: NDArray[np.float64], seeds: NDArray[np.int64], chunks: int,
          context: EvaluationContext) -> list[Chunk]:
    """At most `chunks` contiguous chunks, as equal as possible; genomes stay C-contiguous."""
    count = len(genomes)
    bounds = np.linspace(0, count, min(chunks, count) + 1).round().astype(np.int64)
    return [Chunk(np.arange(a, b), np.ascontiguousarray(genomes[a:b], dtype=np.float64),
                  np.asarray(seeds[a:b], dtype=np.int64), context)
            for a, b in itertools.pairwise(bounds) if b > a]


def hand_context(runner: IEvaluator, context: EvaluationContext) -> None:
    """The chunk's context to the evaluator (an empty one too: the evaluator forgets the last
    normaliser); an evaluator that cannot take a normaliser is the user's to change (the
    vectorizer's), said in one line."""
    if isinstance(runner, IContextEvaluator):
        runner.use_context(context)
    elif context.normalizer is not None:
        raise UserError(f"episodes.observation_normalization = \"running\" needs an evaluator "
                        f"that takes the normaliser (IContextEvaluator), and "
                        f"{type(runner).__name__} does not; use another episodes.vectorize or "
                        "observation_normalization = \"off\"")


def evaluate_chunk(runner: IEvaluator, chunk: Chunk) -> list[EvaluationResult]:
    """Every candidate of `chunk`: one batch for an `IBatchEvaluator`, else one at a time."""
    hand_context(runner, chunk.context)
    if isinstance(runner, IBatchEvaluator):
        return _evaluate_batch(runner, chunk)
    results = []
    for index, genome, seed in zip(chunk.indices, chunk.genomes, chunk.seeds):
        try:
            results.append(runner.evaluate(genome, int(seed)))
        except BaseException as exc:  # the plugin's error, reported with its genome
            if is_interrupt(exc):
                raise
            raise _failure(int(index), exc) from None
    return results


def _evaluate_batch(runner: IBatchEvaluator, chunk: Chunk) -> list[EvaluationResult]:
    """A batch fails as a whole; the environment's failures name their row's candidate, the
    batched brain's name the chunk's first (the batch cannot tell which row broke)."""
    try:
        return runner.evaluate_many(chunk.genomes, chunk.seeds)
    except BaseException as exc:  # as in evaluate_chunk
        if is_interrupt(exc):
            raise
        if isinstance(exc, BatchRowFailed) and isinstance(exc.__cause__, BaseException):
            raise _failure(int(chunk.indices[exc.row]), exc.__cause__) from None
        raise _failure(int(chunk.indices[0]), exc) from None


def _failure(candidate: int, exc: BaseException) -> CandidateFailure:
    cause = exc.__cause__
    if isinstance(exc, EnvironmentRaised) and cause is not None:
        where = f" in {exc.call}()" if exc.call else ""  # a wrong observation: the call unknown
        return CandidateFailure(candidate, f"{describe(cause)}{where}",
                                _traceback(cause), source="environment")
    return CandidateFailure(candidate, describe(exc), _traceback(exc), source="brain")


def _traceback(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc))
