"""Optimizers: ask/tell strategies over float64 genomes, registered through the plugin hooks."""

from evo_core.optimizers.base import IOptimizer

__all__ = ["IOptimizer"]
