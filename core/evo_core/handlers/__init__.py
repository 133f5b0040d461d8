"""Processing handlers: where evaluations run (in-process, a process pool, a Dask cluster)."""
