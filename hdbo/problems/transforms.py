"""Problem transforms: hide a problem in more dimensions, change its domain.

* :func:`embed` hides a d-dimensional problem among ``D >= d`` coordinates, only ``d`` of
  which (chosen at random) have an effect (the "low effective dimension" benchmarks of
  REMBO, SI-BO, HDS and MS-UCB).
* :func:`rescale` is an affine change of variables from the problem's box to ``[0, 1]^D``
  or ``[-1, 1]^D``, so that every coordinate has the same range.

Both return a new :class:`~hdbo.problems.base.Problem` that keeps ``noise_std`` and the
optimum value, maps the optimizer(s) and the known structure, and records its provenance in
``params`` (``"transform"``, the transform's arguments, and the inner problem's ``name``
and ``params``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._validation import check_choice, check_int
from ..space import Box
from ..utils import as_generator, to_jsonable
from .base import Problem

__all__ = ["embed", "rescale", "DOMAINS"]

#: Canonical domains accepted by :func:`rescale`.
DOMAINS: tuple[str, ...] = ("unit", "symmetric")


def _optimizer_rows(problem: Problem) -> NDArray[np.float64] | None:
    if problem.optimizer is None:
        return None
    return np.atleast_2d(problem.optimizer)


def _same_shape_as_inner(rows: NDArray[np.float64], problem: Problem) -> NDArray[np.float64]:
    """Return a single point as shape (dim,) when the inner optimizer was one point."""
    single = problem.optimizer is not None and problem.optimizer.ndim == 1
    return rows[0] if single else rows


class _Embedded:
    """``X (n, D) -> problem(X[:, active])``; a class rather than a closure so it pickles."""

    def __init__(self, problem: Problem, active: NDArray[np.intp]) -> None:
        self.problem = problem
        self.active = active

    def __call__(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(self.problem(X[:, self.active]), dtype=float)


class _Rescaled:
    """``Z (n, D) -> problem(x(Z))`` with ``x = outer.to_unit`` then ``inner.from_unit``."""

    def __init__(self, problem: Problem, outer: Box, inner: Box) -> None:
        self.problem = problem
        self.outer = outer
        self.inner = inner

    def __call__(self, Z: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(self.problem(self.inner.from_unit(self.outer.to_unit(Z))), dtype=float)


def embed(
    problem: Problem,
    D: int,
    seed: int | np.random.Generator | None = None,
    *,
    name: str | None = None,
    inactive_bounds: tuple[float, float] | None = None,
) -> Problem:
    """Hide ``problem`` (dimension d) among ``D >= d`` coordinates, d of them active.

    The embedded function is ``F(x) = f(x[active_dims])``: coordinate
    ``active_dims[k]`` of ``x`` plays the role of coordinate ``k`` of the inner problem, and
    the other ``D - d`` coordinates have no effect.

    Parameters
    ----------
    problem : Problem
        The inner problem, of dimension ``d = problem.dim``.
    D : int
        The new dimension, ``D >= d``.
    seed : int, numpy.random.Generator or None
        Picks the active coordinates: ``d`` distinct indices of ``range(D)`` drawn uniformly
        without replacement, in random order, by ``as_generator(seed).choice``.
    name : str, optional
        Name of the new problem; default ``"<inner name>-embedded-<D>d"``.
    inactive_bounds : (float, float), optional
        The interval of every inactive coordinate. By default: the inner box's interval if
        the inner box is a cube (all coordinates share one interval, e.g. Ackley's
        ``[-32.768, 32.768]``), otherwise ``[0, 1]``. Active coordinates keep their bounds.
        Call :func:`rescale` afterwards to give every coordinate the same range.

    Returns
    -------
    Problem
        Dimension ``D``, same ``optimum_value`` and ``noise_std``.

        * ``optimizer``: the inner optimizer(s) with every inactive coordinate at the centre
          of its interval (same shape convention as the inner one). Any value of the
          inactive coordinates is equally optimal; the stored points are representatives.
        * ``structure``: ``"active_dims"`` (list of int, in the order above);
          ``"groups"`` (additive decompositions) and ``"subspace"`` (``A`` of
          ``f(x) = g(A x)``, shape (k, d), becomes shape (k, D) with zero columns on the
          inactive coordinates) are remapped. If the inner problem already had
          ``"active_dims"``, the result lists the coordinates of ``x`` that feed those, so
          ``"active_dims"`` always means "the coordinates that can change the value".
          Other keys are copied unchanged (they are assumed not to refer to coordinates).
        * ``params``: ``{"transform": "embed", "D": D, "seed": seed (None unless an int),
          "active_dims": [...], "inactive_bounds": [lo, hi], "inner": inner name,
          "inner_params": inner params}``.

    Raises
    ------
    TypeError
        If ``problem`` is not a Problem or ``D`` is not an int.
    ValueError
        If ``D < problem.dim`` or ``inactive_bounds`` is not an interval ``lo < hi``.

    Examples
    --------
    >>> from hdbo.problems import branin
    >>> p = embed(branin(), 10, seed=0)
    >>> p.dim, len(p.structure["active_dims"])
    (10, 2)
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a Problem, got {type(problem).__name__}")
    D = check_int(D, "D")
    d = problem.dim
    if D < d:
        raise ValueError(f"D must be >= the problem's dimension {d}, got D={D}")
    rng = as_generator(seed)
    active = rng.choice(D, size=d, replace=False).astype(np.intp)

    inner = problem.bounds
    if inactive_bounds is None:
        if np.all(inner.lower == inner.lower[0]) and np.all(inner.upper == inner.upper[0]):
            lo_in, hi_in = float(inner.lower[0]), float(inner.upper[0])
        else:
            lo_in, hi_in = 0.0, 1.0
    else:
        try:
            lo_in, hi_in = (float(v) for v in inactive_bounds)
        except (TypeError, ValueError):
            raise ValueError(
                f"inactive_bounds must be a pair (lower, upper) of floats, got {inactive_bounds!r}"
            ) from None
        if not (np.isfinite(lo_in) and np.isfinite(hi_in) and lo_in < hi_in):
            raise ValueError(f"inactive_bounds must be finite with lower < upper, got {inactive_bounds!r}")
    lower = np.full(D, lo_in)
    upper = np.full(D, hi_in)
    lower[active] = inner.lower
    upper[active] = inner.upper
    bounds = Box(lower, upper)

    fun = _Embedded(problem, active)
    optimizer = None
    rows = _optimizer_rows(problem)
    if rows is not None:
        full = np.tile(0.5 * (lower + upper), (rows.shape[0], 1))
        full[:, active] = rows
        optimizer = _same_shape_as_inner(full, problem)

    active_list = [int(i) for i in active]
    structure: dict[str, Any] = {}
    for key, value in problem.structure.items():
        if key == "active_dims":
            continue
        if key == "groups":
            structure["groups"] = [[active_list[int(j)] for j in group] for group in value]
        elif key == "subspace":
            A = np.atleast_2d(np.asarray(value, dtype=float))
            A_full = np.zeros((A.shape[0], D))
            A_full[:, active] = A
            structure["subspace"] = A_full
        else:
            structure[key] = value
    if "active_dims" in problem.structure:
        structure["active_dims"] = [active_list[int(j)] for j in problem.structure["active_dims"]]
    else:
        structure["active_dims"] = active_list

    params = {
        "transform": "embed",
        "D": D,
        "seed": int(seed) if isinstance(seed, (int, np.integer)) else None,
        "active_dims": active_list,
        "inactive_bounds": [lo_in, hi_in],
        "inner": problem.name,
        "inner_params": to_jsonable(problem.params),
    }
    return Problem(
        fun,
        bounds,
        name=name if name is not None else f"{problem.name}-embedded-{D}d",
        optimum_value=problem.optimum_value,
        optimizer=optimizer,
        noise_std=problem.noise_std,
        structure=structure,
        params=params,
    )


def rescale(problem: Problem, domain: str, *, name: str | None = None) -> Problem:
    """Express ``problem`` on ``[0, 1]^D`` (``"unit"``) or ``[-1, 1]^D`` (``"symmetric"``).

    With ``B`` the problem's box, the new problem is ``F(z) = f(x(z))`` where
    ``x(z) = B.from_unit(z)`` (unit) or ``B.from_symmetric(z)`` (symmetric), an affine map
    ``x = c + S z`` with ``S`` diagonal and positive.

    Parameters
    ----------
    problem : Problem
        The problem to rescale.
    domain : {"unit", "symmetric"}
        The new box.
    name : str, optional
        Name of the new problem; default: the inner problem's name (it is the same function
        in other coordinates).

    Returns
    -------
    Problem
        Same ``dim``, ``optimum_value`` and ``noise_std``.

        * ``optimizer``: the inner optimizer(s) mapped by ``B.to_unit`` /
          ``B.to_symmetric`` (clipped into the new box against round-off).
        * ``structure``: ``"active_dims"`` and ``"groups"`` are unchanged (the map acts on
          each coordinate separately). A ``"subspace"`` ``A`` (``f(x) = g(A x + b)``, with
          ``b = structure.get("subspace_offset", 0)``) becomes ``A S`` and the offset
          becomes ``A c + b``, so ``F(z) = g((A S) z + (A c + b))`` holds exactly; the row
          space of ``A S`` is the relevant subspace in the new coordinates (its rows are
          not re-orthonormalized). Other keys are copied unchanged.
        * ``params``: ``{"transform": "rescale", "domain": domain, "inner": inner name,
          "inner_params": inner params}``.

    Raises
    ------
    TypeError
        If ``problem`` is not a Problem.
    ValueError
        If ``domain`` is not ``"unit"`` or ``"symmetric"``.

    Examples
    --------
    >>> from hdbo.problems import branin
    >>> p = rescale(branin(), "unit")
    >>> p.bounds
    Box(lower=[0.0, 0.0], upper=[1.0, 1.0])
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a Problem, got {type(problem).__name__}")
    check_choice(domain, "domain", DOMAINS)
    box = problem.bounds
    D = box.dim
    if domain == "unit":
        new_box = Box.unit(D)
        to_inner, from_inner = box.from_unit, box.to_unit
        scale = box.width.copy()
    else:
        new_box = Box.symmetric(D)
        to_inner, from_inner = box.from_symmetric, box.to_symmetric
        scale = 0.5 * box.width
    shift = to_inner(np.zeros(D))  # x(0) = c
    fun = _Rescaled(problem, new_box, box)

    optimizer = None
    rows = _optimizer_rows(problem)
    if rows is not None:
        optimizer = _same_shape_as_inner(new_box.clip(from_inner(rows)), problem)

    structure: dict[str, Any] = dict(problem.structure)
    if "subspace" in structure:
        A = np.atleast_2d(np.asarray(structure["subspace"], dtype=float))
        offset = np.asarray(structure.get("subspace_offset", np.zeros(A.shape[0])), dtype=float)
        structure["subspace"] = A * scale[None, :]
        structure["subspace_offset"] = A @ shift + offset

    params = {
        "transform": "rescale",
        "domain": domain,
        "inner": problem.name,
        "inner_params": to_jsonable(problem.params),
    }
    return Problem(
        fun,
        new_box,
        name=name if name is not None else problem.name,
        optimum_value=problem.optimum_value,
        optimizer=optimizer,
        noise_std=problem.noise_std,
        structure=structure,
        params=params,
    )
