"""The run folder: what a training run leaves behind."""

from evo_core.results.run_folder import RunFolder

__all__ = ["RunFolder"]
