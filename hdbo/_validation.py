"""Argument checks shared by hdbo's public entry points.

Each function checks one argument and returns it converted to a plain Python value, so a
constructor can check and store in one line::

    self.n_init = check_int(n_init, "n_init", low=1)

A value of the wrong type raises :class:`TypeError`; a value of the right type outside the
allowed set raises :class:`ValueError` (as does any value that is not one of the choices of
:func:`check_choice`, since a name looked up in a registry is a value). Each message gives the argument's name, what was
expected and what was received, e.g. ``n_init must be an int >= 1, got 0`` or
``beta must be a real number, got str '2'``. ``bool`` is not accepted as a number, although
Python makes it a subclass of ``int``.
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Collection
from typing import Any, Literal, TypeVar, overload

import numpy as np

__all__ = ["MAX_COUNT", "check_bool", "check_choice", "check_int", "check_real"]

_T = TypeVar("_T")

_INT_TYPES = (int, np.integer)
_REAL_TYPES = (int, float, np.integer, np.floating)


def _received(value: Any) -> str:
    """``"float 2.5"``, ``"str 'x'"`` or ``"None"``: the type and a short repr of ``value``."""
    if value is None:
        return "None"
    return f"{type(value).__name__} {reprlib.repr(value)}"


def _range(low: Any, high: Any, low_inclusive: bool, high_inclusive: bool) -> str:
    """``">= 1"``, ``"< 5"`` or ``"in (0, 1]"``; empty when both bounds are None."""
    if low is not None and high is not None:
        left, right = "[" if low_inclusive else "(", "]" if high_inclusive else ")"
        return f"in {left}{low}, {high}{right}"
    if low is not None:
        return f"{'>=' if low_inclusive else '>'} {low}"
    if high is not None:
        return f"{'<=' if high_inclusive else '<'} {high}"
    return ""


#: Largest value a method's count option accepts (initial points, acquisition evaluations,
#: restarts, candidates, grid points, ...): beyond it a run would not fit in memory or time,
#: and the option is refused by name instead of failing later inside numpy.
MAX_COUNT = 10_000_000


@overload
def check_int(
    value: Any, name: str, *, low: int | None = ..., high: int | None = ..., allow_none: Literal[False] = ...
) -> int: ...


@overload
def check_int(
    value: Any, name: str, *, low: int | None = ..., high: int | None = ..., allow_none: bool = ...
) -> int | None: ...


def check_int(
    value: Any,
    name: str,
    *,
    low: int | None = None,
    high: int | None = None,
    allow_none: bool = False,
) -> int | None:
    """Check that ``value`` is an integer in ``[low, high]`` and return it as an ``int``.

    Parameters
    ----------
    value : object
        The argument to check. Python and NumPy integers are accepted; ``bool`` is not.
    name : str
        The argument's name, used in error messages.
    low, high : int, optional
        Inclusive bounds; None means no bound on that side.
    allow_none : bool, default False
        Accept None, which is returned unchanged.

    Returns
    -------
    int or None
        ``int(value)``, or None if ``value`` is None and ``allow_none`` is set.

    Raises
    ------
    TypeError
        If ``value`` is not an integer (or None, when allowed), e.g.
        ``n must be an int, got float 2.5``.
    ValueError
        If ``value`` is outside ``[low, high]``, e.g. ``n must be an int >= 1, got 0``.

    Examples
    --------
    >>> check_int(3, "n", low=1)
    3
    >>> check_int(0, "n", low=1)
    Traceback (most recent call last):
    ...
    ValueError: n must be an int >= 1, got 0
    """
    or_none = " or None" if allow_none else ""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, _INT_TYPES):
        raise TypeError(f"{name} must be an int{or_none}, got {_received(value)}")
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name} must be an int {_range(low, high, True, True)}{or_none}, got {value!r}")
    return value


@overload
def check_real(
    value: Any, name: str, *, low: float | None = ..., high: float | None = ..., low_inclusive: bool = ...,
    high_inclusive: bool = ..., finite: bool = ..., allow_none: Literal[False] = ...,
) -> float: ...


@overload
def check_real(
    value: Any, name: str, *, low: float | None = ..., high: float | None = ..., low_inclusive: bool = ...,
    high_inclusive: bool = ..., finite: bool = ..., allow_none: bool = ...,
) -> float | None: ...


def check_real(
    value: Any,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
    finite: bool = True,
    allow_none: bool = False,
) -> float | None:
    """Check that ``value`` is a real number within the given bounds and return it as a ``float``.

    Parameters
    ----------
    value : object
        The argument to check. Python and NumPy integers and floats are accepted; ``bool``
        is not.
    name : str
        The argument's name, used in error messages.
    low, high : float, optional
        Bounds; None means no bound on that side. They are printed as given, so pass
        ``0`` to print ``> 0`` and ``1.0`` to print ``1.0``.
    low_inclusive, high_inclusive : bool, default True
        Whether ``value == low`` (``value == high``) is allowed.
    finite : bool, default True
        Reject ``inf`` and ``-inf``. NaN is rejected in every case.
    allow_none : bool, default False
        Accept None, which is returned unchanged.

    Returns
    -------
    float or None
        ``float(value)``, or None if ``value`` is None and ``allow_none`` is set.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (or None, when allowed), e.g.
        ``beta must be a real number, got str '2'``.
    ValueError
        If ``value`` is NaN, infinite while ``finite`` is set, or outside the bounds, e.g.
        ``acq_fraction must be in (0, 1], got 1.5``.

    Examples
    --------
    >>> check_real(2, "beta", low=0)
    2.0
    >>> check_real(-1.0, "beta", low=0)
    Traceback (most recent call last):
    ...
    ValueError: beta must be >= 0, got -1.0
    """
    or_none = " or None" if allow_none else ""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, _REAL_TYPES):
        raise TypeError(f"{name} must be a real number{or_none}, got {_received(value)}")
    value = float(value)
    if math.isnan(value) or (finite and math.isinf(value)):
        raise ValueError(f"{name} must be {'finite' if finite else 'a number, not NaN'}, got {value!r}")
    below = low is not None and (value < low if low_inclusive else value <= low)
    above = high is not None and (value > high if high_inclusive else value >= high)
    if below or above:
        expected = _range(low, high, low_inclusive, high_inclusive)
        raise ValueError(f"{name} must be {expected}{or_none}, got {value!r}")
    return value


def check_bool(value: Any, name: str) -> bool:
    """Check that ``value`` is a ``bool`` (or ``numpy.bool_``) and return it as a ``bool``.

    Parameters
    ----------
    value : object
        The argument to check. Integers such as 0 and 1 are not accepted.
    name : str
        The argument's name, used in error messages.

    Returns
    -------
    bool

    Raises
    ------
    TypeError
        If ``value`` is not a bool, e.g. ``locally_biased must be a bool, got str 'no'``.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {_received(value)}")
    return bool(value)


def check_choice(value: _T, name: str, choices: Collection[Any], *, allow_none: bool = False) -> _T:
    """Check that ``value`` is one of ``choices`` (compared with ``==``) and return it unchanged.

    Parameters
    ----------
    value : object
        The argument to check.
    name : str
        The argument's name, used in error messages.
    choices : collection
        The accepted values, listed in the error message in their iteration order.
    allow_none : bool, default False
        Accept None as well.

    Returns
    -------
    object
        ``value`` itself.

    Raises
    ------
    ValueError
        If ``value`` is not one of ``choices``, whatever its type, e.g.
        ``domain must be one of 'unit', 'symmetric', got 'box'``.

    Examples
    --------
    >>> check_choice("zero", "mean", ("constant", "zero"))
    'zero'
    """
    options = tuple(choices)
    if value is None and allow_none:
        return value
    try:
        found = value in options
    except (TypeError, ValueError):  # e.g. an array, whose == is elementwise
        found = False
    if found:
        return value
    listed = ", ".join(map(repr, options))
    prefix = "None or one of" if allow_none else "one of"
    raise ValueError(f"{name} must be {prefix} {listed}, got {reprlib.repr(value)}")
