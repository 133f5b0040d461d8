"""The `[optimizer]` tables of MAP-Elites and CMA-ME.

Both keep a grid archive over the behaviour descriptor: `ranges` gives the bounds of each
descriptor value and `bins` the cells along it. Descriptors outside the bounds count in the
nearest edge cell (pyribs clips them), so generous bounds lose nothing but resolution.

Bounds whose cells the archive cannot tell apart are refused, since they would put every elite
into one cell without a word: bounds must be finite and their span times the bins too (pyribs
computes `bins * (descriptor - low)`, so `[-1e308, 1e308]` overflows to one cell); a span must
be at least `MIN_SPAN` (pyribs adds `ARCHIVE_EPSILON` to `bins * (descriptor - low)` before
dividing by the span, so a span of 1e-300 shifts every index past the last cell); and a cell
must be wider than a million-millionth of the bounds' magnitude (`[1e16, 1e16 + 1]` has no
distinct cells in float64).

The step sizes and the mean are bounded by `evo_core.sampling_problem` as the core's optimizers'
are: the first generation's genes and one variation of them stay within float64's gene limit.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

import numpy as np
from pydantic import Field, model_validator

from evo_core import DEVIATIONS, OptimizerConfig, Resource, sampling_problem

__all__ = ["ARCHIVE_EPSILON", "MAX_CELLS", "MIN_SPAN", "CMAMEConfig", "MapElitesConfig",
           "QDConfig"]

#: pyribs numbers an archive's cells with int32; how many a machine can hold is counted in
#: bytes, when the optimizer is built (evo_qd.optimizer.check_archive_fits)
MAX_CELLS = 2**31 - 1
#: pyribs' GridArchive default `epsilon`, added to every index computation
ARCHIVE_EPSILON = 1e-6
#: the narrowest span of a descriptor value: pyribs' epsilon moves an index by at most 1 % of a
#: cell (epsilon / span cells)
MIN_SPAN = 100 * ARCHIVE_EPSILON
#: a cell narrower than this fraction of its bounds' magnitude is below float64's resolution
#: (2.2e-16) with room for the arithmetic of an index
MIN_RELATIVE_WIDTH = 1e-12


def range_problem(low: float, high: float, bins: int) -> str | None:
    """Why the archive cannot bin `[low, high]` into `bins` cells, or None."""
    shown = f"[{low:g}, {high:g}]"
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{shown} is not finite; give finite bounds"
    if not low < high:
        return f"{shown} is empty; each pair is [low, high] with low < high"
    span = high - low
    if not math.isfinite(span * bins):
        return (f"{shown} x {bins} bins overflows float64, so every elite would share one "
                "cell; give the descriptor's real bounds")
    if span < MIN_SPAN:
        return (f"{shown} spans {span:g}, less than {MIN_SPAN:g}: pyribs adds "
                f"{ARCHIVE_EPSILON:g} to each index computation, which moves every elite by "
                f"{ARCHIVE_EPSILON / span:.3g} cells; scale the descriptor or widen the range")
    if span / bins < MIN_RELATIVE_WIDTH * max(abs(low), abs(high)):
        return (f"{shown} in {bins} bins has cells of {span / bins:g}, too narrow for float64 "
                "to tell apart at that magnitude; shift or widen the range, or use fewer bins")
    return None


#: The most cells a received run folder's archive may have before the user gives its bins again:
#: a 300 x 300 grid, whose checkpoint of a 22-gene brain takes about 20 MB every time it is
#: written ([1000, 1000] took 213 MB).
CELLS_RECEIVED = 100_000


def _cells(config: QDConfig) -> int:
    return config.cells


class QDConfig(OptimizerConfig):
    """What both quality-diversity optimizers share: the archive and how the population is
    split between emitters."""

    ranges: list[tuple[float, float]] = Field(
        ..., min_length=1, description="[low, high] of each value of the behaviour descriptor, "
        "one pair per value, e.g. [[0, 200], [0, 200]] for a maze position.")
    bins: Annotated[Annotated[int, Field(ge=1)] | list[Annotated[int, Field(ge=1)]],
                    Resource("archive cells", CELLS_RECEIVED, counted=_cells)] = Field(
        20, description="Archive cells along each descriptor value: one number for all, or one "
        "per entry of ranges.")
    emitters: int = Field(1, ge=1, description="Independent emitters; each proposes "
                          "population_size / emitters genomes per generation.")
    initial_mean: float = Field(0.0, description="Every gene of the point search starts from.")

    @model_validator(mode="after")
    def _archive_fits(self) -> QDConfig:
        if isinstance(self.bins, list) and len(self.bins) != len(self.ranges):
            raise ValueError(f"bins has {len(self.bins)} entries but ranges has "
                             f"{len(self.ranges)}; give one per descriptor value, or one number")
        for (low, high), bins in zip(self.ranges, self.dims):
            problem = range_problem(low, high, bins)
            if problem is not None:
                raise ValueError(f"ranges: {problem}")
        if self.cells > MAX_CELLS:
            raise ValueError(f"bins: the archive would have {self.cells} cells, more than "
                             f"pyribs can number ({MAX_CELLS}, int32); use fewer bins")
        if self.population_size % self.emitters:
            raise ValueError(f"population_size ({self.population_size}) must be a multiple of "
                             f"emitters ({self.emitters})")
        return self

    @property
    def dims(self) -> list[int]:
        """Cells along each descriptor value."""
        if isinstance(self.bins, list):
            return list(self.bins)
        return [self.bins] * len(self.ranges)

    @property
    def cells(self) -> int:
        return math.prod(self.dims)


class MapElitesConfig(QDConfig):
    """MAP-Elites (pyribs): each generation mutates elites drawn from the archive at random;
    a genome enters a cell it is the best of."""

    type: Literal["map-elites"] = "map-elites"
    variation: Literal["iso-line", "gaussian"] = Field(
        "iso-line", description="iso-line: Gaussian noise plus a step along the line to another "
        "elite (Vassiliades and Mouret's Iso+LineDD); gaussian: Gaussian noise only.")
    sigma: float = Field(0.1, gt=0, description="Gaussian variation: the noise's standard "
                         "deviation per gene.")
    iso_sigma: float = Field(0.05, gt=0, description="Iso-line variation: the isotropic noise's "
                             "standard deviation per gene.")
    line_sigma: float = Field(0.2, ge=0, description="Iso-line variation: the standard deviation "
                              "of the step along the line between two elites.")
    initial_sigma: float = Field(0.5, gt=0, description="The first generation (an empty "
                                 "archive): initial_mean plus Gaussian noise of this deviation.")

    @model_validator(mode="after")
    def _genes_fit(self) -> MapElitesConfig:
        # the first generation, initial_mean + initial_sigma z; then an elite x plus either
        # variation: sigma z, or iso_sigma z + line_sigma z' (y - x) toward another elite y
        first = abs(self.initial_mean) + DEVIATIONS * self.initial_sigma
        problem = (
            sampling_problem("initial_sigma", self.initial_sigma, np.float64,
                             center_field="initial_mean", center=self.initial_mean)
            or sampling_problem("sigma", self.sigma, np.float64, center=first)
            or sampling_problem("iso_sigma", self.iso_sigma, np.float64, center=first)
            or sampling_problem("line_sigma", self.line_sigma, np.float64,
                                center=first + DEVIATIONS * self.iso_sigma, spread=2 * first,
                                may_be_zero=True))
        if problem is not None:
            raise ValueError(problem)
        return self


class CMAMEConfig(QDConfig):
    """CMA-ME (pyribs' EvolutionStrategyEmitter): each emitter is a CMA-ES that ranks its
    genomes by how much they improve the archive, and restarts from an elite when it stops."""

    type: Literal["cma-me"] = "cma-me"
    sigma: float = Field(0.5, gt=0, description="Initial step size of each emitter's CMA-ES.")
    ranker: Literal["2imp", "imp", "2rd", "rd", "2obj", "obj"] = Field(
        "2imp", description="How an emitter ranks its genomes: improvement (imp), random "
        "direction in descriptor space (rd) or objective (obj); the 2-prefixed variants put "
        "genomes that fill a new cell first (CMA-ME's original rankers).")
    selection_rule: Literal["filter", "mu"] = Field(
        "filter", description="filter: only genomes that entered the archive become parents; "
        "mu: the best half of the ranking.")
    restart_rule: Literal["no_improvement", "basic"] = Field(
        "no_improvement", description="no_improvement: restart an emitter from a random elite "
        "when none of its genomes entered the archive; basic: only on CMA-ES's own criteria.")
    diagonal: bool = Field(False, description="Separable CMA-ES in every emitter (diagonal "
                           "covariance): use it for genomes of thousands of genes.")

    @model_validator(mode="after")
    def _genes_fit(self) -> CMAMEConfig:
        problem = sampling_problem("sigma", self.sigma, np.float64,
                                   center_field="initial_mean", center=self.initial_mean)
        if problem is not None:
            raise ValueError(problem)
        return self
