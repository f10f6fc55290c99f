"""Method registry: look methods up by name (``"gp-ucb"``, ``"random"``, ...).

The registry sits above :mod:`hdbo.methods.base`: it imports :class:`~hdbo.methods.base.Method`
and, when it is imported, installs its table as the one :meth:`Method.from_state` looks
names up in; the base module never imports the registry.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from numpy.typing import ArrayLike

from ..space import Box
from . import base as _base
from .base import Method, option_names

__all__ = ["register", "get_method_class", "make_method", "available_methods", "option_names",
           "reserve_option_names", "reserved_option_names", "option_spellings"]

_REGISTRY: dict[str, type[Method]] = {}
# Argument names of the public entry points (hdbo.minimize, hdbo.maximize, hdbo.Optimizer), set
# by hdbo.api when it is imported: method options are passed as keyword arguments next to them.
_RESERVED: dict[str, list[str]] = {}


def _registered() -> dict[str, type[Method]]:
    """The table itself, read when called (tests swap ``_REGISTRY`` for a copy)."""
    return _REGISTRY


_base._set_method_table(_registered)


def _check_options(cls: type[Method]) -> None:
    """Refuse a method whose option names collide with API arguments or whose renames are inconsistent."""
    own = option_names(cls)
    clash = sorted(set(own) & set(_RESERVED))
    if clash:
        where = "; ".join(f"{n!r} is an argument of {', '.join(_RESERVED[n])}" for n in clash)
        raise ValueError(f"method {cls.name!r} ({cls.__name__}) cannot register: its options are passed as keyword "
                         f"arguments of hdbo.minimize/maximize/Optimizer, and {where}; rename the option")
    for old, new in cls.renamed_options.items():
        if old in own or new not in own:
            raise ValueError(f"method {cls.name!r}: renamed_options maps {old!r} to {new!r}, but the method's "
                             f"options are {own}")


def reserve_option_names(*entry_points: Callable[..., Any]) -> None:
    """Forbid method options named like an argument of the given functions (and check registered methods).

    :mod:`hdbo.api` calls it with :func:`~hdbo.minimize`, :func:`~hdbo.maximize` and
    :class:`~hdbo.Optimizer` when it is imported, so a method option can always be given as a
    keyword argument of them; methods registered afterwards are checked by :func:`register`.

    Parameters
    ----------
    *entry_points : callable
        Functions or classes whose parameter names (``**kwargs`` and ``self`` excepted) no
        method option may take.

    Raises
    ------
    ValueError
        If a method registered so far has an option of such a name.
    """
    for fn in entry_points:
        target = fn.__init__ if inspect.isclass(fn) else fn
        label = f"{fn.__module__.split('.')[0]}.{fn.__qualname__}"
        for pname, p in inspect.signature(target).parameters.items():
            if pname != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
                users = _RESERVED.setdefault(pname, [])
                if label not in users:
                    users.append(label)
    for cls in _REGISTRY.values():
        _check_options(cls)


def reserved_option_names() -> frozenset[str]:
    """Names no method option may take (see :func:`reserve_option_names`).

    Returns
    -------
    frozenset of str
    """
    return frozenset(_RESERVED)


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
        If ``cls.name`` is empty or already taken by another class, or an option of the method
        has the name of an argument of :func:`hdbo.minimize`, :func:`hdbo.maximize` or
        :class:`hdbo.Optimizer` (``direction``, ``budget``, ``callback``, ...: options are
        passed as keyword arguments next to them), or ``cls.renamed_options`` maps an old
        name that is still an option or to a name that is not one.
    """
    if not cls.name:
        raise ValueError(f"{cls.__name__} has no registry name")
    if cls.name in _REGISTRY and _REGISTRY[cls.name] is not cls:
        raise ValueError(f"method name {cls.name!r} is registered twice")
    _check_options(cls)
    _REGISTRY[cls.name] = cls
    return cls


#: Options added after stores were written, with the value that gives the behaviour the
#: method had before (a stored run without the option ran with that value), in the order they
#: were added. A spec that pins the old value finds the runs stored before the option existed.
LEGACY_OPTION_VALUES: tuple[tuple[str, Any], ...] = (("gp_prior", "none"), ("maximizer", "direct"))


def option_spellings(method: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """The ways ``params`` may have been written, current names first (for stored run identities).

    A run store identifies a run by the text of its method parameters; a store written before
    an option was renamed (``cls.renamed_options``) holds the old name, and one written before
    an option existed lacks it (:data:`LEGACY_OPTION_VALUES`: only when ``params`` sets it to
    the value that reproduces the old behaviour).

    Parameters
    ----------
    method : str
        Method name (an unregistered name gives ``[params]``).
    params : dict
        Method options, with current or old names.

    Returns
    -------
    list of dict
        ``params`` with every renamed option under its current name, then, if any renamed
        option is present, under its old name; then each of these without the options of
        :data:`LEGACY_OPTION_VALUES` that hold their legacy value (first without the latest
        added, then without the latest two, ...).
    """
    cls = _REGISTRY.get(method) if isinstance(method, str) else None
    if cls is None:
        return [dict(params)]
    current = cls.upgrade_params(params) if cls.renamed_options else dict(params)
    back = {new: old for old, new in cls.renamed_options.items()}
    old = {back.get(k, k): v for k, v in current.items()}
    out = [current] if old == current else [current, old]
    legacy = [name for name, value in LEGACY_OPTION_VALUES if name in current and current[name] == value]
    if legacy and legacy[0] == LEGACY_OPTION_VALUES[0][0]:
        for n in range(1, len(legacy) + 1):
            drop = set(legacy[:n])
            out += [{k: v for k, v in p.items() if k not in drop} for p in list(out[: 2 if old != current else 1])]
    return out


def available_methods() -> list[str]:
    """The registered methods, by name.

    Returns
    -------
    list of str
        Every name :func:`make_method` accepts, in alphabetical order.
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
        If no method is registered under ``name`` (the message lists those that are).
    """
    if not isinstance(name, str):
        raise TypeError(f"method must be a string, got {type(name).__name__}")
    if name not in _REGISTRY:
        raise ValueError(f"unknown method {name!r}; available methods: {', '.join(available_methods())}")
    return _REGISTRY[name]


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
        method's own options. An option under a name it had before a rename
        (``cls.renamed_options``, e.g. line-bo's ``direction``, now ``line_direction``) is
        accepted with a ``FutureWarning``.

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
    kwargs = cls.upgrade_params(kwargs, warn=True)
    try:
        return cls(bounds, **kwargs)
    except TypeError as exc:
        if "unexpected keyword argument" in str(exc):
            valid = ["seed", "budget", "structure", *option_names(cls)]
            raise TypeError(f"{exc}; method {name!r} takes: {', '.join(valid)}") from None
        raise
