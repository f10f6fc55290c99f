"""Problem registry: build benchmark problems by name.

A module that defines problems registers each factory with one line, e.g.::

    register_problem("branin", branin, native_dim=2)     # fixed dimension
    register_problem("ackley", ackley)                    # any dimension: factory(dim=...)

and :func:`get` then builds, embeds, rescales and names the problem::

    get("branin", dim=20, domain="unit", seed=3)   # Branin hidden in 20 dims, on [0, 1]^20

Factory protocol
----------------
``factory(**kwargs) -> Problem`` where ``kwargs`` are the extra ``**params`` given to
:func:`get`, plus ``dim=`` for any-dimensional factories (``native_dim=None``) and
``seed=`` when the factory's signature has a ``seed`` parameter (e.g. random problem
instances). A fixed-dimension factory must return a problem of dimension ``native_dim``,
an any-dimensional one a problem of dimension ``dim``. The registry sets the name, the
noise level and ``params`` of the result itself, so factories need not take ``noise_std``.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from typing import Any, Callable

from .._validation import check_choice, check_int
from ..utils import to_jsonable
from .base import Problem, _check_noise_std
from .transforms import DOMAINS, embed, rescale

__all__ = ["ProblemSpec", "register_problem", "available_problems", "problem_spec", "get"]


@dataclass(frozen=True)
class ProblemSpec:
    """What the registry knows about one problem name.

    Attributes
    ----------
    name : str
        Registry name.
    factory : callable
        Builds the problem (see the module docstring for the protocol).
    native_dim : int or None
        The dimension of a fixed-dimension problem; None if any dimension is possible.
    min_dim : int
        Smallest ``dim`` accepted by :func:`get` (``native_dim`` for fixed-dimension
        problems, which larger ``dim`` embed).
    """

    name: str
    factory: Callable[..., Problem]
    native_dim: int | None
    min_dim: int


_REGISTRY: dict[str, ProblemSpec] = {}


def register_problem(
    name: str,
    factory: Callable[..., Problem],
    *,
    native_dim: int | None = None,
    min_dim: int = 1,
) -> Callable[..., Problem]:
    """Register ``factory`` under ``name``.

    Parameters
    ----------
    name : str
        Registry name (lower case, words joined by ``-``, e.g. ``"hyper-ellipsoid"``).
    factory : callable
        ``factory(**kwargs) -> Problem`` (see the module docstring).
    native_dim : int, optional
        Dimension of a fixed-dimension problem. Leave None for problems defined in any
        dimension; :func:`get` then requires ``dim`` and passes it to the factory.
    min_dim : int, default 1
        Smallest dimension of an any-dimensional problem (e.g. 2 for Rosenbrock). Ignored
        when ``native_dim`` is given.

    Returns
    -------
    callable
        ``factory`` itself.

    Raises
    ------
    ValueError
        If ``name`` is already registered with a different factory, contains ``":"`` or
        whitespace, or a dimension is < 1.
    TypeError
        If ``name`` is not a non-empty string, ``factory`` is not callable, or a dimension is
        not an int.

    Notes
    -----
    Experiment specs and ``hdbo run --problem`` name registered problems only. To use a
    problem of your own there, register it in a module of yours and load that module with
    ``--plugin MODULE`` (see :mod:`hdbo.experiments.plugins`).
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty string, got {name!r}")
    if ":" in name or name != "".join(name.split()):
        raise ValueError(f"name must not contain ':' or whitespace, got {name!r}")
    if not callable(factory):
        raise TypeError(f"factory must be callable, got {type(factory).__name__}")
    native_dim = check_int(native_dim, "native_dim", low=1, allow_none=True)
    min_dim = check_int(min_dim, "min_dim", low=1)
    spec = ProblemSpec(
        name=name,
        factory=factory,
        native_dim=native_dim,
        min_dim=native_dim if native_dim is not None else min_dim,
    )
    old = _REGISTRY.get(name)
    if old is not None and old != spec:
        raise ValueError(f"problem name {name!r} is already registered (by {old.factory!r})")
    _REGISTRY[name] = spec
    return factory


def available_problems() -> list[str]:
    """Names of every registered problem.

    Returns
    -------
    list of str
        Sorted.
    """
    return sorted(_REGISTRY)


def problem_spec(name: str) -> ProblemSpec:
    """The :class:`ProblemSpec` registered under ``name``.

    Parameters
    ----------
    name : str
        A name from :func:`available_problems`.

    Returns
    -------
    ProblemSpec

    Raises
    ------
    TypeError
        If ``name`` is not a string.
    ValueError
        If no problem has that name (the message lists the valid names).
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, got {type(name).__name__}")
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(
            f"unknown problem {name!r}; available problems: {', '.join(available_problems())}"
        ) from None


def get(
    name: str,
    *,
    dim: int | None = None,
    noise_std: float = 0.0,
    domain: str | None = None,
    seed: int = 0,
    **params: Any,
) -> Problem:
    """Build the registered problem ``name``.

    Parameters
    ----------
    name : str
        A name from :func:`available_problems`.
    dim : int, optional
        Input dimension. For a fixed-dimension problem (Branin, Beale, Camelback,
        Hartmann-6, ...) None or the native dimension gives the function itself, and a
        larger ``dim`` hides it among ``dim`` coordinates with :func:`embed` (the active
        coordinates are drawn from ``seed``). Required for any-dimensional problems.
    noise_std : float, default 0.0
        Standard deviation of the Gaussian observation noise of :meth:`Problem.evaluate`.
    domain : {None, "unit", "symmetric"}, default None
        None keeps the problem's own box; ``"unit"`` / ``"symmetric"`` apply
        :func:`rescale` (after embedding) so the box is ``[0, 1]^dim`` / ``[-1, 1]^dim``.
    seed : int, default 0
        Non-negative seed of the problem instance: picks the active coordinates of an
        embedding, and is passed to factories that take a ``seed``.
    **params
        Problem-specific parameters passed to the factory (JSON-serializable).

    Returns
    -------
    Problem
        With ``name`` the registry name and ``params`` holding every argument of this call
        (``{"name", "dim", "noise_std", "domain", "seed", **params}``, JSON-serializable),
        so ``get(**problem.params)`` rebuilds the same problem.

    Raises
    ------
    ValueError
        Unknown ``name`` (the message lists the valid names); ``dim`` missing for an
        any-dimensional problem or below the problem's smallest dimension; negative or
        non-finite ``noise_std``; unknown ``domain``; negative ``seed``.
    TypeError
        ``dim``/``seed`` not an int, ``noise_std`` not a real number, a parameter the
        factory does not take (the message lists the ones it does), or ``params`` that are
        not JSON-serializable.

    Examples
    --------
    >>> p = get("branin", dim=20, domain="unit", seed=3)
    >>> p.dim, p.name, len(p.structure["active_dims"])
    (20, 'branin', 2)
    >>> bool(p.bounds == p.bounds.unit(20))
    True
    """
    spec = problem_spec(name)

    dim = check_int(dim, "dim", allow_none=True)
    if dim is not None:
        if dim < spec.min_dim:
            what = "its native dimension" if spec.native_dim is not None else "its smallest dimension"
            raise ValueError(f"dim must be >= {spec.min_dim} for problem {name!r} ({what}), got {dim}")
    elif spec.native_dim is None:
        raise ValueError(f"dim is required for problem {name!r}, which is defined in any dimension")

    noise_std = _check_noise_std(noise_std)
    check_choice(domain, "domain", DOMAINS, allow_none=True)
    seed = check_int(seed, "seed")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed}")

    record = to_jsonable(params)
    try:
        json.dumps(record)
    except (TypeError, ValueError):
        bad = [k for k, v in record.items() if not _is_json(v)]
        raise TypeError(f"problem parameters must be JSON-serializable; not: {', '.join(bad)}") from None

    kwargs = dict(params)
    if spec.native_dim is None:
        kwargs["dim"] = dim
    sig = _signature(spec.factory)
    if sig is not None and "seed" in sig.parameters:
        kwargs["seed"] = seed
    try:
        problem = spec.factory(**kwargs)
    except TypeError as exc:
        if "unexpected keyword argument" in str(exc) and sig is not None:
            valid = [p for p in sig.parameters if p not in ("dim", "seed", "noise_std")]
            takes = ", ".join(valid) if valid else "no extra parameters"
            raise TypeError(f"{exc}; problem {name!r} takes: {takes}") from None
        raise
    if not isinstance(problem, Problem):
        raise TypeError(f"the factory of problem {name!r} returned {type(problem).__name__}, not a Problem")
    expected = spec.native_dim if spec.native_dim is not None else dim
    if problem.dim != expected:
        raise ValueError(
            f"the factory of problem {name!r} returned dimension {problem.dim}, expected {expected}"
        )

    if dim is not None and dim > problem.dim:
        problem = embed(problem, dim, seed=seed)
    if domain is not None:
        problem = rescale(problem, domain)

    final_params: dict[str, Any] = {
        "name": name,
        "dim": problem.dim,
        "noise_std": noise_std,
        "domain": domain,
        "seed": seed,
    }
    final_params.update(record)
    return Problem(
        problem,
        problem.bounds,
        name=name,
        optimum_value=problem.optimum_value,
        optimizer=problem.optimizer,
        noise_std=noise_std,
        structure=problem.structure,
        params=final_params,
    )


def _signature(factory: Callable[..., Problem]) -> inspect.Signature | None:
    try:
        return inspect.signature(factory)
    except (TypeError, ValueError):
        return None


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True
