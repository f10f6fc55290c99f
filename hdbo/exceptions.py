"""Exceptions raised by hdbo for library states (bad user input raises ValueError/TypeError)."""

from __future__ import annotations

__all__ = ["HDBOError", "NumericalError", "NotFittedError", "PendingError", "StateError"]


class HDBOError(Exception):
    """Base class of every hdbo-specific exception."""


class NumericalError(HDBOError, ArithmeticError):
    """A factorization failed even after the largest jitter was tried."""


class NotFittedError(HDBOError, AttributeError):
    """A model was used before ``fit`` was called."""


class StateError(HDBOError, ValueError):
    """A saved state cannot be loaded (wrong method, version or content)."""


class PendingError(HDBOError, RuntimeError):
    """A method cannot propose another point before some of its pending points are told.

    Raised by ``ask()`` (one point) when the algorithm must see results first, e.g. DIRECT
    while its query is out, or a sequential test waiting for its answer. ``ask(n)`` returns
    fewer points instead (possibly none).
    """
