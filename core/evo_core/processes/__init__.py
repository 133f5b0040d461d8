"""Process utilities the handlers and sweeps share: dying with the parent, cleaning temporary
folders after a kill, probing a Dask scheduler, capping BLAS threads."""
