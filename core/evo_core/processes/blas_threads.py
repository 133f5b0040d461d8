"""One BLAS thread per evaluating process.

Measured on the 2-core machines here: numpy's OpenBLAS keeps a second core busy-spinning in
every process that uses it, which cut a 2-worker pool's speed-up from 1.73x to 1.18x. Brain-sized
matrix products gain nothing from threads, so evaluating processes run with one by default.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["blas_threads", "limit_blas_threads"]


@contextlib.contextmanager
def blas_threads(limit: int | None) -> Iterator[None]:
    """Limit BLAS threads inside the block; `None` leaves them alone."""
    if limit is None:
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=limit, user_api="blas"):
        yield


def limit_blas_threads(limit: int | None) -> None:
    """Limit BLAS threads for the rest of this process (worker processes)."""
    if limit is not None:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=limit, user_api="blas")
