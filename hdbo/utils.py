"""Small shared helpers: random generators, JSON-safe conversion of arrays and RNG states."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["as_generator", "generator_state", "generator_from_state", "to_jsonable"]


def as_generator(seed: int | np.random.Generator | None) -> np.random.Generator:
    """Turn ``seed`` into a :class:`numpy.random.Generator` (a Generator passes through).

    Raises
    ------
    TypeError
        If ``seed`` is neither None, an int nor a Generator.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        if seed is not None and seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed}")
        return np.random.default_rng(seed)
    raise TypeError(f"seed must be None, an int or a numpy.random.Generator, got {type(seed).__name__}")


def generator_state(rng: np.random.Generator) -> dict[str, Any]:
    """JSON-serializable snapshot of ``rng`` (restored exactly by :func:`generator_from_state`)."""
    return to_jsonable(rng.bit_generator.state)


def generator_from_state(state: dict[str, Any]) -> np.random.Generator:
    """Rebuild a Generator from :func:`generator_state` output."""
    name = state["bit_generator"]
    bit_gen = getattr(np.random, name)()
    bit_gen.state = state
    return np.random.Generator(bit_gen)


def to_jsonable(obj: Any) -> Any:
    """Recursively convert numpy scalars/arrays (and tuples) into plain JSON types.

    Floats keep their exact value: ``json`` writes the shortest repr that round-trips.
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
