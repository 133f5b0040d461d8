"""MAP-Elites and CMA-ME as evo optimizers: a pyribs scheduler (one grid archive, its emitters)
behind evo's ask/tell.

They need the behaviour descriptor of every genome, so they implement `tell_descriptors`, which
the generation loop calls instead of `tell` (a config that names one of them without a
`[behaviour]` table is refused before training). Every random draw comes from the Generator evo
passes: it seeds the archive and each emitter.

pyribs' archive and emitters (CMA-ES state and rankers included) have no array form, so the
checkpointed state is the pickled scheduler, sealed with `evo_core.seal_state` like CMA-ES's
state, and unpickled only when the signature checks: a run folder from someone else cannot make
`evo resume` run code.

An archive is refused before it is made when it could not be held, counted in bytes, not
cells: pyribs allocates its cells up front but the memory is touched only as elites arrive, so
an archive too large would fail only at the first checkpoint (pickling touches every cell),
after a generation's work, with a MemoryError traceback and no checkpoint written (`bins =
[3000, 3000]` under a 4 GB address-space limit). A cell holds (genes + descriptor values +
`CELL_EXTRA`) float64 numbers (the genome, the descriptor, the objective, the threshold, the
occupancy flag and its int32 index), and so does every checkpoint's copy of it: `cell_bytes`.
The estimate is `ARCHIVE_COPIES` copies: the live archive, and at a run's end the checkpoint
read back for archive.png (its array, its bytes and the unpickled archive). Measured: an
archive of 10^6 cells of 106 genes peaked at 3.8 GB of resident memory for an estimate of
3.55 GB. The refusal names the largest `bins` that fit (`largest_bins`).

Every checkpoint writes the whole archive, empty cells too: cells x `cell_bytes` (`bins =
[1000, 1000]` of 22-gene genomes: 213 MB, estimated 216 MB), every `checkpoint_every`
generations.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from evo_core import (
    OptimizerConfig,
    UserError,
    check_signing_secret,
    memory_available,
    memory_shortfall,
    open_state,
    seal_state,
)
from evo_qd.config import CMAMEConfig, MapElitesConfig, QDConfig

if TYPE_CHECKING:
    from ribs.archives import ArchiveBase
    from ribs.emitters import EmitterBase
    from ribs.schedulers import Scheduler

__all__ = ["ARCHIVE_COPIES", "CELL_EXTRA", "CMAME", "MapElites", "QDOptimizer", "archive_bytes",
           "cell_bytes", "check_archive_fits", "largest_bins", "load_scheduler"]

FloatArray = NDArray[np.float64]

#: What QD signatures vouch for (a signature made for anything else does not verify).
_SIGNED_AS = "evo qd scheduler state v1"
#: copies of the archive held at once at worst (see the module's docstring)
ARCHIVE_COPIES = 4
#: the archive's numbers (pyribs' solutions, objectives, measures, thresholds)
_DTYPE = np.dtype(np.float64)
#: numbers per cell besides the genome and the descriptor: the objective, the threshold, and
#: one for the occupancy flag (a bool) and the cell's int32 index
CELL_EXTRA = 3


def cell_bytes(genome_size: int, descriptor_size: int) -> int:
    """Bytes of one cell, in the archive and in every checkpoint."""
    return _DTYPE.itemsize * (genome_size + descriptor_size + CELL_EXTRA)


def archive_bytes(config: QDConfig, genome_size: int) -> int:
    """About how many bytes the archive and its checkpoints need at once."""
    return ARCHIVE_COPIES * config.cells * cell_bytes(genome_size, len(config.ranges))


def largest_bins(config: QDConfig, genome_size: int, available: int) -> list[int] | int | None:
    """The largest `bins` of the config's form (one number, or one per descriptor value, in
    the same proportions) whose archive fits in `available` bytes; None if one cell does
    not."""
    cells = available // (ARCHIVE_COPIES * cell_bytes(genome_size, len(config.ranges)))
    if cells < 1:
        return None
    dims = config.dims
    shrink = (cells / config.cells) ** (1 / len(dims))
    fitting = [max(1, math.floor(bins * shrink)) for bins in dims]
    while math.prod(fitting) > cells:  # rounding: the largest side gives way
        widest = fitting.index(max(fitting))
        fitting[widest] -= 1
    return fitting if isinstance(config.bins, list) else min(fitting)


def check_archive_fits(config: QDConfig, genome_size: int, available: int | None = None) -> None:
    """A UserError with the estimate and the largest bins that fit when the archive would not
    fit in what this process may allocate (`available`: that many bytes instead)."""
    shortfall = memory_shortfall(archive_bytes(config, genome_size),
                                 f"for {config.cells} cells of {genome_size}-gene genomes",
                                 available)
    if shortfall is None:
        return
    room = memory_available() if available is None else available
    assert room is not None  # a shortfall is measured against a known amount
    largest = largest_bins(config, genome_size, room)
    fix = ("even one cell does not fit; use a smaller brain" if largest is None else
           f"the most that fits is bins = {largest} (or use a smaller brain)")
    raise UserError(f"optimizer.bins: the {config.type} archive {shortfall}; {fix}")


class QDOptimizer:
    """The scheduler's ask/tell with evo's shapes and checks; subclasses make the emitters."""

    config_model: ClassVar[type[OptimizerConfig]] = QDConfig

    def __init__(self, config: QDConfig, genome_size: int, rng: np.random.Generator) -> None:
        check_archive_fits(config, genome_size)
        # pyribs imports numba and pandas: once per run, not once per `evo` command
        from ribs.archives import GridArchive
        from ribs.schedulers import Scheduler

        self.config = config
        self.genome_size = genome_size
        self.descriptor_size = len(config.ranges)
        archive = GridArchive(solution_dim=genome_size, dims=config.dims,
                              ranges=[(low, high) for low, high in config.ranges],
                              seed=_seed(rng), dtype=_DTYPE)
        batch = config.population_size // config.emitters
        emitters = [self._emitter(archive, batch, rng) for _ in range(config.emitters)]
        self.scheduler: Scheduler = Scheduler(archive, emitters)
        self._asked = 0
        check_signing_secret()  # an unusable secret is reported now, not at the first checkpoint

    def _emitter(self, archive: ArchiveBase, batch: int, rng: np.random.Generator
                 ) -> EmitterBase:
        raise NotImplementedError

    @property
    def archive(self) -> ArchiveBase:
        """The grid archive of elites."""
        return self.scheduler.archive

    def check_descriptor_size(self, size: int) -> None:
        """Refuse (ValueError) descriptors of another length than `ranges` has pairs."""
        if size != self.descriptor_size:
            raise ValueError(
                f"optimizer.ranges has {self.descriptor_size} pair(s), one per descriptor value, "
                f"but the [behaviour] table gives descriptors of {size} values; give "
                "optimizer.ranges one [low, high] per value (or change the [behaviour] table)")

    def ask(self) -> FloatArray:
        genomes = np.ascontiguousarray(self.scheduler.ask(), dtype=np.float64)
        self._asked = len(genomes)
        return genomes

    def tell(self, fitnesses: FloatArray) -> None:
        """Never called by evo (it calls `tell_descriptors`); a descriptor-free call is a bug."""
        raise RuntimeError(f"{self.config.type} needs behaviour descriptors: call "
                           "tell_descriptors(fitnesses, descriptors)")

    def tell_descriptors(self, fitnesses: FloatArray, descriptors: FloatArray) -> None:
        if not self._asked:
            raise RuntimeError("tell_descriptors() without ask()")
        fitness = np.asarray(fitnesses, dtype=np.float64).reshape(-1)
        measures = np.asarray(descriptors, dtype=np.float64)
        if measures.ndim != 2 or measures.shape[1] != self.descriptor_size:
            size = measures.shape[1] if measures.ndim == 2 else measures.size
            raise UserError(
                f"optimizer.ranges has {self.descriptor_size} pair(s), one per descriptor value, "
                f"but the behaviour descriptor has {size} values; give optimizer.ranges one "
                "[low, high] per value (or change the [behaviour] table)")
        if len(fitness) != self._asked or len(measures) != self._asked:
            raise ValueError(f"told {len(fitness)} fitnesses and {len(measures)} descriptors "
                             f"for {self._asked} asked genomes")
        # pyribs refuses NaN; evo turns a NaN episode into a finite penalty, but a descriptor
        # can still hold one (a NaN observation recorded before the episode ended)
        self.scheduler.tell(fitness, np.nan_to_num(measures, nan=0.0, posinf=0.0, neginf=0.0))
        self._asked = 0

    def state(self) -> dict[str, Any]:
        return seal_state(self.scheduler, _SIGNED_AS, "scheduler")

    def load_state(self, state: dict[str, Any]) -> None:
        """Refuses (UserError) state without this user's signature, before unpickling it."""
        scheduler = load_scheduler(state)
        if scheduler.archive.solution_dim != self.genome_size:
            raise UserError(f"the {self.config.type} archive holds genomes of "
                            f"{scheduler.archive.solution_dim} genes, not {self.genome_size}")
        self.scheduler = scheduler
        self._asked = 0


def load_scheduler(state: dict[str, Any]) -> Scheduler:
    """The pickled scheduler of `state`, if this user's evo signed it."""
    scheduler: Scheduler = open_state(state, _SIGNED_AS,
                                      "the quality-diversity optimizer's state", "scheduler")
    return scheduler


class MapElites(QDOptimizer):
    """MAP-Elites with iso-line (or Gaussian) variation of random elites."""

    config_model: ClassVar[type[OptimizerConfig]] = MapElitesConfig

    def __init__(self, config: MapElitesConfig, genome_size: int, rng: np.random.Generator
                 ) -> None:
        self.map_elites = config
        super().__init__(config, genome_size, rng)

    def _emitter(self, archive: ArchiveBase, batch: int, rng: np.random.Generator
                 ) -> EmitterBase:
        from ribs.emitters import GaussianEmitter, IsoLineEmitter

        config = self.map_elites
        # what an emitter returns while the archive is empty (pyribs' own start would be
        # x0 plus the variation's small noise: a first generation of near-copies)
        initial = rng.normal(config.initial_mean, config.initial_sigma,
                             size=(batch, self.genome_size))
        if config.variation == "gaussian":
            return GaussianEmitter(archive, sigma=config.sigma, initial_solutions=initial,
                                   batch_size=batch, seed=_seed(rng))
        return IsoLineEmitter(archive, iso_sigma=config.iso_sigma, line_sigma=config.line_sigma,
                              initial_solutions=initial, batch_size=batch, seed=_seed(rng))


class CMAME(QDOptimizer):
    """CMA-ME: CMA-ES emitters that climb toward archive improvement."""

    config_model: ClassVar[type[OptimizerConfig]] = CMAMEConfig

    def __init__(self, config: CMAMEConfig, genome_size: int, rng: np.random.Generator) -> None:
        self.cma_me = config
        super().__init__(config, genome_size, rng)

    def _emitter(self, archive: ArchiveBase, batch: int, rng: np.random.Generator
                 ) -> EmitterBase:
        from ribs.emitters import EvolutionStrategyEmitter

        config = self.cma_me
        return EvolutionStrategyEmitter(
            archive, x0=np.full(archive.solution_dim, config.initial_mean), sigma0=config.sigma,
            ranker=config.ranker, selection_rule=config.selection_rule,
            restart_rule=config.restart_rule,
            es="sep_cma_es" if config.diagonal else "cma_es", batch_size=batch,
            seed=_seed(rng))


def _seed(rng: np.random.Generator) -> int:
    """A seed for one pyribs component, drawn from evo's stream."""
    return int(rng.integers(2**63 - 1))
