"""Keep freed memory in the process during long experiment runs (glibc only).

A GP run allocates and frees the same few large arrays at every step: kernel matrices of
n x n, stacks of per-group distance matrices, candidate batches. With glibc's default
settings, memory freed at the top of the heap is given back to the operating system as soon
as more than a small threshold is free there, so the next allocation of the same size faults
its pages in again. In an Add-GP-UCB run of kandasamy2015's Figure 4 (D = 96, 510
evaluations) that page-fault work was 40 of 131 wall-clock seconds (``sys`` time), and it
grows with the number of observations (``benchmarks/bench_malloc.py``).

:func:`tune_malloc` sets glibc's mmap threshold, trim threshold and top pad (``mallopt``;
32 MB, 256 MB and 64 MB), so arrays up to 32 MB come from the heap and up to 256 MB of freed
memory stays in the process for reuse: each process may hold that much more than it uses. It
changes where arrays live, never their values. The experiment runner calls it
(:func:`hdbo.experiments.run_many` and its worker processes); ``hdbo.minimize`` and the
:class:`~hdbo.Optimizer` leave the user's process alone (set ``MALLOC_MMAP_THRESHOLD_``,
``MALLOC_TRIM_THRESHOLD_`` and ``MALLOC_TOP_PAD_`` in the environment for the same effect
there). Nothing happens on other C libraries or systems, when ``HDBO_MALLOC_TUNING=0`` is set,
or when the user set glibc's own malloc variables.
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
#: Freed memory at the top of the heap is kept up to this much (then trimmed).
TRIM_THRESHOLD = 256 << 20
#: Extra memory requested from the system with each heap extension.
TOP_PAD = 64 << 20
# All three are set together: setting any of them turns off glibc's own adjustment of the
# mmap threshold, which would then stay at 128 kB, so every array above that would be a fresh
# mapping, faulted in page by page (measured: a trim threshold of 64 MB and a top pad of 16 MB
# alone tripled the system time of the Add-GP-UCB run above).

_USER_VARIABLES = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_ARENA_MAX")
_done = False


def tune_malloc() -> bool:
    """Set glibc's malloc mmap threshold, trim threshold and top pad for this process (once).

    Returns
    -------
    bool
        True when the settings are in effect (applied now or by an earlier call), False when
        nothing was changed: not Linux with glibc, ``HDBO_MALLOC_TUNING=0``, or the user set
        ``MALLOC_*_`` variables or ``GLIBC_TUNABLES`` with malloc settings.

    Examples
    --------
    >>> tune_malloc() in (True, False)
    True
    """
    global _done
    if _done:
        return True
    if os.environ.get("HDBO_MALLOC_TUNING", "1").strip().lower() in ("0", "off", "false", "no"):
        return False
    if not sys.platform.startswith("linux"):
        return False
    if any(v in os.environ for v in _USER_VARIABLES) or "malloc" in os.environ.get("GLIBC_TUNABLES", ""):
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
    _done = all(mallopt(param, value) == 1 for param, value in (
        (_M_MMAP_THRESHOLD, MMAP_THRESHOLD), (_M_TRIM_THRESHOLD, TRIM_THRESHOLD), (_M_TOP_PAD, TOP_PAD)))
    return _done
