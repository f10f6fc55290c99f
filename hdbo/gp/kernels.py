"""Covariance functions with log-space hyperparameters and analytic gradients.

Every kernel exposes (scikit-learn's contract, extended for speed):

* ``theta`` / ``bounds``: free hyperparameters in log space, shape (p,) and (p, 2). A
  hyperparameter whose lower and upper bound coincide is *fixed*: fitting leaves it alone.
* ``__call__(X, Y=None)`` -> K of shape (n, m); ``diag(X)`` -> shape (n,).
* ``gradient(X)`` -> dK/dtheta of shape (n, n, p) (tests and small problems), and
  ``gradient_contract(X, A)`` -> ``sum_ij A_ij dK_ij/dtheta_p`` of shape (p,), which is what
  the marginal-likelihood gradient needs and costs O(n^2 d) time and O(n^2) memory.
* ``grad_x(Xq, X, W)`` -> ``sum_i W[q, i] * d k(Xq[q], X[i]) / d Xq[q]`` of shape (nq, d),
  which gives the input gradients of the posterior mean and variance in one matrix product.

All kernels here are stationary, so ``k(x, x)`` does not depend on x and its input gradient is
zero. Kernel conventions differ between papers (SPEC.md §0.A.2): the SE kernel here is
``s * exp(-r^2 / 2)`` with ``r = ||(x - x') / l||``, i.e. P4/P5's ``sigma exp(-||x-x'||^2 / (2h^2))``
with ``s = sigma, l = h``; P2's ``exp(-||x-x'||^2 / b^2)`` is ``l = b / sqrt(2)``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial.distance import cdist

from .._docstrings import fill_doc
from .._validation import check_choice, check_int, check_real

__all__ = [
    "Kernel",
    "Stationary",
    "SquaredExponential",
    "Matern",
    "Additive",
    "Projected",
    "make_kernel",
]

Array = NDArray[np.float64]

# Additive kernels evaluate equal-size groups together, as stacks of per-group (n, m) matrices
# of at most this many bytes each (larger sets of groups go in several chunks).
_BATCH_BYTES = 2**19
# Additive._value_and_grad_fn keeps every group's profile derivative between the value and the
# gradients when they take at most this many bytes (otherwise it recomputes them).
_KEEP_BYTES = 2**28

# Docstring sections shared by the kernels' methods (filled in by ``fill_doc``).
_DOC = {
    "diag": """
        Parameters
        ----------
        X : array_like of shape (n, D) or (D,)

        Returns
        -------
        ndarray of shape (n,)
    """,
    "contract": """
        Parameters
        ----------
        X : array_like of shape (n, D)
        A : array_like of shape (n, n)
    """,
    "contract_points": """
        Parameters
        ----------
        X : array_like of shape (n, d)
            Points.
        A : array_like of shape (n, n)
            Weights; need not be symmetric.
    """,
    "grad_x_params": """
        Parameters
        ----------
        Xq : array_like of shape (nq, D)
        X : array_like of shape (n, D)
        W : array_like of shape (nq, n)
            Weights.
    """,
    "call_returns": """
        Returns
        -------
        K : ndarray of shape (n, m)

        Raises
        ------
        ValueError
            If an input is not 1- or 2-D, or its number of columns does not match the kernel.
    """,
}


def _as_2d(X: ArrayLike, name: str = "X") -> Array:
    """``X`` as a float array of shape (n, d); a 1-D array is one point (shared with :mod:`hdbo.acquisition`)."""
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[None, :]
    if X.ndim != 2:
        raise ValueError(f"{name} must have shape (n, d) or (d,), got shape {X.shape}")
    return X


def _log_bounds(bounds: tuple[float, float], name: str) -> tuple[float, float]:
    lo, hi = (float(b) for b in bounds)
    if not (0 < lo <= hi < np.inf):
        raise ValueError(f"{name} must satisfy 0 < lower <= upper < inf, got {bounds!r}")
    return np.log(lo), np.log(hi)


class Kernel(ABC):
    """Abstract covariance function (see the module docstring for the contract)."""

    @property
    @abstractmethod
    def theta(self) -> Array:
        """Log-space hyperparameters, shape (p,) (a copy)."""

    @theta.setter
    @abstractmethod
    def theta(self, value: ArrayLike) -> None: ...

    @property
    @abstractmethod
    def bounds(self) -> Array:
        """Log-space bounds, shape (p, 2)."""

    @property
    @abstractmethod
    def hyperparameter_names(self) -> list[str]:
        """One name per entry of ``theta``."""

    @property
    def n_params(self) -> int:
        """Number of entries of ``theta``."""
        return int(self.theta.size)

    @abstractmethod
    def __call__(self, X: ArrayLike, Y: ArrayLike | None = None) -> Array:
        """Covariance matrix between the rows of X and the rows of Y.

        Parameters
        ----------
        X : array_like of shape (n, d) or (d,)
            First arguments; a 1-D array is one point.
        Y : array_like of shape (m, d) or (d,), optional
            Second arguments; default X (then m = n and the matrix is symmetric).

        Returns
        -------
        K : ndarray of shape (n, m)
            ``K[i, j] = k(X[i], Y[j])``.

        Raises
        ------
        ValueError
            If an input is not 1- or 2-D, or its number of columns does not match the kernel.
        """

    @abstractmethod
    def diag(self, X: ArrayLike) -> Array:
        """Prior variances ``k(x, x)``: the diagonal of ``self(X)`` without the full matrix.

        Parameters
        ----------
        X : array_like of shape (n, d) or (d,)
            Points; a 1-D array is one point.

        Returns
        -------
        ndarray of shape (n,)
        """

    @abstractmethod
    @fill_doc(**_DOC)
    def gradient_contract(self, X: ArrayLike, A: ArrayLike) -> Array:
        """Hyperparameter gradient of ``K(X, X)`` contracted with a weight matrix.

        Computes ``g[k] = sum_ij A[i, j] * dK(X, X)[i, j] / dtheta[k]`` without forming the
        (n, n, p) tensor of :meth:`gradient`. The gradient of the log marginal likelihood is
        ``0.5 * gradient_contract(X, a a^T - K^{-1})`` with ``a = K^{-1} y``.

        %(contract_points)s

        Returns
        -------
        ndarray of shape (p,)
            Derivatives with respect to the log-space :attr:`theta`.
        """

    @abstractmethod
    def grad_x(self, Xq: ArrayLike, X: ArrayLike, W: ArrayLike) -> Array:
        """Input gradients of the kernel at query points, contracted with weights.

        Row q of the result is ``sum_i W[q, i] * d k(x, X[i]) / dx`` at ``x = Xq[q]``. With
        ``W[q] = alpha`` it is the gradient of the posterior mean ``k(x, X) alpha``, and with
        ``W[q] = K^{-1} k(X, Xq[q])`` half the gradient of ``k(x, X) K^{-1} k(X, x)``, so one
        call gives the gradients at every query point.

        Parameters
        ----------
        Xq : array_like of shape (nq, d)
            Points the gradient is taken at (first kernel argument).
        X : array_like of shape (n, d)
            Second kernel arguments, e.g. the training inputs.
        W : array_like of shape (nq, n)
            Weights.

        Returns
        -------
        ndarray of shape (nq, d)
        """

    def gradient(self, X: ArrayLike) -> Array:
        """Dense hyperparameter gradient of ``K(X, X)``.

        Built from one :meth:`gradient_contract` call per pair ``i <= j``, so it costs
        O(n^2) such calls: meant for tests and small n.

        Parameters
        ----------
        X : array_like of shape (n, d) or (d,)
            Points.

        Returns
        -------
        ndarray of shape (n, n, p)
            ``out[i, j, k] = dK(X, X)[i, j] / dtheta[k]`` (log-space :attr:`theta`).
        """
        X = _as_2d(X)
        n, p = X.shape[0], self.n_params
        out = np.empty((n, n, p))
        for i in range(n):
            for j in range(i, n):
                A = np.zeros((n, n))
                A[i, j] = 1.0
                out[i, j] = out[j, i] = self.gradient_contract(X, A)
        return out

    def _value_and_grad_fn(
        self, X: Array
    ) -> tuple[Array, Callable[[Array], Array], Callable[[Array], Array]]:
        """``K(X, X)`` and its two contracted gradients, sharing the work they have in common.

        For objectives that factorize ``K`` and then need gradients with a weight matrix A
        that depends on the factor (the marginal likelihood and the projection learning):
        kernels that can override this to compute distances and profiles once. The default
        calls :meth:`__call__`, :meth:`gradient_contract` and :meth:`grad_x`.

        Parameters
        ----------
        X : ndarray of shape (n, d)
            Points (float, 2-D; not checked).

        Returns
        -------
        K : ndarray of shape (n, n)
            ``self(X)`` (to round-off); the caller may modify it.
        theta_grad : callable
            ``A -> self.gradient_contract(X, A)``, shape (p,).
        input_grad : callable
            ``A -> self.grad_x(X, X, A)``, shape (n, d).
        """
        return (self(X), lambda A: self.gradient_contract(X, A), lambda A: self.grad_x(X, X, A))

    def clone(self) -> "Kernel":
        """An independent deep copy (hyperparameters, bounds and any groups or projection).

        Returns
        -------
        Kernel
            A kernel of the same class; changing it does not change ``self``.
        """
        import copy

        return copy.deepcopy(self)

    def __repr__(self) -> str:
        vals = ", ".join(f"{n}={np.exp(t):.4g}" for n, t in zip(self.hyperparameter_names, self.theta))
        return f"{type(self).__name__}({vals})"


    def cross_fn(self, X: ArrayLike) -> Callable[[Array], Array]:
        """``k(., X)`` as a function of its first argument, for many calls with the same X.

        Acquisition maximizers such as DIRECT ask for one point at a time, thousands of times
        against the same training inputs; kernels precompute what depends on X alone and
        skip the argument checks of :meth:`__call__`.

        Parameters
        ----------
        X : array_like of shape (m, d)
            Second arguments, fixed.

        Returns
        -------
        callable
            Maps a float ndarray Zq of shape (n, d) (not checked) to ``k(Zq, X)`` of shape
            (n, m), equal to ``self(Zq, X)`` to round-off. It keeps the hyperparameters of
            the moment it was made.
        """
        X = _as_2d(X)
        return lambda Zq: self(Zq, X)


class Stationary(Kernel):
    """``k(x, x') = s * rho(r^2)`` with ``r^2 = sum_p ((x_p - x'_p) / l_p)^2``.

    Parameters
    ----------
    dim : int, optional
        Input dimension; required when ``ard=True``. Isotropic kernels accept any dimension.
    lengthscale : float or array_like of shape (dim,), default 1.0
        Length-scale(s) l (the bandwidth h of Kandasamy et al.).
    variance : float, default 1.0
        Signal variance s (the scale sigma of Kandasamy et al.).
    ard : bool, default False
        One length-scale per dimension (automatic relevance determination).
    lengthscale_bounds, variance_bounds : (float, float)
        Bounds used when fitting; equal bounds fix the hyperparameter.

    Raises
    ------
    TypeError
        If ``dim`` is not an int or None, or ``variance`` is not a real number.
    ValueError
        If ``ard=True`` without ``dim``, ``dim < 1``, a length-scale or the variance is not
        positive and finite, or bounds do not satisfy ``0 < lower <= upper < inf``.

    Notes
    -----
    ``theta = [log s, log l_1, ..., log l_q]`` with q = 1 (isotropic) or q = dim (ARD).
    Subclasses define ``_profile(r2) -> (rho, drho/dr2)``.
    """

    def __init__(
        self,
        dim: int | None = None,
        *,
        lengthscale: float | ArrayLike = 1.0,
        variance: float = 1.0,
        ard: bool = False,
        lengthscale_bounds: tuple[float, float] = (1e-2, 1e2),
        variance_bounds: tuple[float, float] = (1e-2, 1e2),
    ) -> None:
        if ard and dim is None:
            raise ValueError("dim is required when ard=True")
        self.dim = check_int(dim, "dim", low=1, allow_none=True)
        self.ard = bool(ard)
        q = self.dim if self.ard else 1
        try:
            ls = np.broadcast_to(np.asarray(lengthscale, dtype=float), (q,)).copy()
        except ValueError:
            ls = np.full(q, np.nan)
        if np.any(~(ls > 0)) or not np.all(np.isfinite(ls)):
            raise ValueError(f"lengthscale must be positive with shape ({q},), got {lengthscale!r}")
        variance = check_real(variance, "variance", low=0, low_inclusive=False)
        self._theta = np.concatenate([[np.log(variance)], np.log(ls)])
        lb = _log_bounds(lengthscale_bounds, "lengthscale_bounds")
        vb = _log_bounds(variance_bounds, "variance_bounds")
        self._bounds = np.array([vb] + [lb] * q)

    # -- hyperparameters
    @property
    def theta(self) -> Array:
        """``[log s, log l_1, ..., log l_q]``, shape (1 + q,) (a copy)."""
        return self._theta.copy()

    @theta.setter
    def theta(self, value: ArrayLike) -> None:
        value = np.asarray(value, dtype=float).reshape(-1)
        if value.shape != self._theta.shape:
            raise ValueError(f"theta must have shape {self._theta.shape}, got {value.shape}")
        self._theta = value.copy()

    @property
    def bounds(self) -> Array:
        """Log-space bounds of :attr:`theta`, shape (1 + q, 2) (a copy; settable)."""
        return self._bounds.copy()

    @bounds.setter
    def bounds(self, value: ArrayLike) -> None:
        value = np.asarray(value, dtype=float)
        if value.shape != self._bounds.shape or np.any(value[:, 0] > value[:, 1]):
            raise ValueError(f"bounds must have shape {self._bounds.shape} with lower <= upper")
        self._bounds = value.copy()

    @property
    def hyperparameter_names(self) -> list[str]:
        """``["variance", "lengthscale"]``, or ``"lengthscale_<i>"`` for each dimension with ARD."""
        if self.ard:
            return ["variance"] + [f"lengthscale_{i}" for i in range(self.dim)]  # type: ignore[arg-type]
        return ["variance", "lengthscale"]

    @property
    def variance(self) -> float:
        """Signal variance s."""
        return float(np.exp(self._theta[0]))

    @property
    def lengthscale(self) -> Array:
        """Length-scale(s), shape (1,) or (dim,)."""
        return np.exp(self._theta[1:])

    def fix(self, *, variance: float | None = None, lengthscale: float | ArrayLike | None = None) -> "Stationary":
        """Set hyperparameters and fix them, so that fitting leaves them alone.

        A fixed hyperparameter has its lower and upper bound both equal to the new value.

        Parameters
        ----------
        variance : float, optional
            New signal variance s; None leaves the variance and its bounds unchanged.
        lengthscale : float or array_like of shape (q,), optional
            New length-scale(s), broadcast to the q = 1 (isotropic) or q = dim (ARD)
            entries; None leaves them unchanged.

        Returns
        -------
        Stationary
            ``self``.
        """
        if variance is not None:
            self._theta[0] = np.log(variance)
            self._bounds[0] = self._theta[0]
        if lengthscale is not None:
            self._theta[1:] = np.log(np.broadcast_to(np.asarray(lengthscale, dtype=float), self._theta[1:].shape))
            self._bounds[1:, 0] = self._theta[1:]
            self._bounds[1:, 1] = self._theta[1:]
        return self

    # -- evaluation
    @abstractmethod
    def _profile(self, r2: Array) -> tuple[Array, Array]:
        """``(rho(r2), d rho / d r2)`` elementwise."""

    def _scaled(self, X: Array) -> Array:
        if self.dim is not None and X.shape[1] != self.dim:
            raise ValueError(f"X must have {self.dim} columns, got {X.shape[1]}")
        return X / self.lengthscale

    # Kernels whose profile is not smooth in r^2 at 0 (Matern 1/2 uses sqrt(r^2)) need
    # distances without the ~1e-16 cancellation error of the fast matrix-product form.
    _exact_distances = False

    def _sqdist(self, A: Array, B: Array, same: bool = False) -> Array:
        if self._exact_distances:
            return cdist(A, B, "sqeuclidean")
        d2 = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * (A @ B.T)
        if same:
            np.fill_diagonal(d2, 0.0)
        return np.maximum(d2, 0.0, out=d2)

    @fill_doc(**_DOC)
    def __call__(self, X: ArrayLike, Y: ArrayLike | None = None) -> Array:
        """Covariance matrix ``s * rho(r^2)`` between the rows of X and Y.

        Parameters
        ----------
        X : array_like of shape (n, d) or (d,)
            First arguments; ``d = dim`` if the kernel has a dimension.
        Y : array_like of shape (m, d) or (d,), optional
            Second arguments; default X, in which case the squared distances on the
            diagonal are exactly 0.

        %(call_returns)s
        """
        Xs = self._scaled(_as_2d(X))
        Ys = Xs if Y is None else self._scaled(_as_2d(Y, "Y"))
        rho, _ = self._profile(self._sqdist(Xs, Ys, same=Y is None))
        return self.variance * rho

    def cross_fn(self, X: ArrayLike) -> Callable[[Array], Array]:
        """``k(., X)`` for many calls with the same X (see :meth:`Kernel.cross_fn`).

        The scaled X, its squared norms and the signal variance are computed once.
        """
        Xs = self._scaled(_as_2d(X))
        inv_l = 1.0 / self.lengthscale
        s, profile = self.variance, self._profile
        if self._exact_distances:
            return lambda Zq: s * profile(cdist(Zq * inv_l, Xs, "sqeuclidean"))[0]
        XsT = np.ascontiguousarray(Xs.T)
        x2 = np.einsum("ij,ij->i", Xs, Xs)

        def k(Zq: Array) -> Array:
            Zs = Zq * inv_l
            d2 = np.einsum("ij,ij->i", Zs, Zs)[:, None] + x2 - 2.0 * (Zs @ XsT)
            return s * profile(np.maximum(d2, 0.0, out=d2))[0]

        return k

    def diag(self, X: ArrayLike) -> Array:
        """Prior variances at the rows of X: all equal to the signal variance s.

        Parameters
        ----------
        X : array_like of shape (n, d) or (d,)
            Points (only their number is used).

        Returns
        -------
        ndarray of shape (n,)
        """
        return np.full(_as_2d(X).shape[0], self.variance)

    @fill_doc(**_DOC)
    def gradient_contract(self, X: ArrayLike, A: ArrayLike) -> Array:
        """Hyperparameter gradient of ``K(X, X)`` contracted with A (see :meth:`Kernel.gradient_contract`).

        Entry 0 is ``sum_ij A_ij K_ij`` (the derivative with respect to ``log s``); the
        length-scale entries use ``d r^2 / d log l_k = -2 ((x_k - x'_k) / l_k)^2``. Costs
        O(n^2 d) time and O(n^2) memory, also with ARD.

        %(contract_points)s

        Returns
        -------
        ndarray of shape (1 + q,)
            Ordered like :attr:`theta`.
        """
        X = _as_2d(X)
        A = np.asarray(A, dtype=float)
        Xs = self._scaled(X)
        r2 = self._sqdist(Xs, Xs, same=True)
        rho, drho = self._profile(r2)
        s = self.variance
        out = np.empty(self._theta.size)
        out[0] = s * np.sum(A * rho)
        B = A * (s * drho)  # dK/dr2 weighted by A
        if not self.ard:
            out[1] = -2.0 * np.sum(B * r2)
        else:
            # sum_ij B_ij (xs_ip - xs_jp)^2 for every p, without an (n, n, d) tensor.
            rows, cols = B.sum(1), B.sum(0)
            sq = Xs * Xs
            cross = np.sum(Xs * (B @ Xs), axis=0)
            out[1:] = -2.0 * (rows @ sq + cols @ sq - 2.0 * cross)
        return out

    def grad_x(self, Xq: ArrayLike, X: ArrayLike, W: ArrayLike) -> Array:
        """Weighted input gradients ``sum_i W[q, i] d k(Xq[q], X[i]) / dXq[q]`` (see :meth:`Kernel.grad_x`).

        Parameters
        ----------
        Xq : array_like of shape (nq, d)
            Points the gradient is taken at.
        X : array_like of shape (n, d)
            Second kernel arguments.
        W : array_like of shape (nq, n)
            Weights.

        Returns
        -------
        ndarray of shape (nq, d)
        """
        Xq, X = _as_2d(Xq, "Xq"), _as_2d(X)
        Xqs, Xs = self._scaled(Xq), self._scaled(X)
        _, drho = self._profile(self._sqdist(Xqs, Xs))
        C = np.asarray(W, dtype=float) * (self.variance * drho)  # (nq, n)
        # d r2 / d xq = 2 (xq - x) / l^2
        return 2.0 * (Xqs * C.sum(1)[:, None] - C @ Xs) / self.lengthscale


class SquaredExponential(Stationary):
    """Squared-exponential kernel ``s * exp(-r^2 / 2)``; see :class:`Stationary`."""

    def _profile(self, r2: Array) -> tuple[Array, Array]:
        rho = np.exp(-0.5 * r2)
        return rho, -0.5 * rho


class Matern(Stationary):
    """Matern kernel with smoothness ``nu`` in {1/2, 3/2, 5/2}; see :class:`Stationary`.

    ``nu=0.5: s exp(-r)``, ``nu=1.5: s (1 + sqrt(3) r) exp(-sqrt(3) r)``,
    ``nu=2.5: s (1 + sqrt(5) r + 5 r^2 / 3) exp(-sqrt(5) r)``. For ``nu = 1/2`` the kernel is
    not differentiable at ``r = 0``; its input gradient there is taken as 0.

    Parameters
    ----------
    dim : int, optional
        Input dimension (see :class:`Stationary`).
    nu : {0.5, 1.5, 2.5}, default 2.5
        Smoothness.
    **kwargs
        ``lengthscale``, ``variance``, ``ard``, ``lengthscale_bounds`` and
        ``variance_bounds``, as in :class:`Stationary`.

    Raises
    ------
    ValueError
        If ``nu`` is not one of the three values, or another argument is invalid.
    """

    def __init__(self, dim: int | None = None, *, nu: float = 2.5, **kwargs: object) -> None:
        self.nu = float(check_choice(nu, "nu", (0.5, 1.5, 2.5)))
        self._exact_distances = self.nu == 0.5
        super().__init__(dim, **kwargs)  # type: ignore[arg-type]

    def _profile(self, r2: Array) -> tuple[Array, Array]:
        r = np.sqrt(r2)
        if self.nu == 0.5:
            rho = np.exp(-r)
            with np.errstate(divide="ignore", invalid="ignore"):
                d = np.where(r > 0, -rho / (2.0 * np.where(r > 0, r, 1.0)), 0.0)
            return rho, d
        # in place (the same operations in the same order as the formulas, so the same numbers):
        # on the (n, t) blocks of a large acquisition batch this is the hot loop
        a = np.array(r, dtype=float)  # a writable array also for a 0-d input
        if self.nu == 1.5:
            a *= np.sqrt(3.0)
            e = np.negative(a, out=np.empty_like(a))
            np.exp(e, out=e)
            a += 1.0
            a *= e  # (1 + a) e
            e *= -1.5
            return a, e
        a *= np.sqrt(5.0)
        e = np.negative(a, out=np.empty_like(a))
        np.exp(e, out=e)
        rho = a * a
        rho /= 3.0
        a += 1.0
        rho += a  # (1 + a) + a^2 / 3
        rho *= e
        a *= -(5.0 / 6.0)
        a *= e  # -(5/6) (1 + a) e
        return rho, a

    def __repr__(self) -> str:
        return super().__repr__().replace("Matern(", f"Matern(nu={self.nu}, ", 1)


class Additive(Kernel):
    """Sum of kernels over disjoint groups of coordinates: ``k(x, x') = sum_j k_j(x[g_j], x'[g_j])``.

    Parameters
    ----------
    base : Stationary
        Kernel applied to each group. Use an isotropic kernel (``dim=None``) when groups
        differ in size.
    groups : sequence of sequences of int
        Disjoint coordinate index sets. Coordinates in no group do not affect the kernel.
    shared : bool, default True
        All groups share ``base``'s hyperparameters (Kandasamy et al. 2015: one scale and one
        bandwidth); otherwise every group gets its own copy of ``base``.

    Notes
    -----
    ``group_kernel(j)`` returns group j's kernel acting on that group's coordinates only; the
    GP uses it for the per-group posterior (eq. 5 of Kandasamy et al. 2015).
    """

    def __init__(self, base: Stationary, groups: Sequence[Sequence[int]], *, shared: bool = True) -> None:
        groups = [np.asarray(g, dtype=int).reshape(-1) for g in groups]
        if not groups or any(g.size == 0 for g in groups):
            raise ValueError("groups must be a non-empty list of non-empty index lists")
        allidx = np.concatenate(groups)
        if np.any(allidx < 0) or np.unique(allidx).size != allidx.size:
            raise ValueError("groups must be disjoint sets of non-negative coordinate indices")
        self.groups = groups
        self.shared = bool(shared)
        self._kernels = [base] if shared else [base.clone() for _ in groups]

    @property
    def n_groups(self) -> int:
        """Number of groups M."""
        return len(self.groups)

    def group_kernel(self, j: int) -> Stationary:
        """The kernel of group j, acting on that group's coordinates only.

        Parameters
        ----------
        j : int
            Group index, ``0 <= j < n_groups``.

        Returns
        -------
        Stationary
            With ``shared=True``, the one base kernel (the same object for every j).
        """
        return self._kernels[0 if self.shared else j]  # type: ignore[return-value]

    def _pairs(self):
        return ((g, self.group_kernel(j)) for j, g in enumerate(self.groups))

    # -- batched evaluation: with shared isotropic hyperparameters every group has the same
    # scale, bandwidth and profile, so groups of equal size are evaluated as one stack of
    # (n, m) matrices instead of one small kernel call per group (same values to round-off).
    def _batched(self) -> bool:
        base = self._kernels[0]
        return (self.shared and isinstance(base, Stationary) and not base.ard and base.dim is None
                and not base._exact_distances)

    def _chunks(self, rows: int, cols: int) -> list[NDArray[np.intp]]:
        """Group index arrays of shape (m, size): equal-size groups stacked, in chunks of at
        most ``_BATCH_BYTES`` of (rows, cols) matrices."""
        by_size: dict[int, list[NDArray[np.intp]]] = {}
        for g in self.groups:
            by_size.setdefault(g.size, []).append(g)
        per = max(1, _BATCH_BYTES // (8 * max(1, rows * cols)))
        return [np.stack(gs[i : i + per]) for gs in by_size.values() for i in range(0, len(gs), per)]

    @staticmethod
    def _stack(Xs: Array, idx: NDArray[np.intp]) -> Array:
        """The groups' columns of Xs (n, D) stacked: shape (m, n, size), C-contiguous."""
        return np.ascontiguousarray(Xs[:, idx].transpose(1, 0, 2))

    @staticmethod
    def _stack_sqdist(A: Array, B: Array | None) -> Array:
        """Per-group squared distances between stacked inputs A (m, n, size) and B (m, k, size),
        shape (m, n, k), like :meth:`Stationary._sqdist` (B None: A itself, diagonal exactly 0)."""
        a2 = (A * A).sum(2)
        b2 = a2 if B is None else (B * B).sum(2)
        d2 = a2[:, :, None] + b2[:, None, :] - 2.0 * np.matmul(A, (A if B is None else B).transpose(0, 2, 1))
        if B is None:
            r = np.arange(d2.shape[1])
            d2[:, r, r] = 0.0
        return np.maximum(d2, 0.0, out=d2)

    def _stack_grad_x(self, Aq: Array, A: Array, idx: NDArray[np.intp], C: Array, out: Array) -> None:
        """Write ``grad_x`` of the groups ``idx`` into the columns of ``out`` (nq, D), from the
        stacked scaled inputs Aq (m, nq, size) and A (m, n, size) and the weighted profile
        derivatives ``C = W * (s * drho)`` of shape (m, nq, n)."""
        G = Aq * C.sum(2)[:, :, None] - np.matmul(C, A)
        out[:, idx] = (2.0 * G / self._kernels[0].lengthscale).transpose(1, 0, 2)

    @property
    def theta(self) -> Array:
        """The base kernel's :attr:`~Stationary.theta` if shared, else every group's in group order."""
        return np.concatenate([k.theta for k in self._kernels])

    @theta.setter
    def theta(self, value: ArrayLike) -> None:
        value = np.asarray(value, dtype=float).reshape(-1)
        if value.size != sum(k.n_params for k in self._kernels):
            raise ValueError(f"theta must have {self.n_params} entries, got {value.size}")
        i = 0
        for k in self._kernels:
            k.theta = value[i : i + k.n_params]
            i += k.n_params

    @property
    def bounds(self) -> Array:
        """Log-space bounds of :attr:`theta`, shape (p, 2)."""
        return np.vstack([k.bounds for k in self._kernels])

    @property
    def hyperparameter_names(self) -> list[str]:
        """The base kernel's names if shared, else ``"g<j>.<name>"`` for each group j."""
        if self.shared:
            return list(self._kernels[0].hyperparameter_names)
        return [f"g{j}.{n}" for j, k in enumerate(self._kernels) for n in k.hyperparameter_names]

    def __call__(self, X: ArrayLike, Y: ArrayLike | None = None) -> Array:
        """Sum over groups of ``k_j(X[:, g_j], Y[:, g_j])``.

        Parameters
        ----------
        X : array_like of shape (n, D) or (D,)
            First arguments in full coordinates (every group index must be < D).
        Y : array_like of shape (m, D) or (D,), optional
            Second arguments; default X.

        Returns
        -------
        K : ndarray of shape (n, m)
        """
        X = _as_2d(X)
        if not self._batched():
            Y = X if Y is None else _as_2d(Y, "Y")
            return sum(k(X[:, g], Y[:, g]) for g, k in self._pairs())  # type: ignore[return-value]
        base = self._kernels[0]
        Xs = X / base.lengthscale
        Ys = None if Y is None else _as_2d(Y, "Y") / base.lengthscale
        K = np.zeros((X.shape[0], X.shape[0] if Ys is None else Ys.shape[0]))
        for idx in self._chunks(*K.shape):
            B = None if Ys is None else self._stack(Ys, idx)
            rho, _ = base._profile(self._stack_sqdist(self._stack(Xs, idx), B))
            K += rho.sum(0)
        return base.variance * K

    def group_call(self, j: int, X: ArrayLike, Y: ArrayLike | None = None) -> Array:
        """Group j's own kernel matrix ``k_j(X[:, g_j], Y[:, g_j])``.

        Parameters
        ----------
        j : int
            Group index.
        X : array_like of shape (n, D) or (D,)
            First arguments in full coordinates.
        Y : array_like of shape (m, D) or (D,), optional
            Second arguments in full coordinates; default X.

        Returns
        -------
        ndarray of shape (n, m)
        """
        X = _as_2d(X)
        Y = X if Y is None else _as_2d(Y, "Y")
        g = self.groups[j]
        return self.group_kernel(j)(X[:, g], Y[:, g])

    @fill_doc(**_DOC)
    def diag(self, X: ArrayLike) -> Array:
        """Prior variances at the rows of X: the sum of the groups' variances.

        %(diag)s
        """
        X = _as_2d(X)
        return sum(k.diag(X[:, g]) for g, k in self._pairs())  # type: ignore[return-value]

    @fill_doc(**_DOC)
    def gradient_contract(self, X: ArrayLike, A: ArrayLike) -> Array:
        """Hyperparameter gradient of ``K(X, X)`` contracted with A (see :meth:`Kernel.gradient_contract`).

        With shared hyperparameters the groups' contributions are added; otherwise each
        group contributes its own block.

        %(contract)s

        Returns
        -------
        ndarray of shape (p,)
            Ordered like :attr:`theta`.
        """
        X = _as_2d(X)
        if self._batched():
            return self._value_and_grad_fn(X, keep=False)[1](np.asarray(A, dtype=float))
        parts = [k.gradient_contract(X[:, g], A) for g, k in self._pairs()]
        return np.sum(parts, axis=0) if self.shared else np.concatenate(parts)

    @fill_doc(**_DOC)
    def grad_x(self, Xq: ArrayLike, X: ArrayLike, W: ArrayLike) -> Array:
        """Weighted input gradients (see :meth:`Kernel.grad_x`), group by group.

        %(grad_x_params)s

        Returns
        -------
        ndarray of shape (nq, D)
            Columns in no group are 0.
        """
        Xq, X = _as_2d(Xq, "Xq"), _as_2d(X)
        out = np.zeros_like(Xq)
        if not self._batched():
            for g, k in self._pairs():
                out[:, g] = k.grad_x(Xq[:, g], X[:, g], W)
            return out
        base = self._kernels[0]
        W = np.asarray(W, dtype=float)
        Xqs, Xs = Xq / base.lengthscale, X / base.lengthscale
        s = base.variance
        for idx in self._chunks(Xq.shape[0], X.shape[0]):
            Aq, A = self._stack(Xqs, idx), self._stack(Xs, idx)
            _, drho = base._profile(self._stack_sqdist(Aq, A))
            self._stack_grad_x(Aq, A, idx, W * (s * drho), out)
        return out

    def _value_and_grad_fn(
        self, X: Array, *, keep: bool = True
    ) -> tuple[Array, Callable[[Array], Array], Callable[[Array], Array]]:
        """``K(X, X)`` and its contracted gradients (see :meth:`Kernel._value_and_grad_fn`).

        Batched over groups, each group's distances and profile computed once for all three;
        its profile derivatives are kept for ``input_grad`` when ``keep`` and they take at
        most ``_KEEP_BYTES``.
        """
        if not self._batched():
            return super()._value_and_grad_fn(X)
        base = self._kernels[0]
        s = base.variance
        Xs = X / base.lengthscale
        n = X.shape[0]
        keep = keep and 8 * n * n * len(self.groups) <= _KEEP_BYTES
        P, Q = np.zeros((n, n)), np.zeros((n, n))  # sum_j rho_j and sum_j drho_j r2_j
        kept: list[tuple[NDArray[np.intp], Array, Array]] = []
        chunks = self._chunks(n, n)
        for idx in chunks:
            A = self._stack(Xs, idx)
            r2 = self._stack_sqdist(A, None)
            rho, drho = base._profile(r2)
            P += rho.sum(0)
            Q += (drho * r2).sum(0)
            if keep:
                kept.append((idx, A, drho))

        def theta_grad(A: Array) -> Array:
            # d K / d log s = K; d r2 / d log l = -2 r2 (see Stationary.gradient_contract)
            return np.array([s * np.sum(A * P), -2.0 * s * np.sum(A * Q)])

        def input_grad(A: Array) -> Array:
            out = np.zeros_like(X)
            for idx, Xg, drho in kept if keep else _recomputed():
                self._stack_grad_x(Xg, Xg, idx, A * (s * drho), out)
            return out

        def _recomputed():
            for idx in chunks:
                Xg = self._stack(Xs, idx)
                yield idx, Xg, base._profile(self._stack_sqdist(Xg, None))[1]

        return s * P, theta_grad, input_grad

    def __repr__(self) -> str:
        return f"Additive(groups={[g.tolist() for g in self.groups]}, shared={self.shared}, base={self._kernels[0]!r})"


class Projected(Kernel):
    """``k(x, x') = base(W^T x, W^T x')`` for a fixed projection matrix W of shape (D, q).

    W is not a hyperparameter (``theta`` is the base kernel's); methods that learn W
    (PP/RPP-GP-UCB) set :attr:`projection` and use :meth:`grad_x` of the base kernel.

    Parameters
    ----------
    base : Kernel
        Kernel on the projected inputs ``z = W^T x`` (q columns); shared, not copied.
    projection : array_like of shape (D, q)
        The matrix W (copied).

    Raises
    ------
    ValueError
        If ``projection`` is not a finite 2-D array.
    """

    def __init__(self, base: Kernel, projection: ArrayLike) -> None:
        self.base = base
        self.projection = projection  # type: ignore[assignment]

    @property
    def projection(self) -> Array:
        """The matrix W, shape (D, q)."""
        return self._W

    @projection.setter
    def projection(self, W: ArrayLike) -> None:
        W = np.asarray(W, dtype=float)
        if W.ndim != 2 or not np.all(np.isfinite(W)):
            raise ValueError(f"projection must be a finite 2-D array, got shape {W.shape}")
        self._W = W.copy()

    @property
    def theta(self) -> Array:
        """The base kernel's :attr:`~Kernel.theta`."""
        return self.base.theta

    @theta.setter
    def theta(self, value: ArrayLike) -> None:
        self.base.theta = value

    @property
    def bounds(self) -> Array:
        """The base kernel's bounds, shape (p, 2)."""
        return self.base.bounds

    @property
    def hyperparameter_names(self) -> list[str]:
        """The base kernel's names."""
        return self.base.hyperparameter_names

    def _proj(self, X: ArrayLike, name: str = "X") -> Array:
        X = _as_2d(X, name)
        if X.shape[1] != self._W.shape[0]:
            raise ValueError(f"{name} must have {self._W.shape[0]} columns, got {X.shape[1]}")
        return X @ self._W

    @fill_doc(**_DOC)
    def __call__(self, X: ArrayLike, Y: ArrayLike | None = None) -> Array:
        """Covariance matrix ``base(X W, Y W)``.

        Parameters
        ----------
        X : array_like of shape (n, D) or (D,)
        Y : array_like of shape (m, D) or (D,), optional
            Default X.

        %(call_returns)s
        """
        Z = self._proj(X)
        return self.base(Z, None if Y is None else self._proj(Y, "Y"))

    @fill_doc(**_DOC)
    def diag(self, X: ArrayLike) -> Array:
        """Prior variances ``base.diag(X W)``.

        %(diag)s
        """
        return self.base.diag(self._proj(X))

    @fill_doc(**_DOC)
    def gradient_contract(self, X: ArrayLike, A: ArrayLike) -> Array:
        """The base kernel's contracted gradient at the projected points ``X W``.

        %(contract)s

        Returns
        -------
        ndarray of shape (p,)
        """
        return self.base.gradient_contract(self._proj(X), A)

    @fill_doc(**_DOC)
    def grad_x(self, Xq: ArrayLike, X: ArrayLike, W: ArrayLike) -> Array:
        """Weighted input gradients by the chain rule: the base kernel's, times ``W^T``.

        The weights ``W`` are those of :meth:`Kernel.grad_x`, not the projection matrix.

        %(grad_x_params)s

        Returns
        -------
        ndarray of shape (nq, D)
        """
        return self.base.grad_x(self._proj(Xq, "Xq"), self._proj(X), W) @ self._W.T


def make_kernel(name: str, dim: int | None = None, *, ard: bool = False, **kwargs: object) -> Stationary:
    """Build a stationary kernel by name.

    Parameters
    ----------
    name : {"se", "matern12", "matern32", "matern52"}
        Squared exponential, or Matern with ``nu`` = 1/2, 3/2 or 5/2.
    dim : int, optional
        Input dimension; required with ``ard=True``.
    ard : bool, default False
        One length-scale per dimension.
    **kwargs
        ``lengthscale``, ``variance``, ``lengthscale_bounds``, ``variance_bounds``
        (see :class:`Stationary`).

    Returns
    -------
    Stationary
        A :class:`SquaredExponential` or :class:`Matern`.

    Raises
    ------
    ValueError
        If the name is unknown (the message lists the valid ones) or an argument is invalid.
    """
    nus = {"matern12": 0.5, "matern32": 1.5, "matern52": 2.5}
    if check_choice(name, "kernel", ("se", *nus)) == "se":
        return SquaredExponential(dim, ard=ard, **kwargs)  # type: ignore[arg-type]
    return Matern(dim, nu=nus[name], ard=ard, **kwargs)  # type: ignore[arg-type]
