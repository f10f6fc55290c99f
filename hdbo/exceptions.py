"""Exceptions raised by hdbo for library states (bad user input raises ValueError/TypeError)."""

from __future__ import annotations

__all__ = ["HDBOError", "NumericalError", "NotFittedError", "StateError"]


class HDBOError(Exception):
    """Base class of every hdbo-specific exception."""


class NumericalError(HDBOError, ArithmeticError):
    """A factorization failed even after the largest jitter was tried."""


class NotFittedError(HDBOError, AttributeError):
    """A model was used before ``fit`` was called."""


class StateError(HDBOError, ValueError):
    """A saved state cannot be loaded (wrong method, version or content)."""
