"""How far from zero an optimizer may put a gene, in the float type it computes in.

A step size or a mean is a number a config gives without bound: `sigma = 1e308` validates as a
float, and CMA-ES then samples genes of ±inf (cma-es-jax, in float32, writes them into the run
folder, which replay and resume then refuse; pycma stops on a bare assertion). So an optimizer's
numbers are bounded where they are read, by the float type its arithmetic uses: every gene it
samples must be finite with room for the arithmetic done on it, and the sum of 2^20 of their
squares (a genome's squared length, a covariance update's sum of outer products, a norm) finite
too: `gene_limit`, the square root of the type's largest number over 2^20.

Samples are Gaussian: a draw beyond `DEVIATIONS` standard deviations has a probability of
1.5e-23, so a mean m and a step size sigma with a per-gene spread s (1 for an identity
covariance) put genes within |m| + DEVIATIONS sigma s. A step size below the type's smallest
normal number has lost its precision (in float32, 1e-50 is 0): it is refused too.
`sampling_problem` says which field breaks the bound and the largest (or smallest) value it may
take; the optimizers' config validators call it, and cma-es-jax's checks of a checkpointed state,
so a config and a state are held to one bound.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import DTypeLike

__all__ = ["DEVIATIONS", "SQUARED_TERMS", "gene_limit", "sampling_problem"]

#: Standard-normal draws are taken to stay within this many deviations (beyond: 1.5e-23).
DEVIATIONS = 10.0
#: Sums of this many squares of genes must stay finite (a genome of a million genes).
SQUARED_TERMS = 2**20


def gene_limit(dtype: DTypeLike) -> float:
    """The largest magnitude of a gene in `dtype`: 2^20 of their squares sum to a finite
    number."""
    return math.sqrt(float(np.finfo(dtype).max) / SQUARED_TERMS)


def sampling_problem(step_field: str, step: float, dtype: DTypeLike, *,
                     center_field: str | None = None, center: float = 0.0,
                     spread: float = 1.0, deviations: float = DEVIATIONS,
                     may_be_zero: bool = False) -> str | None:
    """Why samples `center` + `deviations` x `step` x `spread` (and `center` itself) cannot be
    genes in `dtype`, naming the field at fault and the value it may take at most; or None.

    `center_field` names the field `center` comes from (None: the center is fixed, such as 0);
    `spread` is a sample's standard deviation per unit of step (1 for CMA-ES's identity
    covariance, the square root of a covariance's largest eigenvalue); a step below the
    smallest normal number of `dtype` is refused too, and 0 unless `may_be_zero`."""
    kind = np.dtype(dtype).name
    limit = gene_limit(dtype)
    bound = (f"±{limit:.3g}, the farthest a gene may go in {kind} (the sum of 2^20 of their "
             "squares must stay finite)")
    if center_field is not None and not abs(center) <= limit:
        return (f"{center_field} = {center:g} is beyond {bound}; the largest {center_field} "
                f"allowed is {limit:.3g}")
    largest = (limit - abs(center)) / (deviations * spread)
    if not step <= largest:
        with_center = f" with {center_field} = {center:g}" if center_field is not None else ""
        reach = abs(center) + deviations * step * spread
        out = f" ({deviations:g} standard deviations out)" if deviations != 1 else ""
        return (f"{step_field} = {step:g} puts genes as far as ±{reach:.3g}{out}, beyond "
                f"{bound}; the largest {step_field} allowed{with_center} is {largest:.3g}")
    if step < 0 or (step == 0 and not may_be_zero):
        return f"{step_field} = {step:g} is not a step size, which is positive"
    tiny = float(np.finfo(dtype).tiny)
    if 0 < step < tiny:
        return (f"{step_field} = {step:g} is below {tiny:.3g}, the smallest {kind} number of "
                f"full precision, so its steps are lost to rounding; the smallest {step_field} "
                f"allowed is {tiny:.3g}{' (or 0)' if may_be_zero else ''}")
    return None
