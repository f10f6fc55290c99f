"""MS-UCB (Tran-The, Gupta, Rana, Venkatesh, AAAI 2020): UCB maximized over many random subspaces.

Every point of ``[-1, 1]^D`` splits as ``x = A y + B z`` into ``d`` free coordinates ``y`` and
``D - d`` fixed coordinates ``z`` (Lemma 1; the paper's ``y`` are the *last* d coordinates).
An embedding subspace ``S(A, z) = {A y + B z : y in [-1, 1]^d}`` (Definition 1) fixes z.
Algorithm 1, as implemented:

1. ``n_init = 20`` uniform points in ``[-1, 1]^D`` (the paper's 20 initial points).
2. At iteration ``t = 1, 2, ...`` draw ``N_t = N0 t^alpha`` new uniform vectors z into the
   growing set ``Z_t = Z_{t-1} + {z_t^1 .. z_t^{N_t}}`` (never discarded), so
   ``|Z_t| = N0 sum_{j<=t} j^alpha``.
3. ``x_t = argmax over the union of S(A, z), z in Z_t, of mu_{t-1}(x) + sqrt(beta_t) sigma_{t-1}(x)``
   (eq. 7-8), with ``beta_t = 2 log(pi^2 t^2 / delta) + 2 d log(2 b d sqrt(log(6 D a / delta)) t^2)``
   (the schedule ``"tranthe2020"``; a = b = 1, delta = 0.1 as SPEC P3.A.3 proposes).
4. Matern-5/2 GP with one isotropic length-scale, signal and noise variance fitted by
   marginal likelihood after every observation (``refit_every = 1``), outputs standardized
   (SPEC P3.A.4).

Acquisition maximization (the paper: "L-BFGS-B with 10 x D random starts", no allocation over
subspaces given; SPEC P3.A.4 [AMBIGUITY]). Each iteration spends at most ``acq_budget``
acquisition evaluations (default ``300 D``; the screening part exactly, the local part until
L-BFGS-B converges or its share is spent), in two phases:

* *Screening* (``screen_fraction`` of the budget, default 1/3, ``S`` evaluations): if
  ``S >= |Z_t|`` every subspace gets ``S // |Z_t|`` uniform random ``y`` and the remainder
  go one each to randomly chosen subspaces, the new ones first; if ``S < |Z_t|`` the ``S``
  subspaces screened are the ``N_t`` new ones first, then a uniform random subset of the
  older ones, one random ``y`` each. All candidates are evaluated in vectorized batches.
* *Local search* (the remaining ``L`` evaluations): ``k = min(n_starts, L // min_evals_per_start)``
  starts (``n_starts = 10 D``, the paper's count): the best screened candidate of every new
  subspace when ``N_t <= k`` (SPEC P3.A.4), then the best remaining candidates. All ``k``
  starts are optimized over their own ``y in [-1, 1]^d`` (z fixed) by *one* L-BFGS-B run on
  the stacked ``(k, d)`` variables with the summed objective (the rows are independent, so
  the gradient separates): one acquisition call over k points per L-BFGS-B step, i.e. ``k``
  evaluations, at most ``L // k`` steps. The best point seen in either phase is queried.

The cost of an iteration is therefore set by ``acq_budget`` and does not grow with
``|Z_t|``; with ``S < |Z_t|`` the search covers a random part of ``Z_t`` every iteration (the
paper's exact argmax over all of ``Z_t`` is the limit of a large budget).

What the slices cost. Every model-based query keeps its D - d fixed coordinates at a uniform
random z of Z_t; nothing moves them towards good data (the paper's z are never anchored at
observed points). On a function of all D coordinates the regret of any query is therefore at
least that of the best z in Z_t (Term 1 of the paper's regret split, Lemma 4). On Levy in
D = 20, d = 5 (a sum of one-coordinate terms) that floor is exact: over 300 random z it has
median 57 (10-90%: 42-71), while the box's centre has regret 2.35 (issue 20).

Evaluation on subspaces. The GP's kernel is stationary, so the squared scaled distance from
``x = (z, y)`` to a training point splits into a z part and a y part. The z part of every
subspace in play is computed once per acquisition step, and the screening and the L-BFGS-B
steps then only pay for the d free coordinates (:class:`SubspacePosterior`); the z vector of
a subspace is materialized once, not once per candidate. With one length-scale (the paper's
kernel) and every subspace screened, the products ``z_i . x_j`` over the fixed coordinates
are kept from one iteration to the next, so an iteration adds only the new subspaces' rows and
the new points' columns (at D = 5000, alpha = 1, this took the z parts from about 9 s to about
4 s of a 20 s iteration at t = 300; ``benchmarks/bench_ms_ucb.out.md``). The moments are those of
:meth:`hdbo.gp.GaussianProcess.predict` up to round-off (the sum of squares is added in
another order).

Subspaces are stored implicitly: ``z_i`` (the i-th vector ever drawn) is a fixed function of
``(subspace_seed, i)`` computed by a vectorized SplitMix64 counter generator, so any subset of
``Z_t`` is materialized in O(size) time and the state stays a single integer even when
``|Z_t|`` is in the millions (``alpha = 2``). ``subspace_seed`` is drawn from the method's seed.

With ``d = D`` there is nothing to fix (every subspace is the whole box) and MS-UCB is GP-UCB
with the same budgeted multi-start L-BFGS-B; ``beta_t`` then uses the same formula with
``d -> D`` (SPEC P3.B item 1). The paper requires ``d < D``; ``d = D`` is accepted for that
comparison.

References
----------
Tran-The, Gupta, Rana, Venkatesh. Trading convergence rate with computational budget in high
dimensional Bayesian optimization. AAAI 2020 (``../shared/papers/002_4cfdca13695268e8.txt``),
Lemma 1, Definition 1, Algorithm 1, eqs. (7)-(8); SPEC.md P3.A.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial.distance import cdist

from .._validation import MAX_COUNT, check_choice, check_int
from ..acquisition import UCB
from ..gp import GaussianProcess, Stationary
from ..gp.regression import posterior_moments
from ..space import Box
from ._state import internal_indices, internal_int
from ._subspace_common import MultiStartSubspaceMixin, resolve_tranthe_beta, stacked_lbfgsb
from .gp_based import GPMethod
from .registry import register

__all__ = ["MSUCB", "SubspacePosterior", "subspace_count", "splitmix_uniform", "stacked_lbfgsb",
           "resolve_tranthe_beta"]

Array = NDArray[np.float64]
_CHUNK = 4096  # points per acquisition call during screening (bounds the (chunk, t) kernel block)
_CROSS_MAX = 50_000_000  # largest |Z_t| x n table of z . x products kept (400 MB; about 3x at an update)
_CROSS_ROWS = 256  # subspaces materialized at a time when the table is extended (cache-sized blocks)
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def splitmix_uniform(seed: int, counters: NDArray[np.uint64]) -> Array:
    """Uniform numbers in [0, 1) from a counter-based SplitMix64 stream.

    Element ``c`` of the stream with state ``seed`` is ``mix(seed + (c + 1) * gamma)``; the
    result depends only on ``(seed, c)``, so any subset of a huge stream can be produced
    without generating the rest.

    Parameters
    ----------
    seed : int
        Stream state, ``0 <= seed < 2**64``.
    counters : ndarray of uint64, any shape
        Positions in the stream.

    Returns
    -------
    ndarray of float64, same shape as ``counters``
        53-bit uniforms in [0, 1).
    """
    # in place, two temporaries: about 3x faster than the expression form on large blocks
    z = np.array(counters, dtype=np.uint64)  # a copy, an array also for a 0-d input
    t = np.empty_like(z)
    with np.errstate(over="ignore"):
        z += np.uint64(1)
        z *= _GAMMA
        z += np.uint64(seed)
        np.right_shift(z, np.uint64(30), out=t)
        z ^= t
        z *= _MIX1
        np.right_shift(z, np.uint64(27), out=t)
        z ^= t
        z *= _MIX2
        np.right_shift(z, np.uint64(31), out=t)
        z ^= t
    z >>= np.uint64(11)
    u = z.astype(np.float64)
    u *= 2.0**-53
    return u if u.ndim else u[()]


def subspace_count(t: int, N0: int, alpha: int) -> int:
    """``|Z_t| = N0 sum_{j=1}^t j^alpha``, the number of subspaces after iteration t.

    Parameters
    ----------
    t : int
        Iteration, ``t >= 0`` (``|Z_0| = 0``).
    N0, alpha : int
        ``N_t = N0 t^alpha`` new subspaces per iteration.

    Returns
    -------
    int

    Examples
    --------
    >>> subspace_count(10, 1, 0), subspace_count(10, 1, 1), subspace_count(10, 2, 2)
    (10, 55, 770)
    """
    t = check_int(t, "t", low=0)
    return int(N0) * sum(j**int(alpha) for j in range(1, t + 1))


class SubspacePosterior:
    """Standardized GP posterior at points ``x = (z_{rows[i]}, y_i)`` whose z parts are known in advance.

    For a stationary kernel ``k(x, x') = s rho(r^2)`` with
    ``r^2 = sum_j (x_j - x'_j)^2 / l_j^2``, the squared distance from a query on subspace
    ``S(A, z)`` to training point ``i`` is ``c(z, i) + |y / l_y - Y_i / l_y|^2`` (``Y_i`` the
    free coordinates of the training point), where ``c`` holds everything that depends on the
    fixed coordinates only. ``c`` is computed once per subspace here, so a call costs
    ``O(n t d)`` for the distances instead of ``O(n t D)``, and the input gradient is formed
    for the d free coordinates only, with one kernel evaluation shared by the mean and the
    standard deviation (:meth:`GaussianProcess.predict` evaluates the kernel once per
    gradient). The rest is :meth:`GaussianProcess.predict` with ``standardized=True``: the
    same Cholesky factor, the same triangular solves and the same variance floor, so the
    moments agree with it up to round-off.

    Parameters
    ----------
    gp : GaussianProcess
        A fitted GP with at least one training point and a :class:`~hdbo.gp.Stationary` kernel
        (see :meth:`applies`).
    Z : ndarray of shape (m, D - d) or None
        The fixed parts of the subspaces in play (None when ``cz`` is given).
    rows : ndarray of int, shape (n,)
        Row ``i`` of every query batch lies on subspace ``Z[rows[i]]``.
    z_dims, y_dims : ndarray of int
        The fixed and the free coordinates (disjoint, together ``0 .. D - 1``).
    cz : ndarray of shape (m, t), optional
        The z parts, precomputed (``MSUCB._cz_table``): ``c(z_i, j)`` for subspace ``i`` and
        training point ``j``, in the expansion described below. Replaces ``Z``.

    Raises
    ------
    TypeError
        If the kernel is not stationary or the GP has no training point.
    ValueError
        If neither ``Z`` nor ``cz`` is given, or ``cz`` does not fit the GP (a column per
        training point, a kernel with the expanded distance).

    Notes
    -----
    :meth:`predict` has the signature the acquisition functions of :mod:`hdbo.acquisition`
    expect of a model, so ``UCB(SubspacePosterior(...), beta)`` is the UCB of the GP as a
    function of the free coordinates: values and ``(n, d)`` gradients.
    """

    def __init__(self, gp: GaussianProcess, Z: Array | None, rows: NDArray[np.int64], z_dims: NDArray[np.int64],
                 y_dims: NDArray[np.int64], cz: Array | None = None) -> None:
        if not self.applies(gp):
            raise TypeError(f"SubspacePosterior needs a fitted GP with a Stationary kernel, got "
                            f"{type(gp.kernel).__name__} with {gp.n_train} training points")
        kern = gp.kernel
        assert isinstance(kern, Stationary) and gp.X_ is not None  # for the type checker
        ell = np.broadcast_to(kern.lengthscale, (gp.X_.shape[1],))
        # The kernel's own distance convention and profile rho(r^2), as Stationary.__call__ uses
        # them (Matern 1/2: exact differences, no cancellation near r = 0).
        self._exact = bool(kern._exact_distances)
        self._variance, self._profile = kern.variance, kern._profile
        self._ly = ell[y_dims]
        Xs = gp.X_ / ell
        self._Ys = np.ascontiguousarray(Xs[:, y_dims])  # (t, d) scaled free coordinates of the data
        if not self._exact:
            self._YsT = np.ascontiguousarray(self._Ys.T)
        if cz is None:
            if Z is None:
                raise ValueError("SubspacePosterior needs Z or cz")
            Zs = np.asarray(Z, dtype=float) / ell[z_dims]
            Xz = Xs[:, z_dims]
            if self._exact:
                cz = cdist(Zs, Xz, "sqeuclidean")
            else:
                # the expansion of GaussianProcess.predict, |a|^2 + |b|^2 - 2 a.b, with |b|^2 whole
                x2 = np.einsum("ij,ij->i", Xs, Xs)
                cz = (np.einsum("ij,ij->i", Zs, Zs)[:, None] + x2[None, :]) - 2.0 * (Zs @ Xz.T)
        elif self._exact or cz.shape[1] != gp.X_.shape[0]:
            raise ValueError("a precomputed cz needs a kernel with the expanded distance and one column per "
                             "training point")
        self._cz = cz[np.asarray(rows, dtype=np.int64)]  # (n, t)
        self._L, self._alpha = gp.L_, gp.alpha_

    @staticmethod
    def applies(gp: GaussianProcess) -> bool:
        """Whether ``gp`` has the form this class needs (stationary kernel, training data)."""
        return isinstance(gp.kernel, Stationary) and gp.n_train > 0

    def predict(self, Y: Array, return_grad: bool = False) -> tuple[Array, ...]:
        """Standardized posterior moments at ``(z_{rows[i]}, Y[i])``, optionally with y-gradients.

        Parameters
        ----------
        Y : ndarray of shape (n, d)
            Free coordinates, one row per entry of ``rows``.
        return_grad : bool, default False
            Also return the gradients with respect to Y.

        Returns
        -------
        mean, std : ndarray of shape (n,)
            As ``gp.predict(x, standardized=True)``.
        dmean, dstd : ndarray of shape (n, d)
            Only with ``return_grad=True``.
        """
        Ysq = np.asarray(Y, dtype=float) / self._ly
        if self._exact:
            d2 = self._cz + cdist(Ysq, self._Ys, "sqeuclidean")
        else:
            d2 = self._cz + (np.einsum("ij,ij->i", Ysq, Ysq)[:, None] - 2.0 * (Ysq @ self._YsT))
        d2 = np.maximum(d2, 0.0, out=d2)
        rho, drho = self._profile(d2)
        s = self._variance
        if not return_grad:
            return posterior_moments(self._L, self._alpha, s * rho, s)
        Ds = s * drho  # d k / d r^2, (n, t)

        def grad(W: Array) -> Array:  # sum_i W[q, i] d k(x_q, X_i) / d y_q, as Stationary.grad_x
            C = W * Ds
            return 2.0 * (Ysq * C.sum(1)[:, None] - C @ self._Ys) / self._ly

        return posterior_moments(self._L, self._alpha, s * rho, s, grad)


class _AssembledPosterior:
    """:class:`SubspacePosterior`'s interface for any GP: assembles the full points and predicts."""

    def __init__(self, gp: GaussianProcess, method: "MSUCB", Z: Array) -> None:
        self._gp, self._method, self._Z = gp, method, Z

    def predict(self, Y: Array, return_grad: bool = False) -> tuple[Array, ...]:
        out = self._gp.predict(self._method._assemble(self._Z, Y), return_grad=return_grad, standardized=True)
        if not return_grad:
            return out
        ydims = self._method.y_dims_
        return out[0], out[1], out[2][:, ydims], out[3][:, ydims]


@register
class MSUCB(MultiStartSubspaceMixin, GPMethod):
    """MS-UCB: GP-UCB whose acquisition is maximized over random d-dimensional slices.

    See the module docstring for the algorithm and the budget allocation.

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box (the method works on ``[-1, 1]^D``, as the paper).
    d : int, default 5
        Subspace dimension, ``1 <= d <= D`` (``d = D`` is GP-UCB).
    N0 : int, default 1
        Subspaces added at ``t = 1`` (``N_t = N0 t^alpha``), ``>= 1``.
    alpha : int, default 0
        Growth exponent of ``N_t``, ``>= 0``.
    y_dims : "last", "first", "random" or sequence of int, default "last"
        Which coordinates are the free ``y``: the last d (the paper), the first d, d
        coordinates drawn once from the seed, or the given d distinct indices.
    n_starts : int, optional
        L-BFGS-B starts per iteration, default ``10 D`` (the paper), capped by
        ``local budget // min_evals_per_start``.
    screen_fraction : float, default 1/3
        Fraction of ``acq_budget`` spent on random screening, in (0, 1).
    min_evals_per_start : int, default 10
        Smallest local budget (acquisition evaluations) a start may get.
    acq_budget : int, optional
        Acquisition evaluations per iteration, default ``300 D`` (``10 D`` starts x (10
        screened candidates + 20 L-BFGS-B evaluations)).
    beta : str or float, default "tranthe2020"
        beta_t schedule name or a constant; ``"tranthe2020"`` gets ``dim = D`` and
        ``subspace_dim = d``.
    beta_params : dict, optional
        Schedule parameters (e.g. ``{"a": 1, "b": 1, "delta": 0.1}``).
    n_init, refit_every, refit_growth, kernel, ard, noise_variance, fit_noise, n_restarts, restart_schedule,
    lengthscale_bounds
        GP options of :class:`~hdbo.methods.gp_based.GPMethod`; the defaults here are the
        paper's/SPEC's: 20 initial points, Matern-5/2, isotropic, refit after every
        observation.
    maximizer : {"lbfgsb"}
        Only the multi-start L-BFGS-B described above (accepted for the common interface).
    polish : bool, default False
        Must be False (the local phase already is a gradient search).

    Raises
    ------
    TypeError
        If a count is not an int or a fraction not a real number.
    ValueError
        If ``d`` is not in ``[1, D]``, ``N0 < 1``, ``alpha < 0``, ``y_dims`` is invalid,
        ``screen_fraction`` is not in (0, 1), ``maximizer != "lbfgsb"``, ``polish`` is True,
        or a GP option is invalid.

    Notes
    -----
    Batches: every proposal is one iteration of Algorithm 1, the pending ones counted in
    ``t`` (:attr:`iteration`), so the k-th point of a batch is searched over ``Z_t`` with its
    own ``N_t`` new subspaces and its own ``beta_t``, as if the earlier ones had been told.
    The subspace posteriors (:class:`SubspacePosterior`) are built from the GP conditioned on
    the pending points at its posterior mean (GP-BUCB's hallucination; the pending points
    enter the fixed-coordinate distances ``c(z, i)`` and the Cholesky factor like training
    points), so the UCB on every subspace is lower near the points already out (should the
    best point be a pending one all the same, the best other point searched is proposed);
    ``ask(n)`` returns ``n`` points.

    Attributes
    ----------
    y_dims_ : ndarray of int, shape (d,)
        The free coordinates.
    z_dims_ : ndarray of int, shape (D - d,)
        The fixed coordinates.
    subspace_seed_ : int
        State of the counter generator defining ``Z``.

    Examples
    --------
    >>> import numpy as np
    >>> from hdbo.methods import make_method
    >>> m = make_method("ms-ucb", [(-1, 1)] * 6, seed=0, d=2, n_init=4, acq_budget=200)
    >>> for _ in range(6):
    ...     x = m.ask()
    ...     m.tell(x, -float(np.sum((x - 0.3) ** 2)))
    >>> m.diagnostics()["n_subspaces"]   # t = 2 after the 4 initial points: |Z_2| = 2
    2
    """

    name = "ms-ucb"
    domain = "symmetric"

    def __init__(
        self,
        bounds: Box | ArrayLike,
        *,
        d: int = 5,
        N0: int = 1,
        alpha: int = 0,
        y_dims: str | Sequence[int] = "last",
        **kwargs: Any,
    ) -> None:
        super().__init__(bounds, **kwargs)
        D = self.dim
        self.d = check_int(d, "d", low=1, high=D)
        self.N0 = check_int(N0, "N0", low=1, high=MAX_COUNT)
        self.alpha = check_int(alpha, "alpha", low=0, high=MAX_COUNT)
        self._set_subspace_dim(self.d)
        self.y_dims = y_dims if isinstance(y_dims, str) else [int(i) for i in y_dims]
        self.y_dims_ = self._choose_y_dims(y_dims)
        self.z_dims_ = np.setdiff1d(np.arange(D), self.y_dims_)
        self.subspace_seed_ = int(self.rng.integers(0, 2**63))
        self._cross: dict[str, Any] | None = None  # z . x products kept across iterations (_cz_table)

    # ------------------------------------------------------------------ set-up
    def _choose_y_dims(self, y_dims: str | Sequence[int]) -> NDArray[np.int64]:
        D, d = self.dim, self.d
        if isinstance(y_dims, str):
            check_choice(y_dims, "y_dims", ("last", "first", "random"))
            if y_dims == "last":
                return np.arange(D - d, D)
            if y_dims == "first":
                return np.arange(d)
            return np.sort(self.rng.choice(D, size=d, replace=False))
        idx = np.asarray(y_dims)
        if idx.ndim != 1 or idx.size != d or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError(f"y_dims must be 'last', 'first', 'random' or {d} distinct ints, got {y_dims!r}")
        if np.unique(idx).size != d or idx.min() < 0 or idx.max() >= D:
            raise ValueError(f"y_dims must be {d} distinct indices in [0, {D}), got {list(idx)}")
        return np.sort(idx.astype(np.int64))

    def n_subspaces(self, t: int | None = None) -> int:
        """``|Z_t| = N0 sum_{j<=t} j^alpha`` (default: at the upcoming iteration)."""
        return subspace_count(self.iteration if t is None else t, self.N0, self.alpha)

    # ------------------------------------------------------------------ subspaces
    def subspaces(self, index: ArrayLike) -> Array:
        """The fixed parts ``z_i`` of the subspaces with the given indices.

        Parameters
        ----------
        index : array_like of int, shape (m,)
            Indices ``i >= 0`` in order of creation (``Z_t`` holds ``0 .. |Z_t| - 1``).

        Returns
        -------
        ndarray of shape (m, D - d)
            Uniform in ``[-1, 1]^{D-d}``, a fixed function of ``(subspace_seed_, i)``.
        """
        idx = np.asarray(index, dtype=np.uint64).reshape(-1)
        k = self.dim - self.d
        counters = idx[:, None] * np.uint64(k) + np.arange(k, dtype=np.uint64)[None, :]
        Z = splitmix_uniform(self.subspace_seed_, counters)
        Z *= 2.0
        Z -= 1.0
        return Z

    def _assemble(self, Z: Array, Y: Array) -> Array:
        X = np.empty((Y.shape[0], self.dim))
        X[:, self.z_dims_] = Z
        X[:, self.y_dims_] = Y
        return X

    def _allocate(self, S: int, n_prev: int, n_now: int) -> tuple[NDArray[np.int64], int]:
        """Subspace index of each of the S screening candidates, and how many subspaces are screened."""
        rng = self.rng
        new = np.arange(n_prev, n_now)
        if S >= n_now:
            per, extra = divmod(S, n_now)
            counts = np.full(n_now, per, dtype=np.int64)
            if extra:
                if extra >= new.size:
                    others = rng.choice(n_prev, size=extra - new.size, replace=False) if extra > new.size else []
                    counts[new] += 1
                    counts[np.asarray(others, dtype=np.int64)] += 1
                else:
                    counts[rng.choice(new, size=extra, replace=False)] += 1
            return np.repeat(np.arange(n_now), counts), n_now
        if S <= new.size:
            chosen = np.sort(rng.choice(new, size=S, replace=False))
        else:
            chosen = np.concatenate([new, np.sort(rng.choice(n_prev, size=S - new.size, replace=False))])
        return chosen.astype(np.int64), int(chosen.size)

    # ------------------------------------------------------------------ acquisition
    def _cz_table(self, gp: GaussianProcess, n_now: int, n_screen: int) -> Array | None:
        """The z parts ``c(z_i, j)`` of :class:`SubspacePosterior` for every subspace ``i < n_now``
        and training point ``j`` of ``gp``, from products kept across iterations; or None.

        With one length-scale ``l`` the scaled z part is
        ``(|z_i|^2 + |x_j|^2 - 2 z_i . x_j[z]) / l^2`` (``|x_j|^2`` over all coordinates, as
        :class:`SubspacePosterior` expands it), and the products ``z_i . x_j[z]`` do not depend
        on the hyperparameters. They are kept for the subspaces and the training points seen
        so far, so an iteration computes only the new subspaces' rows and the new points'
        columns, instead of every ``z_i`` against every point at every acquisition step (at
        D = 5000, ``t = 300``: 45,150 subspaces x 300 points x 4,990 coordinates, about half of
        the iteration). The moments agree with the uncached ones up to round-off, and the
        table's entries do not depend on when they were computed (a resumed method rebuilds
        the same table in its first iteration).

        None (the caller computes ``c`` itself) when the kernel is not stationary with one
        length-scale and the expanded distance, when not every subspace is screened
        (``n_screen < n_now``: the table would cost more than the search), or when the table
        would exceed ``_CROSS_MAX`` entries.
        """
        kern, X = gp.kernel, gp.X_
        if (not SubspacePosterior.applies(gp) or X is None or kern._exact_distances
                or np.size(kern.lengthscale) != 1 or n_screen < n_now or n_now * X.shape[0] > _CROSS_MAX):
            self._cross = None
            return None
        Xz = X[:, self.z_dims_]
        c = self._cross
        if c is None or c["seed"] != self.subspace_seed_:
            c = {"seed": self.subspace_seed_, "Xz": Xz[:0].copy(), "G": np.empty((0, 0)), "zz": np.empty(0)}
        # keep the columns of the training points that are still the GP's first ones (pending
        # points are conditioned on at the end and change from one proposal to the next)
        keep = min(c["Xz"].shape[0], Xz.shape[0])
        same = np.all(c["Xz"][:keep] == Xz[:keep], axis=1)
        if not same.all():
            keep = int(np.argmin(same))
        n_rows, n = c["G"].shape[0], Xz.shape[0]
        G = np.empty((max(n_rows, n_now), n))
        G[:n_rows, :keep] = c["G"][:, :keep]
        zz = np.empty(G.shape[0])
        zz[:n_rows] = c["zz"]
        # Each product is the pairwise sum of its own contiguous row of z_i * x_j, so an entry
        # does not depend on which iteration (or a resumed method's first one) computed it: a
        # resumed run proposes what the uninterrupted one does, bit for bit. (A BLAS product
        # sums in an order that depends on the shapes of the call.)
        for lo in range(0, G.shape[0], _CROSS_ROWS):
            hi = min(lo + _CROSS_ROWS, G.shape[0])
            first = keep if hi <= n_rows else 0  # old subspaces: the new points; new ones: all points
            if first >= n:
                continue
            Zc = self.subspaces(np.arange(lo, hi))
            for j in range(first, n):
                G[lo:hi, j] = (Zc * Xz[j]).sum(axis=1)
            if hi > n_rows:  # (a block holding old and new subspaces redoes the old ones: same numbers)
                zz[max(lo, n_rows):hi] = (Zc * Zc).sum(axis=1)[max(lo, n_rows) - lo:]
        self._cross = {"seed": self.subspace_seed_, "Xz": Xz.copy(), "G": G, "zz": zz}
        x2 = np.einsum("ij,ij->i", X, X)
        inv_l2 = 1.0 / float(kern.lengthscale[0]) ** 2
        return ((zz[:n_now, None] + x2[None, :]) - 2.0 * G[:n_now]) * inv_l2

    def _subspace_ucb(self, gp: GaussianProcess, beta: float, sub: NDArray[np.int64], cz: Array | None = None
                      ) -> tuple[UCB, Array | None, NDArray[np.int64]]:
        """UCB as a function of the free coordinates, row i on subspace ``sub[i]``.

        Returns the acquisition (``(n, d) -> (n,)``, with ``(n, d)`` gradients), the distinct
        subspaces ``Zu`` of ``sub`` and ``rows`` with ``Zu[rows] == subspaces(sub)``; with the
        table ``cz`` of :meth:`_cz_table`, no subspace is materialized: ``Zu`` is None and
        ``rows`` is ``sub``.
        """
        if cz is not None:
            return UCB(SubspacePosterior(gp, None, sub, self.z_dims_, self.y_dims_, cz=cz), beta), None, sub
        u, rows = np.unique(sub, return_inverse=True)
        Zu = self.subspaces(u)
        rows = rows.reshape(-1)
        if SubspacePosterior.applies(gp):
            model: Any = SubspacePosterior(gp, Zu, rows, self.z_dims_, self.y_dims_)
        else:
            model = _AssembledPosterior(gp, self, Zu[rows])
        return UCB(model, beta), Zu, rows

    def _acquire(self, gp: GaussianProcess) -> Array:
        t = self.iteration
        beta = self.beta_t(t)
        n_prev, n_now = self.n_subspaces(t - 1), self.n_subspaces(t)
        S, L = self._split_budget()

        # screening: random y on the allocated subspaces, evaluated in vectorized chunks
        sub, n_screened = self._allocate(S, n_prev, n_now)
        Y = -1.0 + 2.0 * self.rng.random((sub.size, self.d))
        cz = self._cz_table(gp, n_now, S)
        vals = np.empty(sub.size)
        for lo in range(0, sub.size, _CHUNK):
            hi = min(lo + _CHUNK, sub.size)
            acq, _, _ = self._subspace_ucb(gp, beta, sub[lo:hi], cz)
            vals[lo:hi] = acq(Y[lo:hi])
        vals = np.where(np.isfinite(vals), vals, -np.inf)
        i_best = int(np.argmax(vals))
        best_x = self._assemble(self.subspaces(sub[i_best:i_best + 1]), Y[i_best:i_best + 1])[0]
        best_v = float(vals[i_best])
        nfev = sub.size

        # local search: stacked L-BFGS-B from the chosen starts
        k = self._n_local_starts(L, sub.size)
        local_sub, local_Y, local_v = sub[:0], Y[:0], vals[:0]
        if k >= 1:
            starts = self._pick_starts(sub, vals, n_prev, k)
            local_sub = sub[starts]
            local_Y, local_v, used = self._local_search(gp, beta, local_sub, Y[starts], vals[starts], L, cz)
            nfev += used
            i = int(np.argmax(local_v))
            if local_v[i] > best_v:
                best_x = self._assemble(self.subspaces(local_sub[i:i + 1]), local_Y[i:i + 1])[0]
                best_v = float(local_v[i])
        if self.n_pending:
            # a point already out is not proposed again: the best other point searched
            cand_sub, cand_Y = np.concatenate([local_sub, sub]), np.vstack([local_Y, Y])
            cand_v = np.concatenate([local_v, vals])
            j = self._best_not_pending(
                cand_v, lambda i: self._assemble(self.subspaces(cand_sub[i:i + 1]), cand_Y[i:i + 1])[0])
            if j is not None:
                best_x = self._assemble(self.subspaces(cand_sub[j:j + 1]), cand_Y[j:j + 1])[0]
                best_v = float(cand_v[j])
        self.last_ = {"t": t, "beta": beta, "n_subspaces": n_now, "N_t": n_now - n_prev,
                      "screened_subspaces": n_screened, "n_starts": k, "acq_nfev": nfev, "acq_value": best_v}
        self.last_acq_nfev_ = nfev
        return np.clip(best_x, -1.0, 1.0)

    @staticmethod
    def _pick_starts(sub: NDArray[np.int64], vals: Array, n_prev: int, k: int) -> NDArray[np.int64]:
        """Rows of the screening set to start from: each new subspace's best (if they fit), then the best."""
        order = np.argsort(-vals, kind="stable")
        chosen: list[int] = []
        new_rows = order[sub[order] >= n_prev]
        n_new = np.unique(sub[new_rows]).size
        if 0 < n_new <= k:
            _, first = np.unique(sub[new_rows], return_index=True)  # best row of each new subspace
            chosen = new_rows[first].tolist()
        taken = np.zeros(vals.size, dtype=bool)
        taken[chosen] = True
        rest = order[~taken[order]][: k - len(chosen)]
        return np.concatenate([np.asarray(chosen, dtype=np.int64), rest]).astype(np.int64)

    def _local_search(self, gp: GaussianProcess, beta: float, sub: NDArray[np.int64], Y0: Array, v0: Array,
                      budget: int, cz: Array | None = None) -> tuple[Array, Array, int]:
        """Stacked L-BFGS-B over the free coordinates of the k starts (z fixed), ``<= budget`` evaluations.

        Returns the best free coordinates found from each start (k, d), their values (k,) and
        the evaluations used.
        """
        acq, _, _ = self._subspace_ucb(gp, beta, sub, cz)
        return stacked_lbfgsb(acq.value_and_grad, Y0, v0, budget)

    # ------------------------------------------------------------------ state and reports
    def _get_internal_state(self) -> dict[str, Any]:
        state = super()._get_internal_state()
        state.update(subspace_seed=self.subspace_seed_, y_dims=self.y_dims_.tolist())
        return state

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        self.subspace_seed_ = internal_int(state, "subspace_seed", low=0, high=2**63 - 1)
        self.y_dims_ = np.asarray(internal_indices(state, "y_dims", high=self.dim, length=self.d), dtype=np.int64)
        self.z_dims_ = np.setdiff1d(np.arange(self.dim), self.y_dims_)
        super()._set_internal_state(state)

    def diagnostics(self) -> dict[str, Any]:
        """Subspace and acquisition facts of the last iteration, and the GP hyperparameters.

        Returns
        -------
        dict
            ``n_subspaces`` (``|Z_t|``), ``N_t``, ``screened_subspaces``, ``n_starts``,
            ``acq_nfev`` (evaluations used, ``<= acq_budget``), ``acq_value`` (in the GP's
            standardized units, see :mod:`hdbo.acquisition.functions`), ``beta``,
            ``t``, plus ``hyperparameters`` (see :meth:`GPMethod.diagnostics`); empty
            before the first model-based query.
        """
        return super().diagnostics()
