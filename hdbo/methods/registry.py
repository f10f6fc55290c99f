"""Method registry: look methods up by name (``"gp-ucb"``, ``"random"``, ...)."""

from __future__ import annotations

from typing import Any

from ..space import Box
from .base import Method

__all__ = ["register", "get_method_class", "make_method", "available_methods"]

_REGISTRY: dict[str, type[Method]] = {}


def register(cls: type[Method]) -> type[Method]:
    """Class decorator adding a :class:`Method` subclass under ``cls.name``."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no registry name")
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise ValueError(f"method name {cls.name!r} is registered twice")
    _REGISTRY[cls.name] = cls
    return cls


def available_methods() -> list[str]:
    """Sorted names of every registered method."""
    return sorted(_REGISTRY)


def get_method_class(name: str) -> type[Method]:
    """The class registered under ``name``.

    Raises
    ------
    ValueError
        If no method has that name (the message lists the valid names).
    """
    if not isinstance(name, str):
        raise TypeError(f"method must be a string, got {type(name).__name__}")
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; available methods: {', '.join(available_methods())}") from None


def make_method(name: str, bounds: Box, **kwargs: Any) -> Method:
    """Build the method ``name`` on ``bounds``; ``kwargs`` go to its constructor.

    Raises
    ------
    ValueError
        Unknown method name.
    TypeError
        An option the method does not take (the message lists the ones it does).
    """
    cls = get_method_class(name)
    try:
        return cls(bounds, **kwargs)
    except TypeError as exc:
        if "unexpected keyword argument" in str(exc):
            import inspect

            valid = [p for p in inspect.signature(cls.__init__).parameters if p not in ("self", "bounds")]
            raise TypeError(f"{exc}; method {name!r} takes: {', '.join(valid)}") from None
        raise
