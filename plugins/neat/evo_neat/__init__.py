"""evo-neat: NEAT (Stanley & Miikkulainen 2002) for evo, as plugins."""

from evo_neat.config import NEATConfig
from evo_neat.genome import GenomeLayout, Tables
from evo_neat.template import NEATTemplate

__all__ = ["GenomeLayout", "NEATConfig", "NEATTemplate", "Tables"]
