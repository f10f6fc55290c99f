"""Box-shaped search spaces and the maps between a user's box and the canonical domains.

Users give bounds in their own units. Methods work in a canonical domain: the unit cube
``[0, 1]^D`` (default) or the symmetric cube ``[-1, 1]^D`` (papers that state their
algorithm there). :class:`Box` converts in both directions and validates points.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._docstrings import fill_doc

__all__ = ["Box", "as_box"]

# Docstring sections shared by Box's methods (filled in by ``fill_doc``).
_DOC = {
    "box_points": """
        Parameters
        ----------
        X : array_like of shape (n, dim) or (dim,)
            Points in the box's units.
    """,
    "cube": """
        Parameters
        ----------
        dim : int
            Number of dimensions, at least 1.

        Returns
        -------
        Box
    """,
}


class Box:
    """An axis-aligned box ``[lower_i, upper_i]`` in ``dim`` dimensions.

    Parameters
    ----------
    lower, upper : array_like of shape (dim,)
        Finite bounds with ``lower < upper`` in every coordinate.

    Raises
    ------
    ValueError
        If the bounds are not finite, have different shapes, or ``lower >= upper`` somewhere.

    Examples
    --------
    >>> box = Box([0.0, -5.0], [1.0, 5.0])
    >>> box.from_unit([[0.5, 0.5]])
    array([[0.5, 0. ]])
    """

    def __init__(self, lower: ArrayLike, upper: ArrayLike) -> None:
        lo = np.atleast_1d(np.asarray(lower, dtype=float)).copy()
        hi = np.atleast_1d(np.asarray(upper, dtype=float)).copy()
        if lo.ndim != 1 or hi.ndim != 1 or lo.shape != hi.shape:
            raise ValueError(
                f"bounds: lower and upper must be 1-D of equal length, got shapes {lo.shape} and {hi.shape}"
            )
        if lo.size == 0:
            raise ValueError("bounds: at least one dimension is required")
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            raise ValueError("bounds: every lower and upper bound must be finite")
        bad = np.flatnonzero(lo >= hi)
        if bad.size:
            i = int(bad[0])
            raise ValueError(
                f"bounds: lower must be < upper in every dimension; dimension {i} has "
                f"lower={lo[i]!r} >= upper={hi[i]!r}"
            )
        with np.errstate(over="ignore"):
            width_finite = np.all(np.isfinite(hi - lo))
        if not width_finite:
            raise ValueError("bounds: upper - lower overflows to infinity; use a smaller box or rescale the variables")
        lo.setflags(write=False)
        hi.setflags(write=False)
        self.lower: NDArray[np.float64] = lo
        self.upper: NDArray[np.float64] = hi

    # ------------------------------------------------------------------ basic properties
    @property
    def dim(self) -> int:
        """Number of dimensions."""
        return int(self.lower.size)

    @property
    def width(self) -> NDArray[np.float64]:
        """``upper - lower``, shape (dim,)."""
        return self.upper - self.lower

    @property
    def bounds(self) -> NDArray[np.float64]:
        """Bounds as an array of shape (dim, 2) with columns (lower, upper)."""
        return np.column_stack([self.lower, self.upper])

    def __repr__(self) -> str:
        if self.dim <= 4:
            return f"Box(lower={self.lower.tolist()}, upper={self.upper.tolist()})"
        return f"Box(dim={self.dim}, lower[0]={self.lower[0]}, upper[0]={self.upper[0]}, ...)"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Box)
            and other.dim == self.dim
            and bool(np.all(other.lower == self.lower) and np.all(other.upper == self.upper))
        )

    # ------------------------------------------------------------------ maps
    def to_unit(self, X: ArrayLike) -> NDArray[np.float64]:
        """Map points of the box to the unit cube, ``(X - lower) / width``.

        Parameters
        ----------
        X : array_like of shape (n, dim) or (dim,)
            Points in the box's units. They are not checked or clipped.

        Returns
        -------
        ndarray of the same shape as X
            Coordinates in ``[0, 1]`` for points inside the box.
        """
        return (np.asarray(X, dtype=float) - self.lower) / self.width

    def from_unit(self, U: ArrayLike) -> NDArray[np.float64]:
        """Map points of the unit cube to the box, ``lower + U * width`` (inverse of :meth:`to_unit`).

        Parameters
        ----------
        U : array_like of shape (n, dim) or (dim,)
            Points in ``[0, 1]^dim``. They are not checked or clipped.

        Returns
        -------
        ndarray of the same shape as U
            Points in the box's units.
        """
        return self.lower + np.asarray(U, dtype=float) * self.width

    @fill_doc(**_DOC)
    def to_symmetric(self, X: ArrayLike) -> NDArray[np.float64]:
        """Map points of the box to the symmetric cube, ``2 * to_unit(X) - 1``.

        %(box_points)s

        Returns
        -------
        ndarray of the same shape as X
            Coordinates in ``[-1, 1]`` for points inside the box.
        """
        return 2.0 * self.to_unit(X) - 1.0

    def from_symmetric(self, S: ArrayLike) -> NDArray[np.float64]:
        """Map points of the symmetric cube to the box (inverse of :meth:`to_symmetric`).

        Parameters
        ----------
        S : array_like of shape (n, dim) or (dim,)
            Points in ``[-1, 1]^dim``.

        Returns
        -------
        ndarray of the same shape as S
            Points in the box's units.
        """
        return self.from_unit((np.asarray(S, dtype=float) + 1.0) / 2.0)

    @fill_doc(**_DOC)
    def clip(self, X: ArrayLike) -> NDArray[np.float64]:
        """Clip every coordinate into ``[lower_i, upper_i]``.

        %(box_points)s

        Returns
        -------
        ndarray of the same shape as X
            A new float array; points already inside are unchanged.
        """
        return np.clip(np.asarray(X, dtype=float), self.lower, self.upper)

    def contains(self, X: ArrayLike, *, atol: float = 0.0) -> NDArray[np.bool_] | bool:
        """Whether points lie in the box, bounds included.

        Parameters
        ----------
        X : array_like of shape (n, dim) or (dim,)
            One point or a batch of points.
        atol : float, default 0.0
            Tolerance: a coordinate may exceed a bound by up to ``atol``.

        Returns
        -------
        bool or ndarray of bool of shape (n,)
            A bool for a single point of shape (dim,), otherwise one bool per row.
        """
        X = np.asarray(X, dtype=float)
        inside = np.all((X >= self.lower - atol) & (X <= self.upper + atol), axis=-1)
        return bool(inside) if X.ndim == 1 else inside

    def sample(self, n: int, rng: np.random.Generator) -> NDArray[np.float64]:
        """Draw points uniformly from the box.

        Parameters
        ----------
        n : int
            Number of points.
        rng : numpy.random.Generator
            Source of randomness (``n * dim`` draws of ``rng.random``).

        Returns
        -------
        ndarray of shape (n, dim)
        """
        return self.from_unit(rng.random((n, self.dim)))

    # ------------------------------------------------------------------ validation
    def check_point(self, x: ArrayLike, *, name: str = "x") -> NDArray[np.float64]:
        """Validate one point: a finite float vector of length ``dim`` inside the box.

        A point outside the box by at most ``1e-9`` times the width (per coordinate) is
        clipped in, as such a small excess comes from floating-point round-off in the maps;
        anything further raises.

        Parameters
        ----------
        x : array_like of shape (dim,)
            The point.
        name : str, default "x"
            Name of the argument in error messages.

        Returns
        -------
        ndarray of shape (dim,)
            ``x`` as floats, clipped into the box.

        Raises
        ------
        TypeError
            If ``x`` cannot be converted to a float array.
        ValueError
            If ``x`` has the wrong shape, is not finite, or lies outside the box.
        """
        try:
            arr = np.asarray(x, dtype=float)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be an array of floats, got {type(x).__name__}") from exc
        if arr.ndim != 1 or arr.size != self.dim:
            raise ValueError(f"{name} must have shape ({self.dim},), got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite, got {arr!r}")
        tol = 1e-9 * self.width
        if np.any(arr < self.lower - tol) or np.any(arr > self.upper + tol):
            i = int(np.flatnonzero((arr < self.lower - tol) | (arr > self.upper + tol))[0])
            raise ValueError(
                f"{name} lies outside the bounds: coordinate {i} is {arr[i]!r}, "
                f"bounds are [{self.lower[i]!r}, {self.upper[i]!r}]"
            )
        return self.clip(arr)

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        """The box as a JSON-serializable dict.

        Returns
        -------
        dict
            ``{"lower": [...], "upper": [...]}`` with lists of ``dim`` floats.
        """
        return {"lower": self.lower.tolist(), "upper": self.upper.tolist()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Box":
        """Rebuild a box from :meth:`to_dict` output.

        Parameters
        ----------
        data : dict
            A mapping with keys ``"lower"`` and ``"upper"``, each a sequence of ``dim`` floats.

        Returns
        -------
        Box

        Raises
        ------
        ValueError
            If the bounds are invalid (see :class:`Box`).
        """
        return cls(data["lower"], data["upper"])

    @classmethod
    @fill_doc(**_DOC)
    def unit(cls, dim: int) -> "Box":
        """The unit cube ``[0, 1]^dim``.

        %(cube)s
        """
        return cls(np.zeros(dim), np.ones(dim))

    @classmethod
    @fill_doc(**_DOC)
    def symmetric(cls, dim: int) -> "Box":
        """The symmetric cube ``[-1, 1]^dim``.

        %(cube)s
        """
        return cls(-np.ones(dim), np.ones(dim))


def as_box(bounds: Box | ArrayLike | Sequence[Sequence[float]], *, name: str = "bounds") -> Box:
    """Convert user bounds into a :class:`Box`.

    Parameters
    ----------
    bounds : Box, or array_like of shape (dim, 2)
        A Box, or one ``(lower, upper)`` pair per dimension (SciPy's convention), e.g.
        ``[(-5, 10), (0, 15)]``.
    name : str, default "bounds"
        Name of the argument in error messages.

    Returns
    -------
    Box
        ``bounds`` itself if it is already a Box, otherwise a new one.

    Raises
    ------
    TypeError
        If ``bounds`` is not array-like.
    ValueError
        If it does not have shape (dim, 2) or a lower bound is not below its upper bound.
    """
    if isinstance(bounds, Box):
        return bounds
    try:
        arr = np.asarray(bounds, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{name} must be a Box or a sequence of (lower, upper) pairs, got {type(bounds).__name__}"
        ) from exc
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"{name} must have shape (dim, 2) with one (lower, upper) pair per row, got {arr.shape}")
    try:
        return Box(arr[:, 0], arr[:, 1])
    except ValueError as exc:
        raise ValueError(str(exc).replace("bounds:", f"{name}:", 1)) from None
