"""Projection pursuit for additive GPs: learning W, and the restricted projection of RPP-GP-UCB.

The projected-additive model (Li, Kandasamy, Póczos, Schneider 2016, eq. 6) is an additive
GP on the projected inputs ``Z = X W`` with an invertible ``W`` of shape (D, D): column c of
W gives coordinate c of ``z = W^T x``, and the additive groups are groups of z-coordinates.

Learning W ("PP-GP", :func:`learn_projection`)
    The paper uses Gilboa et al. (2013), who fit one direction at a time by EM on a
    state-space model. We use the substitute of SPEC.md P4.A.6-3, since (as the paper notes,
    §4) projection-pursuit GP regression *is* the additive GP on ``Z = X W``: maximize
    ``log p(y | X W, theta) - ridge ||W - I||_F^2`` over **all of W jointly** (and the
    free log-hyperparameters of the shared kernel) by L-BFGS-B, warm-started from the
    previous W, with the decomposition fixed. The gradient is analytic
    (:func:`projected_log_marginal_likelihood`): with ``K = k(XW) + s2 I``,
    ``a = K^{-1} y`` and ``A = a a^T - K^{-1}``,

    .. math::

        \\frac{\\partial \\log p}{\\partial Z_{i\\cdot}} = \\sum_k A_{ik}\\,
        \\nabla_1 k(z_i, z_k), \\qquad
        \\frac{\\partial \\log p}{\\partial W} = X^\\top \\frac{\\partial \\log p}{\\partial Z},

    i.e. one call of the kernel's input gradient ``grad_x(Z, Z, A)`` (the factor 1/2 of
    ``1/2 tr(A dK)`` cancels against the two arguments of the symmetric kernel).
    *Cost* per likelihood-and-gradient evaluation: O(n^3) for the Cholesky factor and
    ``K^{-1}``, O(n^2 D) for the kernel and its input gradient, O(n D^2) for ``X^T G``; one
    learning step is at most ``max_iter`` L-BFGS-B iterations (about as many evaluations).
    Measured (D = 50, 5 groups, one BLAS thread on a loaded 2-core machine): 0.43 s per
    evaluation at n = 500 and 1.8 s at n = 1000, so a 200-iteration step costs about 6 minutes
    at n = 1000; the alpha grid of :func:`choose_alpha` (101 likelihoods without gradient,
    0.33 s each at n = 1000) about 30 s.
    Joint (rather than one direction at a time) costs the same per evaluation and needs no
    outer sweeps over directions.

Restricted projection (eq. 7-8, :func:`restrict_projection`, :func:`choose_alpha`)
    ``W^ = (1 - a) W + a I`` with ``a`` from a grid on [0, 1], the one of highest marginal
    likelihood among those meeting the delta-ratio constraint
    ``prod_c ||w^_c||_1 / |det W^| <= 1 + delta`` (:func:`delta_ratio`: the volume of the
    outer box of the transformed unit cube over the volume of the transformed cube).
    ``a = 1`` (W^ = I, ratio 1) is always feasible.

References
----------
.. [1] C.-L. Li, K. Kandasamy, B. Póczos, J. Schneider, "High dimensional Bayesian
   optimization via restricted projection pursuit models", AISTATS 2016, §4, eqs. (6)-(8).
.. [2] E. Gilboa, Y. Saatçi, J. P. Cunningham, "Scaling multidimensional Gaussian processes
   using projected additive approximations", ICML 2013.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import cho_solve
from scipy.linalg.lapack import dtrtri
from scipy.optimize import minimize

from .._validation import check_int, check_real
from ..gp import Kernel

__all__ = [
    "outer_box",
    "delta_ratio",
    "restrict_projection",
    "projected_log_marginal_likelihood",
    "learn_projection",
    "choose_alpha",
    "feasible_alpha",
    "ProjectionFit",
]

Array = NDArray[np.float64]
_LOG_2PI = float(np.log(2.0 * np.pi))


def _square(W: ArrayLike, name: str = "W") -> Array:
    W = np.asarray(W, dtype=float)
    if W.ndim != 2 or W.shape[0] != W.shape[1] or not np.all(np.isfinite(W)):
        raise ValueError(f"{name} must be a finite square matrix, got shape {W.shape}")
    return W


def outer_box(W: ArrayLike, lower: ArrayLike | None = None, upper: ArrayLike | None = None) -> Array:
    """The smallest box containing ``{W^T x : lower <= x <= upper}`` (default the unit cube).

    Parameters
    ----------
    W : array_like of shape (D, q)
        Projection; column c gives ``z_c = w_c^T x``.
    lower, upper : array_like of shape (D,), optional
        The x-box; default ``[0, 1]^D``.

    Returns
    -------
    ndarray of shape (q, 2)
        ``[sum_i min(W_ic l_i, W_ic u_i), sum_i max(W_ic l_i, W_ic u_i)]`` per column c
        (for the unit cube, the sums of the negative and of the positive entries).

    Raises
    ------
    ValueError
        If W is not a finite 2-D array or the bounds do not have D entries.
    """
    W = np.asarray(W, dtype=float)
    if W.ndim != 2 or not np.all(np.isfinite(W)):
        raise ValueError(f"W must be a finite 2-D array, got shape {W.shape}")
    D = W.shape[0]
    lo = np.zeros(D) if lower is None else np.asarray(lower, dtype=float).reshape(-1)
    hi = np.ones(D) if upper is None else np.asarray(upper, dtype=float).reshape(-1)
    if lo.size != D or hi.size != D:
        raise ValueError(f"lower and upper must have {D} entries")
    a, b = W * lo[:, None], W * hi[:, None]
    return np.column_stack([np.minimum(a, b).sum(0), np.maximum(a, b).sum(0)])


def delta_ratio(W: ArrayLike) -> float:
    """``|outer(X_W)| / |X_W| = prod_c ||w_c||_1 / |det W|`` (Li et al. 2016, eq. 8).

    The volume of the outer box of the image of the unit cube over the volume of the image
    (a parallelepiped). It is >= 1 (Hadamard's inequality and ``||w||_2 <= ||w||_1``), equals
    1 for diagonal W (any column scaling) and is computed in log space.

    Parameters
    ----------
    W : array_like of shape (D, D)

    Returns
    -------
    float
        ``inf`` if W is singular (or the ratio overflows).

    Raises
    ------
    ValueError
        If W is not a finite square matrix.
    """
    W = _square(W)
    sign, logdet = np.linalg.slogdet(W)
    norms = np.abs(W).sum(0)
    if sign == 0 or not np.isfinite(logdet) or np.any(norms == 0):
        return float("inf")
    with np.errstate(over="ignore"):
        return float(np.exp(np.sum(np.log(norms)) - logdet))


def restrict_projection(W: ArrayLike, alpha: float) -> Array:
    """``W^ = (1 - alpha) W + alpha I`` (Li et al. 2016, eq. 7).

    Parameters
    ----------
    W : array_like of shape (D, D)
    alpha : float
        In [0, 1]; 0 keeps W, 1 gives the identity (the additive model).

    Returns
    -------
    ndarray of shape (D, D)

    Raises
    ------
    ValueError
        If W is not a finite square matrix or ``alpha`` is outside [0, 1].
    """
    W = _square(W)
    alpha = check_real(alpha, "alpha", low=0, high=1)
    if alpha == 0.0:
        return W.copy()
    if alpha == 1.0:
        return np.eye(W.shape[0])
    return (1.0 - alpha) * W + alpha * np.eye(W.shape[0])


def _factor(K: Array) -> Array | None:
    """Cholesky with the GP's relative jitter ladder up to 1e-6 (None if it still fails)."""
    scale = float(np.mean(np.diag(K)))
    for rel in (0.0, 1e-10, 1e-8, 1e-6):
        try:
            return np.linalg.cholesky(K + rel * scale * np.eye(K.shape[0]) if rel else K)
        except np.linalg.LinAlgError:
            continue
    return None


def _inverse_from_cholesky(L: Array) -> Array:
    """``K^{-1} = L^{-T} L^{-1}`` from the lower Cholesky factor ``L`` of K.

    One triangular inversion (LAPACK ``dtrtri``) and one matrix product: the same quantity as
    ``cho_solve((L, True), I)`` (two triangular solves against n right-hand sides) to within
    rounding (about 1e-16 relative), at about 2/3 of its cost; see
    ``benchmarks/bench_rpp_cost.py``.
    """
    Linv, info = dtrtri(L, lower=1)
    if info != 0:  # a zero pivot cannot happen for a factor _factor accepted; stay exact anyway
        return cho_solve((L, True), np.eye(L.shape[0]))
    Linv = np.tril(Linv)
    return Linv.T @ Linv


def projected_log_marginal_likelihood(
    W: ArrayLike,
    X: ArrayLike,
    z: ArrayLike,
    kernel: Kernel,
    noise_variance: float,
    *,
    eval_gradient: bool = False,
) -> float | tuple[float, Array, Array]:
    """Log marginal likelihood of the GP with covariance ``kernel(X W) + noise I``, and gradients.

    Parameters
    ----------
    W : array_like of shape (D, q)
        Projection.
    X : array_like of shape (n, D)
        Inputs (canonical coordinates).
    z : array_like of shape (n,)
        Outputs as the GP sees them (shifted and scaled, e.g. ``(y - gp.y_shift_) / gp.y_scale_``).
    kernel : Kernel
        Covariance on the projected inputs (e.g. :class:`~hdbo.gp.Additive`), with its
        current hyperparameters; must implement ``grad_x``.
    noise_variance : float
        Noise variance in the units of z.
    eval_gradient : bool, default False
        Also return the gradients with respect to W and to the kernel's log-space ``theta``.

    Returns
    -------
    lml : float
        ``-1/2 z^T K^{-1} z - 1/2 log|K| - n/2 log 2 pi``; ``-inf`` if K cannot be factorized.
    grad_W : ndarray of shape (D, q)
        ``X^T kernel.grad_x(XW, XW, a a^T - K^{-1})`` (module docstring); only with
        ``eval_gradient``.
    grad_theta : ndarray of shape (p,)
        ``1/2 kernel.gradient_contract(XW, a a^T - K^{-1})``; only with ``eval_gradient``.
    """
    W = np.asarray(W, dtype=float)
    X = np.asarray(X, dtype=float)
    z = np.asarray(z, dtype=float).reshape(-1)
    Z = X @ W
    if eval_gradient:  # distances and profiles computed once for the value and both gradients
        K, theta_grad, input_grad = kernel._value_and_grad_fn(Z)
    else:
        K = kernel(Z)
    K[np.diag_indices_from(K)] += noise_variance
    L = _factor(K)
    if L is None:
        return (-np.inf, np.zeros_like(W), np.zeros(kernel.n_params)) if eval_gradient else -np.inf
    a = cho_solve((L, True), z)
    lml = -0.5 * float(z @ a) - float(np.sum(np.log(np.diag(L)))) - 0.5 * z.size * _LOG_2PI
    if not eval_gradient:
        return lml
    A = np.outer(a, a) - _inverse_from_cholesky(L)
    G = input_grad(A)  # kernel.grad_x(Z, Z, A) = d lml / dZ, shape (n, q)
    return lml, X.T @ G, 0.5 * theta_grad(A)  # kernel.gradient_contract(Z, A)


@dataclass
class ProjectionFit:
    """Result of :func:`learn_projection`.

    Attributes
    ----------
    W : ndarray of shape (D, D)
        The learned projection.
    theta : ndarray of shape (p,)
        The kernel's log-space hyperparameters after the joint fit.
    lml_start, lml : float
        Log marginal likelihood (without the ridge term) at the start and at the end.
    nit, nfev : int
        L-BFGS-B iterations and likelihood evaluations.
    """

    W: Array
    theta: Array
    lml_start: float
    lml: float
    nit: int
    nfev: int


def learn_projection(
    X: ArrayLike,
    z: ArrayLike,
    kernel: Kernel,
    noise_variance: float,
    *,
    W0: ArrayLike | None = None,
    ridge: float = 1e-3,
    max_iter: int = 200,
    fit_hyperparameters: bool = True,
) -> ProjectionFit:
    """Learn W by maximizing the penalized marginal likelihood of the additive GP on ``X W``.

    Joint L-BFGS-B over all D^2 entries of W (and the kernel's free log-hyperparameters,
    within their bounds) of ``log p(z | X W, theta) - ridge ||W - I||_F^2``, from ``W0``
    (warm start) and the kernel's current hyperparameters; see the module docstring for the
    gradient and the cost. The best point visited is returned, so the penalized objective
    never decreases; the kernel passed in is left unchanged.

    Parameters
    ----------
    X : array_like of shape (n, D)
        Inputs (canonical coordinates).
    z : array_like of shape (n,)
        Outputs in the GP's transformed units.
    kernel : Kernel
        Covariance on the projected inputs (copied; its ``theta`` is the start).
    noise_variance : float
        Noise variance (fixed).
    W0 : array_like of shape (D, D), optional
        Starting point; default the identity.
    ridge : float, default 1e-3
        Weight of ``||W - I||_F^2`` (SPEC.md P4.A.6-3: curbs the overfitting the paper reports).
    max_iter : int, default 200
        Maximum L-BFGS-B iterations.
    fit_hyperparameters : bool, default True
        Also move the kernel's free hyperparameters; otherwise only W.

    Returns
    -------
    ProjectionFit

    Raises
    ------
    ValueError
        If shapes disagree, ``W0`` is not square D x D, ``ridge < 0`` or ``max_iter < 0``.
    TypeError
        If ``max_iter`` is not an int.
    """
    X = np.asarray(X, dtype=float)
    z = np.asarray(z, dtype=float).reshape(-1)
    if X.ndim != 2 or X.shape[0] != z.size:
        raise ValueError(f"X must have shape (n, D) with n = len(z) = {z.size}, got {X.shape}")
    D = X.shape[1]
    W0 = np.eye(D) if W0 is None else _square(W0, "W0")
    if W0.shape[0] != D:
        raise ValueError(f"W0 must have shape ({D}, {D}), got {W0.shape}")
    ridge = check_real(ridge, "ridge", low=0)
    max_iter = check_int(max_iter, "max_iter", low=0)
    kern = kernel.clone()
    theta0 = kern.theta
    bounds_th = kern.bounds
    free = (bounds_th[:, 0] < bounds_th[:, 1]) if fit_hyperparameters else np.zeros(theta0.size, bool)
    eye = np.eye(D)
    nW = D * D

    def unpack(v: Array) -> tuple[Array, Array]:
        th = theta0.copy()
        th[free] = v[nW:]
        return v[:nW].reshape(D, D), th

    best: dict[str, object] = {"f": np.inf, "v": None, "lml": -np.inf}
    count = {"nfev": 0}

    def objective(v: Array) -> tuple[float, Array]:
        W, th = unpack(v)
        kern.theta = th
        count["nfev"] += 1
        lml, gW, gth = projected_log_marginal_likelihood(W, X, z, kern, noise_variance, eval_gradient=True)  # type: ignore[misc]
        if not np.isfinite(lml):
            return 1e25, np.zeros(v.size)
        R = W - eye
        f = -(lml - ridge * float(np.sum(R * R)))
        if f < best["f"]:  # type: ignore[operator]
            best.update(f=f, v=v.copy(), lml=lml)
        grad = np.concatenate([-(gW - 2.0 * ridge * R).reshape(-1), -gth[free]])
        return f, grad

    v0 = np.concatenate([W0.reshape(-1), theta0[free]])
    objective(v0)
    lml_start = float(best["lml"])  # type: ignore[arg-type]
    nit = 0
    if max_iter > 0:
        bnds = [(None, None)] * nW + [tuple(b) for b in bounds_th[free]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            res = minimize(objective, v0, jac=True, method="L-BFGS-B", bounds=bnds,
                           options={"maxiter": max_iter})
        nit = int(res.nit)
    v = best["v"] if best["v"] is not None else v0
    W, th = unpack(v)  # type: ignore[arg-type]
    return ProjectionFit(W=W, theta=th, lml_start=lml_start, lml=float(best["lml"]),  # type: ignore[arg-type]
                         nit=nit, nfev=count["nfev"])


def choose_alpha(
    W: ArrayLike,
    X: ArrayLike,
    z: ArrayLike,
    kernel: Kernel | Sequence[Kernel],
    noise_variance: float,
    *,
    delta: float,
    n_grid: int = 101,
) -> tuple[float, Array, Array, Array]:
    """Grid search of eq. (8): the feasible ``alpha`` of highest marginal likelihood.

    Eq. (8) maximizes ``log p(y | X; W^)``, the marginal likelihood of the model with
    projection W^, whose hyperparameters are themselves fitted by maximum likelihood (Li et
    al. 2016, Section 5). Scoring every W^ with hyperparameters fitted to some *other*
    projection can misrank the grid badly: the hyperparameters fitted jointly with an
    unrestricted W (large entries) can be thousands of nats wrong at ``W^ ~ I``. So ``kernel``
    may be a sequence of candidate kernels (e.g. the hyperparameters fitted on the previous
    W^ and those fitted jointly with W), and each alpha is scored with the best of them, a
    cheap lower bound of the profile likelihood ``max_theta log p(y | X W^, theta)``.

    Parameters
    ----------
    W : array_like of shape (D, D)
        The learned (unrestricted) projection.
    X : array_like of shape (n, D)
        Inputs.
    z : array_like of shape (n,)
        Outputs in the GP's transformed units.
    kernel : Kernel or sequence of Kernel
        Covariance on the projected inputs, at the hyperparameters to score with; with several,
        each alpha gets the highest marginal likelihood among them.
    noise_variance : float
        Noise variance.
    delta : float
        The delta of the constraint ``delta_ratio(W^) <= 1 + delta``; ``>= 0``.
    n_grid : int, default 101
        Number of grid values, evenly spaced over the feasible range ``[alpha_min, 1]``
        (:func:`feasible_alpha`): the paper's "grid search in the range feasible to the
        constraint" (§5). SPEC.md P4.A.3 proposes 101 values on all of [0, 1]; with D = 50
        the feasible range is often narrower than one such step, which would leave only
        ``alpha = 1`` (Add-GP-UCB).

    Returns
    -------
    alpha : float
        The chosen value; ties keep the smallest alpha (the most expressive projection).
    W_hat : ndarray of shape (D, D)
        ``restrict_projection(W, alpha)``.
    alphas : ndarray of shape (n_grid,)
        The grid over ``[alpha_min, 1]``.
    scores : ndarray of shape (n_grid,)
        Log marginal likelihood at each alpha (the best over the candidate kernels), ``-inf``
        where infeasible (not evaluated).

    Raises
    ------
    ValueError
        If ``delta < 0``, ``n_grid < 2``, W is not square or ``kernel`` is an empty sequence.
    """
    W = _square(W)
    kernels = [kernel] if isinstance(kernel, Kernel) else list(kernel)
    if not kernels:
        raise ValueError("kernel must be a Kernel or a non-empty sequence of Kernels")
    delta = check_real(delta, "delta", low=0)
    n_grid = check_int(n_grid, "n_grid", low=2)
    bound = 1.0 + delta
    lo = feasible_alpha(W, delta)
    alphas = np.linspace(lo, 1.0, n_grid)
    alphas[-1] = 1.0
    scores = np.full(n_grid, -np.inf)
    for i, a in enumerate(alphas):
        Wa = restrict_projection(W, float(a))
        if i == n_grid - 1 or delta_ratio(Wa) <= bound:  # alpha = 1 (W^ = I) is always feasible
            scores[i] = max(projected_log_marginal_likelihood(Wa, X, z, k, noise_variance)  # type: ignore[type-var]
                            for k in kernels)
    if not np.any(np.isfinite(scores)):
        return 1.0, np.eye(W.shape[0]), alphas, scores
    i = int(np.argmax(scores))
    return float(alphas[i]), restrict_projection(W, float(alphas[i])), alphas, scores


def feasible_alpha(W: ArrayLike, delta: float, *, tol: float = 1e-12) -> float:
    """The smallest ``alpha`` in [0, 1] whose restriction meets the delta-ratio constraint.

    Bisection on ``delta_ratio((1 - alpha) W + alpha I) <= 1 + delta``, treating the feasible
    set as an interval ``[alpha_min, 1]`` (it contains 1, where the ratio is 1); points of
    a grid over that interval are still checked one by one by :func:`choose_alpha`.

    Parameters
    ----------
    W : array_like of shape (D, D)
    delta : float
        ``>= 0``.
    tol : float, default 1e-12
        Width of the final bracket.

    Returns
    -------
    float
        ``alpha_min`` (0 if W itself is feasible).
    """
    W = _square(W)
    bound = 1.0 + check_real(delta, "delta", low=0)
    if delta_ratio(W) <= bound:
        return 0.0
    lo, hi = 0.0, 1.0  # infeasible at lo, feasible at hi
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if delta_ratio(restrict_projection(W, mid)) <= bound:
            hi = mid
        else:
            lo = mid
    return hi
