"""The :class:`Problem` type shared by every benchmark function.

Convention: every problem is a **maximization** problem (as in the papers). Functions that
are usually minimized (Branin, Ackley, ...) are negated, so ``optimum_value`` is the
maximum of ``f`` and regret is ``optimum_value - f(x) >= 0``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_real
from ..space import Box

__all__ = ["Problem"]


def _check_noise_std(noise_std: Any) -> float:
    """``noise_std`` as a float, which must be finite and >= 0."""
    noise_std = check_real(noise_std, "noise_std")
    if noise_std < 0:
        raise ValueError(f"noise_std must be finite and >= 0, got {noise_std!r}")
    return noise_std


class Problem:
    """A vectorized black-box test function with a known (or computed) maximum.

    Parameters
    ----------
    fun : callable
        ``fun(X) -> f`` with ``X`` of shape (n, dim) and ``f`` of shape (n,), noise-free.
    bounds : Box
        The search box in the problem's own units.
    name : str
        Registry name, e.g. ``"branin"``.
    optimum_value : float or None
        ``max_x f(x)`` over the box, if known.
    optimizer : ndarray of shape (dim,) or (k, dim), optional
        One or several maximizers, if known.
    noise_std : float, default 0.0
        Standard deviation of the Gaussian observation noise added by :meth:`evaluate`.
    structure : dict, optional
        Known structure that oracle methods may use and diagnostics may report, e.g.
        ``{"active_dims": [...]}`` (embedded problems), ``{"groups": [[...], ...]}``
        (additive problems) or ``{"subspace": A}`` (``f(x) = g(A x)``, A of shape (k, dim)).
        Non-oracle methods must ignore it.
    params : dict, optional
        The parameters the registry built it with (stored with runs for provenance).

    Attributes
    ----------
    dim : int
        Number of input dimensions.

    Raises
    ------
    TypeError
        If ``bounds`` is not a Box or ``noise_std`` is not a real number.
    ValueError
        If ``noise_std`` is negative or not finite.
    """

    def __init__(
        self,
        fun: Callable[[NDArray[np.float64]], NDArray[np.float64]],
        bounds: Box,
        *,
        name: str,
        optimum_value: float | None = None,
        optimizer: ArrayLike | None = None,
        noise_std: float = 0.0,
        structure: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
    ) -> None:
        if not isinstance(bounds, Box):
            raise TypeError(f"bounds must be a hdbo.space.Box, got {type(bounds).__name__}")
        self._fun = fun
        self.bounds = bounds
        self.name = name
        self.optimum_value = None if optimum_value is None else float(optimum_value)
        self.optimizer = None if optimizer is None else np.asarray(optimizer, dtype=float)
        self.noise_std = _check_noise_std(noise_std)
        self.structure: dict[str, Any] = dict(structure or {})
        self.params: dict[str, Any] = dict(params or {})

    @property
    def dim(self) -> int:
        """Number of input dimensions."""
        return self.bounds.dim

    def __call__(self, X: ArrayLike) -> NDArray[np.float64] | float:
        """Noise-free values of the objective.

        Parameters
        ----------
        X : array_like of shape (n, dim) or (dim,)
            Points in the problem's units (not checked against the bounds).

        Returns
        -------
        ndarray of shape (n,) or float
            One value per row, or a float for a single point of shape (dim,).

        Raises
        ------
        ValueError
            If X does not have ``dim`` columns.
        """
        X = np.asarray(X, dtype=float)
        single = X.ndim == 1
        X2 = np.atleast_2d(X)
        if X2.shape[-1] != self.dim:
            raise ValueError(f"X must have {self.dim} columns, got shape {X.shape}")
        f = np.asarray(self._fun(X2), dtype=float).reshape(-1)
        return float(f[0]) if single else f

    def evaluate(self, X: ArrayLike, rng: np.random.Generator) -> tuple[Any, Any]:
        """Noisy observations ``y = f(X) + noise_std * eps`` with ``eps ~ N(0, 1)``.

        Parameters
        ----------
        X : array_like of shape (n, dim) or (dim,)
            Points in the problem's units.
        rng : numpy.random.Generator
            Source of the noise; not used when ``noise_std == 0``.

        Returns
        -------
        y : ndarray of shape (n,) or float
            Observed values (equal to ``f`` when ``noise_std == 0``).
        f : ndarray of shape (n,) or float
            Noise-free values, as from :meth:`__call__`.
        """
        f = self(X)
        if self.noise_std > 0:
            noise = self.noise_std * rng.standard_normal(np.shape(f))
            return f + noise, f
        return f, f

    def regret(self, f: ArrayLike) -> NDArray[np.float64] | float | None:
        """Instantaneous regret ``optimum_value - f`` (>= 0 for any value f takes on its box).

        Parameters
        ----------
        f : float or array_like of shape (n,)
            Noise-free objective values.

        Returns
        -------
        float, ndarray of shape (n,), or None
            None if ``optimum_value`` is unknown.
        """
        if self.optimum_value is None:
            return None
        r = self.optimum_value - np.asarray(f, dtype=float)
        return float(r) if r.ndim == 0 else r

    def __repr__(self) -> str:
        return f"Problem(name={self.name!r}, dim={self.dim}, optimum_value={self.optimum_value})"
