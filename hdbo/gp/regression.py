"""Exact Gaussian-process regression with an incrementally extended Cholesky factor.

Model: ``y = m + scale * g(x) + noise`` where the outputs are first transformed by a shift
``m`` (0 for ``mean="zero"``, the sample mean for ``mean="constant"``, the sample mean plus a
fitted constant for ``mean="learned"``) and, with
``standardize=True``, a scale (the sample standard deviation). In transformed units
``g ~ GP(0, k)`` and the noise is ``N(0, noise_variance)``; the transform is computed by
:meth:`GaussianProcess.fit` and frozen by :meth:`GaussianProcess.update`, so an update equals a
refit with the same hyperparameters and transform.

Units. With ``mean="constant"`` and ``standardize=True`` (the defaults) the model does not depend
on the units of the outputs: fitting ``a y + b`` (``a != 0``) gives the hyperparameters and
standardized posterior of fitting ``y``, and raw predictions follow the affine map, up to
round-off (``y + 1e12`` keeps only the bits of ``y`` above the spacing of floats near 1e12).
Every noise, variance and jitter bound is in transformed units; the transform itself is
computed without overflow for any finite outputs.

Cost: ``fit`` factorizes once (O(t^3)); ``update`` appends one row to the Cholesky factor in
O(t^2); ``predict`` on n query points costs O(n t d + n t^2) and is vectorized.
"""

from __future__ import annotations

import copy
import math
import warnings
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import cho_solve, solve_triangular
from scipy.linalg.blas import dtrsv
from scipy.optimize import minimize

from .._docstrings import fill_doc
from .._validation import check_choice, check_int
from ..exceptions import NotFittedError, NumericalError
from .kernels import Additive, Kernel
from .priors import LogNormalPrior

__all__ = ["GaussianProcess"]

Array = NDArray[np.float64]

_LOG_2PI = float(np.log(2.0 * np.pi))
# Relative jitter levels (times the mean of diag K) tried in turn when a factorization fails.
_JITTERS = (0.0, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2)
# Outputs whose standard deviation is at most this many ulps of their largest magnitude are
# constant up to round-off (the sample mean alone is off by a few ulps).
_CONSTANT_ULPS = 32.0

# Docstring sections shared by the methods (filled in by ``fill_doc``).
_DOC = {
    "returns_self": """
        Returns
        -------
        GaussianProcess
            ``self``.
    """,
    "not_fitted": """
        NotFittedError
            If :meth:`fit` was not called.
    """,
}


def _cholesky(K: Array) -> Array | None:
    try:
        return np.linalg.cholesky(K)
    except np.linalg.LinAlgError:
        return None


def posterior_moments(
    L: Array, alpha: Array, Kq: Array, kdiag: Array | float, grad_fn: Callable[[Array], Array] | None = None
) -> tuple[Array, ...]:
    """Posterior mean and standard deviation at query points from a Cholesky factor (and their gradients).

    Shared by :class:`GaussianProcess` and the compiled posteriors of methods that keep their
    own factor (:mod:`hdbo.methods.ms_ucb`).

    Parameters
    ----------
    L : ndarray of shape (t, t)
        Lower Cholesky factor of the training covariance (noise and jitter included).
    alpha : ndarray of shape (t,)
        ``K^{-1} z`` for the training outputs ``z``.
    Kq : ndarray of shape (n, t)
        Prior covariances between the queries and the training inputs.
    kdiag : ndarray of shape (n,) or float
        Prior variances at the queries.
    grad_fn : callable, optional
        ``grad_fn(W)`` with ``W`` of shape (n, t): ``sum_i W[q, i] d k(x_q, X_i) / d x_q``, shape
        (n, d). Given, the gradients are returned too.

    Returns
    -------
    mean, std : ndarray of shape (n,)
        The variance is floored at ``1e-300`` before its square root.
    dmean, dstd : ndarray of shape (n, d)
        Only with ``grad_fn``; ``dstd`` is 0 where the variance was floored.
    """
    mean = Kq @ alpha
    V = solve_triangular(L, Kq.T, lower=True, check_finite=False)
    var = np.maximum(kdiag - np.einsum("ij,ij->j", V, V), 1e-300)
    std = np.sqrt(var)
    if grad_fn is None:
        return mean, std
    dmean = grad_fn(np.broadcast_to(alpha, (Kq.shape[0], alpha.size)))
    Wv = solve_triangular(L, V, lower=True, trans="T", check_finite=False).T  # K^{-1} k(xq)
    dvar = -2.0 * grad_fn(Wv)
    dstd = dvar / (2.0 * std[:, None])
    dstd[var <= 1e-300] = 0.0
    return mean, std, dmean, dstd


class GaussianProcess:
    """Exact GP regression (maximization-agnostic) with hyperparameter fitting.

    Parameters
    ----------
    kernel : Kernel
        Covariance function; its ``theta``/``bounds`` are fitted (equal bounds = fixed).
        The GP owns and modifies this object.
    noise_variance : float, default 1e-6
        Observation-noise variance in transformed (standardized) output units.
    noise_bounds : (float, float), default (1e-8, 1.0)
        Fitting bounds of ``noise_variance``; equal bounds fix it.
    mean : {"constant", "zero", "learned"}, default "constant"
        Prior mean: the sample mean of the outputs, zero, or a constant fitted with the
        hyperparameters (``"learned"``: for given hyperparameters, the generalized-least-squares
        constant ``1' K^-1 z / 1' K^-1 1`` of the standardized outputs z, which maximizes the
        marginal likelihood over the constant; it is folded into ``y_shift_`` after each fit).
        Far from the data the posterior mean returns to this constant: for an objective whose
        good region is small, a learned constant below the sample mean keeps the acquisition
        from favouring every unexplored corner.
    standardize : bool, default True
        Divide the (shifted) outputs by their sample standard deviation.
    n_restarts : int, default 5
        Random restarts (in addition to the current hyperparameters) when fitting.
    prior : LogNormalPrior, optional
        Prior on :attr:`theta` (e.g. :func:`hdbo.gp.dimension_scaled_prior`): fitting then
        maximizes the log marginal likelihood plus the log prior (MAP) instead of the bare
        marginal likelihood (ML-II), and the random restarts are drawn from the prior.

    Attributes
    ----------
    X_ : ndarray of shape (t, d)
        Training inputs. ``y_`` holds the raw outputs, shape (t,).
    L_ : ndarray of shape (t, t)
        Lower Cholesky factor of ``K + (noise_variance + jitter_) I``.
    alpha_ : ndarray of shape (t,)
        ``(K + noise I)^{-1} (y - shift) / scale``.
    jitter_ : float
        Extra diagonal added to make the factorization succeed (0 when none was needed).
    y_shift_, y_scale_ : float
        The output transform set by :meth:`fit`: transformed outputs are
        ``(y - y_shift_) / y_scale_``.

    Raises
    ------
    TypeError
        If ``kernel`` is not a :class:`~hdbo.gp.Kernel`, ``n_restarts`` is not an int or
        ``prior`` is not a :class:`~hdbo.gp.LogNormalPrior`.
    ValueError
        If ``mean`` is unknown, ``noise_bounds`` does not satisfy ``0 < lower <= upper < inf``,
        ``noise_variance`` lies outside them, ``n_restarts < 0``, or ``prior`` does not have one
        entry per hyperparameter.

    Examples
    --------
    >>> import numpy as np
    >>> from hdbo.gp import GaussianProcess, SquaredExponential
    >>> X = np.linspace(0, 1, 5)[:, None]
    >>> gp = GaussianProcess(SquaredExponential(1, lengthscale=0.3)).fit(X, np.sin(3 * X[:, 0]), optimize=False)
    >>> mean, std = gp.predict(X)
    >>> bool(np.allclose(mean, np.sin(3 * X[:, 0]), atol=1e-3))
    True
    """

    def __init__(
        self,
        kernel: Kernel,
        *,
        noise_variance: float = 1e-6,
        noise_bounds: tuple[float, float] = (1e-8, 1.0),
        mean: str = "constant",
        standardize: bool = True,
        n_restarts: int = 5,
        prior: LogNormalPrior | None = None,
    ) -> None:
        if not isinstance(kernel, Kernel):
            raise TypeError(f"kernel must be a hdbo.gp.Kernel, got {type(kernel).__name__}")
        check_choice(mean, "mean", ("constant", "zero", "learned"))
        lo, hi = (float(b) for b in noise_bounds)
        if not (0 < lo <= hi < np.inf):
            raise ValueError(f"noise_bounds must satisfy 0 < lower <= upper, got {noise_bounds!r}")
        if not (lo <= noise_variance <= hi):
            raise ValueError(f"noise_variance={noise_variance!r} must lie within noise_bounds={noise_bounds!r}")
        self.kernel = kernel
        self.noise_variance = float(noise_variance)
        self.noise_bounds = (lo, hi)
        self.mean = mean
        self.standardize = bool(standardize)
        self.n_restarts = check_int(n_restarts, "n_restarts", low=0)
        if prior is not None:
            if not isinstance(prior, LogNormalPrior):
                raise TypeError(f"prior must be a hdbo.gp.LogNormalPrior or None, got {type(prior).__name__}")
            if prior.size != kernel.n_params + 1:
                raise ValueError(f"prior has {prior.size} entries; the GP has {kernel.n_params + 1} hyperparameters")
        self.prior = prior
        self.X_: Array | None = None
        # posterior_fn closures of the current factorization, keyed by group (None: whole f)
        self._fast: dict[tuple[int | None, bool], Callable[[Array], tuple[Array, Array]]] = {}
        self._fast_L: Array | None = None

    # ================================================================== hyperparameters
    @property
    def theta(self) -> Array:
        """``[kernel.theta..., log noise_variance]``, shape (p + 1,) (settable)."""
        return np.append(self.kernel.theta, np.log(self.noise_variance))

    @theta.setter
    def theta(self, value: ArrayLike) -> None:
        value = np.asarray(value, dtype=float).reshape(-1)
        self.kernel.theta = value[:-1]
        self.noise_variance = float(np.exp(value[-1]))

    @property
    def bounds(self) -> Array:
        """Log-space bounds of :attr:`theta`, shape (p + 1, 2)."""
        return np.vstack([self.kernel.bounds, np.log(self.noise_bounds)])

    # ================================================================== data & factorization
    @property
    def n_train(self) -> int:
        """Number of training points."""
        return 0 if self.X_ is None else int(self.X_.shape[0])

    def _check_fitted(self) -> None:
        if self.X_ is None:
            raise NotFittedError("GaussianProcess is not fitted; call fit(X, y) first")

    def output_transform(self, y: ArrayLike) -> tuple[float, float]:
        """The ``(shift, scale)`` that :meth:`fit` would apply to outputs ``y``.

        The GP models ``(y - shift) / scale``: shift is the sample mean with
        ``mean="constant"`` (else 0), scale the sample standard deviation with
        ``standardize=True`` (else 1). Outputs that are constant up to round-off (standard
        deviation at most 32 ulps of ``max |y|``) get the scale ``max |y|`` (1 if all are
        0), so the transform is relative to the outputs' magnitude at every scale: there is
        no absolute threshold.

        Both are computed on ``y / 2**e`` (``2**e <= max |y| < 2**(e + 1)``) and scaled back:
        a power of two scales exactly, so the result equals the direct computation wherever
        that does not overflow, and it is finite for any finite outputs (the squares in
        ``np.std`` overflow from magnitudes of about 1e154).

        Parameters
        ----------
        y : array_like of shape (t,)
            Finite outputs.

        Returns
        -------
        tuple of float
        """
        y = np.asarray(y, dtype=float).reshape(-1)
        top = float(np.max(np.abs(y))) if y.size else 0.0
        if top == 0.0:
            return 0.0, 1.0
        p = math.ldexp(1.0, math.frexp(top)[1] - 1)  # power of two <= top, so |y / p| < 2
        u = y / p
        shift = float(np.mean(u)) * p if self.mean != "zero" else 0.0
        if not self.standardize:
            return shift, 1.0
        spread = float(np.std(u)) if y.size > 1 else 0.0
        if spread <= _CONSTANT_ULPS * np.finfo(float).eps * (top / p):
            return shift, top
        return shift, spread * p

    @fill_doc(**_DOC)
    def transform_outputs(self, y: ArrayLike) -> Array:
        """Raw outputs in the GP's transformed units, ``(y - y_shift_) / y_scale_``.

        Computed without overflow: where ``y - y_shift_`` would exceed the largest float, both
        terms and the scale are halved first (exactly).

        Parameters
        ----------
        y : array_like of shape (n,)

        Returns
        -------
        ndarray of shape (n,)

        Raises
        ------
        %(not_fitted)s
        """
        self._check_fitted()
        y = np.asarray(y, dtype=float).reshape(-1)
        with np.errstate(over="ignore"):
            d = y - self.y_shift_
        if np.all(np.isfinite(d)):
            return d / self.y_scale_
        return (0.5 * y - 0.5 * self.y_shift_) / (0.5 * self.y_scale_)

    def _set_transform(self, y: Array) -> None:
        self.y_shift_, self.y_scale_ = self.output_transform(y)

    def _factor(self, X: Array, *, start: float = 0.0, strict: bool = False,
                K: Array | None = None) -> tuple[Array, float] | None:
        """Cholesky of K + noise I, escalating jitter; None (strict) or NumericalError on failure.

        ``K`` is ``self.kernel(X)`` if the caller has it (it is modified).
        """
        K = self.kernel(X) if K is None else K
        K[np.diag_indices_from(K)] += self.noise_variance
        scale = float(np.mean(np.diag(K))) if K.size else 1.0
        for rel in _JITTERS:
            jitter = rel * scale
            if jitter < start:
                continue
            if jitter:
                K[np.diag_indices_from(K)] += jitter
            L = _cholesky(K)
            if jitter:
                K[np.diag_indices_from(K)] -= jitter
            if L is not None:
                return L, jitter
            if strict and rel >= 1e-6:
                return None
        if strict:
            return None
        raise NumericalError(
            f"Cholesky factorization failed for {X.shape[0]} points even with jitter "
            f"{_JITTERS[-1]:g} x mean(diag K); check for duplicated inputs or extreme hyperparameters"
        )

    def _refresh_alpha(self) -> None:
        self.alpha_ = cho_solve((self.L_, True), self._z, check_finite=False)

    @fill_doc(**_DOC)
    def fit(
        self,
        X: ArrayLike,
        y: ArrayLike,
        *,
        optimize: bool = True,
        rng: np.random.Generator | None = None,
    ) -> "GaussianProcess":
        """Set the training data, recompute the output transform and factorize.

        Parameters
        ----------
        X : array_like of shape (t, d)
            Finite training inputs (copied).
        y : array_like of shape (t,)
            Finite outputs (copied); failed evaluations must be filtered out beforehand.
        optimize : bool, default True
            First fit the free hyperparameters with :meth:`optimize_hyperparameters` (only
            done when there are at least 2 points).
        rng : numpy.random.Generator, optional
            Source of the random restarts; required when hyperparameters are optimized and
            ``n_restarts > 0``.

        %(returns_self)s

        Raises
        ------
        ValueError
            If X and y differ in length or are not finite, or ``rng`` is missing when needed.
        NumericalError
            If ``K + noise I`` cannot be factorized even with the largest jitter.
        """
        X = np.array(X, dtype=float, ndmin=2)
        y = np.asarray(y, dtype=float).reshape(-1)
        if X.shape[0] != y.size:
            raise ValueError(f"X has {X.shape[0]} rows but y has {y.size} values")
        if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
            raise ValueError("X and y must be finite (failed evaluations must be filtered out)")
        self.X_ = X.copy()
        self.y_ = y.copy()
        self._set_transform(y)
        self._z = self.transform_outputs(y)
        if optimize and y.size >= 2:
            self.optimize_hyperparameters(rng=rng)
        self.refactorize()
        self._fit_constant()
        return self

    @staticmethod
    def _gls_constant(L: Array, z: Array) -> float:
        """``1' K^-1 z / 1' K^-1 1`` for the factor L of K, clipped to [-10, 10] (standardized units)."""
        w = cho_solve((L, True), np.ones(z.size), check_finite=False)
        c = float(w @ z) / float(np.sum(w))
        return float(np.clip(c, -10.0, 10.0)) if np.isfinite(c) else 0.0

    def _fit_constant(self) -> None:
        """``mean="learned"``: fold the GLS constant of the current factorization into ``y_shift_``."""
        if self.mean != "learned" or self.n_train < 2:
            return
        c = self._gls_constant(self.L_, self._z)
        if c != 0.0:
            self.y_shift_ = self.y_shift_ + c * self.y_scale_
            self._z = self.transform_outputs(self.y_)
            self._refresh_alpha()

    @fill_doc(**_DOC)
    def refactorize(self) -> "GaussianProcess":
        """Factorize the current data from scratch, in O(t^3), keeping hyperparameters and transform.

        Call it after changing :attr:`theta` by hand; :meth:`fit` and :meth:`load_state`
        already do.

        %(returns_self)s

        Raises
        ------
        %(not_fitted)s
        NumericalError
            If the factorization fails even with the largest jitter.
        """
        self._check_fitted()
        self.L_, self.jitter_ = self._factor(self.X_)  # type: ignore[misc,arg-type]
        self.n_full_ = self.n_train
        self._refresh_alpha()
        return self

    @fill_doc(**_DOC)
    def update(self, x: ArrayLike, y: float) -> "GaussianProcess":
        """Add one observation, extending the Cholesky factor in O(t^2).

        The hyperparameters, the jitter and the output transform (``y_shift_``,
        ``y_scale_``) are kept, so the result equals :meth:`refactorize` on the extended data
        to round-off. If the new pivot is not clearly positive (``<= 1e-12`` times the new
        diagonal entry, e.g. a near-duplicate input), the whole factor is recomputed with
        escalating jitter, starting at ``max(jitter_, 1e-10)`` times the mean of diag K.

        Parameters
        ----------
        x : array_like of shape (d,)
            The new input.
        y : float
            Its observed output (raw units).

        %(returns_self)s

        Raises
        ------
        %(not_fitted)s
        ValueError
            If x or y is not finite, or x does not have d entries.
        NumericalError
            If a recomputed factorization fails even with the largest jitter.
        """
        self._check_fitted()
        x = np.asarray(x, dtype=float).reshape(1, -1)
        y = float(y)
        if not (np.all(np.isfinite(x)) and np.isfinite(y)):
            raise ValueError("x and y must be finite")
        if x.shape[1] != self.X_.shape[1]:  # type: ignore[union-attr]
            raise ValueError(f"x must have {self.X_.shape[1]} entries, got {x.shape[1]}")  # type: ignore[union-attr]
        t = self.n_train
        z = float(self.transform_outputs(np.array([y]))[0])
        k = self.kernel(self.X_, x)[:, 0]
        kss = float(self.kernel.diag(x)[0]) + self.noise_variance + self.jitter_
        self.X_ = np.vstack([self.X_, x])
        self.y_ = np.append(self.y_, y)
        self._z = np.append(self._z, z)
        if t == 0:
            pivot2, l = kss, np.empty(0)
        else:
            l = solve_triangular(self.L_, k, lower=True, check_finite=False)
            pivot2 = kss - float(l @ l)
        if pivot2 <= 1e-12 * kss:
            self.L_, self.jitter_ = self._factor(self.X_, start=max(self.jitter_, 1e-10))
            self.n_full_ = self.n_train
        else:
            L = np.empty((t + 1, t + 1), order="F")  # LAPACK order: no transposed copies later
            L[:t, :t] = self.L_
            L[:t, t] = 0.0
            L[t, :t] = l
            L[t, t] = np.sqrt(pivot2)
            self.L_ = L
        self._refresh_alpha()
        return self

    @fill_doc(**_DOC)
    def hallucinate(self, X: ArrayLike, value: float | None = None) -> "GaussianProcess":
        """A copy of this GP conditioned on points ``X`` observed at their posterior mean.

        The pending-point rule of GP-BUCB (Desautels, Krause and Burdick, JMLR 2014) and of
        the Kriging believer: the posterior mean is unchanged everywhere (also each group's
        mean of an additive kernel), the variance shrinks near ``X`` as if those points had
        been evaluated. Each point is appended with :meth:`update` in O(t^2); this GP is not
        changed, and the copy shares its kernel (whose hyperparameters must not be changed
        through it).

        With ``value`` given, every pending point is observed at that value instead (the
        *constant liar* of Ginsbourger, Le Riche and Carraro 2010): the mean then changes
        too, e.g. a pessimistic lie pushes an improvement-based acquisition away from the
        points that are out.

        Parameters
        ----------
        X : array_like of shape (p, d)
            The pending inputs (the GP's input space).
        value : float, optional
            The value every pending point is observed at (raw output units); default: each
            point's posterior mean.

        Returns
        -------
        GaussianProcess
            The conditioned copy (``self`` itself when ``X`` is empty).

        Raises
        ------
        %(not_fitted)s
        ValueError
            If ``X`` is not finite or has another number of columns than the training inputs.
        NumericalError
            If a recomputed factorization fails even with the largest jitter.
        """
        self._check_fitted()
        X = np.array(X, dtype=float, ndmin=2)
        if X.shape[0] == 0 or X.size == 0:
            return self
        if X.shape[1] != self.X_.shape[1]:  # type: ignore[union-attr]
            raise ValueError(f"X must have {self.X_.shape[1]} columns, got {X.shape[1]}")  # type: ignore[union-attr]
        if not np.all(np.isfinite(X)):
            raise ValueError("X must be finite")
        gp = copy.copy(self)
        gp._fast, gp._fast_L = {}, None
        if value is not None and not np.isfinite(value):
            raise ValueError(f"value must be finite, got {value!r}")
        for x in X:
            gp.update(x, float(gp.predict(x[None, :])[0][0]) if value is None else float(value))
        return gp

    # ================================================================== prediction
    def _transformed_moments(
        self, Kq: Array, kdiag: Array, return_grad: bool, Xq: Array | None, grad_fn: Any = None
    ) -> tuple[Array, ...]:
        return posterior_moments(self.L_, self.alpha_, Kq, kdiag, grad_fn if return_grad else None)

    @fill_doc(**_DOC)
    def predict(self, Xq: ArrayLike, *, return_grad: bool = False, standardized: bool = False) -> tuple[Array, ...]:
        """Posterior mean and standard deviation of the latent function (no noise).

        Parameters
        ----------
        Xq : array_like of shape (n, d)
        return_grad : bool, default False
            Also return the input gradients.
        standardized : bool, default False
            Return the posterior of the transformed function ``(f - y_shift_) / y_scale_``
            (the GP's own units, free of the outputs' units) instead of ``f``'s.

        Returns
        -------
        mean, std : ndarray of shape (n,)
            In raw output units (transformed units with ``standardized=True``). Before any
            training point (t = 0) they are the prior's.
        dmean, dstd : ndarray of shape (n, d)
            Gradients with respect to the rows of Xq; only with ``return_grad=True``.

        Raises
        ------
        %(not_fitted)s
        ValueError
            If Xq does not have d columns.
        """
        self._check_fitted()
        Xq = np.array(Xq, dtype=float, ndmin=2)
        if Xq.shape[1] != self.X_.shape[1]:  # type: ignore[union-attr]
            raise ValueError(f"Xq must have {self.X_.shape[1]} columns, got shape {Xq.shape}")  # type: ignore[union-attr]
        kdiag = self.kernel.diag(Xq)
        shift, s = (0.0, 1.0) if standardized else (self.y_shift_, self.y_scale_)
        if self.n_train == 0:
            out = [np.full(Xq.shape[0], shift), np.sqrt(kdiag) * s]
            if return_grad:
                out += [np.zeros_like(Xq), np.zeros_like(Xq)]
            return tuple(out)
        Kq = self.kernel(Xq, self.X_)
        res = self._transformed_moments(
            Kq, kdiag, return_grad, Xq, lambda W: self.kernel.grad_x(Xq, self.X_, W)
        )
        if standardized:
            return tuple(res)
        out = [res[0] * s + shift, res[1] * s] + [g * s for g in res[2:]]
        return tuple(out)

    @fill_doc(**_DOC)
    def posterior_fn(self, group: int | None = None, *, standardized: bool = False
                     ) -> Callable[[Array], tuple[Array, Array]]:
        """A fast ``Zq -> (mean, std)`` for many predictions with the same data.

        Equal to ``predict(Zq)`` (``group=None``) or ``predict_group(group, Zq)`` without
        gradients, to round-off, at a fraction of the per-call overhead: the kernel's
        :meth:`~hdbo.gp.Kernel.cross_fn` and ``alpha`` in output units are prepared once and
        the arguments are not checked; a single point goes through one BLAS triangular solve
        (``dtrsv``, O(t^2)) instead of SciPy's general solver. This is the inner loop of
        DIRECT, which asks for one point at a time. Nothing is refactorized.

        The function is cached per factorization: after :meth:`fit`, :meth:`update`,
        :meth:`refactorize` or :meth:`load_state` a new one is built on the next call, and a
        function obtained earlier keeps describing the old posterior.

        Parameters
        ----------
        group : int, optional
            Group index of an :class:`~hdbo.gp.Additive` kernel: the function then takes
            points in that group's coordinates and returns ``f_j``'s posterior (without
            ``y_shift_``, like :meth:`predict_group`).
        standardized : bool, default False
            Moments in the GP's transformed units, as :meth:`predict` with
            ``standardized=True`` (for a group: divided by ``y_scale_``).

        Returns
        -------
        callable
            Maps a float ndarray Zq of shape (n, d) (or (n, d_j)) to ``(mean, std)``, each
            of shape (n,), in raw output units (or transformed units).

        Raises
        ------
        %(not_fitted)s
        TypeError
            If ``group`` is given and the kernel is not additive.
        """
        self._check_fitted()
        if self._fast_L is not self.L_:
            self._fast, self._fast_L = {}, self.L_
        key = (group, bool(standardized))
        fn = self._fast.get(key)
        if fn is None:
            fn = self._fast[key] = self._build_posterior_fn(group, bool(standardized))
        return fn

    def _build_posterior_fn(self, group: int | None, standardized: bool) -> Callable[[Array], tuple[Array, Array]]:
        if group is None:
            kern, X, shift = self.kernel, self.X_, self.y_shift_
        else:
            additive = self._additive()
            kern, X, shift = additive.group_kernel(group), self.X_[:, additive.groups[group]], 0.0  # type: ignore[index]
        scale = self.y_scale_
        if standardized:
            shift, scale = 0.0, 1.0
        diag = kern.diag
        if self.n_train == 0:
            return lambda Zq: (np.full(Zq.shape[0], shift), np.sqrt(diag(Zq)) * scale)
        cross = kern.cross_fn(X)
        alpha = self.alpha_ * scale if scale != 1.0 else self.alpha_
        L = self.L_
        LT = L.T  # Fortran-ordered view: BLAS solves with it without copying L

        def posterior(Zq: Array) -> tuple[Array, Array]:
            Kq = cross(Zq)
            if Kq.shape[0] == 1:  # one point (DIRECT): a plain BLAS triangular solve
                v = dtrsv(LT, Kq[0], lower=0, trans=1)
                var = np.maximum(diag(Zq) - v @ v, 1e-300)
            else:
                V = solve_triangular(L, Kq.T, lower=True, check_finite=False)
                var = np.maximum(diag(Zq) - np.einsum("ij,ij->j", V, V), 1e-300)
            return Kq @ alpha + shift, np.sqrt(var) * scale

        return posterior

    def _additive(self) -> Additive:
        if not isinstance(self.kernel, Additive):
            raise TypeError(f"per-group posteriors need an Additive kernel, got {type(self.kernel).__name__}")
        return self.kernel

    @fill_doc(**_DOC)
    def predict_group(self, j: int, Zq: ArrayLike, *, return_grad: bool = False,
                      standardized: bool = False) -> tuple[Array, ...]:
        """Posterior of group j's component ``f_j`` at points given in that group's coordinates.

        Implements eq. (5) of Kandasamy et al. (2015): ``mu_j = k_j(z, X_j) Delta^{-1} y`` and
        ``sigma_j^2 = k_j(z, z) - k_j(z, X_j) Delta^{-1} k_j(X_j, z)`` with the one factorization
        of the full additive ``Delta = K + noise I``. Means are in output units without the
        constant shift: ``sum_j mu_j(x[g_j]) + y_shift_ = mean(x)``.

        Parameters
        ----------
        j : int
            Group index.
        Zq : array_like of shape (n, d_j)
            Points in group j's coordinates (``d_j`` = size of group j).
        return_grad : bool, default False
            Also return the gradients with respect to the rows of Zq.
        standardized : bool, default False
            Return the moments of ``f_j / y_scale_`` (the GP's transformed units) instead.

        Returns
        -------
        mean, std : ndarray of shape (n,)
            Posterior mean (without ``y_shift_``) and standard deviation of ``f_j``, in raw
            output units (transformed units with ``standardized=True``).
        dmean, dstd : ndarray of shape (n, d_j)
            Only with ``return_grad=True``.

        Raises
        ------
        %(not_fitted)s
        TypeError
            If the kernel is not :class:`~hdbo.gp.Additive`.
        ValueError
            If Zq does not have ``d_j`` columns.
        """
        self._check_fitted()
        kern = self._additive()
        g, kj = kern.groups[j], kern.group_kernel(j)
        Zq = np.array(Zq, dtype=float, ndmin=2)
        if Zq.shape[1] != g.size:
            raise ValueError(f"Zq must have {g.size} columns for group {j}, got shape {Zq.shape}")
        Xj = self.X_[:, g]  # type: ignore[index]
        res = self._transformed_moments(kj(Zq, Xj), kj.diag(Zq), return_grad, Zq, lambda W: kj.grad_x(Zq, Xj, W))
        return tuple(res) if standardized else tuple(r * self.y_scale_ for r in res)

    @fill_doc(**_DOC)
    def group_posterior_given(self, j: int, Zp: ArrayLike, *, standardized: bool = False
                              ) -> Callable[..., tuple[Array, ...]]:
        """Group j's posterior, further conditioned on ``f_j`` at pending points ``Zp`` at its mean.

        Observing the sum ``f`` at a pending point says little about one component ``f_j``, so
        :meth:`hallucinate` barely changes a group's variance. Batches of Add-GP-UCB condition
        each group on its own component instead (GP-BUCB's rule per group): with ``C`` the
        posterior covariance of ``f_j`` (from the one factorization of ``K + noise I``) and
        ``s2`` the noise variance, the variance at z becomes
        ``C(z, z) - C(z, Zp) (C(Zp, Zp) + s2 I)^{-1} C(Zp, z)`` and the mean is unchanged.

        Parameters
        ----------
        j : int
            Group index of an :class:`~hdbo.gp.Additive` kernel.
        Zp : array_like of shape (p, d_j)
            The pending points in group j's coordinates.
        standardized : bool, default False
            Moments in the GP's transformed units (as :meth:`predict_group`).

        Returns
        -------
        callable
            ``posterior(Zq, return_grad=False)`` with the outputs of :meth:`predict_group`.

        Raises
        ------
        %(not_fitted)s
        TypeError
            If the kernel is not additive.
        ValueError
            If ``Zp`` does not have ``d_j`` columns or is not finite.
        """
        self._check_fitted()
        kern = self._additive()
        g, kj = kern.groups[j], kern.group_kernel(j)
        Zp = np.array(Zp, dtype=float, ndmin=2)
        if Zp.shape[1] != g.size or not np.all(np.isfinite(Zp)):
            raise ValueError(f"Zp must be finite with {g.size} columns for group {j}, got shape {Zp.shape}")
        Xj = self.X_[:, g]  # type: ignore[index]
        scale = 1.0 if standardized else self.y_scale_
        if Zp.shape[0] == 0:
            return lambda Zq, return_grad=False: self.predict_group(j, Zq, return_grad=return_grad,
                                                                    standardized=standardized)
        Vp = solve_triangular(self.L_, kj(Zp, Xj).T, lower=True, check_finite=False)  # (t, p)
        Wp = solve_triangular(self.L_, Vp, lower=True, trans="T", check_finite=False)  # K^{-1} k_j(X, Zp)
        Cpp = kj(Zp, Zp) - Vp.T @ Vp
        Cpp[np.diag_indices_from(Cpp)] += self.noise_variance + self.jitter_ + 1e-10 * float(np.mean(kj.diag(Zp)))
        Lp = np.linalg.cholesky(0.5 * (Cpp + Cpp.T))

        def posterior(Zq: ArrayLike, return_grad: bool = False) -> tuple[Array, ...]:
            Zq = np.array(Zq, dtype=float, ndmin=2)
            base = self.predict_group(j, Zq, return_grad=return_grad, standardized=True)
            Kq = kj(Zq, Xj)
            Cqp = kj(Zq, Zp) - solve_triangular(self.L_, Kq.T, lower=True, check_finite=False).T @ Vp
            H = solve_triangular(Lp, Cqp.T, lower=True, check_finite=False)  # (p, nq)
            var = np.maximum(base[1] ** 2 - np.einsum("ij,ij->j", H, H), 1e-300)
            std = np.sqrt(var)
            if not return_grad:
                return base[0] * scale, std * scale
            B = solve_triangular(Lp, H, lower=True, trans="T", check_finite=False).T  # C(Zq, Zp) C_pp^{-1}
            dvar = 2.0 * base[1][:, None] * base[3] - 2.0 * (kj.grad_x(Zq, Zp, B) - kj.grad_x(Zq, Xj, B @ Wp.T))
            dstd = dvar / (2.0 * std[:, None])
            dstd[var <= 1e-300] = 0.0
            return base[0] * scale, std * scale, base[2] * scale, dstd * scale

        return posterior

    @fill_doc(**_DOC)
    def predict_groups(self, Xq: ArrayLike) -> tuple[Array, Array]:
        """Posterior means and standard deviations of every group's component at full points.

        Calls :meth:`predict_group` once per group on the group's columns of Xq.

        Parameters
        ----------
        Xq : array_like of shape (n, D)
            Points in full coordinates.

        Returns
        -------
        means, stds : ndarray of shape (n, M)
            Column j holds group j's posterior (``means.sum(axis=1) + y_shift_`` is the
            posterior mean of f).

        Raises
        ------
        TypeError
            If the kernel is not :class:`~hdbo.gp.Additive`.
        %(not_fitted)s
        """
        kern = self._additive()
        Xq = np.array(Xq, dtype=float, ndmin=2)
        parts = [self.predict_group(j, Xq[:, g]) for j, g in enumerate(kern.groups)]
        return np.column_stack([p[0] for p in parts]), np.column_stack([p[1] for p in parts])

    # ================================================================== marginal likelihood
    @fill_doc(**_DOC)
    def loo_log_density(self) -> float:
        """Leave-one-out log predictive density of the training outputs.

        Rasmussen and Williams (2006), eq. 5.10-5.12: with ``K`` the training covariance (noise
        and jitter included) and ``alpha = K^-1 z`` for the transformed outputs ``z``, point i's
        leave-one-out predictive mean is ``z_i - alpha_i / [K^-1]_ii`` and its variance
        ``1 / [K^-1]_ii``. The hyperparameters are the current ones (not refitted without point
        i). One O(t^3) pass over the current Cholesky factor; no refactorization.

        Returns
        -------
        float
            The sum over the training points of ``log N(z_i; mean_i, var_i)``, in standardized
            output units (GPs fitted to the same outputs compare directly); ``-inf`` if it is
            not finite.

        Raises
        ------
        %(not_fitted)s
        """
        self._check_fitted()
        L = self.L_
        Linv = solve_triangular(L, np.eye(L.shape[0]), lower=True, check_finite=False)
        kinv = np.sum(Linv**2, axis=0)  # the diagonal of K^-1 = L^-T L^-1
        with np.errstate(all="ignore"):
            terms = 0.5 * np.log(kinv) - 0.5 * self.alpha_**2 / kinv
            value = float(np.sum(terms)) - 0.5 * L.shape[0] * _LOG_2PI
        return value if np.isfinite(value) else -np.inf

    @fill_doc(**_DOC)
    def log_marginal_likelihood(
        self, theta: ArrayLike | None = None, *, eval_gradient: bool = False
    ) -> float | tuple[float, Array]:
        """Log marginal likelihood of the transformed outputs.

        ``-1/2 z^T (K + s2 I)^{-1} z - 1/2 log|K + s2 I| - t/2 log 2 pi`` with ``z`` the
        transformed outputs; the gradient is ``1/2 tr((a a^T - K^{-1}) dK/dtheta)``. If the
        matrix cannot be factorized with a jitter of at most ``1e-6`` times the mean of its
        diagonal, the value is ``-inf`` (and the gradient 0), so that an optimizer moves away.

        Parameters
        ----------
        theta : array_like of shape (p + 1,), optional
            Log-space hyperparameters to evaluate at, ordered like :attr:`theta` (default:
            the current ones). The GP's own hyperparameters are left unchanged.
        eval_gradient : bool, default False
            Also return the gradient with respect to ``theta``.

        Returns
        -------
        lml : float
        grad : ndarray of shape (p + 1,)
            Only with ``eval_gradient=True``.

        Raises
        ------
        %(not_fitted)s
        """
        self._check_fitted()
        saved_kernel, saved_noise = self.kernel.theta, self.noise_variance
        saved = self.theta
        if theta is not None:
            self.theta = theta
        try:
            theta_grad = None
            if eval_gradient:  # the kernel matrix and its gradient share distances and profiles
                K, theta_grad, _ = self.kernel._value_and_grad_fn(self.X_)  # type: ignore[arg-type]
                fac = self._factor(self.X_, strict=True, K=K)  # type: ignore[arg-type]
            else:
                fac = self._factor(self.X_, strict=True)  # type: ignore[arg-type]
            if fac is None:
                return (-np.inf, np.zeros(saved.size)) if eval_gradient else -np.inf
            L, jitter = fac
            z = self._z
            if self.mean == "learned":  # profile out the constant (its gradient is 0 at the optimum)
                z = z - self._gls_constant(L, z)
            alpha = cho_solve((L, True), z)
            lml = -0.5 * float(z @ alpha) - float(np.sum(np.log(np.diag(L)))) - 0.5 * z.size * _LOG_2PI
            if not eval_gradient:
                return lml
            Kinv = cho_solve((L, True), np.eye(z.size))
            A = np.outer(alpha, alpha) - Kinv
            grad = np.empty(saved.size)
            grad[:-1] = 0.5 * theta_grad(A)  # type: ignore[misc]  # kernel.gradient_contract(X_, A)
            grad[-1] = 0.5 * self.noise_variance * float(np.trace(A))
            return lml, grad
        finally:
            # restore the exact floats (exp(log(v)) may differ from v in the last bit)
            self.kernel.theta = saved_kernel
            self.noise_variance = saved_noise

    @fill_doc(**_DOC)
    def optimize_hyperparameters(self, *, rng: np.random.Generator | None = None) -> "GaussianProcess":
        """Maximize the log marginal likelihood (plus the log prior) over the free hyperparameters.

        Multi-start L-BFGS-B within the log-space bounds: from the current hyperparameters
        and ``n_restarts`` points drawn uniformly in the bounds (with a :attr:`prior`: its
        location, then ``n_restarts - 1`` draws from it, clipped into the bounds). The best
        optimum found is
        kept (the current values if no start improves on them). Fixed hyperparameters (equal
        bounds) are left alone; if all are fixed, nothing is done. Does not refactorize:
        :meth:`fit` calls this and then factorizes.

        Parameters
        ----------
        rng : numpy.random.Generator, optional
            Source of the random starts; required when ``n_restarts > 0``.

        %(returns_self)s

        Raises
        ------
        %(not_fitted)s
        ValueError
            If ``rng`` is None while random starts are needed.

        Warns
        -----
        RuntimeWarning
            If the likelihood could not be evaluated at any start (hyperparameters unchanged).
        """
        self._check_fitted()
        bounds = self.bounds
        free = bounds[:, 0] < bounds[:, 1]
        if not np.any(free):
            return self
        if self.n_restarts > (1 if self.prior is not None else 0) and rng is None:
            raise ValueError("rng is required to draw random restarts (n_restarts > 0)")
        base = self.theta
        start = np.clip(base[free], bounds[free, 0], bounds[free, 1])

        def objective(v: Array) -> tuple[float, Array]:
            th = base.copy()
            th[free] = v
            lml, grad = self.log_marginal_likelihood(th, eval_gradient=True)  # type: ignore[misc]
            if not np.isfinite(lml):
                return 1e25, np.zeros(v.size)
            if prior is not None:
                lp, glp = prior.log_prob(th)
                lml, grad = lml + lp, grad + glp
            return -lml, -grad[free]

        prior = self.prior
        starts = [start]
        if self.n_restarts and prior is not None:  # the prior's location first, then draws from it
            starts.append(np.clip(prior.loc, bounds[:, 0], bounds[:, 1])[free])
            if self.n_restarts > 1:
                starts += list(prior.sample(rng, self.n_restarts - 1, bounds)[:, free])  # type: ignore[arg-type]
        elif self.n_restarts:
            lo, hi = bounds[free, 0], bounds[free, 1]
            starts += list(lo + (hi - lo) * rng.random((self.n_restarts, int(free.sum()))))  # type: ignore[union-attr]
        best_v, best_f = start, objective(start)[0]
        for v0 in starts:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                res = minimize(objective, v0, jac=True, method="L-BFGS-B", bounds=bounds[free])
            if np.isfinite(res.fun) and res.fun < best_f:
                best_v, best_f = res.x, float(res.fun)
        if not np.array_equal(best_v, base[free]):
            # set only what changed, so unchanged hyperparameters keep their exact floats
            th = base.copy()
            th[free] = best_v
            self.kernel.theta = th[:-1]
            if th[-1] != base[-1]:
                self.noise_variance = float(np.exp(th[-1]))
        if best_f >= 1e25:
            warnings.warn("marginal likelihood could not be evaluated at any start; hyperparameters unchanged",
                          RuntimeWarning, stacklevel=2)
        return self

    # ================================================================== persistence
    @fill_doc(**_DOC)
    def state_dict(self) -> dict[str, Any]:
        """JSON-serializable hyperparameters, transform and factorization history.

        With the same training data, :meth:`load_state` rebuilds a GP identical to this one
        bit for bit: the last full factorization is redone and the later points re-appended.
        The training data themselves are not included.

        Returns
        -------
        dict
            ``theta`` (list), ``noise_variance``, ``y_shift``, ``y_scale``, ``jitter``,
            ``n_full`` (points in the last full factorization) and ``n`` (training points).

        Raises
        ------
        %(not_fitted)s
        """
        self._check_fitted()
        return {
            "theta": self.theta.tolist(),
            "noise_variance": self.noise_variance,
            "y_shift": self.y_shift_,
            "y_scale": self.y_scale_,
            "jitter": self.jitter_,
            "n_full": self.n_full_,
            "n": self.n_train,
        }

    @fill_doc(**_DOC)
    def load_state(self, state: dict[str, Any], X: ArrayLike, y: ArrayLike) -> "GaussianProcess":
        """Restore a GP saved with :meth:`state_dict`, given its training data.

        Sets the hyperparameters and output transform from ``state``, factorizes the first
        ``state["n_full"]`` points (starting from the saved jitter) and appends the rest with
        :meth:`update`: the same arithmetic as the saved GP went through, so the result is
        identical bit for bit. No hyperparameter is re-fitted.

        Parameters
        ----------
        state : dict
            Output of :meth:`state_dict`.
        X : array_like of shape (t, d)
            Training inputs in the order they were added; only the first ``state["n"]``
            rows are used.
        y : array_like of shape (t,)
            The matching raw outputs.

        %(returns_self)s

        Raises
        ------
        ValueError
            If fewer than ``state["n"]`` points are given.
        KeyError
            If ``state`` lacks an entry.
        NumericalError
            If the factorization fails even with the largest jitter.
        """
        X = np.array(X, dtype=float, ndmin=2)
        y = np.asarray(y, dtype=float).reshape(-1)
        n, n_full = int(state["n"]), int(state["n_full"])
        if X.shape[0] < n or y.size < n:
            raise ValueError(f"load_state needs {n} training points, got {X.shape[0]}")
        self.theta = state["theta"]
        self.noise_variance = float(state["noise_variance"])
        self.y_shift_, self.y_scale_ = float(state["y_shift"]), float(state["y_scale"])
        self.X_, self.y_ = X[:n_full].copy(), y[:n_full].copy()
        self._z = self.transform_outputs(self.y_)
        self.L_, self.jitter_ = self._factor(self.X_, start=float(state["jitter"]))
        self.n_full_ = n_full
        self._refresh_alpha()
        for i in range(n_full, n):
            self.update(X[i], y[i])
        return self

    def __repr__(self) -> str:
        return f"GaussianProcess(kernel={self.kernel!r}, noise_variance={self.noise_variance:.3g}, n_train={self.n_train})"
