"""Memory a run needs, checked before anything is allocated.

``hdbo run --dim 1000000000`` would otherwise build a problem with a 16 GB box and end in
the out-of-memory killer. :func:`check_memory` estimates what the runs of a call need from
their configurations alone (nothing is built) and refuses them with the estimate when it
exceeds the memory available to this process.

The estimate of one run (:func:`estimate_run_memory`) adds up, in bytes, with ``D`` the
problem's dimension, ``T`` the budget and 8 bytes per float:

* the problem's box: ``2 D x 8``;
* the history of evaluated points the method keeps: ``T D x 8``;
* for GP-based methods, the ``T x T`` kernel matrix of the last fit: ``T^2 x 8``;
* for GP-UCB and GP-EI (acquisition maximized by DIRECT in all ``D`` coordinates), the
  centres and side lengths of the acquisition search's rectangles: ``2 A D x 8`` with ``A``
  the acquisition budget (``acq_budget``, default ``min(5000, 100 D)``); for
  highdim-random-ucb, its candidate set: ``n_candidates x D x 8``;
* the Python interpreter with numpy and hdbo: :data:`PROCESS_BYTES` per process.

These are the largest arrays a run certainly holds, not everything it allocates, so the
estimate errs low: a refused run could not have finished, and an accepted one still needs
some headroom.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterable

from .store import RunConfig

__all__ = ["PROCESS_BYTES", "MemoryEstimate", "estimate_run_memory", "available_memory", "check_memory"]

#: Resident memory of one process running hdbo (interpreter, numpy, scipy, hdbo): ~80 MB
#: measured with ``resource.getrusage`` after ``import hdbo.experiments.runner``; 50 MB counted.
PROCESS_BYTES = 50 * 2**20

_FULL_SPACE_DIRECT = ("gp-ucb", "gp-ei")


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes a run needs, by part.

    Attributes
    ----------
    parts : dict of str -> int
        ``{"box": ..., "history": ..., "GP matrix": ..., "acquisition": ...}`` (parts that
        do not apply are left out).
    dim : int
        The problem dimension the estimate assumed.
    """

    parts: dict[str, int] = field(default_factory=dict)
    dim: int = 0

    @property
    def total(self) -> int:
        """Sum of the parts, in bytes."""
        return sum(self.parts.values())


def format_bytes(n: float) -> str:
    """``1.5 GB``-style text (powers of 1024).

    Parameters
    ----------
    n : float
        A number of bytes.

    Returns
    -------
    str

    Examples
    --------
    >>> format_bytes(3 * 2**30)
    '3.0 GB'
    """
    for unit in ("bytes", "KB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1024 or unit == "PB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def _problem_dim(config: RunConfig) -> int | None:
    dim = config.problem_params.get("dim")
    if dim is None:
        try:
            from ..problems import problem_spec

            dim = problem_spec(config.problem).native_dim
        except (ImportError, ValueError, TypeError):  # unknown name: reported when the problem is built
            return None
    if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
        return None  # a bad dim is reported by the problem itself
    return dim


def _int_option(params: dict[str, Any], name: str, default: int) -> int:
    value = params.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return default
    return value


def estimate_run_memory(config: RunConfig) -> MemoryEstimate | None:
    """The memory one run needs, from its configuration (nothing is built).

    Parameters
    ----------
    config : RunConfig
        The run; the problem's ``dim`` comes from ``problem_params["dim"]`` or the
        registry's native dimension.

    Returns
    -------
    MemoryEstimate or None
        None when the dimension is not known (unknown problem or a bad ``dim``; building the
        problem reports those).

    Examples
    --------
    >>> est = estimate_run_memory(RunConfig(experiment="e", problem="ackley", method="random",
    ...                                     seed=0, budget=100, problem_params={"dim": 10}))
    >>> est.parts
    {'box': 160, 'history': 8000}
    """
    dim = _problem_dim(config)
    if dim is None:
        return None
    T = config.budget
    parts = {"box": 2 * dim * 8, "history": T * dim * 8}
    try:
        from ..methods import get_method_class
        from ..methods.gp_based import GPMethod

        is_gp = issubclass(get_method_class(config.method), GPMethod)
    except (ImportError, ValueError, TypeError):  # unknown method: reported when it is built
        is_gp = False
    if is_gp:
        parts["GP matrix"] = T * T * 8
    if config.method in _FULL_SPACE_DIRECT:
        acq = _int_option(config.method_params, "acq_budget", min(5000, 100 * dim))
        parts["acquisition"] = 2 * acq * dim * 8
    elif config.method == "highdim-random-ucb":
        parts["acquisition"] = _int_option(config.method_params, "n_candidates", 1000) * dim * 8
    return MemoryEstimate(parts, dim)


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as fh:
            text = fh.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


def _address_space_used() -> int:
    """Virtual memory of this process in bytes (first field of /proc/self/statm), 0 if unknown."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return 0


def available_memory() -> int | None:
    """Bytes this process can still allocate, as far as the system tells.

    The smallest of: ``MemAvailable`` of ``/proc/meminfo`` (else the available physical
    pages from ``os.sysconf``), the room left under a cgroup memory limit (v2
    ``memory.max``, v1 ``memory.limit_in_bytes``; containers), and the room left under
    ``RLIMIT_AS``.

    Returns
    -------
    int or None
        None when none of these is known (the check is then skipped).
    """
    found: list[int] = []
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    found.append(int(line.split()[1]) * 1024)
                    break
    except (OSError, ValueError, IndexError):
        pass
    if not found:
        try:
            found.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (ValueError, OSError, AttributeError):
            pass
    for limit_file, usage_file in (
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"),
    ):
        limit = _read_int(limit_file)  # "max" (no limit) reads as None
        if limit is not None and limit < 2**60:
            found.append(max(0, limit - (_read_int(usage_file) or 0)))
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY and soft > 0:
            found.append(max(0, soft - _address_space_used()))
    except (ImportError, ValueError, OSError):
        pass
    return min(found) if found else None


def check_memory(configs: Iterable[RunConfig], *, workers: int = 1, available: int | None = None) -> None:
    """Refuse runs that cannot fit in memory, before anything is allocated.

    Parameters
    ----------
    configs : iterable of RunConfig
        The runs of one call.
    workers : int, default 1
        Runs executed at the same time (each in its own process when > 1).
    available : int, optional
        Bytes available (default :func:`available_memory`; nothing is checked when unknown).

    Raises
    ------
    ValueError
        The largest run, times the runs executed at once, plus :data:`PROCESS_BYTES` per
        process, needs more than ``available``; the message gives the estimate by part.
    """
    configs = list(configs)
    if available is None:
        available = available_memory()
    if available is None or not configs:
        return
    worst: tuple[int, RunConfig, MemoryEstimate] | None = None
    for c in configs:
        est = estimate_run_memory(c)
        if est is not None and (worst is None or est.total > worst[0]):
            worst = (est.total, c, est)
    if worst is None:
        return
    total, config, est = worst
    at_once = max(1, min(workers, len(configs)))
    need = at_once * (total + PROCESS_BYTES)
    if need <= available:
        return
    parts = ", ".join(f"{name} {format_bytes(b)}" for name, b in est.parts.items())
    times = f"{at_once} runs at once x " if at_once > 1 else ""
    raise ValueError(
        f"not enough memory: a run of {config.method} on {config.problem} with dim={est.dim} and "
        f"budget={config.budget} needs at least {format_bytes(total)} ({parts}); {times}that plus "
        f"{format_bytes(PROCESS_BYTES)} per process is {format_bytes(need)}, but {format_bytes(available)} "
        f"is available; lower the dimension, the budget or the number of workers"
    )
