"""Add-GP-UCB (Kandasamy, Schneider, Póczos, ICML 2015): additive GP bandits.

Model: ``f(x) = sum_j f_j(x[g_j])`` over disjoint coordinate groups ``g_j`` of at most ``d``
coordinates, each ``f_j ~ GP(0, k)`` with one SE kernel whose scale and bandwidth are shared by
all groups. Per-group posteriors come from one factorization of the full additive kernel
(eq. 5); the acquisition ``sum_j mu_j(x_j) + sqrt(beta_t) sigma_j(x_j)`` is separable, so each
group is maximized on its own ``[0, 1]^{d_j}`` by DIRECT and the pieces are concatenated
(Algorithm 1). Nothing is refactorized during the group-wise maximization, and the groups'
DIRECT searches run in lockstep (:func:`~hdbo.acquisition.maximize_direct_many`: the same
points as one search per group, with the per-iteration bookkeeping shared; 1.1-2.4x faster
for the whole acquisition in ``benchmarks/bench_direct.py``).

The practical algorithm (Algorithm 2), as implemented:

* ``n_init = 10`` uniform random points, then t = 1, 2, ... model-based queries.
* Re-learning at t = 1, 26, 51, ... (every ``refit_every = 25`` observations; SPEC.md P5.A.6-1
  reads the paper's ``t mod N_cyc = 0`` the way the authors' code does).
* During the first ``explore_iters = 25`` iterations the bandwidth is fixed at ``1e-5`` (only the
  scale is fitted, and the decomposition stays the initial random one: with such a bandwidth
  the likelihood cannot tell decompositions apart). If DIRECT then returns a point within 1e-6
  (l-inf) of an earlier query, a uniformly random point is queried instead (SPEC.md P5.A.6-4).
  Afterwards an earlier point is queried again if that is what the maximizer returns (the
  paper is silent; SPEC limits the rule to the exploration phase), and ``repeat_queries`` in
  :meth:`diagnostics` counts how often. That is often: the additive UCB sums the groups'
  standard deviations, which stay large at observed points because the data fix only the
  sum of the group functions, and DIRECT samples a fixed lattice, so its best lattice point
  recurs. At the paper's full scale, ``Add-*`` re-queried an earlier point in 123-379 of its 475
  model-based queries on (10,3,3), (24,6,4) and (40,5,8) (20 runs each), Add-8/Add-12 in
  0-381, Add-3/Add-5 in 0-249, and the one-group GP-UCB in 0-250 on (10,3,3) only.
  At such a point each group's acquisition is at its true maximum, not merely DIRECT's best
  lattice point: with a floor s0 on sigma_j, sigma_j grows only quadratically away from the
  point (sqrt(s0^2 + c r^2)), no faster than mu_j falls, whereas a single GP's sigma grows
  linearly from ~0. ``repeats="resample"`` applies the random-point rule at every iteration
  instead. ``repeats="perturb"`` is the rule of the authors' public code (``addGPBO.m``; the
  paper is silent): the repeated point plus a Gaussian step of standard deviation ``0.1 h``
  (``h`` the current bandwidth) in every coordinate, clipped to the box, redrawn until it
  repeats nothing. The kandasamy2015 specs use it; on (10,3,3) (seeds 0-2, T = 510) it took
  ``Add-*``'s final simple regret from 4.4 to 2.8 and left GP-UCB's at 0.7.
* Afterwards, each re-learning scores the current decomposition and ``n_decompositions``
  (default D, "O(D)" in the paper) random ones by marginal likelihood at the current scale
  and bandwidth, keeps the best, then re-optimizes the two hyperparameters on it by
  L-BFGS-B (SPEC.md P5.A.6-2). Random decompositions fill their groups to ``d`` in turn, the
  remainder in the last (:func:`hdbo.structure.decomposition.group_sizes`: (3, 3, 3, 1) for Add-3/4 in
  D = 10, as the authors' code builds Add-d/M; balanced sizes (3, 3, 2, 2) could never hold
  the three true groups of (10,3,3); seeds 0-2, T = 200: S_T 17.9 -> 10.9).
* ``beta_t = 0.2 d log(2t)``; the acquisition budget is 90% of ``min(5000, 100 D)`` DIRECT
  evaluations, split evenly over the M groups.
* GP noise: fixed at ``noise_variance = 1e-4`` in standardized output units, i.e. a noise std of
  1% of the outputs' standard deviation (the authors' ``0.01 std(y_init)``, SPEC.md P5.A.6-3).

``decomposition="oracle"`` is the paper's ``Add-*``: the true groups from the problem's
``structure["groups"]``, with the coordinates no group uses put in one extra group
(SPEC.md P5.A.6-10). A list of groups fixes a known decomposition.

References
----------
Kandasamy, Schneider, Póczos. High dimensional Bayesian optimisation and bandits via additive
models. ICML 2015 (``../shared/papers/004_beed8b2f06ae81a0.txt``).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import MAX_COUNT, check_choice, check_int, check_real
from ..acquisition.maximizers import maximize_direct_many
from ..exceptions import StateError
from ..gp import Additive, GaussianProcess, SquaredExponential
from ..space import Box
from ..structure.decomposition import (
    Groups,
    check_decomposition,
    random_decomposition,
    refine_decomposition,
    search_decomposition,
)
from ._state import describe, internal_bool, internal_field, state_float, state_indices, state_int
from .gp_ucb import _ScheduledUCB, resolve_beta
from .registry import register

__all__ = ["AddGPUCB"]


@register
class AddGPUCB(_ScheduledUCB):
    """Additive GP-UCB with a learned (or known) decomposition; see the module docstring.

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box.
    d : int, optional
        Maximum group size (default ``min(D, 5)``, or ``ceil(D / M)`` when only M is given).
    M : int, optional
        Number of groups (default ``ceil(D / d)``).
    decomposition : "learn", "oracle" or list of lists of int, default "learn"
        Learn the grouping, use the problem's true groups (``Add-*``), or use the given groups.
    n_decompositions : int, optional
        Random decompositions scored at each re-learning (default D).
    explore_iters : int, default 25
        Iterations with the bandwidth fixed at ``explore_bandwidth``.
    explore_bandwidth : float, default 1e-5
        The small bandwidth of the exploration phase.
    acq_fraction : float, default 0.9
        Fraction of ``acq_budget`` (default ``min(5000, 100 D)``) shared by the M groups.
    repeats : {"explore", "resample", "perturb"}, default "explore"
        What to do when the acquisition's maximizer is within 1e-6 (l-inf) of an earlier
        query: query a uniform random point instead only during the exploration phase
        ("explore", SPEC.md P5.A.6-4), or at every iteration ("resample"); or, after the
        exploration phase, step from it by ``0.1 h`` Gaussian noise, the authors' code's rule
        ("perturb"; during the exploration phase h = 1e-5, so the random point is kept).
    refine_starts : int, default 0
        Not in the paper: after the random search, hill-climb the marginal likelihood by
        single-coordinate swaps/moves from this many of the best candidates
        (:func:`hdbo.structure.refine_decomposition`, O(D^2) factorizations per sweep).
        0 keeps the paper's pure random partial maximization.
    beta : str or float, default "kandasamy2015"
        beta_t schedule (``d`` defaults to the maximum group size).
    beta_params : dict, optional
        Schedule parameters.
    **kwargs
        :class:`~hdbo.methods.gp_based.GPMethod` options (``n_init``, ``refit_every``,
        ``maximizer``, ``acq_budget``, ...). Defaults differ from GP-UCB's: ``kernel="se"``,
        ``ard=False``, ``noise_variance=1e-4``, ``fit_noise=False``, ``refit_growth=None``,
        ``polish=False`` (the paper's settings).

    Raises
    ------
    TypeError
        If ``d``, ``M``, ``n_decompositions``, ``explore_iters`` or ``refine_starts`` is not
        an int, or ``explore_bandwidth``/``acq_fraction`` is not a real number.
    ValueError
        If ``ard=True``; ``decomposition`` is not ``"learn"``, ``"oracle"`` or disjoint
        groups of valid indices; ``"oracle"`` is asked for without ``structure["groups"]``;
        ``d``/``M`` do not match a given decomposition or cannot cover D coordinates; or
        another option is out of range (see also :class:`~hdbo.methods.gp_based.GPMethod`).

    Attributes
    ----------
    groups_ : list of lists of int
        The decomposition in use (learned, oracle or given).
    decomposition_scores_ : ndarray
        Marginal likelihoods of the candidates at the last decomposition search.

    Notes
    -----
    Batches (``ask(n)``, points pending): each group's UCB is computed on its component
    ``f_j`` conditioned on the pending points' group coordinates at the posterior mean
    (:meth:`hdbo.gp.GaussianProcess.group_posterior_given`, GP-BUCB per group, from the one
    factorization), so every group moves away from what is out; the decomposition and the
    hyperparameters are not refitted on hallucinated values. A proposal that repeats a told
    or pending point is handled by ``repeats``.

    Examples
    --------
    >>> from hdbo.methods import make_method
    >>> m = make_method("add-gp-ucb", [(0, 1)] * 6, seed=0, d=2, M=3)
    >>> len(m.ask())
    6
    """

    restart_schedules = ("every",)  # its own refits restart at every refit

    name = "add-gp-ucb"
    budget_independent = True  # also rpp-gp-ucb and pp-gp-ucb (tests/experiments/test_prefix.py)

    def __init__(
        self,
        bounds: Box | ArrayLike,
        *,
        d: int | None = None,
        M: int | None = None,
        decomposition: str | list[list[int]] = "learn",
        n_decompositions: int | None = None,
        explore_iters: int = 25,
        repeats: str = "explore",
        explore_bandwidth: float = 1e-5,
        acq_fraction: float = 0.9,
        refine_starts: int = 0,
        beta: str | float = "kandasamy2015",
        beta_params: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        for key, value in (("kernel", "se"), ("ard", False), ("noise_variance", 1e-4), ("fit_noise", False),
                           ("refit_growth", None), ("polish", False)):
            kwargs.setdefault(key, value)
        if kwargs["ard"]:
            raise ValueError("ard must be False: the groups share one scale and one bandwidth")
        super().__init__(bounds, **kwargs)
        D = self.dim
        d, M = check_int(d, "d", low=1, allow_none=True, high=MAX_COUNT), check_int(M, "M", low=1, allow_none=True, high=MAX_COUNT)
        self.decomposition = decomposition
        if isinstance(decomposition, str):
            if decomposition not in ("learn", "oracle"):
                raise ValueError(f"decomposition must be 'learn', 'oracle' or a list of groups, got {decomposition!r}")
            fixed = self._oracle_groups() if decomposition == "oracle" else None
        else:
            fixed = [sorted(int(i) for i in g) for g in decomposition]
            flat = [i for g in fixed for i in g]
            if not fixed or any(not g for g in fixed) or len(set(flat)) != len(flat) or min(flat) < 0 or max(flat) >= D:
                raise ValueError(f"decomposition must be disjoint non-empty groups of indices in [0, {D}), got {decomposition!r}")
        if fixed is not None:
            d = max(len(g) for g in fixed) if d is None else d
            M = len(fixed) if M is None else M
            if d < max(len(g) for g in fixed) or M != len(fixed):
                raise ValueError(f"d={d}, M={M} do not match the given decomposition ({len(fixed)} groups)")
        else:
            if d is None:
                d = math.ceil(D / M) if M is not None else min(D, 5)
            if M is None:
                M = math.ceil(D / d)
            check_decomposition(D, d, M)
        self.d, self.M = d, M
        self._check_maximizer_dim(self.d)
        self.n_decompositions = check_int(n_decompositions, "n_decompositions", low=0, allow_none=True, high=MAX_COUNT)
        self.explore_iters = check_int(explore_iters, "explore_iters", low=0, high=MAX_COUNT)
        self.explore_bandwidth = check_real(explore_bandwidth, "explore_bandwidth", low=0, low_inclusive=False)
        self.acq_fraction = check_real(acq_fraction, "acq_fraction", low=0, high=1, low_inclusive=False)
        self.refine_starts = check_int(refine_starts, "refine_starts", low=0, high=MAX_COUNT)
        self.beta = beta
        self.beta_params = dict(beta_params or {})
        self._beta_fn = resolve_beta(beta, self.beta_params, self.d)
        self.groups_: Groups = fixed if fixed is not None else random_decomposition(D, self.d, self.M, self.rng)
        self._exploring = self.explore_iters > 0
        self.repeats = check_choice(repeats, "repeats", ("explore", "resample", "perturb"))
        self.repeat_queries_ = 0
        self.decomposition_scores_: NDArray[np.float64] = np.empty(0)
        self._acq_pending: NDArray[np.float64] | None = None  # pending GP inputs while a batch is acquired

    # ------------------------------------------------------------------ structure
    def _oracle_groups(self) -> Groups:
        groups = self.structure.get("groups")
        if not groups:
            raise ValueError("decomposition='oracle' needs a problem whose structure has 'groups'")
        groups = [sorted(int(i) for i in g) for g in groups]
        used = {i for g in groups for i in g}
        rest = [i for i in range(self.dim) if i not in used]
        return groups + ([rest] if rest else [])

    @property
    def learns_decomposition(self) -> bool:
        """Whether the grouping is re-learned: ``decomposition="learn"`` and more than one
        partition exists (one group over all D coordinates, the paper's GP-UCB, has only one,
        so scoring random partitions would only cost factorizations)."""
        single = self.M == 1 and self.d >= self.dim
        return isinstance(self.decomposition, str) and self.decomposition == "learn" and not single

    # ------------------------------------------------------------------ model
    def _make_kernel(self, groups: Groups | None = None, theta: NDArray[np.float64] | None = None) -> Additive:
        base = SquaredExponential(lengthscale=0.5, lengthscale_bounds=self.lengthscale_bounds)
        if self._exploring:
            base.fix(lengthscale=self.explore_bandwidth)
        kernel = Additive(base, self.groups_ if groups is None else groups, shared=True)
        if theta is not None:
            kernel.theta = theta
        return kernel

    def _make_gp_for(self, groups: Groups, theta: NDArray[np.float64] | None) -> GaussianProcess:
        gp = self._make_gp()
        gp.kernel = self._make_kernel(groups, theta)
        return gp

    def _refit(self, X: NDArray[np.float64], y: NDArray[np.float64]) -> GaussianProcess:
        was_exploring = self._exploring
        self._exploring = self.iteration <= self.explore_iters
        if self._exploring or not self.learns_decomposition:
            theta = None if (self.gp_ is None or was_exploring != self._exploring) else self.gp_.kernel.theta
            gp = self._make_gp_for(self.groups_, theta)
            return gp.fit(X, y, optimize=True, rng=self.rng)
        # Partial maximization over decompositions at the current (scale, bandwidth), then
        # re-optimize the two hyperparameters on the winner (SPEC.md P5.A.6-2).
        theta = None if (self.gp_ is None or was_exploring) else self.gp_.kernel.theta
        n = self.dim if self.n_decompositions is None else self.n_decompositions
        candidates = [self.groups_] + [random_decomposition(self.dim, self.d, self.M, self.rng) for _ in range(n)]
        make = lambda g: self._make_gp_for(g, theta)  # noqa: E731
        self.groups_, gp, self.decomposition_scores_ = search_decomposition(X, y, make, candidates)
        best = float(np.max(self.decomposition_scores_))
        for i in np.argsort(-self.decomposition_scores_, kind="stable")[: self.refine_starts]:
            groups, cgp, score = refine_decomposition(X, y, make, candidates[i], d=self.d)
            if score > best:
                self.groups_, gp, best = groups, cgp, score
        return gp.fit(X, y, optimize=True, rng=self.rng)

    # ------------------------------------------------------------------ acquisition
    def _acquire_with_pending(self, gp: GaussianProcess) -> NDArray[np.float64] | None:
        """Batches: each group's UCB on ``f_j`` conditioned on the pending points' group coordinates.

        Conditioning the whole GP on the sum (:meth:`GPMethod._acquire_with_pending`) leaves
        each component's variance almost unchanged, so every group would propose the same
        coordinates again; :meth:`hdbo.gp.GaussianProcess.group_posterior_given` conditions
        ``f_j`` itself (GP-BUCB per group), from the same factorization.
        """
        P = self._pending_gp_inputs() if self.n_pending else None
        self._acq_pending = None if P is None or len(P) == 0 else np.asarray(P, dtype=float)
        try:
            return self._acquire(gp)
        finally:
            self._acq_pending = None

    def _acquire(self, gp: GaussianProcess) -> NDArray[np.float64]:
        return self._handle_repeat(self._maximize_groups(gp), gp)

    def _maximize_groups(self, gp: GaussianProcess) -> NDArray[np.float64]:
        """The acquisition's maximizer over ``self.space``, group by group (no repeats rule)."""
        root_beta = math.sqrt(self.beta_t())
        per_group = max(1, int(self.acq_fraction * self.acquisition_budget) // len(self.groups_))
        u = self.rng.random(self.dim)  # coordinates in no group have no effect on the model
        acqs, grads = [], []
        pending = self._acq_pending
        for j, g in enumerate(self.groups_):
            # one factorization for all groups, no refactorization; in the GP's standardized
            # units, like hdbo.acquisition.UCB, so the maximizers' tolerances are unit-free
            if pending is None:
                post = gp.posterior_fn(j, standardized=True)
                post_grad = functools.partial(gp.predict_group, j, return_grad=True, standardized=True)
            else:  # each group conditioned on its own component at the pending points
                post = gp.group_posterior_given(j, pending[:, g], standardized=True)
                post_grad = functools.partial(post, return_grad=True)

            def acq(Z: NDArray[np.float64], post: Any = post) -> NDArray[np.float64]:
                mu, sd = post(Z)
                return mu + root_beta * sd

            def acq_grad(Z: NDArray[np.float64], post_grad: Any = post_grad
                         ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
                mu, sd, dmu, dsd = post_grad(Z)
                return mu + root_beta * sd, dmu + root_beta * dsd

            acqs.append(acq)
            grads.append(acq_grad)
        if self.maximizer == "direct" and not self.polish and len(self.groups_) > 1:
            # The groups' DIRECT searches run in lockstep: the same points as one _maximize per
            # group (which offers no starting candidates to a search over fewer than D
            # coordinates), with the bookkeeping shared (many small searches, e.g. 14 of 3).
            results = maximize_direct_many(acqs, [self.space.bounds[g] for g in self.groups_],
                                           budgets=[per_group] * len(acqs), rng=self.rng)
            for g, res in zip(self.groups_, results):
                u[g] = res.x
            self.last_acq_nfev_ = sum(res.nfev for res in results)
        else:
            nfev = 0
            for g, acq, acq_grad in zip(self.groups_, acqs, grads):
                u[g] = self._maximize(acq, acq_grad, bounds=self.space.bounds[g], budget=per_group)
                nfev += self.last_acq_nfev_
            self.last_acq_nfev_ = nfev
        return u

    def _handle_repeat(self, u: NDArray[np.float64], gp: GaussianProcess) -> NDArray[np.float64]:
        """Apply the ``repeats`` rule to a proposal ``u`` (a point of ``self.space``) that repeats a
        told or pending point (the batch's earlier ones): a uniform point in the exploration phase
        and with ``"resample"``, the authors' step with ``"perturb"``, ``u`` itself with
        ``"explore"``; ``repeat_queries_`` counts the repeats after the exploration phase."""
        if not (self.n_told or self.n_pending):
            return u
        seen = np.vstack([self.to_canonical(self.X_all), self.pending_canonical])

        def repeat(v: NDArray[np.float64]) -> bool:
            return bool(np.min(np.max(np.abs(seen - v), axis=1)) <= 1e-6)

        if repeat(u):
            if not self._exploring:
                self.repeat_queries_ += 1
            if self._exploring or self.repeats == "resample":
                u = self.space.sample(1, self.rng)[0]
            elif self.repeats == "perturb":
                u = self._perturb(u, gp, repeat)
        return u

    def _perturb(self, u: NDArray[np.float64], gp: GaussianProcess, repeat: Any) -> NDArray[np.float64]:
        """The authors' rule for a repeated query (``repeats="perturb"``): a Gaussian step of
        standard deviation ``0.1 h`` (h the current bandwidth) in every coordinate, clipped to
        the box, redrawn until it repeats no earlier query (a uniform point after 100 draws)."""
        h = float(gp.kernel.group_kernel(0).lengthscale[0])
        for _ in range(100):
            v = self.space.clip(u + 0.1 * h * self.rng.standard_normal(self.dim))
            if not repeat(v):
                return v
        return self.space.sample(1, self.rng)[0]

    # ------------------------------------------------------------------ state
    def _get_internal_state(self) -> dict[str, Any]:
        state = super()._get_internal_state()
        state.update(groups=self.groups_, exploring=self._exploring, repeat_queries=self.repeat_queries_,
                     decomposition_scores=[float(s) if np.isfinite(s) else None for s in self.decomposition_scores_])
        return state

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        groups = internal_field(state, "groups")
        if not isinstance(groups, list) or not groups:
            raise StateError(f"state['internal']['groups'] must be a non-empty list of lists of coordinates, "
                             f"got {describe(groups)}")
        self.groups_ = [state_indices(g, f"state['internal']['groups'][{j}]", high=self.dim)
                        for j, g in enumerate(groups)]  # type: ignore[misc]
        flat = [i for g in self.groups_ for i in g]
        if not all(self.groups_) or len(set(flat)) != len(flat):
            raise StateError(f"state['internal']['groups'] must be non-empty disjoint groups, got {self.groups_}")
        self._exploring = internal_bool(state, "exploring")
        self.repeat_queries_ = state_int(state.get("repeat_queries", 0), "state['internal']['repeat_queries']", low=0)
        scores = internal_field(state, "decomposition_scores")
        if not isinstance(scores, list):
            raise StateError(f"state['internal']['decomposition_scores'] must be a list, got {describe(scores)}")
        self.decomposition_scores_ = np.array(
            [-np.inf if v is None else state_float(v, f"state['internal']['decomposition_scores'][{i}]")
             for i, v in enumerate(scores)], dtype=float)
        super()._set_internal_state(state)

    def diagnostics(self) -> dict[str, Any]:
        """Hyperparameters, the decomposition in use and, if known, how much of the truth it recovers.

        Returns
        -------
        dict
            The GP's ``hyperparameters`` (see :meth:`GPMethod.diagnostics`), ``groups``,
            ``d``, ``M`` and ``repeat_queries`` (after the exploration phase, how many times
            the maximizer returned an earlier query: queried again, or replaced by a random
            point with ``repeats="resample"``); with ``structure["groups"]`` known, also
            ``true_groups_recovered``: the number of groups in use that equal a true group.
        """
        info = super().diagnostics()
        info.update(groups=self.groups_, d=self.d, M=self.M, repeat_queries=self.repeat_queries_)
        if self.structure.get("groups"):
            true = {frozenset(int(i) for i in g) for g in self.structure["groups"]}
            info["true_groups_recovered"] = sum(frozenset(g) in true for g in self.groups_)
        return info
