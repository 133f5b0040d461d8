"""Novelty search's archive: descriptors of past generations, and each candidate's novelty.

The archive holds descriptors, not genomes, so nothing is evaluated twice to learn what an old
genome did. A generation's novelty is measured against the archive as it was before the
generation (plus the generation itself, each candidate without itself); only then do the
generation's chosen candidates join it. docs/novelty.md lists what this fixes.

With `[novelty.adaptive_threshold]` the threshold rule's threshold is state too: Lehman and
Stanley's rule moves it after every generation, and the checkpoint keeps it with the archive.
"""

from __future__ import annotations

from typing import Any, TypeGuard

import numpy as np
from numpy.typing import NDArray

from evo_core.config.behaviour import NoveltyConfig
from evo_core.search.distances import (
    compressed_size,
    compression,
    equality,
    euclidean,
    mean_absolute,
)

__all__ = ["NoveltyArchive"]

FloatArray = NDArray[np.float64]

#: A threshold raised again and again stays finite (a checkpoint holds finite numbers only)
_LARGEST = float(np.finfo(np.float64).max)


class NoveltyArchive:
    """The descriptors kept (oldest first) and the rule that adds to them."""

    def __init__(self, config: NoveltyConfig, rng: np.random.Generator) -> None:
        self.config = config
        self.rng = rng
        self.descriptors: FloatArray | None = None
        #: C(x) of each archived descriptor, for the compression distance
        self._sizes = np.zeros(0, dtype=np.int64)
        #: the novelty a candidate must exceed to join (the threshold rule; it moves only with
        #: [novelty.adaptive_threshold]), and the generations in a row that added none
        self.threshold = config.threshold
        self.idle = 0

    @property
    def size(self) -> int:
        return 0 if self.descriptors is None else len(self.descriptors)

    def novelty(self, descriptors: FloatArray) -> FloatArray:
        """Each candidate's mean distance to its k nearest among the archive and the other
        candidates (k shrinks to what there is; 0 when there is nothing to compare with)."""
        descriptors = np.asarray(descriptors, dtype=np.float64)
        count = len(descriptors)
        archive = self._archive_for(descriptors)
        references = np.concatenate([archive, descriptors])
        distances = self._distances(descriptors, references)
        own = len(archive) + np.arange(count)
        distances[np.arange(count), own] = np.inf  # a candidate is not its own neighbour
        k = min(self.config.k, len(references) - 1)
        if k < 1:
            return np.zeros(count, dtype=np.float64)
        nearest = np.sort(np.partition(distances, k - 1, axis=1)[:, :k], axis=1)
        novelty: FloatArray = nearest.mean(axis=1)
        return novelty

    def insert(self, descriptors: FloatArray, novelty: FloatArray) -> None:
        """Add this generation's chosen candidates, then drop the oldest beyond the bound."""
        descriptors = np.asarray(descriptors, dtype=np.float64)
        if self.config.insertion == "random":
            count = min(self.config.per_generation, len(descriptors))
            chosen = self.rng.choice(len(descriptors), size=count, replace=False)
        elif self.config.threshold_of == "nearest":
            chosen = self._beyond_nearest(descriptors)
        else:
            assert self.threshold is not None  # the config model requires it
            chosen = np.flatnonzero(novelty > self.threshold)
        archive = self._archive_for(descriptors)
        added = descriptors[chosen]
        kept = self.config.archive_size
        self.descriptors = np.concatenate([archive, added])[-kept:]
        if self.config.distance == "compression":
            sizes = np.array([compressed_size(d) for d in added], dtype=np.int64)
            self._sizes = np.concatenate([self._sizes, sizes])[-kept:]
        self._adapt(len(chosen))

    def _beyond_nearest(self, descriptors: FloatArray) -> NDArray[np.intp]:
        """The candidates whose distance to the nearest archived descriptor exceeds the
        threshold, taken in population order with the archive growing as they join (so a
        candidate is also measured against those of its generation that joined before it), as
        the release's steady-state run adds one evaluated offspring at a time; into an empty
        archive the first candidate joins."""
        assert self.threshold is not None  # the config model requires it
        archive = self._archive_for(descriptors)
        distances = self._distances(descriptors, np.concatenate([archive, descriptors]))
        nearest = np.min(distances[:, :len(archive)], axis=1, initial=np.inf)
        between = distances[:, len(archive):]
        chosen: list[int] = []
        for candidate in range(len(descriptors)):  # each depends on the ones before it
            distance = nearest[candidate]
            if chosen:
                distance = min(distance, float(np.min(between[candidate, chosen])))
            if distance > self.threshold:
                chosen.append(candidate)
        return np.array(chosen, dtype=np.intp)

    def _adapt(self, added: int) -> None:
        """Lehman and Stanley's rule, after a generation that added `added` candidates: a
        generation that adds none counts towards lowering, one that adds any starts the count
        again; the count reaching lower_after lowers the threshold (to floor at least) and
        starts it again; more than raise_above added raises it. A generation can do only one
        of the two (lowering needs none added, raising at least one), so their order is moot."""
        rule = self.config.adaptive_threshold
        if rule is None:  # a fixed threshold, or the random rule
            return
        assert self.threshold is not None  # the config model requires it
        self.idle = 0 if added else self.idle + 1
        if self.idle >= rule.lower_after:
            self.threshold = max(self.threshold * rule.lower_by, rule.floor)
            self.idle = 0
        if added > rule.raise_above:
            self.threshold = min(self.threshold * rule.raise_by, _LARGEST)

    def state(self) -> dict[str, NDArray[Any]]:
        """For the checkpoint (the random rule's generator is one of the run's streams); the
        adaptive threshold and its count of generations without additions when it adapts."""
        if self.descriptors is None:
            return {}
        state: dict[str, NDArray[Any]] = {"archive": self.descriptors.copy()}
        if self.config.adaptive_threshold is not None:
            state["threshold"] = np.array(self.threshold, dtype=np.float64)
            state["idle"] = np.array(self.idle, dtype=np.int64)
        return state

    def load_state(self, state: dict[str, Any]) -> None:
        """Raises KeyError, TypeError or ValueError on anything `state` did not write."""
        archive = state["archive"]
        if not isinstance(archive, np.ndarray) or archive.dtype != np.float64 or \
                archive.ndim != 2 or len(archive) > self.config.archive_size or \
                not np.isfinite(archive).all():
            raise ValueError("the novelty archive is not a finite float64 matrix of at most "
                             "novelty.archive_size rows")
        self.threshold, self.idle = self._loaded_threshold(state)
        self.descriptors = archive.copy()
        self._sizes = np.zeros(0, dtype=np.int64)
        if self.config.distance == "compression":
            self._sizes = np.array([compressed_size(d) for d in archive], dtype=np.int64)

    def _loaded_threshold(self, state: dict[str, Any]) -> tuple[float | None, int]:
        """The threshold and count that `state` holds. A checkpoint written before the rule
        existed holds neither: the threshold starts again from novelty.threshold."""
        threshold, idle = state.get("threshold"), state.get("idle")
        rule = self.config.adaptive_threshold
        if threshold is None and idle is None:
            return self.config.threshold, 0
        if rule is None:
            raise ValueError("the checkpoint holds an adaptive novelty threshold, but [novelty] "
                             "has no adaptive_threshold table")
        if not _scalar(threshold, np.float64) or not np.isfinite(threshold) or \
                threshold < rule.floor:
            raise ValueError("the novelty threshold is not a finite float64 of at least "
                             "novelty.adaptive_threshold.floor")
        if not _scalar(idle, np.int64) or not 0 <= idle < rule.lower_after:
            raise ValueError("the novelty threshold's count of generations without additions "
                             "is not an int64 from 0 to below novelty.adaptive_threshold."
                             "lower_after")
        return float(threshold), int(idle)

    def _archive_for(self, descriptors: FloatArray) -> FloatArray:
        width = descriptors.shape[1]
        if self.descriptors is None:
            return np.zeros((0, width), dtype=np.float64)
        if self.descriptors.shape[1] != width:
            raise ValueError(f"descriptors of length {width}, but the archive holds length "
                             f"{self.descriptors.shape[1]}")
        return self.descriptors

    def _distances(self, descriptors: FloatArray, references: FloatArray) -> FloatArray:
        distance = self.config.distance
        if distance == "euclidean":
            return euclidean(descriptors, references)
        if distance == "mean-absolute":
            return mean_absolute(descriptors, references)
        if distance == "equality":
            return equality(descriptors, references)
        sizes = np.array([compressed_size(d) for d in descriptors], dtype=np.int64)
        return compression(descriptors, references, sizes, np.concatenate([self._sizes, sizes]))


def _scalar(value: Any, dtype: type[np.generic]) -> TypeGuard[NDArray[Any]]:
    """Whether `value` is one number of `dtype`, as `NoveltyArchive.state` writes it."""
    return isinstance(value, np.ndarray) and value.shape == () and value.dtype == dtype
