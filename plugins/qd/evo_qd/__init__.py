"""Quality-diversity optimizers for evo on pyribs: MAP-Elites and CMA-ME over the behaviour
descriptor, with the archive's heatmap in the run folder (archive.png)."""

from evo_qd.config import CMAMEConfig, MapElitesConfig
from evo_qd.optimizer import CMAME, MapElites

__all__ = ["MapElites", "MapElitesConfig", "CMAME", "CMAMEConfig"]
