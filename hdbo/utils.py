"""Small shared helpers: random generators, JSON-safe conversion of arrays and RNG states."""

from __future__ import annotations

from typing import Any

import numpy as np

from .exceptions import StateError

__all__ = ["as_generator", "generator_state", "generator_from_state", "to_jsonable"]


def as_generator(seed: int | np.random.Generator | None) -> np.random.Generator:
    """Turn ``seed`` into a :class:`numpy.random.Generator`.

    Parameters
    ----------
    seed : int, numpy.random.Generator or None
        A non-negative int seeds a new PCG64 generator (``numpy.random.default_rng``); None
        seeds one from the operating system; a Generator is returned as is (not copied), so
        draws from it advance the caller's generator.

    Returns
    -------
    numpy.random.Generator

    Raises
    ------
    TypeError
        If ``seed`` is neither None, an int nor a Generator (``bool`` is rejected).
    ValueError
        If ``seed`` is a negative int.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        if seed is not None and seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed}")
        return np.random.default_rng(seed)
    raise TypeError(f"seed must be None, an int or a numpy.random.Generator, got {type(seed).__name__}")


def generator_state(rng: np.random.Generator) -> dict[str, Any]:
    """Snapshot of a generator's state in JSON-serializable form.

    Parameters
    ----------
    rng : numpy.random.Generator

    Returns
    -------
    dict
        ``rng.bit_generator.state`` with numpy values turned into plain Python ones;
        :func:`generator_from_state` restores the generator exactly from it.
    """
    return to_jsonable(rng.bit_generator.state)


_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")


def generator_from_state(state: dict[str, Any], *, name: str = "rng state") -> np.random.Generator:
    """Rebuild a generator from :func:`generator_state` output.

    Parameters
    ----------
    state : dict
        A bit-generator state; its ``"bit_generator"`` entry names one of NumPy's bit
        generators (``"PCG64"``, ``"PCG64DXSM"``, ``"MT19937"``, ``"Philox"``, ``"SFC64"``).
    name : str, default "rng state"
        What ``state`` is, for error messages (e.g. ``"state['rng']"``).

    Returns
    -------
    numpy.random.Generator
        A generator whose next draws equal those of the snapshotted one.

    Raises
    ------
    hdbo.exceptions.StateError
        If ``state`` is not a dict, names another bit generator, or NumPy refuses its content.
    """
    if not isinstance(state, dict):
        raise StateError(f"{name} must be a dict (numpy bit_generator.state), got {type(state).__name__}")
    kind = state.get("bit_generator")
    if not isinstance(kind, str) or kind not in _BIT_GENERATORS:
        raise StateError(f"{name}['bit_generator'] must be one of {', '.join(_BIT_GENERATORS)}, got {kind!r:.60}")
    bit_gen = getattr(np.random, kind)()
    try:
        bit_gen.state = state
    except (TypeError, ValueError, KeyError, IndexError, OverflowError, AttributeError) as exc:
        raise StateError(f"{name} is not a valid {kind} state: {type(exc).__name__}: {exc}") from None
    return np.random.Generator(bit_gen)


def to_jsonable(obj: Any) -> Any:
    """Recursively convert numpy scalars and arrays (and tuples) into plain JSON types.

    Dict keys become strings, lists and tuples become lists, arrays become nested lists,
    numpy booleans, integers and floats become ``bool``, ``int`` and ``float``; anything else
    is returned unchanged. Floats keep their exact value: ``json`` writes the shortest repr
    that round-trips.

    Parameters
    ----------
    obj : object
        The value to convert.

    Returns
    -------
    object
        The converted value (a new container; ``obj`` is not modified).
    """
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    return obj
