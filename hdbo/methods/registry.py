"""Method registry: look methods up by name (``"gp-ucb"``, ``"random"``, ...)."""

from __future__ import annotations

from typing import Any

from numpy.typing import ArrayLike

from ..space import Box
from .base import Method

__all__ = ["register", "get_method_class", "make_method", "available_methods"]

_REGISTRY: dict[str, type[Method]] = {}


def register(cls: type[Method]) -> type[Method]:
    """Class decorator that adds a :class:`Method` subclass to the registry under ``cls.name``.

    Registering the same class again is a no-op.

    Parameters
    ----------
    cls : type
        A :class:`Method` subclass with a non-empty ``name``.

    Returns
    -------
    type
        ``cls`` itself.

    Raises
    ------
    ValueError
        If ``cls.name`` is empty or already taken by another class.
    """
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no registry name")
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise ValueError(f"method name {cls.name!r} is registered twice")
    _REGISTRY[cls.name] = cls
    return cls


def available_methods() -> list[str]:
    """Names of every registered method.

    Returns
    -------
    list of str
        Sorted.
    """
    return sorted(_REGISTRY)


def get_method_class(name: str) -> type[Method]:
    """The class registered under ``name``.

    Parameters
    ----------
    name : str
        A name from :func:`available_methods`.

    Returns
    -------
    type
        The :class:`Method` subclass.

    Raises
    ------
    TypeError
        If ``name`` is not a string.
    ValueError
        If no method has that name (the message lists the valid names).
    """
    if not isinstance(name, str):
        raise TypeError(f"method must be a string, got {type(name).__name__}")
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; available methods: {', '.join(available_methods())}") from None


def make_method(name: str, bounds: Box | ArrayLike, **kwargs: Any) -> Method:
    """Build a registered method by name.

    Parameters
    ----------
    name : str
        A name from :func:`available_methods`.
    bounds : Box or array_like of shape (D, 2)
        The search box.
    **kwargs
        Passed to the method's constructor: ``seed``, ``budget``, ``structure`` and the
        method's own options.

    Returns
    -------
    Method
        A new, unused instance.

    Raises
    ------
    ValueError
        If the name is unknown (the message lists the valid ones) or an option has an
        invalid value.
    TypeError
        If the method does not take an option (the message lists the ones it does), or an
        option has the wrong type.

    Examples
    --------
    >>> m = make_method("random", [(0.0, 1.0), (-1.0, 1.0)], seed=0)
    >>> m.ask().shape
    (2,)
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
