"""Low-rank recovery of a gradient matrix by the Dantzig selector, and subspace angles (SI-BO).

Djolonga, Krause and Cevher (NIPS 2013) learn the subspace of ``f(x) = g(A x)`` from finite
differences: with sampling centres ``xi_1..xi_{m_X}`` and ``m_Phi`` random sign matrices
``Phi_i`` of shape ``(d, m_X)`` (entries ``+-1/sqrt(m_Phi)``), the measurements

``y_i = (1/eps) sum_j [f(xi_j + eps phi_{i,j}) - f(xi_j)]``, ``i = 1..m_Phi``      (eq. 1)

satisfy ``y = calA(X) + e + z`` where ``X = [grad f(xi_1) ... grad f(xi_{m_X})]`` has rank at
most k, ``calA(M)_i = <Phi_i, M>`` (Frobenius inner product), ``e`` is the curvature error and
``z`` the noise. The Dantzig selector (eq. 2)

``X_hat = argmin_M ||M||_*  subject to  ||calA*(y - calA(M))||_op <= lambda``,
``calA*(v) = sum_i v_i Phi_i``,

estimates X; the top-k left singular vectors of ``X_hat`` span the estimated subspace ``A_hat``.

Two solvers are provided: :func:`dantzig_selector` with ``solver="cvxpy"`` (the reference
formulation: ``normNuc`` objective and a ``sigma_max`` constraint, solved by an installed conic
solver; cvxpy is the optional extra ``hdbo[subspace]``) and ``solver="admm"``, a linearized
ADMM of our own (numpy only) that is used when cvxpy is not installed. A test checks that the
two agree. The tolerance ``lambda`` follows SPEC.md P1.A.4-4 (:func:`noise_calibrated_lambda`),
and :func:`recover_subspace` halves it while the solution has numerical rank below k.

References
----------
J. Djolonga, A. Krause, V. Cevher. High-dimensional Gaussian process bandits. NIPS 2013,
eqs. (1), (2), (4), Algorithm 1 and Definition 2 (``../shared/papers/000_b66171859d87e3f4.txt``).
E. J. Candes, Y. Plan. Tight oracle inequalities for low-rank matrix recovery from a minimal
number of noisy random measurements. IEEE Trans. Inf. Theory 57(4), 2011 (the matrix Dantzig
selector).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._docstrings import fill_doc
from .._validation import check_choice, check_int, check_real

__all__ = [
    "DantzigResult",
    "SubspaceEstimate",
    "measurement_operator",
    "apply_operator",
    "adjoint_operator",
    "finite_difference_measurements",
    "noise_calibrated_lambda",
    "estimate_fd_noise",
    "dantzig_selector",
    "recover_subspace",
    "orthonormal_rows",
    "principal_cosines",
    "sin_theta",
    "cvxpy_available",
    "DS_SOLVERS",
]

Array = NDArray[np.float64]

#: Solvers accepted by :func:`dantzig_selector` (``"auto"``: cvxpy if installed, else ADMM;
#: ``"adjoint"``: the one-step estimate ``calA*(y)``, SPEC.md P1.A.4-4's fallback).
DS_SOLVERS: tuple[str, ...] = ("auto", "cvxpy", "admm", "adjoint")

# The arguments of principal_cosines and sin_theta (filled in by ``fill_doc``).
_DOC = {
    "two_bases": """
        Parameters
        ----------
        A : array_like of shape (k1, d)
            Rows spanning the first subspace.
        A_hat : array_like of shape (k2, d)
            Rows spanning the second subspace (e.g. an estimate of the first).
    """,
}


def cvxpy_available() -> bool:
    """Whether cvxpy can be imported (the optional ``hdbo[subspace]`` extra).

    Returns
    -------
    bool
    """
    try:
        import cvxpy  # noqa: F401
    except ImportError:
        return False
    return True


# ---------------------------------------------------------------------- measurement operator
def _check_phi(Phi: ArrayLike) -> Array:
    Phi = np.asarray(Phi, dtype=float)
    if Phi.ndim != 3 or min(Phi.shape) < 1:
        raise ValueError(f"Phi must have shape (m_Phi, d, m_X), got {Phi.shape}")
    if not np.all(np.isfinite(Phi)):
        raise ValueError("Phi must be finite")
    return Phi


def measurement_operator(Phi: ArrayLike) -> Array:
    """The matrix P of ``calA``: ``calA(M) = P @ vec(M)`` with ``vec`` in row-major order.

    Parameters
    ----------
    Phi : array_like of shape (m_Phi, d, m_X)
        The measurement matrices ``Phi_i``.

    Returns
    -------
    ndarray of shape (m_Phi, d * m_X)
    """
    Phi = _check_phi(Phi)
    return Phi.reshape(Phi.shape[0], -1)


def apply_operator(Phi: ArrayLike, M: ArrayLike) -> Array:
    """``calA(M)_i = <Phi_i, M> = sum_{a,b} (Phi_i)_{ab} M_{ab}``.

    Parameters
    ----------
    Phi : array_like of shape (m_Phi, d, m_X)
    M : array_like of shape (d, m_X)

    Returns
    -------
    ndarray of shape (m_Phi,)
    """
    Phi = _check_phi(Phi)
    return np.einsum("iab,ab->i", Phi, np.asarray(M, dtype=float))


def adjoint_operator(Phi: ArrayLike, v: ArrayLike) -> Array:
    """The adjoint ``calA*(v) = sum_i v_i Phi_i``.

    Parameters
    ----------
    Phi : array_like of shape (m_Phi, d, m_X)
    v : array_like of shape (m_Phi,)

    Returns
    -------
    ndarray of shape (d, m_X)
    """
    Phi = _check_phi(Phi)
    return np.einsum("i,iab->ab", np.asarray(v, dtype=float).reshape(-1), Phi)


def finite_difference_measurements(
    f_centres: ArrayLike, f_steps: ArrayLike, epsilon: float, *, mask: ArrayLike | None = None
) -> Array:
    """The measurements of eq. (1): ``y_i = (1/eps) sum_j [f(xi_j + eps phi_ij) - f(xi_j)]``.

    Parameters
    ----------
    f_centres : array_like of shape (m_X,)
        Observed values at the centres ``xi_j``.
    f_steps : array_like of shape (m_Phi, m_X)
        Observed values at ``xi_j + eps phi_{i,j}``.
    epsilon : float
        The finite-difference step (> 0).
    mask : array_like of bool, shape (m_Phi, m_X), optional
        Terms to keep; a dropped term (e.g. a failed evaluation) contributes 0, and the
        matching column of ``Phi_i`` must be zeroed in the operator as well.

    Returns
    -------
    ndarray of shape (m_Phi,)

    Raises
    ------
    ValueError
        If the shapes do not match or ``epsilon <= 0``.
    """
    epsilon = check_real(epsilon, "epsilon", low=0, low_inclusive=False)
    fc = np.asarray(f_centres, dtype=float).reshape(-1)
    fs = np.asarray(f_steps, dtype=float)
    if fs.ndim != 2 or fs.shape[1] != fc.size:
        raise ValueError(f"f_steps must have shape (m_Phi, {fc.size}), got {fs.shape}")
    diff = fs - fc[None, :]
    if mask is not None:
        diff = np.where(np.asarray(mask, dtype=bool), diff, 0.0)
    return diff.sum(axis=1) / epsilon


# ---------------------------------------------------------------------- tolerance
def noise_calibrated_lambda(sigma: float, epsilon: float, d: int, m_X: int, *, c_lambda: float = 0.36) -> float:
    """The Dantzig-selector tolerance of SPEC.md P1.A.4-4.

    ``lambda = c_lambda * sqrt(2 m_X) * (sigma / eps) * (sqrt(d) + sqrt(m_X))``: a multiple of
    the spectral norm of ``calA*(z)`` for the noise part z of eq. (1). The paper's eq.-(4)
    bound adds a curvature term ``C_2 eps d m_X k^2 / (2 sqrt(m_Phi))`` that, with any
    realistic C_2, exceeds ``||X||`` itself and makes the selector return 0.

    Parameters
    ----------
    sigma : float
        Noise standard deviation of one (averaged) evaluation, ``>= 0``.
    epsilon : float
        Finite-difference step, ``> 0``.
    d, m_X : int
        Dimension and number of centres.
    c_lambda : float, default 0.36
        The multiplier (0.3 times the naive Gaussian level 1.2).

    Returns
    -------
    float

    Examples
    --------
    >>> round(noise_calibrated_lambda(0.01, 0.3, 100, 3), 4)
    0.3449
    """
    sigma = check_real(sigma, "sigma", low=0)
    epsilon = check_real(epsilon, "epsilon", low=0, low_inclusive=False)
    d, m_X = check_int(d, "d", low=1), check_int(m_X, "m_X", low=1)
    c_lambda = check_real(c_lambda, "c_lambda", low=0)
    return c_lambda * math.sqrt(2 * m_X) * (sigma / epsilon) * (math.sqrt(d) + math.sqrt(m_X))


def estimate_fd_noise(Phi: ArrayLike, y: ArrayLike, epsilon: float, k: int, *, m_X: int | None = None) -> float:
    """Estimate the per-evaluation noise std from the measurements (when it is not known).

    The noise part of eq. (1) is ``z_i = (1/eps) sum_j (n_ij - n_j)``: an independent part with
    variance ``m_X sigma^2 / eps^2`` plus a term shared by every i (the centre noise). The
    residual ``r = y - calA(X_k)`` of the rank-k truncation ``X_k`` of the least-squares
    estimate, centred to remove the shared term, has spread ``~ sqrt(m_X) sigma / eps``;
    curvature errors inflate it, so the estimate errs on the large (conservative) side.

    Parameters
    ----------
    Phi : array_like of shape (m_Phi, d, m_X)
    y : array_like of shape (m_Phi,)
    epsilon : float
        Finite-difference step.
    k : int
        Rank of the truncation.
    m_X : int, optional
        Number of centres that contribute (default ``Phi.shape[2]``).

    Returns
    -------
    float
        ``sigma_hat >= 0``.
    """
    Phi = _check_phi(Phi)
    y = np.asarray(y, dtype=float).reshape(-1)
    P = measurement_operator(Phi)
    m_X = Phi.shape[2] if m_X is None else m_X
    vec, *_ = np.linalg.lstsq(P, y, rcond=None)
    U, s, Vt = np.linalg.svd(vec.reshape(Phi.shape[1], Phi.shape[2]), full_matrices=False)
    Xk = (U[:, :k] * s[:k]) @ Vt[:k]
    r = y - P @ Xk.reshape(-1)
    dof = max(1, r.size - 1 - k * (Phi.shape[1] + Phi.shape[2] - k))
    spread = math.sqrt(float(np.sum((r - r.mean()) ** 2)) / dof)
    return spread * epsilon / math.sqrt(max(m_X, 1))


# ---------------------------------------------------------------------- Dantzig selector
@dataclass
class DantzigResult:
    """Solution of the matrix Dantzig selector.

    Attributes
    ----------
    M : ndarray of shape (d, m_X)
        The minimizer.
    solver : str
        ``"cvxpy:<SOLVER>"``, ``"admm"`` or ``"adjoint"``.
    status : str
        Solver status (``"optimal"``, ``"optimal_inaccurate"``, ``"max_iter"``, ...).
    iterations : int
        Iterations used (0 when the solver does not report them).
    constraint_violation : float
        ``max(0, ||calA*(y - calA(M))||_op - lambda)``.
    """

    M: Array
    solver: str
    status: str
    iterations: int = 0
    constraint_violation: float = 0.0


def _svt(Z: Array, tau: float) -> Array:
    """Singular value soft-thresholding: the prox of ``tau ||.||_*``."""
    U, s, Vt = np.linalg.svd(Z, full_matrices=False)
    s = np.maximum(s - tau, 0.0)
    return (U * s) @ Vt


def _spectral_ball(Z: Array, radius: float) -> Array:
    """Projection onto ``{W : ||W||_op <= radius}`` (clip the singular values)."""
    U, s, Vt = np.linalg.svd(Z, full_matrices=False)
    return (U * np.minimum(s, radius)) @ Vt


def _dantzig_admm(
    P: Array, y: Array, shape: tuple[int, int], lam: float, *, max_iter: int, tol: float
) -> tuple[Array, str, int]:
    """Linearized ADMM for ``min ||M||_* s.t. G(M) + W = B, ||W||_op <= lam``.

    ``G = calA* calA`` (matrix ``P^T P``), ``B = calA*(y)``. Scaled form with penalty rho:

    * ``M <- SVT_{mu}(M - mu rho G(G M + W - B + U))`` with ``mu = 1 / (rho ||G||^2)``
      (the quadratic term linearized, so the M-step is a singular value thresholding);
    * ``W <- Proj_{||.||_op <= lam}(B - G M - U)``;
    * ``U <- U + G M + W - B``.

    rho is rebalanced every 50 iterations so the primal and dual residuals stay within a
    factor 10 of each other. Stops when both relative residuals are below ``tol``.
    """
    d, m = shape
    G = P.T @ P
    B = (P.T @ y).reshape(d, m)
    normG = float(np.linalg.eigvalsh(G)[-1]) if G.size else 0.0
    if normG <= 0.0:
        return np.zeros(shape), "optimal", 0

    def Gop(M: Array) -> Array:
        return (G @ M.reshape(-1)).reshape(d, m)

    scaleB = max(float(np.linalg.norm(B)), 1e-300)
    # Start from the least-squares solution's scale: rho ~ 1 / ||B|| balances the two terms.
    rho = 1.0 / scaleB
    M = np.zeros(shape)
    W = _spectral_ball(B, lam)
    U = np.zeros(shape)
    GM = np.zeros(shape)
    status = "max_iter"
    it = 0
    for it in range(1, max_iter + 1):
        mu = 1.0 / (rho * normG * normG)
        R = GM + W - B + U
        M = _svt(M - mu * rho * Gop(R), mu)
        GM = Gop(M)
        W_old = W
        W = _spectral_ball(B - GM - U, lam)
        r_primal = GM + W - B
        U = U + r_primal
        if it % 10 == 0:
            rp = float(np.linalg.norm(r_primal)) / scaleB
            rd = rho * float(np.linalg.norm(Gop(W - W_old))) / max(float(np.linalg.norm(Gop(U))) * rho, 1e-300)
            if rp < tol and rd < tol:
                status = "optimal"
                break
            if it % 50 == 0:
                if rp > 10 * rd:
                    rho *= 2.0
                    U /= 2.0
                elif rd > 10 * rp:
                    rho /= 2.0
                    U *= 2.0
    return M, status, it


def _dantzig_cvxpy(
    P: Array, y: Array, shape: tuple[int, int], lam: float, *, solver: str | None, solver_options: dict[str, Any]
) -> tuple[Array, str, str]:
    import cvxpy as cp

    d, m = shape
    G = P.T @ P
    B = (P.T @ y).reshape(d, m)
    Mv = cp.Variable((d, m))
    # calA*(y - calA(M)) = B - G vec(M), with vec row-major to match P.
    residual = B - cp.reshape(G @ cp.reshape(Mv, (d * m,), order="C"), (d, m), order="C")
    problem = cp.Problem(cp.Minimize(cp.normNuc(Mv)), [cp.sigma_max(residual) <= lam])
    if solver is None:
        solver = "SCS" if "SCS" in cp.installed_solvers() else None
    problem.solve(solver=solver, **solver_options)
    used = problem.solver_stats.solver_name if problem.solver_stats is not None else str(solver)
    if Mv.value is None:
        raise RuntimeError(f"cvxpy ({used}) failed on the Dantzig selector: status {problem.status}")
    return np.asarray(Mv.value, dtype=float), str(problem.status), f"cvxpy:{used}"


def dantzig_selector(
    Phi: ArrayLike,
    y: ArrayLike,
    lam: float,
    *,
    solver: str = "auto",
    max_iter: int = 20000,
    tol: float = 1e-7,
    cvxpy_solver: str | None = None,
    cvxpy_options: dict[str, Any] | None = None,
) -> DantzigResult:
    """Solve eq. (2): ``min ||M||_*`` s.t. ``||calA*(y - calA(M))||_op <= lam``.

    Parameters
    ----------
    Phi : array_like of shape (m_Phi, d, m_X)
        Measurement matrices.
    y : array_like of shape (m_Phi,)
        Measurements.
    lam : float
        Tolerance ``lambda >= 0``.
    solver : {"auto", "cvxpy", "admm", "adjoint"}, default "auto"
        ``"cvxpy"``: the reference conic formulation (needs cvxpy); ``"admm"``: our linearized
        ADMM (numpy only); ``"auto"``: cvxpy if installed, else ADMM; ``"adjoint"``: no
        optimization, ``calA*(y)`` (the one-step estimate of SPEC.md P1.A.4-4).
    max_iter : int, default 20000
        ADMM iteration limit.
    tol : float, default 1e-7
        ADMM relative primal/dual residual tolerance.
    cvxpy_solver : str, optional
        Conic solver name for cvxpy (default SCS when installed, else cvxpy's choice).
    cvxpy_options : dict, optional
        Extra keyword arguments of ``cvxpy.Problem.solve``.

    Returns
    -------
    DantzigResult

    Raises
    ------
    ValueError
        If shapes do not match, ``lam < 0`` or the solver name is unknown.
    ImportError
        If ``solver="cvxpy"`` and cvxpy is not installed.
    RuntimeError
        If cvxpy returns no solution.

    References
    ----------
    Djolonga et al. (2013), eq. (2).
    """
    Phi = _check_phi(Phi)
    y = np.asarray(y, dtype=float).reshape(-1)
    if y.size != Phi.shape[0]:
        raise ValueError(f"y must have {Phi.shape[0]} entries (one per Phi_i), got {y.size}")
    if not np.all(np.isfinite(y)):
        raise ValueError("y must be finite")
    lam = check_real(lam, "lam", low=0)
    check_choice(solver, "solver", DS_SOLVERS)
    max_iter = check_int(max_iter, "max_iter", low=1)
    tol = check_real(tol, "tol", low=0, low_inclusive=False)
    shape = (Phi.shape[1], Phi.shape[2])
    P = measurement_operator(Phi)
    if solver == "auto":
        solver = "cvxpy" if cvxpy_available() else "admm"
    if solver == "adjoint":
        M, status, iters, name = adjoint_operator(Phi, y), "closed_form", 0, "adjoint"
    elif solver == "cvxpy":
        if not cvxpy_available():
            raise ImportError("solver='cvxpy' needs cvxpy: pip install 'hdbo[subspace]' (or use solver='admm')")
        M, status, name = _dantzig_cvxpy(P, y, shape, lam, solver=cvxpy_solver, solver_options=dict(cvxpy_options or {}))
        iters = 0
    else:
        M, status, iters = _dantzig_admm(P, y, shape, lam, max_iter=max_iter, tol=tol)
        name = "admm"
    resid = (P.T @ (y - P @ M.reshape(-1))).reshape(shape)
    viol = max(0.0, float(np.linalg.norm(resid, 2)) - lam) if solver != "adjoint" else 0.0
    return DantzigResult(M=M, solver=name, status=status, iterations=int(iters), constraint_violation=viol)


# ---------------------------------------------------------------------- subspace
@dataclass
class SubspaceEstimate:
    """The outcome of :func:`recover_subspace`.

    Attributes
    ----------
    A_hat : ndarray of shape (k, d)
        Orthonormal rows: the top-k left singular vectors of ``X_hat``, transposed.
    X_hat : ndarray of shape (d, m_X)
        The Dantzig-selector solution (for the final lambda).
    singular_values : ndarray of shape (min(d, m_X),)
        Singular values of ``X_hat``, decreasing.
    lam : float
        The tolerance of the final solve.
    n_halvings : int
        How many times lambda was halved because the rank was below k.
    solver : str
        Solver that produced ``X_hat``.
    status : str
        Its status.
    """

    A_hat: Array
    X_hat: Array
    singular_values: Array
    lam: float
    n_halvings: int
    solver: str
    status: str
    history: list[dict[str, Any]] = field(default_factory=list)


def recover_subspace(
    Phi: ArrayLike,
    y: ArrayLike,
    k: int,
    lam: float,
    *,
    solver: str = "auto",
    rng: np.random.Generator | None = None,
    max_halvings: int = 10,
    rank_tol: float = 1e-6,
    **solver_options: Any,
) -> SubspaceEstimate:
    """Dantzig selector, lambda halving (SPEC.md P1.A.4-4) and the top-k left singular vectors.

    While the solution has numerical rank below ``k`` (singular values ``<= rank_tol *``
    the largest one, or all zero) lambda is halved and the problem re-solved, at most
    ``max_halvings`` times. ``A_hat`` holds the first k left singular vectors (Algorithm 1);
    if the rank is still below k, the missing directions are completed by a random
    orthonormal complement (from ``rng``) so ``A_hat`` always has k orthonormal rows.

    Parameters
    ----------
    Phi : array_like of shape (m_Phi, d, m_X)
    y : array_like of shape (m_Phi,)
    k : int
        Target dimension, ``1 <= k <= d``.
    lam : float
        Initial tolerance.
    solver : str, default "auto"
        See :func:`dantzig_selector`.
    rng : numpy.random.Generator, optional
        Completes a rank-deficient basis (a fixed default generator when None).
    max_halvings : int, default 10
    rank_tol : float, default 1e-6
    **solver_options
        Passed to :func:`dantzig_selector`.

    Returns
    -------
    SubspaceEstimate

    Raises
    ------
    ValueError
        If ``k`` is not in ``[1, d]`` (and as in :func:`dantzig_selector`).
    """
    Phi = _check_phi(Phi)
    d = Phi.shape[1]
    k = check_int(k, "k", low=1, high=d)
    max_halvings = check_int(max_halvings, "max_halvings", low=0)
    rank_tol = check_real(rank_tol, "rank_tol", low=0)
    history: list[dict[str, Any]] = []
    n_halvings = 0
    while True:
        res = dantzig_selector(Phi, y, lam, solver=solver, **solver_options)
        U, s, _ = np.linalg.svd(res.M, full_matrices=False)
        rank = int(np.sum(s > rank_tol * s[0])) if s.size and s[0] > 0 else 0
        history.append({"lam": float(lam), "rank": rank, "status": res.status})
        if rank >= k or n_halvings >= max_halvings or lam == 0.0:
            break
        lam *= 0.5
        n_halvings += 1
    if rank < k:
        warnings.warn(
            f"Dantzig selector: rank {rank} < k = {k} after {n_halvings} halvings of lambda; "
            "completing the subspace with random directions",
            RuntimeWarning,
            stacklevel=2,
        )
    basis = U[:, :rank] if rank else np.zeros((d, 0))
    if U.shape[1] < k or rank < k:
        g = (rng if rng is not None else np.random.default_rng(0)).standard_normal((d, k - basis.shape[1]))
        g -= basis @ (basis.T @ g)
        q, _ = np.linalg.qr(g)
        basis = np.hstack([basis, q])
    else:
        basis = U[:, :k]
    return SubspaceEstimate(
        A_hat=np.ascontiguousarray(basis[:, :k].T),
        X_hat=res.M,
        singular_values=s,
        lam=float(lam),
        n_halvings=n_halvings,
        solver=res.solver,
        status=res.status,
        history=history,
    )


# ---------------------------------------------------------------------- angles
def orthonormal_rows(A: ArrayLike) -> Array:
    """An orthonormal basis (as rows) of the row space of ``A``.

    Parameters
    ----------
    A : array_like of shape (k, d)
        Any matrix with full row rank (e.g. ``A S`` after a change of variables).

    Returns
    -------
    ndarray of shape (r, d)
        ``Q`` with ``Q Q^T = I_r`` spanning the same rows, ``r = rank(A)``.

    Raises
    ------
    ValueError
        If ``A`` is not 2-D or not finite.
    """
    A = np.atleast_2d(np.asarray(A, dtype=float))
    if A.ndim != 2 or not np.all(np.isfinite(A)):
        raise ValueError(f"A must be a finite 2-D array, got shape {A.shape}")
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    r = int(np.sum(s > 1e-12 * max(s[0], 1e-300))) if s.size else 0
    return Vt[:r]


@fill_doc(**_DOC)
def principal_cosines(A: ArrayLike, A_hat: ArrayLike) -> Array:
    """``cos Theta(A, A_hat)``: singular values of ``A A_hat^T`` (Definition 2), decreasing.

    The rows of both are orthonormalized first, so any bases of the two subspaces may be
    given. With different dimensions k1, k2 there are ``min(k1, k2)`` angles.

    %(two_bases)s

    Returns
    -------
    ndarray of shape (min(k1, k2),)
        Values in [0, 1].

    Raises
    ------
    ValueError
        If the two have different numbers of columns.
    """
    Q1, Q2 = orthonormal_rows(A), orthonormal_rows(A_hat)
    if Q1.shape[1] != Q2.shape[1]:
        raise ValueError(f"A and A_hat must have the same number of columns, got {Q1.shape[1]} and {Q2.shape[1]}")
    return np.clip(np.linalg.svd(Q1 @ Q2.T, compute_uv=False), 0.0, 1.0)


@fill_doc(**_DOC)
def sin_theta(A: ArrayLike, A_hat: ArrayLike) -> float:
    """``||sin Theta(A, A_hat)||_2`` (Definition 2, Lemma 3): 0 for equal subspaces.

    ``sin Theta_i = sqrt(1 - cos^2 Theta_i)`` over the principal angles of
    :func:`principal_cosines`; the Euclidean norm of that vector is returned.

    %(two_bases)s

    Returns
    -------
    float
        In ``[0, sqrt(min(k1, k2))]``.

    Examples
    --------
    >>> round(sin_theta([[1.0, 0.0, 0.0]], [[1.0, 1.0, 0.0]]), 12)  # 45 degrees: sqrt(1/2)
    0.707106781187
    """
    c = principal_cosines(A, A_hat)
    return float(np.sqrt(np.sum(1.0 - c**2)))
