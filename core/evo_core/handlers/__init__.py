"""Processing handlers: where evaluations run (in-process, a process pool, a Dask cluster)."""

from evo_core.handlers.base import IHandler

__all__ = ["IHandler"]
