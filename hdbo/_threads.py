"""Limit the threads of the BLAS library while experiments run.

hdbo's linear algebra works on matrices of a few hundred to a few thousand rows, where a
multi-threaded BLAS gains little and, on a machine running several experiment workers,
loses a lot: the threads of different workers compete for the same cores. Measured on the
2-core development machine under load, one DIRECT acquisition search of 300 points with a
500-observation GP took 0.046 s with OpenBLAS's default threads and 0.021 s with one thread
(``benchmarks/bench_direct.py``).

:func:`blas_threads` sets the usual environment variables for the duration of a block (worker
processes started with ``spawn`` read them when they load NumPy; variables the user set are
left alone) and, when the optional ``threadpoolctl`` package is installed, also limits the
BLAS already loaded in this process.
"""

from __future__ import annotations

import contextlib
import os
from typing import Iterator

__all__ = ["blas_threads"]

_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@contextlib.contextmanager
def blas_threads(n: int | None) -> Iterator[None]:
    """Run a block with at most ``n`` BLAS threads (``None``: change nothing).

    Parameters
    ----------
    n : int or None
        Thread limit, >= 1.

    Examples
    --------
    >>> with blas_threads(1):
    ...     pass
    """
    if n is None:
        yield
        return
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"blas_threads must be an int >= 1 or None, got {n!r}")
    added = [v for v in _VARIABLES if v not in os.environ]
    for v in added:
        os.environ[v] = str(n)
    try:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            limiter: contextlib.AbstractContextManager[object] = contextlib.nullcontext()
        else:
            limiter = threadpool_limits(limits=n, user_api="blas")
        with limiter:
            yield
    finally:
        for v in added:
            os.environ.pop(v, None)
