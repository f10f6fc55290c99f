"""Checks of saved method states: a malformed state raises :class:`~hdbo.exceptions.StateError`.

A state is data a user may have edited, truncated or received from someone else, so
:meth:`hdbo.methods.Method.from_state` checks every field before using it. The helpers here
name the field in the message (``state['internal']['groups'] must be ..., got ...``):
``state_*`` check a value whose field name the caller gives, ``internal_*`` read and check
one entry of a method's ``state["internal"]`` dict (a missing entry is an error too).
"""

from __future__ import annotations

import numbers
from typing import Any, Sequence

import numpy as np
from numpy.typing import NDArray

from ..exceptions import StateError

__all__ = [
    "describe", "state_mapping", "state_int", "state_bool", "state_float", "state_array", "state_indices",
    "internal_field", "internal_int", "internal_bool", "internal_float", "internal_array", "internal_indices",
]


def describe(value: Any) -> str:
    """A short description of a value for error messages: its type and a truncated repr."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def state_mapping(value: Any, field: str) -> dict[str, Any]:
    """``value`` if it is a dict with string keys, else StateError."""
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise StateError(f"{field} must be a dict with string keys, got {describe(value)}")
    return value


def _number(value: Any, field: str, kind: type, what: str, allow_none: bool) -> Any:
    """``value`` if it is an instance of the numbers ABC ``kind`` and no bool, else StateError saying ``what``."""
    if isinstance(value, bool) or not isinstance(value, kind):
        raise StateError(f"{field} must be {what}{' or None' if allow_none else ''}, got {describe(value)}")
    return value


def state_int(value: Any, field: str, *, low: int | None = None, high: int | None = None,
              allow_none: bool = False) -> int | None:
    """``value`` as an int in ``[low, high]`` (bools refused), else StateError."""
    if value is None and allow_none:
        return None
    v = int(_number(value, field, numbers.Integral, "an int", allow_none))
    if (low is not None and v < low) or (high is not None and v > high):
        rng = f"[{'-inf' if low is None else low}, {'inf' if high is None else high}]"
        raise StateError(f"{field} must be in {rng}, got {v}")
    return v


def state_bool(value: Any, field: str) -> bool:
    """``value`` if it is a bool, else StateError."""
    if not isinstance(value, (bool, np.bool_)):
        raise StateError(f"{field} must be true or false, got {describe(value)}")
    return bool(value)


def state_float(value: Any, field: str, *, allow_none: bool = False, finite: bool = True,
                low: float | None = None, low_inclusive: bool = True) -> float | None:
    """``value`` as a float (finite unless ``finite=False``, ``>= low``), else StateError."""
    if value is None and allow_none:
        return None
    v = float(_number(value, field, numbers.Real, "a real number", allow_none))
    if finite and not np.isfinite(v):
        raise StateError(f"{field} must be finite, got {v}")
    if low is not None and (v < low or (v == low and not low_inclusive)):
        raise StateError(f"{field} must be {'>=' if low_inclusive else '>'} {low}, got {v}")
    return v


def state_array(value: Any, field: str, *, shape: Sequence[int | None] | None = None, finite: bool = True,
                allow_none: bool = False, low: float | None = None, high: float | None = None
                ) -> NDArray[np.float64] | None:
    """``value`` as a float array of the given shape (None: any length), else StateError.

    Parameters
    ----------
    value : object
        Nested lists of numbers (or an array).
    field : str
        Name of the field in messages.
    shape : sequence of int or None, optional
        Expected shape; a None entry accepts any length.
    finite : bool, default True
        Refuse NaN and infinities.
    allow_none : bool, default False
        Accept None (returned as None).
    low, high : float, optional
        Bounds every entry must respect.
    """
    if value is None and allow_none:
        return None
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, (list, tuple, np.ndarray)):
        raise StateError(f"{field} must be a list of numbers, got {describe(value)}")
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise StateError(f"{field} must be a (nested) list of numbers, got {describe(value)}") from exc
    if shape is not None:
        ok = arr.ndim == len(shape) and all(s is None or s == n for s, n in zip(shape, arr.shape))
        if not ok:
            want = "(" + ", ".join("n" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
            raise StateError(f"{field} must have shape {want}, got shape {arr.shape}")
    if finite and not np.all(np.isfinite(arr)):
        raise StateError(f"{field} must hold finite numbers only")
    if (low is not None and np.any(arr < low)) or (high is not None and np.any(arr > high)):
        raise StateError(f"{field} must hold numbers in [{low}, {high}]")
    return arr


def state_indices(value: Any, field: str, *, high: int, allow_none: bool = False, unique: bool = True,
                  length: int | None = None) -> list[int] | None:
    """``value`` as a list of ints in ``[0, high)`` (distinct unless ``unique=False``), else StateError."""
    if value is None and allow_none:
        return None
    if not isinstance(value, (list, tuple)):
        raise StateError(f"{field} must be a list of ints, got {describe(value)}")
    out = [state_int(v, f"{field}[{i}]", low=0, high=high - 1) for i, v in enumerate(value)]
    if unique and len(set(out)) != len(out):  # type: ignore[arg-type]
        raise StateError(f"{field} must hold distinct indices, got {out}")
    if length is not None and len(out) != length:
        raise StateError(f"{field} must hold {length} indices, got {len(out)}")
    return out  # type: ignore[return-value]


# --------------------------------------------------------------------------- state["internal"]
def _name(key: str) -> str:
    return f"state['internal'][{key!r}]"


def internal_field(state: dict[str, Any], key: str, where: str = "state['internal']") -> Any:
    """``state[key]`` of a method's internal state (or of a dict inside it, named ``where``); StateError if missing."""
    if key not in state:
        raise StateError(f"{where} lacks the entry {key!r}")
    return state[key]


def internal_int(state: dict[str, Any], key: str, **kwargs: Any) -> int | None:
    """Entry ``key`` of an internal state, checked with :func:`state_int`."""
    return state_int(internal_field(state, key), _name(key), **kwargs)


def internal_bool(state: dict[str, Any], key: str) -> bool:
    """Entry ``key`` of an internal state, checked with :func:`state_bool`."""
    return state_bool(internal_field(state, key), _name(key))


def internal_float(state: dict[str, Any], key: str, **kwargs: Any) -> float | None:
    """Entry ``key`` of an internal state, checked with :func:`state_float`."""
    return state_float(internal_field(state, key), _name(key), **kwargs)


def internal_array(state: dict[str, Any], key: str, **kwargs: Any) -> NDArray[np.float64] | None:
    """Entry ``key`` of an internal state, checked with :func:`state_array`."""
    return state_array(internal_field(state, key), _name(key), **kwargs)


def internal_indices(state: dict[str, Any], key: str, **kwargs: Any) -> list[int] | None:
    """Entry ``key`` of an internal state, checked with :func:`state_indices`."""
    return state_indices(internal_field(state, key), _name(key), **kwargs)
