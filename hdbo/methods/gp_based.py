"""Shared machinery of GP-based methods: initial design, refit schedule, incremental GP sync.

:class:`GPMethod` keeps one :class:`~hdbo.gp.GaussianProcess` in step with the successful
observations. Before every acquisition it either refits (hyperparameters by marginal
likelihood, full factorization) — when ``refit_every`` new observations have arrived since
the last refit — or appends the new observations with O(t^2) Cholesky updates. Its state
records the factorization history, so a method restored with :meth:`Method.from_state`
continues bit for bit.

Subclasses implement :meth:`GPMethod._make_kernel` and :meth:`GPMethod._acquire`, and may
override :meth:`GPMethod._gp_data` to fit the GP on transformed inputs (e.g. projections).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._docstrings import fill_doc
from .._validation import MAX_COUNT, check_bool, check_choice, check_int, check_real
from ..acquisition.maximizers import MAXIMIZERS, maximize
from ..exceptions import NumericalError, StateError
from ..gp import GaussianProcess, Kernel, dimension_scaled_prior, make_kernel
from ..gp.priors import NOISE_LOC
from ..space import Box
from ._state import internal_field, internal_int, state_float, state_int, state_mapping
from .base import SHARED_DOCS, Method

__all__ = ["GPMethod", "PAPER_SETTINGS", "hyperparameter_dict"]

_NOISE_BOUNDS = (1e-8, 1.0)
#: The noise floor with the dimension-scaled prior (standardized output units).
_PRIOR_NOISE_BOUNDS = (1e-6, 1.0)
#: Length-scale fitting bounds (canonical units) without / with the dimension-scaled prior.
_LENGTHSCALE_BOUNDS = {"none": (0.05, 20.0), "dim-scaled": (0.025, 1000.0)}
#: Times a pending point that the acquisition proposes again is hallucinated once more
#: (:meth:`GPMethod._acquire_with_pending`).
_MAX_PENDING_REPEATS = 16
#: The papers' GP and acquisition settings, which every reproduction spec pins (hdbo's
#: defaults before the dimension-scaled prior and the local acquisition search).
PAPER_SETTINGS: dict[str, Any] = {"gp_prior": "none", "maximizer": "direct"}


@fill_doc(**SHARED_DOCS)
class GPMethod(Method):
    """Base class of methods that query ``argmax`` of an acquisition on a GP posterior.

    Parameters
    ----------
    %(bounds)s
    seed : int, Generator or None
        Random source (initial design, hyperparameter restarts, acquisition maximizer).
    budget : int, optional
        Total evaluations planned (unused here).
    structure : dict, optional
        Known problem structure (unused here).
    n_init : int, default 10
        Uniform random points queried before the first model-based query (N_init).
    refit_every : int, default 25
        Re-learn hyperparameters after this many new observations (N_cyc); between refits
        the GP is updated in O(t^2) per observation.
    refit_growth : float, None or "default"
        Also re-learn as soon as the data have grown by this fraction since the last refit
        (so early models, fitted on few points, are replaced quickly). ``None`` gives the
        papers' fixed N_cyc schedule. ``"default"``: 0.25 with ``gp_prior="none"``, 0.1 with
        the prior (its warm-started MAP refits are cheap, and a model refitted often
        follows the data better: on the 10-D sphere of ``benchmarks/bench_defaults.py``, median
        best 0.007 at 0.1 against 0.05 at 0.25).
    gp_prior : {"dim-scaled", "none"}, default "dim-scaled"
        How the hyperparameters are learned. ``"dim-scaled"``: maximum a posteriori under
        :func:`hdbo.gp.dimension_scaled_prior` (log-normal length-scale priors whose location
        grows like ``sqrt(d)`` with the dimension d the kernel sees, Hvarfner et al. 2024; a
        log-normal noise prior above a floor of 1e-6), starting from the prior's location;
        this keeps D length-scales from overfitting a few dozen points. ``"none"``: bare
        marginal likelihood (ML-II) with restarts drawn uniformly in the bounds, the papers'
        setting.
    lengthscale_bounds : (float, float), optional
        Fitting bounds of the length-scales on the canonical domain; default (0.05, 20) with
        ``gp_prior="none"`` (length-scales below ~0.05 of the box let marginal likelihood
        overfit a handful of points) and (0.025, 1000) with the prior.
    kernel : {"matern52", "matern32", "matern12", "se"}, default "matern52"
        Covariance function on the canonical domain.
    ard : bool, default True
        One length-scale per dimension.
    noise_variance : float, optional
        Initial GP noise variance (standardized output units); default 1e-6 with
        ``gp_prior="none"`` and the noise prior's location ``exp(-5)`` with the prior.
    fit_noise : bool, default True
        Fit the noise variance (within 1e-8 .. 1, or 1e-6 .. 1 with the prior) or keep it fixed.
    n_restarts : int, optional
        Restarts of the hyperparameter optimization besides the warm start from the current
        values: default 3 random ones (uniform in the bounds) with ``gp_prior="none"``, and 1
        with the prior (from the prior's location; further ones are drawn from the prior).
    restart_schedule : {"every", "doubling"}, optional
        When the ``n_restarts`` restarts are made: at every refit (``"every"``, the default
        with ``gp_prior="none"``), or only at the first fit and whenever the data have doubled
        since the last refit that made them, the warm start alone following the data in
        between (``"doubling"``, the default with the prior, where supported: add-gp-ucb,
        rpp-gp-ucb, the Djolonga et al. subspace methods and HDS/CWS fit by their own
        schedules and support ``"every"`` only). With a refit after every
        observation (``refit_every=1``, as Tran-The et al. 2020) the restarts can be most of a
        run's cost; ``"doubling"`` makes most refits one optimizer run instead of
        ``1 + n_restarts`` (``benchmarks/restart_schedule_check.out.md``: whole tranthe2020
        runs up to 3 times faster, with the warm start reaching the multi-start fit's
        likelihood at almost every refit).
    maximizer : {"local", "direct", "lbfgsb", "random", "grid"}, default "local"
        Acquisition maximizer (:mod:`hdbo.acquisition.maximizers`). ``"local"`` screens the
        best observed points with a few coordinates changed plus uniform points, then runs
        L-BFGS-B with analytic gradients (:func:`~hdbo.acquisition.maximizers.maximize_local`);
        it works in hundreds of dimensions, where DIRECT over the whole box (the papers'
        choice, ``"direct"``) cannot search the acquisition with a few thousand evaluations.
    acq_budget : int, optional
        Acquisition evaluations per query; default ``min(5000, 100 D)`` (Kandasamy et al. 2015).
    polish : bool, default True
        With ``maximizer="direct"`` or ``"random"``: spend 10% of ``acq_budget`` on an
        L-BFGS-B polish (analytic gradients) from the global maximizer's best point and the
        best observed points. With ``False`` the whole budget goes to ``maximizer`` (the
        papers' setting: "N DIRECT evaluations"). ``"local"`` and ``"lbfgsb"`` polish anyway.
    batch_starts : bool, default False
        With ``maximizer="lbfgsb"``: run the L-BFGS-B starts together, one vectorized
        acquisition call per step (``batched=True`` of
        :func:`~hdbo.acquisition.maximizers.maximize_lbfgsb`), instead of one start at a time.
        On SRE's, REMBO's and HeSBO's 5-dimensional latent acquisitions (50-60 starts) it was
        4-19 times faster per query and reached the same maximum (within 1e-9) at 87 of 99
        queries, a higher one at 3 and a lower one (by at most 1.7 %) at 9
        (``benchmarks/bench_lbfgsb_batch.out.md``).

    Notes
    -----
    The papers' settings are ``gp_prior="none", maximizer="direct"`` (:data:`PAPER_SETTINGS`);
    the reproduction specs pin them.

    Batches and pending points: while the initial design is not complete (fewer than
    ``n_init`` successful observations), every proposal is a uniform random point, so a
    batch asked then is random. After it, the acquisition is maximized on the GP conditioned
    on the pending points at its posterior mean (:meth:`hdbo.gp.GaussianProcess.hallucinate`;
    GP-BUCB for UCB, the Kriging believer for EI): ``ask(n)`` returns ``n`` points, each
    proposed with the earlier ones of the batch pending. The hyperparameters are not refitted
    on hallucinated values.

    Raises
    ------
    TypeError
        If a count (``n_init``, ``refit_every``, ``n_restarts``, ``acq_budget``) is not an
        int, or ``noise_variance``/``refit_growth`` is not a real number.
    ValueError
        If a count is out of range, ``kernel`` or ``maximizer`` is unknown,
        ``lengthscale_bounds`` is not ``0 < lower <= upper < inf``, ``noise_variance`` is not
        positive (or, with ``fit_noise=True``, not within ``[1e-8, 1]``),
        ``refit_growth`` is not positive, ``restart_schedule`` is unknown or not supported
        by the method, or ``batch_starts=True`` without ``maximizer="lbfgsb"`` or in a method
        whose acquisition search does not support it.
    """

    #: Options a subclass passes to :func:`~hdbo.acquisition.maximizers.maximize_local` (its
    #: ``n_perturbed``, for instance) whenever the local search runs.
    _local_search_options: dict[str, Any] = {}
    #: The ``restart_schedule`` values the class honours (a subclass that fits its GP by its own
    #: schedule, with restarts at every refit, has ``("every",)``); the last is the default with
    #: the prior.
    restart_schedules: tuple[str, ...] = ("every", "doubling")
    #: False for a subclass whose acquisition search does not go through ``_maximize`` (it then
    #: refuses ``batch_starts=True`` instead of ignoring it).
    _batch_starts_supported: bool = True

    def __init__(
        self,
        bounds: Box | ArrayLike,
        *,
        budget: int | None = None,
        n_init: int = 10,
        refit_every: int = 25,
        kernel: str = "matern52",
        ard: bool = True,
        noise_variance: float | None = None,
        fit_noise: bool = True,
        n_restarts: int | None = None,
        restart_schedule: str | None = None,
        maximizer: str = "local",
        acq_budget: int | None = None,
        polish: bool = True,
        batch_starts: bool = False,
        refit_growth: float | str | None = "default",
        lengthscale_bounds: tuple[float, float] | None = None,
        gp_prior: str = "dim-scaled",
        **kwargs: Any,
    ) -> None:
        super().__init__(bounds, budget=budget, **kwargs)  # kwargs: seed and structure (see Method)
        self.n_init = check_int(n_init, "n_init", low=1, high=MAX_COUNT)
        self.refit_every = check_int(refit_every, "refit_every", low=1, high=MAX_COUNT)
        self.gp_prior = check_choice(gp_prior, "gp_prior", ("dim-scaled", "none"))
        if n_restarts is None:
            n_restarts = 3 if self.gp_prior == "none" else 1
        self.n_restarts = check_int(n_restarts, "n_restarts", low=0, high=MAX_COUNT)
        if restart_schedule is None:
            restart_schedule = "every" if self.gp_prior == "none" else self.restart_schedules[-1]
        if restart_schedule in ("every", "doubling") and restart_schedule not in self.restart_schedules:
            raise ValueError(f"{self.name} fits its GP by its own schedule and restarts at every refit; "
                             f"restart_schedule={restart_schedule!r} is not supported")
        self.restart_schedule = check_choice(restart_schedule, "restart_schedule", ("every", "doubling"))
        self.acq_budget = check_int(acq_budget, "acq_budget", low=1, allow_none=True, high=MAX_COUNT)
        if lengthscale_bounds is None:
            lengthscale_bounds = _LENGTHSCALE_BOUNDS[self.gp_prior]
        if noise_variance is None:
            noise_variance = 1e-6 if self.gp_prior == "none" else float(np.exp(NOISE_LOC))
        make_kernel(kernel, self.dim, ard=ard, lengthscale_bounds=lengthscale_bounds)  # validates early
        self.maximizer = check_choice(maximizer, "maximizer", sorted(MAXIMIZERS))
        self.kernel = kernel
        self.ard = check_bool(ard, "ard")
        self.fit_noise = check_bool(fit_noise, "fit_noise")
        if self.fit_noise:  # the fitted noise stays within the noise bounds, so it must start there
            lo, hi = self._noise_bounds
            self.noise_variance = check_real(noise_variance, "noise_variance", low=lo, high=hi)
        else:
            self.noise_variance = check_real(noise_variance, "noise_variance", low=0, low_inclusive=False)
        self.polish = check_bool(polish, "polish")
        self.batch_starts = check_bool(batch_starts, "batch_starts")
        if self.batch_starts and not self._batch_starts_supported:
            raise ValueError(f"{self.name} runs its acquisition search its own way; batch_starts=True is not supported")
        if self.batch_starts and self.maximizer != "lbfgsb":
            raise ValueError(f"batch_starts=True needs maximizer='lbfgsb', got maximizer={self.maximizer!r}")
        if isinstance(refit_growth, str) and refit_growth == "default":
            refit_growth = 0.25 if self.gp_prior == "none" else 0.1
        self.refit_growth = check_real(refit_growth, "refit_growth", low=0, low_inclusive=False, allow_none=True)
        self.lengthscale_bounds = (float(lengthscale_bounds[0]), float(lengthscale_bounds[1]))
        self.gp_: GaussianProcess | None = None
        self._n_at_refit = 0
        self._n_at_restart = 0

    def _check_maximizer_dim(self, dim: int) -> None:
        """Fail at construction (not after the initial design) if the maximizer cannot search
        ``dim`` dimensions; subclasses call it with the dimension their maximizer sees."""
        if self.maximizer == "grid" and dim > 3:
            raise ValueError(f"maximizer='grid' works for at most 3 dimensions, the acquisition here has {dim}")

    # ------------------------------------------------------------------ model
    @property
    def acquisition_budget(self) -> int:
        """Acquisition evaluations per query (``acq_budget`` or ``min(5000, 100 D)``)."""
        return self.acq_budget if self.acq_budget is not None else min(5000, 100 * self.dim)

    def _make_kernel(self, *, ard: bool | None = None) -> Kernel:
        """The covariance function (fresh hyperparameters); ``ard`` overrides the option."""
        return make_kernel(self.kernel, self.dim, ard=self.ard if ard is None else ard,
                           lengthscale_bounds=self.lengthscale_bounds,
                           lengthscale=min(max(0.5, self.lengthscale_bounds[0]), self.lengthscale_bounds[1]))

    @property
    def _noise_bounds(self) -> tuple[float, float]:
        return _NOISE_BOUNDS if self.gp_prior == "none" else _PRIOR_NOISE_BOUNDS

    def _gp_input_dim(self) -> int:
        """Number of columns of the GP's training inputs (default D; see :meth:`_gp_data`)."""
        return self.dim

    def _make_gp(self, *, ard: bool | None = None) -> GaussianProcess:
        """A fresh GP of the method's kind (``ard``: override the option, for the default kernel)."""
        noise_bounds = self._noise_bounds if self.fit_noise else (self.noise_variance,) * 2
        kernel = self._make_kernel() if ard is None else self._make_kernel(ard=ard)
        prior = None if self.gp_prior == "none" else dimension_scaled_prior(kernel, self._gp_input_dim())
        gp = GaussianProcess(
            kernel,
            noise_variance=self.noise_variance,
            noise_bounds=noise_bounds,
            n_restarts=self.n_restarts,
            prior=prior,
            mean="constant" if prior is None else "learned",
        )
        if prior is not None:  # start the fit at the prior's location (free entries only)
            bounds, theta = gp.bounds, gp.theta
            free = bounds[:, 0] < bounds[:, 1]
            theta[free] = np.clip(prior.loc[free], bounds[free, 0], bounds[free, 1])
            gp.theta = theta
        return gp

    def _gp_data(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Training inputs and outputs of the GP (default: canonical successful observations)."""
        return self.X_obs, self.y_obs

    def _sync_gp(self) -> GaussianProcess:
        """Bring the GP up to date: refit on schedule, otherwise O(t^2) updates."""
        X, y = self._gp_data()
        if self.gp_ is None or self._refit_due(y.size):
            self.gp_ = self._refit(X, y)
            self._n_at_refit = y.size
        else:
            for i in range(self.gp_.n_train, y.size):
                self.gp_.update(X[i], y[i])
        return self.gp_

    def _refit_due(self, n: int) -> bool:
        """Whether a GP with ``n`` training outputs is due a refit (``refit_every``, ``refit_growth``)."""
        new = n - self._n_at_refit
        return new >= self.refit_every or (self.refit_growth is not None and new >= self.refit_growth * self._n_at_refit)

    def _refit(self, X: NDArray[np.float64], y: NDArray[np.float64]) -> GaussianProcess:
        """Re-learn the model on all data (ML-II or MAP hyperparameters); returns the fitted GP.

        The fit starts from the current hyperparameters (a warm start) plus ``n_restarts``
        restarts. With ``restart_schedule="doubling"`` (the default with the prior) the
        restarts are made only when the data have doubled since the last refit that made them
        (and at the first fit): the warm start alone follows the data in between, at a
        fraction of the cost.
        """
        gp = self.gp_ if self.gp_ is not None else self._make_gp()
        self._schedule_restarts(gp, y.size)
        return gp.fit(X, y, optimize=True, rng=self.rng)

    def _schedule_restarts(self, gp: GaussianProcess, n: int) -> None:
        """Give ``gp`` the restarts a fit on ``n`` outputs is due (``restart_schedule``) and record it."""
        if self._restarts_due(n):
            gp.n_restarts = self.n_restarts
            self._n_at_restart = n
        else:
            gp.n_restarts = 0

    def _restarts_due(self, n: int) -> bool:
        """Whether a refit on ``n`` outputs makes the ``n_restarts`` restarts (``restart_schedule``)."""
        return self.restart_schedule == "every" or self.gp_ is None or n >= 2 * self._n_at_restart

    @property
    def iteration(self) -> int:
        """Index t >= 1 of the upcoming model-based query (t = 1 right after the initial design).

        Evaluations beyond the ``n_init`` initial ones count, failed ones included, as in
        Algorithm 2 of Kandasamy et al. (2015) where t starts after N_init random points.
        Pending points count too (GP-BUCB's index of the decision, Desautels et al. 2014):
        the k-th point of a batch is proposed at the iteration it would have had had the
        earlier ones been told first; run sequentially nothing is pending, so nothing changes.
        """
        return max(1, self.n_told + self.n_pending - self.n_init + 1)

    # ------------------------------------------------------------------ ask
    def _ask(self) -> NDArray[np.float64] | None:
        if self.y_obs.size < self.n_init:
            return self.space.sample(1, self.rng)[0]
        try:
            gp = self._sync_gp()
        except NumericalError as exc:
            # The GP escalated its jitter and still failed. Refit from default hyperparameters;
            # if that fails too, warn and explore at random this time (and refit next time).
            X, y = self._gp_data()
            self.gp_ = None
            try:
                gp = self.gp_ = self._make_gp().fit(X, y, optimize=True, rng=self.rng)
                self._n_at_refit = y.size
            except NumericalError:
                warnings.warn(f"{self.name}: GP factorization failed ({exc}); querying a random point",
                              RuntimeWarning, stacklevel=3)
                return self.space.sample(1, self.rng)[0]
        return self._acquire_with_pending(gp)

    def _gp_input_of(self, U: NDArray[np.float64]) -> NDArray[np.float64] | None:
        """Canonical points ``U`` (n, D) as GP inputs, or None when the subclass has no such map.

        Default: ``U`` itself when :meth:`_gp_data` is not overridden (the GP's inputs are the
        canonical points), else None. A subclass that fits its GP on transformed inputs (a
        projection, the selected coordinates) and can transform any point overrides it.
        """
        if type(self)._gp_data is not GPMethod._gp_data:
            return None
        return U

    def _pending_gp_inputs(self) -> NDArray[np.float64] | None:
        """The pending points as GP inputs, shape (n_pending, d), or None if they have none.

        Default: :meth:`_gp_input_of` of the canonical pending points. A subclass whose GP
        inputs are not a function of the point (latent coordinates kept per proposal)
        overrides this instead.
        """
        return self._gp_input_of(self.pending_canonical)

    def _pending_value(self) -> float | None:
        """The value pending points are hallucinated at: None for the posterior mean (GP-BUCB).

        A subclass may return a constant (the constant liar) instead.
        """
        return None

    def _acquire_with_pending(self, gp: GaussianProcess) -> NDArray[np.float64] | None:
        """:meth:`_acquire` on the GP conditioned on the pending points at its posterior mean.

        The hallucination of GP-BUCB (Desautels et al. 2014) for UCB, the Kriging believer for
        EI: the mean is unchanged and the variance shrinks where points are out, so the next
        proposal goes elsewhere. While :meth:`_acquire` runs, ``self.gp_`` is the conditioned
        copy (so per-group posteriors of additive models see it too); the fitted GP is put
        back afterwards, unchanged.

        One hallucinated value leaves a variance of about the noise variance at a pending
        point, and where the posterior mean is largest at a face or corner of the box the
        acquisition may choose the same point again. A batch holds distinct points, so a
        repeated point is hallucinated once more and the acquisition maximized again (the
        next point of the GP-BUCB sequence that is not out), up to ``_MAX_PENDING_REPEATS``
        times (for subclasses whose points map to GP inputs, :meth:`_gp_input_of`); after
        that the base class's random replacement, with its warning, takes over.
        """
        P = self._pending_gp_inputs() if self.n_pending else None
        if P is None or len(P) == 0:
            return self._acquire(gp)
        P = np.asarray(P, dtype=float)
        fitted = self.gp_
        try:
            for attempt in range(_MAX_PENDING_REPEATS + 1):
                self.gp_ = cond = gp.hallucinate(P, self._pending_value())
                u = self._acquire(cond)
                if u is None or attempt == _MAX_PENDING_REPEATS or not self._repeats_pending(np.asarray(u, float)):
                    return u
                z = self._gp_input_of(np.asarray(u, dtype=float)[None, :])
                if z is None:
                    return u
                P = np.vstack([P, z])
        finally:
            self.gp_ = fitted
        return u  # pragma: no cover - the loop always returns

    def _acquire(self, gp: GaussianProcess) -> NDArray[np.float64]:
        """Maximize the acquisition on the synced GP; return a canonical point."""
        raise NotImplementedError

    def _maximize(self, fun: Any, fun_and_grad: Any = None, *, bounds: NDArray[np.float64] | None = None,
                  budget: int | None = None, n_candidates: int = 5,
                  candidates: NDArray[np.float64] | None = None,
                  n_starts: int | None = None, n_raw: int | None = None,
                  maximizer: str | None = None) -> NDArray[np.float64]:
        """Run the configured maximizer (or ``maximizer``) over ``bounds`` (default: the canonical box).

        The best ``n_candidates`` observed points are offered as starting candidates, or
        ``candidates`` when given (points of ``bounds``, e.g. of a latent space);
        ``n_starts`` and ``n_raw`` set the L-BFGS-B starts and the random points screened
        for them when that is the maximizer.
        """
        name = self.maximizer if maximizer is None else maximizer
        bounds = self.space.bounds if bounds is None else bounds
        options: dict[str, Any] = {}
        X, y = self.X_obs, self.y_obs
        if candidates is None and y.size and bounds.shape[0] == self.dim:
            candidates = X[np.argsort(-y)[:n_candidates]]
        if candidates is not None and len(candidates) and name != "grid":
            options["x0_candidates"] = candidates
        local = name in ("lbfgsb", "local")
        if name == "local":
            options.update(self._local_search_options)
        if local and fun_and_grad is not None:
            options["fun_and_grad"] = fun_and_grad
        if name == "lbfgsb" and fun_and_grad is not None:
            options.update({k: v for k, v in (("n_starts", n_starts), ("n_raw", n_raw)) if v is not None})
            if self.batch_starts and maximizer is None:
                options["batched"] = True
        total = budget or self.acquisition_budget
        n_polish = total // 10 if (self.polish and fun_and_grad is not None and not local) else 0
        n_polish = n_polish if n_polish >= 4 else 0  # too few for a gradient step: give them back
        res = maximize(name, fun, bounds, budget=total - n_polish, rng=self.rng, **options)
        x, nfev = res.x, res.nfev
        if n_polish:
            # Gradient polish from the global search's best point and the best observed points,
            # inside the same acquisition budget (DIRECT alone is weak in tens of dimensions).
            starts = np.vstack([res.x[None, :], options.get("x0_candidates", np.empty((0, res.x.size)))])
            pol = maximize("lbfgsb", fun, bounds, budget=n_polish, rng=self.rng, fun_and_grad=fun_and_grad,
                           x0_candidates=starts, n_raw=0, n_starts=min(len(starts), 3))
            nfev += pol.nfev
            if pol.value > res.value:
                x = pol.x
        self.last_acq_nfev_ = nfev
        return x

    # ------------------------------------------------------------------ state
    def _get_internal_state(self) -> dict[str, Any]:
        return {
            "gp": None if self.gp_ is None else self.gp_.state_dict(),
            "n_at_refit": self._n_at_refit,
            "n_at_restart": self._n_at_restart,
        }

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        self._n_at_refit = internal_int(state, "n_at_refit", low=0, high=self.n_told)
        # states written before restarts were scheduled: as if the last refit made them
        self._n_at_restart = (internal_int(state, "n_at_restart", low=0, high=self.n_told)
                              if "n_at_restart" in state else self._n_at_refit)
        gp = internal_field(state, "gp")
        if gp is not None:
            X, y = self._gp_data()
            self.gp_ = self._make_gp().load_state(_checked_gp_state(gp, len(y)), X, y)

    def diagnostics(self) -> dict[str, Any]:
        """The GP's current hyperparameters.

        Returns
        -------
        dict
            ``{"hyperparameters": {name: value}}`` with the kernel's hyperparameters and
            ``noise_variance`` in natural (not log) units, a vector hyperparameter (the D
            length-scales of an ARD kernel) as one list under its name (``"lengthscale"``),
            so it can be plotted and stored as it is; empty before the first model fit.
        """
        if self.gp_ is None:
            return {}
        names = self.gp_.kernel.hyperparameter_names + ["noise_variance"]
        return {"hyperparameters": hyperparameter_dict(names, np.exp(self.gp_.theta))}


def hyperparameter_dict(names: list[str], values: ArrayLike) -> dict[str, Any]:
    """Hyperparameters by name, the entries ``NAME_0, NAME_1, ...`` of a vector gathered in one list.

    Parameters
    ----------
    names : list of str
        One name per value, as :attr:`hdbo.gp.Kernel.hyperparameter_names` gives them.
    values : array_like of shape (len(names),)
        The values.

    Returns
    -------
    dict
        ``{"variance": 1.2, "lengthscale": [0.3, 0.8, ...], "noise_variance": 1e-4}``: a
        float per scalar hyperparameter, a list (in index order) per vector one.

    Examples
    --------
    >>> hyperparameter_dict(["variance", "lengthscale_0", "lengthscale_1"], [1.0, 0.5, 2.0])
    {'variance': 1.0, 'lengthscale': [0.5, 2.0]}
    """
    out: dict[str, Any] = {}
    vectors: dict[str, dict[int, float]] = {}
    for name, value in zip(names, np.asarray(values, dtype=float).tolist()):
        stem, _, index = name.rpartition("_")
        if stem and index.isdigit():
            vectors.setdefault(stem, {})[int(index)] = value
        else:
            out[name] = value
    for stem, entries in vectors.items():
        out[stem] = [entries[i] for i in sorted(entries)]
    return out


def _checked_gp_state(gp: Any, n_data: int) -> dict[str, Any]:
    """A saved GP state (``state['internal']['gp']``) whose numbers are usable, else StateError."""
    name = "state['internal']['gp']"
    gp = state_mapping(gp, name)
    n = state_int(internal_field(gp, "n", name), f"{name}['n']", low=1, high=n_data)
    state_int(internal_field(gp, "n_full", name), f"{name}['n_full']", low=1, high=n)
    state_float(internal_field(gp, "noise_variance", name), f"{name}['noise_variance']", low=0.0, low_inclusive=False)
    state_float(internal_field(gp, "y_shift", name), f"{name}['y_shift']")
    state_float(internal_field(gp, "y_scale", name), f"{name}['y_scale']", low=0.0, low_inclusive=False)
    state_float(internal_field(gp, "jitter", name), f"{name}['jitter']", low=0.0)
    theta = internal_field(gp, "theta", name)
    if not isinstance(theta, list) or not all(state_float(v, f"{name}['theta']") is not None for v in theta):
        raise StateError(f"{name}['theta'] must be a list of finite numbers, got {type(theta).__name__}")
    return gp
