"""RPP-GP-UCB and PP-GP-UCB (Li, Kandasamy, Póczos, Schneider, AISTATS 2016).

Model (eq. 6): ``f(x) = sum_j f_j(W_j^T x)``, an additive GP (Add-GP-UCB, Kandasamy et al.
2015) on the projected inputs ``z = W^T x`` (``Z = X W``) with an invertible D x D matrix W.
This class *is* :class:`~hdbo.methods.add_gp_ucb.AddGPUCB` run on ``Z = X W^`` instead of X:
the same initial design, exploration phase, decomposition search (over groups of
z-coordinates), shared SE hyperparameters, beta_t and per-group DIRECT budget. What it adds
(Algorithm 3):

1. **Learning W** at each re-learning step (t = 1, 26, 51, ...: every ``N_cyc = 25``
   iterations, once the exploration phase with bandwidth 1e-5 is over, since the likelihood
   cannot tell projections apart at that bandwidth; W^ = I before). In order:
   (a) Add-GP-UCB's decomposition search and hyperparameter fit on ``X W^_prev``;
   (b) W by projection pursuit (:func:`hdbo.structure.learn_projection`: joint L-BFGS-B
   over all of W and the kernel's scale and bandwidth, ``w_iters`` iterations at most,
   analytic gradient through the kernel's input gradients, ridge ``w_ridge ||W - I||^2``),
   **warm-started from the previous unrestricted W** (I the first time), decomposition fixed;
   (c) ``alpha`` by grid search maximizing the marginal likelihood under the delta-ratio
   constraint ``prod_c ||w^_c||_1 / |det W^| <= 1 + delta`` (eq. 8), with
   ``W^ = (1 - alpha) W + alpha I`` (eq. 7); the grid has ``alpha_grid`` values evenly spaced
   over the feasible range ``[alpha_min, 1]`` (the paper's "grid search in the range feasible
   to the constraint", Section 5; where SPEC.md P4.A.3 proposes a fixed grid on [0, 1], the
   paper wins: at D = 50 such a grid rarely holds a feasible value other than 1); each alpha
   is scored with the better of two hyperparameter sets, step (a)'s and the joint fit's of (b)
   (eq. 8 ranks W^ by *its* marginal likelihood; the joint fit's alone can be thousands of
   nats off at W^ ~ I and then decided the grid by noise, ending li2016 runs at alpha = 1);
   (d) hyperparameters re-fitted on ``X W^``, starting from the better of the two sets.
   For ``W^ = I + e E`` the ratio is about ``exp(e sum_{i != c} |E_ic|)``, so delta = 0.1
   leaves W^ only ``log 1.1 = 0.095`` of off-diagonal L1 mass: on li2016's D = 50 problem even
   the true A (ratio ~1e42) only admits alpha >= 0.9997, ``||W^ - I||_F <= 0.002``, so RPP-d
   is by the paper's own rule a small perturbation of ADD-d there.
   Between re-learning steps W^ is fixed and the GP is extended in O(t^2) per point.
2. **Acquisition** (Algorithm 3, step 2): the Add-GP-UCB acquisition maximized group by
   group over the **outer box** of the transformed unit cube, ``z_c in [sum_i min(0, W^_ic),
   sum_i max(0, W^_ic)]``, then ``x = (W^^{-1})^T z`` (the paper's convention: z = W^T x).
   The group-by-group maximization is Add-GP-UCB's own ``_acquire``, run with the outer box
   as its search box; the observed x's are not offered to DIRECT as starting candidates in
   z-space unless W^ = I.
3. **Points whose preimage leaves the box** (the outer box is larger than the image of the
   cube): policy ``clip`` — ``x`` is clipped to ``[0, 1]^D`` and the clipped point is the
   one queried and stored, so the GP only ever sees points inside the box (SPEC.md
   P4.A.6-4). ``diagnostics()["out_of_box_fraction"]`` reports how often that happened.
4. **Repeated queries**: Add-GP-UCB's ``repeats`` rule acts on the queried x (after the
   mapping back and the clipping), and ``diagnostics()["repeat_queries"]`` counts those repeats;
   ``repeats="perturb"`` steps with the z-space kernel's bandwidth.

Evaluations its structure learning needs: no separate phase
(:meth:`~hdbo.methods.base.Method.structure_evaluations` is None); W is learned while the method
optimizes. With the defaults W^ = I (so the method is Add-GP-UCB) for the first
``n_init + explore_iters = 35`` proposals; W is learned from those 35 observations for the 36th
and re-learned from all observations every 25 after that (3 times within a budget of 100, 11
within 300). Whether the W^ in use departs from I is in ``diagnostics()`` (``alpha``,
``delta_ratio``, ``w_distance``).

``pp-gp-ucb`` is the unrestricted variant (delta = infinity): ``alpha = 0`` always, W^ = W
("directly applying Gilboa et al.", §5.1). ``delta = 0`` makes ``alpha = 1`` the only
feasible value on generic W, i.e. Add-GP-UCB (Table 5's "delta = 0 (ADD)"); a fixed
``projection`` matrix turns learning off (with the identity the method *is* Add-GP-UCB,
proposal for proposal).

Choices where the paper is silent (SPEC.md P4.A.6): M random decompositions (plus the one in
use) scored at each re-learning (Section 5); beta_t = 0.2 d log 2t; DIRECT budget
0.9 min(5000, 100 D) / M per group; W learning by the joint penalized-likelihood substitute
for Gilboa et al.'s EM (ridge 1e-3, 200 iterations); alpha grid of 101 values over the feasible
range; ties in the grid keep the smallest alpha; clipping.

References
----------
Li, Kandasamy, Póczos, Schneider. High dimensional Bayesian optimization via restricted
projection pursuit models. AISTATS 2016 (``../shared/papers/003_c14b87eebcc82887.txt``),
Algorithms 2-3, eqs. (6)-(8).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import subspace_angles

from .._validation import MAX_COUNT, check_int, check_real
from ..gp import GaussianProcess
from ..space import Box
from ..structure.projection import (
    choose_alpha,
    delta_ratio,
    learn_projection,
    outer_box,
    projected_log_marginal_likelihood,
)
from ._state import internal_array, internal_float, internal_int
from .add_gp_ucb import AddGPUCB
from .registry import register

__all__ = ["RPPGPUCB", "PPGPUCB"]


@register
class RPPGPUCB(AddGPUCB):
    """Restricted-projection-pursuit GP-UCB; see the module docstring.

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box.
    delta : float or None, default 0.1
        Delta of the delta-ratio constraint (eq. 8); the paper uses 0.1 (synthetic) and
        0.05 (real data). None (or ``inf``) removes the restriction (PP-GP-UCB).
    projection : "learn" or array_like of shape (D, D), default "learn"
        Learn W, or use this fixed invertible matrix (no learning, no alpha search).
    w_iters : int, default 200
        Maximum L-BFGS-B iterations of each W learning step.
    w_ridge : float, default 1e-3
        Ridge weight on ``||W - I||_F^2``.
    alpha_grid : int, default 101
        Number of alpha values tried by the grid search, evenly spaced over the feasible range
        ``[alpha_min, 1]`` (:func:`hdbo.structure.feasible_alpha`).
    **kwargs
        :class:`~hdbo.methods.add_gp_ucb.AddGPUCB` options (``d``, ``M``,
        ``decomposition``, ``n_init``, ``refit_every``, ``acq_budget``, ...), with the same
        defaults (the paper's N_init = 10, N_cyc = 25) except ``n_decompositions``: M random
        decompositions per re-learning by default (Li et al. 2016, Section 5), not D.

    Raises
    ------
    TypeError
        If ``w_iters``/``alpha_grid`` is not an int or ``delta``/``w_ridge`` not a real number.
    ValueError
        If ``delta < 0``, ``w_ridge < 0``, ``w_iters < 0``, ``alpha_grid < 2``, or
        ``projection`` is neither ``"learn"`` nor a finite invertible D x D matrix.

    Attributes
    ----------
    W_ : ndarray of shape (D, D)
        The learned (unrestricted) projection.
    W_hat_ : ndarray of shape (D, D)
        The projection in use, ``(1 - alpha_) W_ + alpha_ I`` (z = W_hat_^T x).
    alpha_ : float
        The restriction weight chosen at the last re-learning.
    pending_clip_repeats_ : int
        Batch proposals that were clipped onto a pending point and replaced by a uniform
        random point (see Notes).

    Notes
    -----
    Batches: as Add-GP-UCB, each group is conditioned on the pending points' group
    coordinates, here in z = W^^T x. A proposal whose preimage leaves the box is clipped;
    when the clipped point is a pending one (the conditioning in z does not reach the
    unclipped z it came from), a uniform random point is proposed instead. Sequential runs
    are unchanged.

    Examples
    --------
    >>> from hdbo.methods import make_method
    >>> m = make_method("rpp-gp-ucb", [(0, 1)] * 4, seed=0, d=2, delta=0.1)
    >>> len(m.ask()), m.W_hat_.shape
    (4, (4, 4))
    """

    name = "rpp-gp-ucb"

    def __init__(
        self,
        bounds: Box | ArrayLike,
        *,
        delta: float | None = 0.1,
        projection: str | list[list[float]] = "learn",
        w_iters: int = 200,
        w_ridge: float = 1e-3,
        alpha_grid: int = 101,
        **kwargs: Any,
    ) -> None:
        super().__init__(bounds, **kwargs)
        if kwargs.get("n_decompositions") is None:
            # Li et al. (2016), Section 5: "we create the M combinations randomly" (Add-GP-UCB's
            # own default is D, from Kandasamy et al. 2015).
            self.n_decompositions = self.M
        delta = check_real(delta, "delta", low=0, finite=False, allow_none=True)
        self.delta = None if delta is None or math.isinf(delta) else delta
        self.w_iters = check_int(w_iters, "w_iters", low=0, high=MAX_COUNT)
        self.w_ridge = check_real(w_ridge, "w_ridge", low=0)
        self.alpha_grid = check_int(alpha_grid, "alpha_grid", low=2, high=MAX_COUNT)
        D = self.dim
        if isinstance(projection, str):
            if projection != "learn":
                raise ValueError(f"projection must be 'learn' or a D x D matrix, got {projection!r}")
            fixed = None
        else:
            fixed = np.asarray(projection, dtype=float)
            if fixed.shape != (D, D) or not np.all(np.isfinite(fixed)) or np.linalg.cond(fixed) > 1e12:
                raise ValueError(f"projection must be a finite invertible ({D}, {D}) matrix, got shape {fixed.shape}")
            projection = fixed.tolist()
        self.projection = projection
        self.W_: NDArray[np.float64] = np.eye(D) if fixed is None else fixed.copy()
        self.W_hat_: NDArray[np.float64] = self.W_.copy()
        self.alpha_ = 0.0 if fixed is not None else 1.0
        self.lml_before_w_: float | None = None
        self.lml_after_w_: float | None = None
        self.w_nfev_ = 0
        self._n_acq = 0
        self._n_out = 0
        self.pending_clip_repeats_ = 0  # batch proposals clipped onto a pending point (then random)

    @property
    def learns_projection(self) -> bool:
        """Whether W is learned (``projection="learn"``)."""
        return isinstance(self.projection, str)

    # ------------------------------------------------------------------ model
    def _gp_data(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return self.X_obs @ self.W_hat_, self.y_obs

    def _gp_input_of(self, U: NDArray[np.float64]) -> NDArray[np.float64]:
        # points projected like the told ones: the GP (and its groups) lives on z = x W^
        return U @ self.W_hat_

    def _refit(self, X: NDArray[np.float64], y: NDArray[np.float64]) -> GaussianProcess:
        # X is Z = X_obs W^_prev: steps (a) decomposition + hyperparameters on it.
        gp = super()._refit(X, y)
        if not self.learns_projection or self._exploring:
            return gp
        Xc = self.X_obs
        z = (y - gp.y_shift_) / gp.y_scale_
        # (b) projection pursuit, warm-started from the previous unrestricted W.
        fit = learn_projection(Xc, z, gp.kernel, gp.noise_variance, W0=self.W_, ridge=self.w_ridge,
                               max_iter=self.w_iters)
        self.W_ = fit.W
        self.lml_before_w_, self.lml_after_w_, self.w_nfev_ = fit.lml_start, fit.lml, fit.nfev
        kernel = gp.kernel.clone()
        kernel.theta = fit.theta
        # (c) restricted projection, eq. (7)-(8). Each alpha is scored with the better of two
        # hyperparameter sets: step (a)'s (fitted on X W^_prev) and the joint fit's (fitted with
        # the unrestricted W). The latter alone can be thousands of nats off at W^ ~ I (li2016,
        # D = 50: lml -27000 at W^ ~ I against +3500 at W), which made the grid's ranking noise.
        theta = fit.theta
        if self.delta is None:
            self.alpha_, self.W_hat_ = 0.0, self.W_.copy()
        else:
            candidates = [gp.kernel, kernel]
            self.alpha_, self.W_hat_, _, _ = choose_alpha(self.W_, Xc, z, candidates, gp.noise_variance,
                                                          delta=self.delta, n_grid=self.alpha_grid)
            if self.alpha_ > 0.0:  # start (d) from the candidate that explains W^ best
                scores = [projected_log_marginal_likelihood(self.W_hat_, Xc, z, k, gp.noise_variance)
                          for k in candidates]
                theta = candidates[int(np.argmax(scores))].theta
        # (d) hyperparameters on the final projection.
        return self._make_gp_for(self.groups_, theta).fit(Xc @ self.W_hat_, y, optimize=True, rng=self.rng)

    # ------------------------------------------------------------------ acquisition
    def _identity_projection(self) -> bool:
        return bool(np.array_equal(self.W_hat_, np.eye(self.dim)))

    def _acquire(self, gp: GaussianProcess) -> NDArray[np.float64]:
        self._n_acq += 1
        if self._identity_projection():
            return super()._acquire(gp)  # z = x: Add-GP-UCB proposal for proposal
        # Algorithm 3, step 2: Add-GP-UCB's group-by-group maximization (reused, not copied)
        # with the outer box of the transformed domain as its search box. The repeats rule
        # compares with the observed x's, so it is applied below in x-space, to the queried point.
        box = outer_box(self.W_hat_, self.space.lower, self.space.upper)  # (D, 2) in z
        space, exploring = self.space, self._exploring
        self.space, self._exploring = Box(box[:, 0], box[:, 1]), False
        try:
            z = self._maximize_groups(gp)
        finally:
            self.space, self._exploring = space, exploring
        # z-coordinates in no group (only with a given partial decomposition) came back uniform
        # on [0, 1]; put them uniform on their outer-box interval instead.
        grouped = np.zeros(self.dim, dtype=bool)
        grouped[[i for g in self.groups_ for i in g]] = True
        z[~grouped] = box[~grouped, 0] + (box[~grouped, 1] - box[~grouped, 0]) * z[~grouped]
        u = np.linalg.solve(self.W_hat_.T, z)  # x = (W^^{-1})^T z
        tol = 1e-9
        if np.any(u < self.space.lower - tol) or np.any(u > self.space.upper + tol):
            self._n_out += 1
        u = self.space.clip(u)  # policy "clip" (module docstring)
        if self.n_pending and np.min(np.max(np.abs(self.pending_canonical - u), axis=1)) <= 1e-9:
            # Batches: a pending point was clipped to the same place (conditioning in z-space
            # does not reach the unclipped z this came from): explore at random instead.
            self.pending_clip_repeats_ += 1
            return self.space.sample(1, self.rng)[0]
        # The repeats rule in x-space (before 2026-11-29 it was applied only to the z-space
        # search, where it never matched, so repeated x's were queried again under every rule
        # and repeat_queries stayed 0: li2016's RPP runs repeated 400-800 of 1000 queries).
        return self._handle_repeat(u, gp)

    def _maximize(self, fun: Any, fun_and_grad: Any = None, *, bounds: NDArray[np.float64] | None = None,
                  budget: int | None = None, n_candidates: int = 5) -> NDArray[np.float64]:
        # Observed points are x's: offered as starting candidates only when z = x.
        n_candidates = n_candidates if self._identity_projection() else 0
        return super()._maximize(fun, fun_and_grad, bounds=bounds, budget=budget, n_candidates=n_candidates)

    # ------------------------------------------------------------------ state
    def _get_internal_state(self) -> dict[str, Any]:
        state = super()._get_internal_state()
        state.update(W=self.W_.tolist(), W_hat=self.W_hat_.tolist(), alpha=self.alpha_,
                     lml_before_w=self.lml_before_w_, lml_after_w=self.lml_after_w_, w_nfev=self.w_nfev_,
                     n_acq=self._n_acq, n_out=self._n_out, pending_clip_repeats=self.pending_clip_repeats_)
        return state

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        D = self.dim
        self.W_ = internal_array(state, "W", shape=(D, D))
        self.W_hat_ = internal_array(state, "W_hat", shape=(D, D))
        self.alpha_ = internal_float(state, "alpha", low=0.0)
        self.lml_before_w_ = internal_float(state, "lml_before_w", allow_none=True, finite=False)
        self.lml_after_w_ = internal_float(state, "lml_after_w", allow_none=True, finite=False)
        self.w_nfev_ = internal_int(state, "w_nfev", low=0)
        self._n_acq = internal_int(state, "n_acq", low=0)
        self._n_out = internal_int(state, "n_out", low=0, high=self._n_acq)
        self.pending_clip_repeats_ = (internal_int(state, "pending_clip_repeats", low=0)
                                      if "pending_clip_repeats" in state else 0)  # absent before batches
        super()._set_internal_state(state)  # refactorizes the GP on X_obs W_hat_

    def diagnostics(self) -> dict[str, Any]:
        """Add-GP-UCB's diagnostics plus the projection.

        Returns
        -------
        dict
            Add-GP-UCB's (``hyperparameters``, ``groups``, ``d``, ``M``), and ``alpha``,
            ``delta`` (None = infinity), ``delta_ratio`` (of W^, <= 1 + delta),
            ``delta_ratio_unrestricted`` (of W), ``W_hat`` (D lists of D floats),
            ``w_distance`` (``||W^ - I||_F``), ``lml_before_w`` / ``lml_after_w`` (marginal
            likelihood before/after the last W learning step, None before the first),
            ``w_nfev`` (its likelihood evaluations), ``out_of_box_fraction`` (share of
            model-based proposals whose preimage left the box and were clipped); with
            ``structure["projection"]`` (the true A) and ``structure["projected_groups"]``,
            ``max_principal_angle_deg``: the largest principal angle between the span of the
            true groups' columns of A and the span of the learned W^'s columns in the learned
            groups matched to them (see :meth:`principal_angles_to`), averaged over true groups.
        """
        info = super().diagnostics()
        info.update(
            alpha=float(self.alpha_),
            delta=self.delta,
            delta_ratio=_finite_or_none(delta_ratio(self.W_hat_)),
            delta_ratio_unrestricted=_finite_or_none(delta_ratio(self.W_)),
            W_hat=self.W_hat_.tolist(),
            w_distance=float(np.linalg.norm(self.W_hat_ - np.eye(self.dim))),
            lml_before_w=self.lml_before_w_,
            lml_after_w=self.lml_after_w_,
            w_nfev=self.w_nfev_,
            out_of_box_fraction=self._n_out / self._n_acq if self._n_acq else 0.0,
        )
        A, groups = self.structure.get("projection"), self.structure.get("projected_groups")
        if A is not None and groups:
            angles = [max(self.principal_angles_to(np.asarray(A, dtype=float)[:, g])) for g in groups]
            info["max_principal_angle_deg"] = float(np.mean(angles))
        return info

    def principal_angles_to(self, B: ArrayLike) -> NDArray[np.float64]:
        """Principal angles (degrees) between ``span(B)`` and its estimate from W^.

        The estimate is spanned by the ``k`` columns of W^ (learned directions) with the
        largest share of their norm inside ``span(B)``, so the angles measure how well some k
        learned directions recover the true subspace, whatever the learned grouping.

        Parameters
        ----------
        B : array_like of shape (D, k)
            A basis of the true subspace (columns).

        Returns
        -------
        ndarray of shape (k,)
            Principal angles in degrees, ascending.
        """
        B = np.asarray(B, dtype=float)
        Qb, _ = np.linalg.qr(B)
        W = self.W_hat_
        share = np.linalg.norm(Qb.T @ W, axis=0) / np.maximum(np.linalg.norm(W, axis=0), 1e-300)
        cols = np.argsort(-share, kind="stable")[: B.shape[1]]
        return np.sort(np.degrees(subspace_angles(B, W[:, cols])))  # accurate for small angles too


@register
class PPGPUCB(RPPGPUCB):
    """PP-GP-UCB (Li et al. 2016, Algorithm 2): RPP-GP-UCB without restriction (delta = infinity).

    W is re-learned on RPP-GP-UCB's schedule (every ``refit_every = 25`` observations, the
    paper's N_cyc "for all GP/BO-based algorithms", Section 5); Algorithm 2 as printed learns
    W at every iteration, which ``refit_every=1`` gives (at a high cost, see
    :mod:`hdbo.structure.projection`).

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box.
    delta : None
        Must be None (accepted only so a saved state rebuilds the method).
    **kwargs
        :class:`RPPGPUCB` options other than ``delta``.

    Raises
    ------
    ValueError
        If ``delta`` is not None.
    """

    name = "pp-gp-ucb"

    def __init__(self, bounds: Box | ArrayLike, *, delta: None = None, **kwargs: Any) -> None:
        if delta is not None:
            raise ValueError(f"pp-gp-ucb is unrestricted (delta = infinity); delta must be None, got {delta!r}")
        super().__init__(bounds, delta=None, **kwargs)


def _finite_or_none(v: float) -> float | None:
    return float(v) if np.isfinite(v) else None
