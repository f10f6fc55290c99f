"""Keep freed memory in the process during long experiment runs (glibc only).

A GP run allocates and frees the same few large arrays at every step: kernel matrices of
n x n, stacks of per-group distance matrices, candidate batches. With glibc's default
settings, free memory at the top of the heap beyond the trim threshold (twice the largest
block glibc has mapped and freed so far) goes back to the operating system, so the next
allocation of the same size faults its pages in again. In an Add-GP-UCB run of
kandasamy2015's Figure 4 (D = 96, 510 evaluations) that page-fault work was 42.7 s of system
time in a run of 146.8 s, and it grows with the number of observations
(``benchmarks/bench_malloc.out.md``).

:func:`tune_malloc` sets glibc's mmap threshold, trim threshold and top pad (``mallopt``;
32 MB, 256 MB and 64 MB), so blocks up to 32 MB come from the heap and up to 256 MB of free
memory stays at the top of each heap arena for reuse: a process may hold that much more than
it uses. It changes where arrays live, not what is computed (runs were identical bit for bit
with OpenBLAS, ``benchmarks/bench_malloc.py``; a BLAS whose results depend on the alignment of
its arguments could differ in the last bits). The experiment runner calls it in the processes
that compute runs: :func:`hdbo.experiments.run_many` when it runs them itself (one worker) and
its worker processes. It leaves alone the driver of parallel runs, Dask workers (Dask's nanny
sets its own trim threshold on purpose), ``hdbo.minimize`` and the :class:`~hdbo.Optimizer`;
set ``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_`` and ``MALLOC_TOP_PAD_`` in the
environment for the same effect there. Nothing happens except on 64-bit Linux with glibc, when
``HDBO_MALLOC_TUNING=0`` is set, or when the user set any of these three or the mmap count
(``MALLOC_*_`` variables or their ``GLIBC_TUNABLES``).
"""

from __future__ import annotations

import ctypes
import os
import sys

__all__ = ["tune_malloc"]

#: mallopt parameter numbers of glibc's malloc.h.
_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
_M_MMAP_THRESHOLD = -3
#: Blocks smaller than this come from the heap, larger ones get their own mapping.
MMAP_THRESHOLD = 32 << 20  # glibc's largest dynamic value on 64-bit systems
#: Free memory at the top of a heap is kept up to this much (then trimmed).
TRIM_THRESHOLD = 256 << 20
#: Extra memory requested from the system with each heap extension.
TOP_PAD = 64 << 20
# All three are set together: setting any of them turns off glibc's own adjustment of the
# mmap threshold, which then stays where it is (128 kB in a fresh process), so every larger
# array would be a fresh mapping, faulted in page by page (measured: a trim threshold of 64 MB
# and a top pad of 16 MB alone tripled the system time of the Add-GP-UCB run above). The mmap
# threshold goes first: it is the only one glibc may refuse (above 32 MB on older versions),
# and then nothing has been changed.

#: The user's own settings of the same parameters, which win.
_USER_VARIABLES = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_MMAP_MAX_")
_USER_TUNABLES = ("glibc.malloc.trim_threshold", "glibc.malloc.top_pad", "glibc.malloc.mmap_threshold",
                  "glibc.malloc.mmap_max")
_done = False


def tune_malloc() -> bool:
    """Set glibc's malloc mmap threshold, trim threshold and top pad for this process (once).

    Returns
    -------
    bool
        True when the settings are in effect (applied now or by an earlier call), False when
        they are not: not 64-bit Linux with glibc, ``HDBO_MALLOC_TUNING=0``, the user's own
        malloc settings (see the module docstring), or glibc refused the mmap threshold.

    Examples
    --------
    The settings, in MB (calling the function would change the running process for good):

    >>> [v // 2**20 for v in (MMAP_THRESHOLD, TRIM_THRESHOLD, TOP_PAD)]
    [32, 256, 64]
    """
    global _done
    if _done:
        return True
    if os.environ.get("HDBO_MALLOC_TUNING", "1").strip().lower() in ("0", "off", "false", "no"):
        return False
    if not sys.platform.startswith("linux") or ctypes.sizeof(ctypes.c_void_p) != 8:
        return False
    tunables = os.environ.get("GLIBC_TUNABLES", "")
    if any(v in os.environ for v in _USER_VARIABLES) or any(t in tunables for t in _USER_TUNABLES):
        return False
    try:
        libc = ctypes.CDLL(None)
        gnu_get_libc_version = libc.gnu_get_libc_version  # glibc only (not musl)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    del gnu_get_libc_version
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # mallopt returns 1 on success and 0 on error.
    for param, value in ((_M_MMAP_THRESHOLD, MMAP_THRESHOLD), (_M_TRIM_THRESHOLD, TRIM_THRESHOLD),
                         (_M_TOP_PAD, TOP_PAD)):
        if mallopt(param, value) != 1:
            return False
    _done = True
    return True
