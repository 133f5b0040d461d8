"""Evaluating a chunk of candidates: the one piece of work every handler ships.

A task carries a chunk (indices, genomes, seeds), not one genome: per-task overhead is paid
once per chunk. A brain that raises is turned into a `CandidateFailure` naming the candidate,
with the traceback as text, so it crosses process boundaries intact.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from evo_core.contract.protocols import EvaluationResult, IEvaluator
from evo_core.errors import CandidateFailure

__all__ = ["Chunk", "split", "evaluate_chunk"]


@dataclass(frozen=True)
class Chunk:
    indices: NDArray[np.int64]
    genomes: NDArray[np.float64]
    seeds: NDArray[np.int64]


def split(genomes: NDArray[np.float64], seeds: NDArray[np.int64], chunks: int) -> list[Chunk]:
    """At most `chunks` contiguous chunks, as equal as possible; genomes stay C-contiguous."""
    count = len(genomes)
    bounds = np.linspace(0, count, min(chunks, count) + 1).round().astype(np.int64)
    return [Chunk(np.arange(a, b), np.ascontiguousarray(genomes[a:b], dtype=np.float64),
                  np.asarray(seeds[a:b], dtype=np.int64))
            for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def evaluate_chunk(runner: IEvaluator, chunk: Chunk) -> list[EvaluationResult]:
    results = []
    for index, genome, seed in zip(chunk.indices, chunk.genomes, chunk.seeds):
        try:
            results.append(runner.evaluate(genome, int(seed)))
        except Exception as exc:  # noqa: BLE001 - the brain's error, reported with its genome
            raise CandidateFailure(int(index), f"{type(exc).__name__}: {exc}",
                                   traceback.format_exc()) from None
    return results
