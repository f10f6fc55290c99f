"""GP-UCB on a linear subspace, and the baselines of SI-BO (Djolonga, Krause, Cevher, NIPS 2013).

:class:`SubspaceUCB` is the shared machinery: GP-UCB on ``z`` in the k-dimensional ball
``B^k(1 + ball_margin)`` with queries ``x = Q^T z``, where ``Q`` (k x D, orthonormal rows) is a
subspace of the method's canonical coordinates. SI-BO (:mod:`hdbo.methods.si_bo`) learns Q;
the baselines here fix it:

* ``random-subspace-ucb`` (RandomS-UCB): Q from the QR factorization of a Gaussian D x k
  matrix (SPEC.md P1.B), drawn once at construction and never learned or changed.
* ``exact-subspace-ucb`` (Exact-UCB, an oracle): Q spans the true subspace read from the
  problem's ``structure["subspace"]`` (``f(x) = g(A x)``, A of shape (k, D) in user units;
  ``structure["A"]`` is accepted as an alias).
* ``highdim-random-ucb`` (RandomH-UCB, :class:`HighDimRandomUCB`): GP-UCB on the full
  D-dimensional domain; each step the best UCB among ``n_candidates = 1000`` fresh random
  points (Section 5 of the paper).

Neither baseline learns a structure, so
:meth:`~hdbo.methods.base.Method.structure_evaluations` is None for both: RandomS-UCB searches
only its random subspace, RandomH-UCB a GP with one isotropic length-scale on all D
coordinates.

Coordinates and domain (SPEC.md P1.A.4-7). The paper works on a ball ``B^d(1 + eps_bar)``;
hdbo's users give a box. The canonical coordinates are the symmetric cube ``u in [-1, 1]^D``
(``x = c + S u`` with ``c`` the box centre and ``S = diag(width / 2)``), whose largest
inscribed ball is the unit ball (in user units: the largest inscribed ball when the box is a
cube, as SPEC.md proposes for the Gabor task, an ellipsoid otherwise). The subspace search
domain is ``z in B^k(1 + ball_margin)``, ``u = clip(Q^T z, -1, 1)``: clipping is only active when
``Q^T z`` leaves the cube, which for random subspaces of many dimensions practically never
happens. The GP is fitted on the projections ``Q u`` of every successful evaluation (equal to
z when no clipping occurred).

GP and acquisition (SPEC.md P1.A.4-5, -6, P1.B). An isotropic Matern-5/2 kernel on z,
initialized at length-scale ``lengthscale = 0.5`` and re-fitted by marginal likelihood every
``refit_every = 10`` observations. With ``noise_std`` given, the noise variance is fixed at
``noise_std**2`` in the objective's units (the paper assumes a known sigma); otherwise it is
fitted. ``beta_t = 2 log(|Z| t^2 pi^2 / (6 delta))`` (Srinivas et al., finite set, the paper's
experimental choice) with ``delta = 0.1``, t counted from the first model-based query, and
``|Z|`` the number of grid points (``maximizer="grid"``), the number of candidates
(RandomH-UCB) or the acquisition budget (``maximizer="direct"``). The UCB is maximized on a
fixed grid over the ball (k = 1: 1001 points on [-1.1, 1.1]; k = 2: a 101 x 101 grid cut to
the disk; k = 3: 31^3 cut to the ball; ``grid_points`` overrides the points per axis), or by
DIRECT on the cube ``[-r, r]^k`` with points radially projected into the ball (k > 3, or
``maximizer="direct"``). The grid posterior is maintained incrementally (``O(t |Z|)`` per
observation between refits).

Batches. A proposal made while points are pending maximizes the UCB of the GP conditioned on
the pending points' projections ``Q u`` at its posterior mean (GP-BUCB, Desautels, Krause and
Burdick 2014; :meth:`SubspaceUCB._pending_gp_inputs`), so ``ask(n)`` returns n points spread
over the subspace. On the grid, a point whose query is pending is passed over for the next best
one; should DIRECT's maximizer be a pending query, a uniform point of the ball is proposed.
The index t of beta_t counts the pending points (GP-BUCB's index of the decision). RandomH-UCB
conditions its D-dimensional GP on the pending points the same way (its fresh candidates are
then scored by the conditioned UCB).

References
----------
J. Djolonga, A. Krause, V. Cevher. High-dimensional Gaussian process bandits. NIPS 2013,
Section 5 (``../shared/papers/000_b66171859d87e3f4.txt``); N. Srinivas et al., Gaussian process
optimization in the bandit setting, ICML 2010 (beta_t for finite sets).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import solve_triangular

from .._validation import MAX_COUNT, check_choice, check_int, check_real
from ..acquisition import UCB
from ..acquisition.maximizers import maximize
from ..gp import GaussianProcess, Kernel, make_kernel
from ..space import Box, as_box
from ..structure.subspace import orthonormal_rows, principal_cosines
from ._state import internal_array
from .gp_based import GPMethod
from .gp_ucb import resolve_beta
from .registry import register

__all__ = [
    "SubspaceUCB",
    "RandomSubspaceUCB",
    "ExactSubspaceUCB",
    "HighDimRandomUCB",
    "ball_grid",
    "project_to_ball",
    "sample_ball",
    "true_subspace",
]

Array = NDArray[np.float64]

#: Points per axis of the default acquisition grid for k = 1, 2, 3 (SPEC.md P1.A.4-5).
DEFAULT_GRID_POINTS = {1: 1001, 2: 101, 3: 31}


# ---------------------------------------------------------------------- geometry helpers
def ball_grid(k: int, radius: float, points_per_axis: int) -> Array:
    """A regular grid on ``[-radius, radius]^k`` restricted to the ball of that radius.

    Parameters
    ----------
    k : int
        Dimension, 1 to 3.
    radius : float
        Ball radius (> 0).
    points_per_axis : int
        Grid points per axis (>= 2), endpoints included.

    Returns
    -------
    ndarray of shape (n, k)
        The grid points with norm <= radius (plus round-off).

    Examples
    --------
    >>> ball_grid(2, 1.1, 101).shape
    (7845, 2)
    """
    k = check_int(k, "k", low=1, high=3)
    radius = check_real(radius, "radius", low=0, low_inclusive=False)
    n = check_int(points_per_axis, "grid_points", low=2, high=MAX_COUNT)
    axis = np.linspace(-radius, radius, n)
    G = np.stack(np.meshgrid(*([axis] * k), indexing="ij"), axis=-1).reshape(-1, k)
    return G[np.sum(G**2, axis=1) <= radius**2 * (1 + 1e-12)]


def project_to_ball(Z: ArrayLike, radius: float) -> Array:
    """Radial projection of each row onto the closed ball of ``radius`` about 0.

    Parameters
    ----------
    Z : array_like of shape (n, k)
    radius : float

    Returns
    -------
    ndarray of shape (n, k)
    """
    Z = np.array(Z, dtype=float, ndmin=2)
    norms = np.linalg.norm(Z, axis=1, keepdims=True)
    scale = np.where(norms > radius, radius / np.maximum(norms, 1e-300), 1.0)
    return Z * scale


def sample_ball(n: int, dim: int, radius: float, rng: np.random.Generator) -> Array:
    """``n`` points uniform in the ball ``B^dim(radius)``: uniform direction, radius ``r U^{1/dim}``.

    Parameters
    ----------
    n, dim : int
    radius : float
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (n, dim)
    """
    g = rng.standard_normal((n, dim))
    g /= np.maximum(np.linalg.norm(g, axis=1, keepdims=True), 1e-300)
    return g * (radius * rng.random((n, 1)) ** (1.0 / dim))


def true_subspace(structure: dict[str, Any], bounds: Box) -> Array | None:
    """The problem's subspace in the canonical symmetric coordinates, or None if unknown.

    ``structure["subspace"]`` (or ``structure["A"]``) holds A of ``f(x) = g(A x + b)`` in user
    units, shape (k, D). With ``x = c + S u`` the function of u is ``g((A S) u + ...)``, so the
    relevant subspace of the canonical coordinates is the row space of ``A S``.

    Parameters
    ----------
    structure : dict
        A problem's ``structure``.
    bounds : Box
        The user's box (D dimensions).

    Returns
    -------
    ndarray of shape (k, D) or None
        Orthonormal rows.

    Raises
    ------
    ValueError
        If the stored matrix does not have D columns.
    """
    A = structure.get("subspace", structure.get("A"))
    if A is None:
        return None
    A = np.atleast_2d(np.asarray(A, dtype=float))
    if A.ndim != 2 or A.shape[1] != bounds.dim:
        raise ValueError(f"structure['subspace'] must have shape (k, {bounds.dim}), got {A.shape}")
    return orthonormal_rows(A * (0.5 * bounds.width)[None, :])


def _refit_known_noise(
    method: Any, X: Array, y: Array, fit_rows: NDArray[np.bool_] | None = None, min_fit: int = 2
) -> GaussianProcess:
    """ML-II refit shared by the methods of this module.

    With ``method.noise_std`` set, the GP noise is fixed at ``noise_std**2`` in objective units
    (converted to the GP's standardized units with :meth:`GaussianProcess.output_transform`). With more than ``method.fit_max_points`` observations
    the hyperparameters are fitted on a random subset of that size that always contains the
    ``refit_every`` most recent points, and the posterior then uses every observation.

    ``fit_rows`` (boolean, one per observation) restricts the hyperparameter fit to those rows;
    with fewer than ``min_fit`` of them the hyperparameters are left as they are. The posterior
    always uses every observation.
    """
    gp = method.gp_ if method.gp_ is not None else method._make_gp()
    shift, scale = gp.output_transform(y)  # the units fit() will give the outputs
    if method.noise_std is not None:
        v = max(method.noise_std**2 / scale**2, 1e-10)
        gp.noise_variance = v
        gp.noise_bounds = (v, v)
    if fit_rows is not None:
        rows = np.flatnonzero(fit_rows)
        if rows.size < max(min_fit, 2):
            return gp.fit(X, y, optimize=False)
        if rows.size < y.size:
            # Fit on the rows in the output units of the full data, so the fitted signal
            # variance and the fixed noise mean the same in the final posterior.
            saved = gp.mean, gp.standardize
            gp.mean, gp.standardize = "zero", False
            try:
                _fit_subset(method, gp, X[rows], (y[rows] - shift) / scale)
            finally:
                gp.mean, gp.standardize = saved
            return gp.fit(X, y, optimize=False)
    n, cap = y.size, method.fit_max_points
    if cap is not None and n > cap:
        _fit_subset(method, gp, X, y)
        return gp.fit(X, y, optimize=False)
    return gp.fit(X, y, optimize=True, rng=method.rng)


def _fit_subset(method: Any, gp: GaussianProcess, X: Array, y: Array) -> None:
    """ML-II on (X, y), or on ``fit_max_points`` of them always holding the latest ``refit_every``."""
    n, cap = y.size, method.fit_max_points
    if cap is not None and n > cap:
        recent = min(method.refit_every, cap)
        older = method.rng.choice(n - recent, size=cap - recent, replace=False)
        idx = np.concatenate([np.sort(older), np.arange(n - recent, n)])
        X, y = X[idx], y[idx]
    gp.fit(X, y, optimize=True, rng=method.rng)


# ---------------------------------------------------------------------- grid posterior cache
class _GridPosterior:
    """Standardized posterior mean and std of a GP on a fixed set of points, extended in O(t n)
    per point (the moments of ``(f - y_shift_) / y_scale_``, as ``gp.predict(Z, standardized=True)``).

    Holds ``V = L^{-1} K(X, Z)`` (t x n). Rows for the points of the GP's last full
    factorization are computed by one triangular solve; later points append one row each,
    exactly as the GP's Cholesky factor grows, so a GP restored from its state (same full
    factorization, same updates) gives bit-identical values.
    """

    def __init__(self, Z: Array) -> None:
        self.Z = Z
        self.key: tuple[Any, ...] | None = None
        self.V = np.empty((0, Z.shape[0]))

    def moments(self, gp: GaussianProcess, n_keep: int | None = None) -> tuple[Array, Array]:
        """Standardized posterior mean and std on the points, each of shape (n,).

        ``n_keep``: only the rows of the first ``n_keep`` training points are kept for later
        calls (the rows of further ones, the pending points a conditioned copy of the GP was
        given, are computed for this call only); default: all.
        """
        key = (tuple(gp.theta.tolist()), gp.n_full_, gp.jitter_, gp.y_shift_, gp.y_scale_)
        t = gp.n_train
        keep = t if n_keep is None else min(n_keep, t)
        nf = gp.n_full_
        V = self.V
        if key != self.key or V.shape[0] > keep or nf > keep:
            Kb = gp.kernel(gp.X_[:nf], self.Z)
            V = solve_triangular(gp.L_[:nf, :nf], Kb, lower=True, check_finite=False)
            if nf <= keep:  # a factorization of kept points only
                self.V, self.key = V, key
        if V.shape[0] < t:
            t0 = V.shape[0]
            ext = np.empty((t, self.Z.shape[0]))
            ext[:t0] = V
            for i in range(t0, t):
                k_i = gp.kernel(gp.X_[i : i + 1], self.Z)[0]
                ext[i] = (k_i - gp.L_[i, :i] @ ext[:i]) / gp.L_[i, i]
            V = ext
            if self.key == key and t0 < keep:
                self.V = V if keep == t else V[:keep].copy()
        w = solve_triangular(gp.L_, gp._z, lower=True, check_finite=False)
        mean = V.T @ w
        var = np.maximum(gp.kernel.diag(self.Z) - np.einsum("ij,ij->j", V, V), 1e-300)
        return mean, np.sqrt(var)


# ---------------------------------------------------------------------- GP-UCB on a subspace
class SubspaceUCB(GPMethod):
    """GP-UCB on ``z in B^k(1 + ball_margin)`` with queries ``u = Q^T z`` (see the module docstring).

    Subclasses provide the projection through :meth:`_projection`.

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box.
    k : int, default 2
        Subspace dimension (``1 <= k <= D``).
    ball_margin : float, default 0.1
        eps_bar: the search ball has radius ``1 + ball_margin`` in canonical units.
    delta : float, default 0.1
        Confidence parameter of beta_t.
    beta : str or float, default "srinivas_finite"
        beta_t schedule (:func:`hdbo.acquisition.get_beta_schedule` name) or a constant.
    beta_params : dict, optional
        Schedule parameters; for ``"srinivas_finite"`` ``n_points`` defaults to ``|Z|`` and
        ``delta`` to ``delta``.
    grid_points : int, optional
        Grid points per axis (default 1001 / 101 / 31 for k = 1 / 2 / 3).
    noise_std : float, optional
        Known noise standard deviation of an evaluation (objective units); fixes the GP
        noise. None fits it.
    lengthscale : float, default 0.5
        Initial length-scale of the kernel on z.
    fit_max_points : int or None, default 500
        Fit hyperparameters on a random subset of at most this many observations (the
        ``refit_every`` most recent always included); the posterior uses all. None: all.
    **kwargs
        :class:`~hdbo.methods.gp_based.GPMethod` options. Defaults differ: ``kernel="matern52"``,
        ``ard=False``, ``n_init=1``, ``refit_every=10``, ``refit_growth=None``, ``polish=False``,
        ``n_restarts=1``,
        ``maximizer="grid"`` for k <= 3 else ``"direct"``, ``lengthscale_bounds=(0.02, 20)``.

    Raises
    ------
    TypeError, ValueError
        If an option is invalid (names the option).

    Notes
    -----
    Batches: ``ask(n)`` always returns ``n`` points; each is proposed on the GP conditioned on
    the projections of the pending points (see "Batches" in the module docstring).
    """

    restart_schedules = ("every",)  # its own refits restart at every refit
    _batch_starts_supported = False  # its search does not go through _maximize

    domain = "symmetric"

    def __init__(
        self,
        bounds: Box | ArrayLike,
        *,
        k: int = 2,
        ball_margin: float = 0.1,
        delta: float = 0.1,
        beta: str | float = "srinivas_finite",
        beta_params: dict[str, Any] | None = None,
        grid_points: int | None = None,
        noise_std: float | None = None,
        lengthscale: float = 0.5,
        fit_max_points: int | None = 500,
        **kwargs: Any,
    ) -> None:
        k_checked = check_int(k, "k", low=1, high=MAX_COUNT)
        for key, value in (("kernel", "matern52"), ("ard", False), ("n_init", 1), ("refit_every", 10),
                           ("refit_growth", None), ("polish", False),
                           ("maximizer", "grid" if k_checked <= 3 else "direct"),
                           ("lengthscale_bounds", (0.02, 20.0)), ("n_restarts", 1)):
            kwargs.setdefault(key, value)
        if noise_std is not None:
            kwargs.setdefault("fit_noise", False)
        super().__init__(bounds, **kwargs)
        self.k = check_int(k, "k", low=1, high=self.dim)
        self.ball_margin = check_real(ball_margin, "ball_margin", low=0)
        self.delta = check_real(delta, "delta", low=0, high=1, low_inclusive=False, high_inclusive=False)
        self.grid_points = check_int(grid_points, "grid_points", low=2, allow_none=True, high=MAX_COUNT)
        self.noise_std = check_real(noise_std, "noise_std", low=0, allow_none=True)
        self.lengthscale = check_real(lengthscale, "lengthscale", low=0, low_inclusive=False)
        self.fit_max_points = check_int(fit_max_points, "fit_max_points", low=2, allow_none=True, high=MAX_COUNT)
        self._check_maximizer_dim(self.k)
        self.radius = 1.0 + self.ball_margin
        self._grid: Array | None = None
        if self.maximizer == "grid":
            n = self.grid_points if self.grid_points is not None else DEFAULT_GRID_POINTS[self.k]
            self._grid = ball_grid(self.k, self.radius, n)
        self.beta = beta
        self.beta_params = dict(beta_params or {})
        params = dict(self.beta_params)
        if beta == "srinivas_finite":
            params.setdefault("n_points", self.n_acquisition_points)
            params.setdefault("delta", self.delta)
        self._beta_fn = resolve_beta(beta, params, self.k)
        self._grid_cache: _GridPosterior | None = None

    # ------------------------------------------------------------------ subspace
    def _projection(self) -> Array | None:
        """The current Q (k x D, orthonormal rows, canonical coordinates), or None if not known yet."""
        raise NotImplementedError

    @property
    def n_acquisition_points(self) -> int:
        """``|Z|`` in beta_t: grid size, or the acquisition budget for DIRECT."""
        return int(self._grid.shape[0]) if self._grid is not None else self.acquisition_budget

    def lift(self, Z: ArrayLike) -> Array:
        """Canonical points ``clip(Q^T z, -1, 1)`` of subspace coordinates.

        Parameters
        ----------
        Z : array_like of shape (n, k) or (k,)

        Returns
        -------
        ndarray of shape (n, D) or (D,)
        """
        Q = self._projection()
        if Q is None:
            raise RuntimeError(f"{self.name}: the subspace is not known yet")
        Z = np.asarray(Z, dtype=float)
        return np.clip(Z @ Q, -1.0, 1.0)

    def to_user(self, Z: ArrayLike) -> Array:
        """Points of the user's box for subspace coordinates ``z`` (shape (n, k) -> (n, D))."""
        return self.from_canonical(self.lift(Z))

    # ------------------------------------------------------------------ model
    def _make_kernel(self) -> Kernel:
        ls = min(max(self.lengthscale, self.lengthscale_bounds[0]), self.lengthscale_bounds[1])
        return make_kernel(self.kernel, self.k, ard=self.ard, lengthscale_bounds=self.lengthscale_bounds,
                           lengthscale=ls)

    def _gp_data(self) -> tuple[Array, Array]:
        Q = self._projection()
        X, y = self.X_obs, self.y_obs
        return (X @ Q.T if Q is not None else np.empty((y.size, self.k))), y

    def _pending_gp_inputs(self) -> Array | None:
        """The pending points' projections ``Q u``, shape (n_pending, k), as :meth:`_gp_data` maps told ones."""
        Q = self._projection()
        return None if Q is None else self.pending_canonical @ Q.T

    def _refit(self, X: Array, y: Array) -> GaussianProcess:
        return _refit_known_noise(self, X, y)

    @property
    def iteration(self) -> int:
        """Index t >= 1 of the upcoming model-based query (after the ``n_init`` random points).

        Pending points count (GP-BUCB's index of the decision, as in
        :attr:`GPMethod.iteration <hdbo.methods.gp_based.GPMethod.iteration>`).
        """
        return max(1, self.n_told + self.n_pending - self.n_init + 1)

    def beta_t(self, t: int | None = None) -> float:
        """The exploration weight beta_t (default: of the upcoming query).

        Parameters
        ----------
        t : int, optional

        Returns
        -------
        float
        """
        return float(self._beta_fn(self.iteration if t is None else t))

    # ------------------------------------------------------------------ ask
    def _ask(self) -> Array:
        if self.y_obs.size < self.n_init:
            return self.lift(sample_ball(1, self.k, self.radius, self.rng))[0]
        return super()._ask()

    def _acquire(self, gp: GaussianProcess) -> Array:
        beta = self.beta_t()
        if self._grid is not None:
            if self._grid_cache is None:
                self._grid_cache = _GridPosterior(self._grid)
            # standardized: UCB as hdbo.acquisition.UCB; the rows of pending points (gp is then
            # conditioned on them) are not kept in the cache
            n_keep = self.y_obs.size if self.n_pending else None
            mean, std = self._grid_cache.moments(gp, n_keep=n_keep)
            ucb = mean + math.sqrt(beta) * std
            i = int(np.argmax(ucb))
            if self.n_pending:
                for _ in range(self.n_pending + 10):  # a few grid points may clip onto one query
                    if not self._repeats_pending(self.lift(self._grid[i])):
                        break
                    ucb[i] = -np.inf
                    i = int(np.argmax(ucb))
            z = self._grid[i]
            self.last_acq_nfev_ = int(self._grid.shape[0])
        else:
            acq = UCB(gp, beta)
            r = self.radius

            def fun(Z: Array) -> Array:
                return acq(project_to_ball(Z, r))

            bounds = np.tile([-r, r], (self.k, 1)).astype(float)
            res = maximize(self.maximizer, fun, bounds, budget=self.acquisition_budget, rng=self.rng)
            z = project_to_ball(res.x, r)[0]
            self.last_acq_nfev_ = res.nfev
        if self.n_pending and self._repeats_pending(self.lift(z)):
            z = sample_ball(1, self.k, self.radius, self.rng)[0]
        self.last_z_ = np.asarray(z, dtype=float)
        return self.lift(z[None, :])[0]

    # ------------------------------------------------------------------ diagnostics
    def subspace_diagnostics(self) -> dict[str, Any]:
        """Angles between the subspace in use and the problem's true one (when both are known).

        Returns
        -------
        dict
            ``sin_theta`` (``||sin Theta(A, Q)||_2``, Definition 2), ``cos_angles`` (list,
            decreasing) and ``min_cos``; empty when either subspace is unknown.
        """
        Q = self._projection()
        A = true_subspace(self.structure, self.bounds)
        if Q is None or A is None:
            return {}
        c = principal_cosines(A, Q)
        return {"sin_theta": float(np.sqrt(np.sum(1.0 - c**2))), "cos_angles": c.tolist(),
                "min_cos": float(c.min()) if c.size else 1.0}

    def diagnostics(self) -> dict[str, Any]:
        """Hyperparameters, k, and the subspace angles against the truth when known.

        Returns
        -------
        dict
            :meth:`GPMethod.diagnostics` plus ``k`` and :meth:`subspace_diagnostics`.
        """
        info = super().diagnostics()
        info["k"] = self.k
        info.update(self.subspace_diagnostics())
        return info


@register
class RandomSubspaceUCB(SubspaceUCB):
    """RandomS-UCB: GP-UCB on a random k-dimensional subspace (Djolonga et al. 2013, Section 5).

    The subspace is ``Q = R^T`` from the QR factorization ``G = R S`` of a Gaussian D x k
    matrix G drawn from the seed at construction (SPEC.md P1.B). Options as in
    :class:`SubspaceUCB`.

    It learns no structure (:meth:`~hdbo.methods.base.Method.structure_evaluations` is None):
    Q is drawn once and never changed, and every query, the initial ones included, is
    ``clip(Q^T z)``, a point of the k-dimensional plane through the box's centre spanned by
    Q (canonical coordinates), so it can beat random search only when that plane happens to
    pass near good points.

    Attributes
    ----------
    projection_ : ndarray of shape (k, D)
        The random subspace (orthonormal rows, canonical coordinates).

    Examples
    --------
    >>> from hdbo.methods import make_method
    >>> m = make_method("random-subspace-ucb", [(0, 1)] * 10, seed=0, k=2, grid_points=21)
    >>> m.ask().shape
    (10,)
    """

    name = "random-subspace-ucb"

    def __init__(self, bounds: Box | ArrayLike, **kwargs: Any) -> None:
        super().__init__(bounds, **kwargs)
        # A generator of its own, seeded from the method's: drawing G directly from
        # default_rng(seed) would reproduce, bit for bit, the subspace of any problem that
        # draws its A the same way from the same seed (gp-subspace, branin-subspace with
        # seed = method seed), silently turning RandomS-UCB into the oracle.
        G = np.random.default_rng(int(self.rng.integers(2**63 - 1))).standard_normal((self.dim, self.k))
        Qm, _ = np.linalg.qr(G)
        self.projection_ = np.ascontiguousarray(Qm.T)

    def _projection(self) -> Array:
        return self.projection_

    def _get_internal_state(self) -> dict[str, Any]:
        state = super()._get_internal_state()
        state["projection"] = self.projection_.tolist()
        return state

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        self.projection_ = internal_array(state, "projection", shape=(self.k, self.dim))
        super()._set_internal_state(state)


@register
class ExactSubspaceUCB(SubspaceUCB):
    """Exact-UCB (oracle): GP-UCB on the problem's true subspace (Djolonga et al. 2013, Section 5).

    The true subspace comes from the ``subspace`` option or else from the problem's
    ``structure["subspace"]`` (alias ``structure["A"]``): A of ``f(x) = g(A x)`` in user units,
    shape (k_true, D). ``k`` defaults to k_true; a smaller k keeps the first k orthonormalized
    directions, a larger one is rejected. Other options as in :class:`SubspaceUCB`.

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box.
    k : int, optional
        Subspace dimension (default: the rank of the true subspace).
    subspace : array_like of shape (k_true, D), optional
        The true A in user units; overrides the problem structure (the experiment runner
        passes the structure itself, so this is for problems that do not expose it).
    **kwargs
        :class:`SubspaceUCB` and :class:`~hdbo.methods.gp_based.GPMethod` options.

    Raises
    ------
    ValueError
        If no subspace is known, it has the wrong shape, or ``k`` exceeds its rank.

    Attributes
    ----------
    projection_ : ndarray of shape (k, D)

    Examples
    --------
    >>> from hdbo.methods import make_method
    >>> m = make_method("exact-subspace-ucb", [(0, 1)] * 4, seed=0, subspace=[[1, 1, 0, 0]], grid_points=21)
    >>> m.projection_.shape
    (1, 4)
    """

    name = "exact-subspace-ucb"

    def __init__(self, bounds: Box | ArrayLike, *, k: int | None = None,
                 subspace: ArrayLike | None = None, **kwargs: Any) -> None:
        box = as_box(bounds)
        if kwargs.get("budget") is not None and check_int(kwargs["budget"], "budget") <= 0:
            raise ValueError(f"budget must be > 0, got {kwargs['budget']}")
        if subspace is not None:
            try:
                A = true_subspace({"subspace": np.asarray(subspace, dtype=float)}, box)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"subspace must be a (k, {box.dim}) matrix of numbers: {exc}") from None
        else:
            A = true_subspace(kwargs.get("structure") or {}, box)
        if A is None:
            raise ValueError(
                "exact-subspace-ucb needs the true subspace: the subspace option or the problem's "
                "structure['subspace'] (or structure['A']), a (k, D) matrix with f(x) = g(A x)"
            )
        k_true = A.shape[0]
        k_checked = k_true if k is None else check_int(k, "k", low=1, high=k_true)
        super().__init__(bounds, k=k_checked, **kwargs)
        self.subspace = None if subspace is None else np.asarray(subspace, dtype=float).tolist()
        self.projection_ = np.ascontiguousarray(A[:k_checked])

    def _projection(self) -> Array:
        return self.projection_


# ---------------------------------------------------------------------- RandomH-UCB
@register
class HighDimRandomUCB(GPMethod):
    """RandomH-UCB: GP-UCB in the full space, each step the best UCB of fresh random points.

    Each query is the point with the highest UCB among ``n_candidates = 1000`` points drawn
    afresh (Djolonga et al. 2013, Section 5). ``sampling="box"`` draws them uniformly in the
    user's box (the domain; SPEC.md P1.B for the Gabor task); ``sampling="ball"`` uniformly
    in the ball ``B^D(1 + ball_margin)`` of canonical coordinates, clipped to the box (the
    paper's domain for its GP task). ``beta_t`` as in :class:`SubspaceUCB` with
    ``|Z| = n_candidates``; the GP is an isotropic Matern-5/2 on the canonical coordinates.

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
    n_candidates : int, default 1000
    sampling : {"box", "ball"}, default "box"
    ball_margin : float, default 0.1
    delta : float, default 0.1
    beta : str or float, default "srinivas_finite"
    beta_params : dict, optional
    noise_std : float, optional
        Known noise standard deviation (fixes the GP noise); None fits it.
    lengthscale : float, default 0.5
        Initial length-scale (canonical units).
    fit_max_points : int or None, default 500
        As in :class:`SubspaceUCB`.
    **kwargs
        :class:`~hdbo.methods.gp_based.GPMethod` options (defaults ``ard=False``,
        ``n_init=1``, ``refit_every=10``, ``refit_growth=None``, ``n_restarts=1``).

    Examples
    --------
    >>> from hdbo.methods import make_method
    >>> m = make_method("highdim-random-ucb", [(0, 1)] * 10, seed=0, n_candidates=50)
    >>> m.ask().shape
    (10,)
    """

    restart_schedules = ("every",)  # its own refits restart at every refit
    _batch_starts_supported = False  # its search does not go through _maximize

    name = "highdim-random-ucb"
    domain = "symmetric"

    def __init__(
        self,
        bounds: Box | ArrayLike,
        *,
        n_candidates: int = 1000,
        sampling: str = "box",
        ball_margin: float = 0.1,
        delta: float = 0.1,
        beta: str | float = "srinivas_finite",
        beta_params: dict[str, Any] | None = None,
        noise_std: float | None = None,
        lengthscale: float = 0.5,
        fit_max_points: int | None = 500,
        **kwargs: Any,
    ) -> None:
        for key, value in (("kernel", "matern52"), ("ard", False), ("n_init", 1), ("refit_every", 10),
                           ("refit_growth", None), ("polish", False), ("lengthscale_bounds", (0.02, 20.0)),
                           ("n_restarts", 1)):
            kwargs.setdefault(key, value)
        if noise_std is not None:
            kwargs.setdefault("fit_noise", False)
        super().__init__(bounds, **kwargs)
        self.n_candidates = check_int(n_candidates, "n_candidates", low=1, high=MAX_COUNT)
        self.sampling = check_choice(sampling, "sampling", ("box", "ball"))
        self.ball_margin = check_real(ball_margin, "ball_margin", low=0)
        self.delta = check_real(delta, "delta", low=0, high=1, low_inclusive=False, high_inclusive=False)
        self.noise_std = check_real(noise_std, "noise_std", low=0, allow_none=True)
        self.lengthscale = check_real(lengthscale, "lengthscale", low=0, low_inclusive=False)
        self.fit_max_points = check_int(fit_max_points, "fit_max_points", low=2, allow_none=True, high=MAX_COUNT)
        self.beta = beta
        self.beta_params = dict(beta_params or {})
        params = dict(self.beta_params)
        if beta == "srinivas_finite":
            params.setdefault("n_points", self.n_candidates)
            params.setdefault("delta", self.delta)
        self._beta_fn = resolve_beta(beta, params, self.dim)

    def _make_kernel(self) -> Kernel:
        ls = min(max(self.lengthscale, self.lengthscale_bounds[0]), self.lengthscale_bounds[1])
        return make_kernel(self.kernel, self.dim, ard=self.ard, lengthscale_bounds=self.lengthscale_bounds,
                           lengthscale=ls)

    def _refit(self, X: Array, y: Array) -> GaussianProcess:
        return _refit_known_noise(self, X, y)

    def beta_t(self, t: int | None = None) -> float:
        """The exploration weight beta_t (default: of the upcoming query)."""
        return float(self._beta_fn(self.iteration if t is None else t))

    def _candidates(self, n: int) -> Array:
        if self.sampling == "ball":
            return np.clip(sample_ball(n, self.dim, 1.0 + self.ball_margin, self.rng), -1.0, 1.0)
        return self.space.sample(n, self.rng)

    def _ask(self) -> Array:
        if self.y_obs.size < self.n_init:
            return self._candidates(1)[0]
        return super()._ask()

    def _acquire(self, gp: GaussianProcess) -> Array:
        C = self._candidates(self.n_candidates)
        values = UCB(gp, self.beta_t())(C)
        self.last_acq_nfev_ = self.n_candidates
        return C[int(np.argmax(values))]

    def diagnostics(self) -> dict[str, Any]:
        """GP hyperparameters (see :meth:`GPMethod.diagnostics`)."""
        return super().diagnostics()
