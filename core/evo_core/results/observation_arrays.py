"""The observation normaliser's arrays in the run folder, and their checks as received input.

`observation_normalization = "running"` keeps its statistics in checkpoint.npz (`count`, `mean`,
`m2`: what the next generation's normaliser comes from) and, beside every kept genome in
best.npz and hall_of_fame.npz, the normaliser that genome was evaluated with (`mean`, `std`: one
row per genome in the hall of fame), so that replay and the champion tests give the brain the
observations it was trained on. A run folder can come from anyone: every array is checked
(shape, dtype, finite, and a count, M2 and standard deviations that can be) before use, and a
problem is one phrase naming the field.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from evo_core.contract.observation_statistics import ObservationNormalizer, ObservationStatistics

__all__ = ["normalizer_arrays", "normalizer_problem", "statistics_arrays", "statistics_of",
           "statistics_problem", "NORMALIZER_KEYS"]

#: The names of a kept genome's normaliser arrays, in best.npz and hall_of_fame.npz.
NORMALIZER_KEYS = ("observation_mean", "observation_std")


def statistics_arrays(statistics: ObservationStatistics) -> dict[str, NDArray[Any]]:
    return {"count": np.array(statistics.count, dtype=np.int64), "mean": statistics.mean,
            "m2": statistics.m2}


def statistics_problem(arrays: dict[str, Any], size: int, group: str) -> str | None:
    """What is wrong with statistics of `size` entries stored as `arrays` (None: nothing)."""
    count, mean, m2 = (arrays.get(key) for key in ("count", "mean", "m2"))
    if not (isinstance(count, np.ndarray) and count.shape == () and count.dtype.kind in "iu"
            and int(count) >= 0):
        return f"{group}.count is not a count of observations"
    for name, values in (("mean", mean), ("m2", m2)):
        if not (isinstance(values, np.ndarray) and values.shape == (size,)
                and values.dtype.kind == "f"):
            return (f"{group}.{name} has shape {getattr(values, 'shape', None)}, not the "
                    f"{size} entries of the environment's observation")
        if not np.isfinite(values).all():
            return f"{group}.{name} holds values that are not finite"
    assert isinstance(mean, np.ndarray) and isinstance(m2, np.ndarray)
    if (m2 < 0).any():
        return f"{group}.m2 holds negative sums of squares"
    if int(count) == 0 and (mean.any() or m2.any()):
        return f"{group} counts no observation but holds a mean or m2"
    return None


def statistics_of(arrays: dict[str, Any]) -> ObservationStatistics:
    """The statistics of arrays that `statistics_problem` passed."""
    return ObservationStatistics(int(arrays["count"]), np.array(arrays["mean"], np.float64),
                                 np.array(arrays["m2"], np.float64))


def normalizer_arrays(normalizers: list[ObservationNormalizer]) -> dict[str, NDArray[Any]]:
    """One row per genome of the normalisers it was evaluated with."""
    return {NORMALIZER_KEYS[0]: np.stack([n.mean for n in normalizers]),
            NORMALIZER_KEYS[1]: np.stack([n.std for n in normalizers])}


def normalizer_problem(arrays: dict[str, Any], shape: tuple[int, ...], field: str
                       ) -> str | None:
    """What is wrong with the kept genomes' normalisers, of `shape` each (genomes x entries, or
    the entries of one genome), stored in `arrays` (None: nothing)."""
    mean, std = (arrays.get(key) for key in NORMALIZER_KEYS)
    for name, values in zip(NORMALIZER_KEYS, (mean, std)):
        if not (isinstance(values, np.ndarray) and values.shape == shape
                and values.dtype.kind == "f"):
            return (f"{field}.{name} has shape {getattr(values, 'shape', None)}, not {shape} "
                    "(the entries of the environment's observation for every genome)")
        if not np.isfinite(values).all():
            return f"{field}.{name} holds values that are not finite"
    assert isinstance(std, np.ndarray)
    if (std <= 0).any():
        return f"{field}.{NORMALIZER_KEYS[1]} holds standard deviations that are not positive"
    return None
