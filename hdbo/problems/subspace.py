"""Functions of a few linear combinations of many inputs, ``f(x) = g(A x)`` (SI-BO benchmarks).

The test problems of Djolonga, Krause and Cevher (NIPS 2013), Section 5, as SPEC.md P1.C
proposes where the paper gives no details:

* ``gp-subspace`` (:func:`gp_subspace`): a GP sample g on R^2 (Matern nu = 5/2, length-scale
  1/2, variance 1) hidden in a random 2-D subspace of R^D (D = 100 in the paper), the
  paper's "GP-Posterior" task. Generated deterministically from ``seed``: first
  ``A = Q^T`` from the QR factorization of a Gaussian D x 2 matrix, then values
  ``v ~ N(0, K)`` on a 30 x 30 grid over ``[-1.2, 1.2]^2`` (K the Matern kernel plus
  ``1e-8 I``); g is the noise-free posterior mean ``g(u) = k(u)^T K^{-1} v``. **Not rescaled**
  (rescaling to [0, 1] shrinks the gradients SI-BO's Phase 1 needs; SPEC.md P1.C).
  The paper's domain is the ball ``B^D(1.1)``; hdbo's problems are boxes, so the box is
  ``[-1, 1]^D`` (it contains the unit ball of the sampling centres and practically all of
  ``B^D(1.1)``) and ``f(x) = g(P(A x))`` where P projects radially onto the disk of radius
  ``radius = 1.1``: on the paper's domain this is exactly the paper's f, and outside it no
  new optimum appears. The optimum ``f* = max g`` over that disk is computed: the 5 best
  points of a 201 x 201 grid restricted to the disk, each refined by L-BFGS-B.
* ``gabor-neuron`` (:func:`gabor_neuron`): ``f(x) = exp(-(theta^T x - 1)^2)`` on ``[0, 1]^289``
  with theta a 17 x 17 Gabor filter (orientation pi/4, wavelength 8, width 3, aspect 1, phase 0),
  mean removed and scaled to ``||theta|| = 3`` (SPEC.md P1.C). Effective dimension 1;
  ``f* = 1`` on the hyperplane ``theta^T x = 1``, which passes at distance 1/3 from the cube's
  centre (where f = e^-1).
* ``branin-subspace`` (:func:`branin_subspace`): Branin (negated) of ``u = clip(A x, -1, 1)``
  mapped affinely from ``[-1, 1]^2`` onto Branin's box, with A a random 2 x D matrix with
  orthonormal rows, on ``[-1, 1]^D`` (the paper's appendix, not in the provided text;
  SPEC.md P1.C4). The maximizer ``(pi, 2.275)`` has ``||u|| = 0.70``, inside every method's
  search ball; ``f* = -5/(4 pi)``.

Each problem's ``structure["subspace"]`` is A (list of lists, shape (k, D), user units), the
key :func:`~hdbo.problems.embed` and :func:`~hdbo.problems.rescale` remap and that the SI-BO
methods read (``structure["A"]`` is accepted as an alias by them).

References
----------
J. Djolonga, A. Krause, V. Cevher. High-dimensional Gaussian process bandits. NIPS 2013,
Section 5 (``../shared/papers/000_b66171859d87e3f4.txt``); J. G. Daugman (1985) for Gabor
filters.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import solve_triangular
from scipy.optimize import minimize
from scipy.spatial.distance import cdist

from .._validation import check_int, check_real
from ..gp import Matern
from ..space import Box
from .base import Problem
from .registry import register_problem
from .synthetic import branin

__all__ = ["gp_subspace", "gabor_neuron", "gabor_filter", "branin_subspace", "random_orthonormal_rows"]

Array = NDArray[np.float64]


def random_orthonormal_rows(k: int, dim: int, rng: np.random.Generator) -> Array:
    """``A = Q^T`` from the QR factorization of a Gaussian (dim x k) matrix: shape (k, dim)."""
    Q, _ = np.linalg.qr(rng.standard_normal((dim, k)))
    return np.ascontiguousarray(Q.T)


def _project_disk(U: Array, radius: float) -> Array:
    n = np.linalg.norm(U, axis=1, keepdims=True)
    return U * np.where(n > radius, radius / np.maximum(n, 1e-300), 1.0)


# --------------------------------------------------------------------------- GP sample
class _GPSample:
    """``u (n, 2) -> g(u)``: the posterior mean of a GP draw on a grid (picklable).

    The coefficients ``alpha = K^{-1} v`` are large (K is nearly singular: a smooth kernel on a
    fine grid, only ``1e-8`` jitter), so ``k(u)^T alpha`` cancels and carries rounding errors
    of about ``1e-13`` relative. To make each value independent of the batch it is computed in
    (a BLAS product or the ``|a|^2 + |b|^2 - 2 a.b`` distance trick round differently for
    different batch sizes), distances come from :func:`scipy.spatial.distance.cdist` and the
    sums from :func:`numpy.einsum`, both with a fixed per-row order.
    """

    def __init__(self, grid: Array, alpha: Array, lengthscale: float, variance: float) -> None:
        self.grid = grid
        self.alpha = alpha
        self.lengthscale = lengthscale
        self.variance = variance

    def __call__(self, U: Array) -> Array:
        out = np.empty(U.shape[0])
        for s in range(0, U.shape[0], 20000):
            r = math.sqrt(5.0) / self.lengthscale * cdist(U[s : s + 20000], self.grid)
            k = self.variance * (1.0 + r + r * r / 3.0) * np.exp(-r)  # Matern nu = 5/2
            out[s : s + 20000] = np.einsum("ij,j->i", k, self.alpha)
        return out


class _SubspaceFunction:
    """``X (n, D) -> g(P(X A^T))`` with P the projection onto the disk (picklable)."""

    def __init__(self, g: _GPSample, A: Array, radius: float) -> None:
        self.g, self.A, self.radius = g, A, radius

    def __call__(self, X: Array) -> Array:
        # einsum, not BLAS: the same rounding for a row whatever the batch (see _GPSample).
        return self.g(_project_disk(np.einsum("ij,kj->ik", X, self.A), self.radius))


@functools.lru_cache(maxsize=16)
def _gp_instance(dim: int, seed: int, lengthscale: float, variance: float, n_grid: int, extent: float,
                 radius: float) -> tuple[Array, Array, Array, float, Array]:
    rng = np.random.default_rng(seed)
    A = random_orthonormal_rows(2, dim, rng)
    axis = np.linspace(-extent, extent, n_grid)
    grid = np.stack(np.meshgrid(axis, axis, indexing="ij"), axis=-1).reshape(-1, 2)
    K = Matern(nu=2.5, lengthscale=lengthscale, variance=variance)(grid)
    K[np.diag_indices_from(K)] += 1e-8
    L = np.linalg.cholesky(K)
    z = rng.standard_normal(grid.shape[0])
    # v = L z ~ N(0, K), and alpha = K^{-1} v = L^{-T} z (one triangular solve, no 1e8-conditioned solve)
    alpha = solve_triangular(L.T, z, lower=False)
    g = _GPSample(grid, alpha, lengthscale, variance)
    # f* over the disk: the best points of a 201 x 201 grid restricted to it, each refined by
    # L-BFGS-B on g(P(u)) (SPEC.md P1.C proposes a 401 x 401 grid and one refinement; refining
    # the 5 best points of the coarser grid finds the same maximum at a quarter of the cost).
    ax = np.linspace(-radius, radius, 201)
    U = np.stack(np.meshgrid(ax, ax, indexing="ij"), axis=-1).reshape(-1, 2)
    U = U[np.sum(U**2, axis=1) <= radius**2]
    vals = g(U)
    best = int(np.argmax(vals))
    u_best, f_best = U[best], float(vals[best])
    for i in np.argsort(-vals)[:5]:
        res = minimize(lambda u: -float(g(_project_disk(u[None, :], radius))[0]), U[i], method="L-BFGS-B",
                       bounds=[(-radius, radius)] * 2)
        u = _project_disk(res.x[None, :], radius)[0]
        fu = float(g(u[None, :])[0])
        if fu > f_best:
            u_best, f_best = u, fu
    return A, grid, alpha, f_best, u_best


def gp_subspace(*, dim: int = 100, seed: int = 0, lengthscale: float = 0.5, variance: float = 1.0,
                n_grid: int = 30, extent: float = 1.2, radius: float = 1.1) -> Problem:
    """A 2-D GP sample hidden in a random 2-D subspace of R^dim (the paper's GP-Posterior task).

    See the module docstring for the construction.

    Parameters
    ----------
    dim : int, default 100
        Input dimension D (>= 2).
    seed : int, default 0
        Draws A, then the GP values on the grid.
    lengthscale, variance : float, default 0.5, 1.0
        Matern-5/2 hyperparameters of the sample.
    n_grid : int, default 30
        Grid points per axis of the values defining the sample.
    extent : float, default 1.2
        The grid covers ``[-extent, extent]^2``.
    radius : float, default 1.1
        ``1 + eps_bar``: radius of the disk of ``A x`` values (P projects onto it).

    Returns
    -------
    Problem
        On ``[-1, 1]^dim``; ``optimum_value`` = max of g over the disk (computed),
        ``optimizer = A^T u*`` (in the box); ``structure = {"subspace": A}``.

    Raises
    ------
    TypeError, ValueError
        If an argument is invalid.

    Examples
    --------
    >>> p = gp_subspace(dim=20, seed=1, n_grid=10)
    >>> bool(abs(p(p.optimizer) - p.optimum_value) < 1e-9)
    True
    """
    dim = check_int(dim, "dim", low=2)
    seed = check_int(seed, "seed", low=0)
    lengthscale = check_real(lengthscale, "lengthscale", low=0, low_inclusive=False)
    variance = check_real(variance, "variance", low=0, low_inclusive=False)
    n_grid = check_int(n_grid, "n_grid", low=2)
    extent = check_real(extent, "extent", low=0, low_inclusive=False)
    radius = check_real(radius, "radius", low=0, low_inclusive=False)
    A, grid, alpha, f_best, u_best = _gp_instance(dim, seed, lengthscale, variance, n_grid, extent, radius)
    fun = _SubspaceFunction(_GPSample(grid, alpha, lengthscale, variance), A, radius)
    x_star = np.clip(A.T @ u_best, -1.0, 1.0)
    return Problem(fun, Box.symmetric(dim), name="gp-subspace", optimum_value=f_best, optimizer=x_star,
                   structure={"subspace": A.tolist()})


# --------------------------------------------------------------------------- Gabor neuron
def gabor_filter(size: int = 17, *, orientation: float = math.pi / 4, wavelength: float = 8.0, width: float = 3.0,
                 aspect: float = 1.0, phase: float = 0.0, norm: float = 3.0) -> Array:
    """A zero-mean Gabor filter, flattened (SPEC.md P1.C).

    ``theta(u, v) = exp(-(u'^2 + aspect^2 v'^2) / (2 width^2)) cos(2 pi u' / wavelength + phase)``
    with ``u' = u cos(orientation) + v sin(orientation)``, ``v' = -u sin + v cos`` on pixel
    coordinates ``-(size-1)/2 .. (size-1)/2``; the mean is subtracted and the result scaled
    to Euclidean norm ``norm``.

    Parameters
    ----------
    size : int, default 17
    orientation, wavelength, width, aspect, phase, norm : float

    Returns
    -------
    ndarray of shape (size * size,)
        Row-major flattening of the size x size filter.
    """
    size = check_int(size, "size", low=2)
    c = np.arange(size) - (size - 1) / 2
    u, v = np.meshgrid(c, c, indexing="ij")
    up = u * math.cos(orientation) + v * math.sin(orientation)
    vp = -u * math.sin(orientation) + v * math.cos(orientation)
    theta = np.exp(-(up**2 + aspect**2 * vp**2) / (2 * width**2)) * np.cos(2 * math.pi * up / wavelength + phase)
    theta = theta - theta.mean()
    return (theta * (norm / np.linalg.norm(theta))).reshape(-1)


class _Gabor:
    def __init__(self, theta: Array) -> None:
        self.theta = theta

    def __call__(self, X: Array) -> Array:
        return np.exp(-((X @ self.theta - 1.0) ** 2))


def gabor_neuron(*, orientation: float = math.pi / 4, wavelength: float = 8.0, width: float = 3.0,
                 norm: float = 3.0) -> Problem:
    """The Gabor-filter neuron ``f(x) = exp(-(theta^T x - 1)^2)`` on ``[0, 1]^289``.

    Parameters
    ----------
    orientation, wavelength, width, norm : float
        Parameters of the 17 x 17 filter (:func:`gabor_filter`); the optimal hyperplane
        ``theta^T x = 1`` must meet the cube (it does for the defaults).

    Returns
    -------
    Problem
        ``optimum_value = 1``, ``optimizer = 0.5 + theta / ||theta||^2`` (the point of the
        optimal hyperplane closest to the cube's centre), ``structure = {"subspace":
        [theta / ||theta||]}``.

    Raises
    ------
    ValueError
        If the optimizer above leaves the cube (the filter parameters are too extreme).

    Examples
    --------
    >>> p = gabor_neuron()
    >>> p.dim, round(p(p.optimizer), 12), round(p(np.full(289, 0.5)), 6)
    (289, 1.0, 0.367879)
    """
    theta = gabor_filter(17, orientation=orientation, wavelength=wavelength, width=width,
                         norm=check_real(norm, "norm", low=0, low_inclusive=False))
    x_star = 0.5 + theta / float(theta @ theta)
    if np.any(x_star < 0) or np.any(x_star > 1):
        raise ValueError("the Gabor filter's optimal hyperplane does not meet the cube near its centre; increase norm")
    return Problem(_Gabor(theta), Box.unit(theta.size), name="gabor-neuron", optimum_value=1.0, optimizer=x_star,
                   structure={"subspace": [(theta / np.linalg.norm(theta)).tolist()]})


# --------------------------------------------------------------------------- Branin
class _BraninSubspace:
    def __init__(self, A: Array) -> None:
        self.A = A
        self.inner = branin()

    def __call__(self, X: Array) -> Array:
        U = np.clip(X @ self.A.T, -1.0, 1.0)
        return np.asarray(self.inner(self.inner.bounds.from_symmetric(U)), dtype=float)


def branin_subspace(*, dim: int = 100, seed: int = 0) -> Problem:
    """Branin (negated) hidden in a random 2-D subspace of R^dim, on ``[-1, 1]^dim``.

    ``f(x) = branin(B(clip(A x, -1, 1)))`` with ``B`` the affine map of ``[-1, 1]^2`` onto
    Branin's box and A (2 x dim, orthonormal rows) from ``seed``.

    Parameters
    ----------
    dim : int, default 100
    seed : int, default 0

    Returns
    -------
    Problem
        ``optimum_value = -5 / (4 pi)``; ``optimizer = A^T u*`` for the maximizer
        ``(pi, 2.275)``; ``structure = {"subspace": A}``.

    Examples
    --------
    >>> p = branin_subspace(dim=10, seed=0)
    >>> round(p(p.optimizer) - p.optimum_value, 10)
    0.0
    """
    dim = check_int(dim, "dim", low=2)
    A = random_orthonormal_rows(2, dim, np.random.default_rng(check_int(seed, "seed", low=0)))
    fun = _BraninSubspace(A)
    u_star = fun.inner.bounds.to_symmetric(np.array([math.pi, 2.275]))
    x_star = A.T @ u_star
    return Problem(fun, Box.symmetric(dim), name="branin-subspace", optimum_value=fun.inner.optimum_value,
                   optimizer=x_star, structure={"subspace": A.tolist()})


register_problem("gp-subspace", gp_subspace, min_dim=2)
register_problem("gabor-neuron", gabor_neuron, native_dim=289)
register_problem("branin-subspace", branin_subspace, min_dim=2)
