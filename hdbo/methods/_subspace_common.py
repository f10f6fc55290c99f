"""Pieces shared by the subspace GP-UCB methods of the MS-UCB paper's comparison.

MS-UCB (:mod:`hdbo.methods.ms_ucb`), DropoutUCB (:mod:`hdbo.methods.dropout_ucb`) and LineBO
(:mod:`hdbo.methods.line_bo`) all

* maximize UCB with the paper's weight ``beta_t`` (schedule ``"tranthe2020"``) evaluated at the
  dimension of the space they search (:func:`resolve_tranthe_beta`);
* spend a fixed number of acquisition evaluations per iteration, searched by their own
  multi-start L-BFGS-B (so ``maximizer`` must be ``"lbfgsb"`` and there is no separate polish);
* share the GP defaults of the paper's common settings and start the length-scale fit at a
  value that scales with the number of GP inputs (:func:`start_lengthscale`);
* report the facts of the last acquisition step in ``diagnostics()`` and keep them in the
  JSON state;
* propose batches the same way (:class:`SubspaceUCBMixin`): the GP they search is conditioned
  on the pending points at its posterior mean (GP-BUCB's hallucination, through
  :meth:`~hdbo.methods.gp_based.GPMethod._acquire_with_pending`), and the iteration ``t`` of
  ``beta_t`` (and of MS-UCB's growing set of subspaces) counts the pending proposals too.

MS-UCB and DropoutUCB also share the "random screening, then one stacked L-BFGS-B run from the
best screened points" search (:func:`stacked_lbfgsb`, :class:`MultiStartSubspaceMixin`).
This module holds those parts once; the mixin goes before
:class:`~hdbo.methods.gp_based.GPMethod` in the bases.

References
----------
Tran-The, Gupta, Rana, Venkatesh. Trading convergence rate with computational budget in high
dimensional Bayesian optimization. AAAI 2020, eq. (8) (``beta_t``) and Section "Experiments"
("L-BFGS-B with 10 x D random starts"); SPEC.md P3.A.3-4, P3.B.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import Bounds, minimize

from .._validation import MAX_COUNT, check_int, check_real
from ..acquisition.schedules import get_beta_schedule
from ..gp import Kernel, make_kernel
from ._state import state_mapping
from .gp_ucb import resolve_beta

__all__ = ["MultiStartSubspaceMixin", "SubspaceUCBMixin", "resolve_tranthe_beta", "stacked_lbfgsb", "start_lengthscale"]

Array = NDArray[np.float64]
#: A proposal closer than this (largest canonical coordinate difference) to a pending point repeats it.
_REPEAT_TOL = 1e-6


def _tranthe2020_full(t: float, *, dim: int, a: float, b: float, delta: float) -> float:
    """The MS-UCB weight at ``d = D`` (GP-UCB over the whole box, SPEC P3.B item 1)."""
    root = math.sqrt(math.log(6.0 * dim * a / delta))
    return 2.0 * math.log(math.pi**2 * t * t / delta) + 2.0 * dim * math.log(2.0 * b * dim * root * t * t)


def resolve_tranthe_beta(beta: str | float, beta_params: dict[str, Any] | None, dim: int,
                         subspace_dim: int) -> Callable[[int], float]:
    """``t -> beta_t`` for a subspace method: ``"tranthe2020"`` gets ``dim`` and ``subspace_dim``.

    Parameters
    ----------
    beta : str or float
        A schedule name of :func:`hdbo.acquisition.available_beta_schedules` or a constant.
    beta_params : dict or None
        The schedule's parameters (``dim``/``subspace_dim`` default to the arguments below;
        other schedules get ``d``/``dim`` = ``subspace_dim`` as in
        :func:`hdbo.methods.gp_ucb.resolve_beta`).
    dim : int
        Ambient dimension D.
    subspace_dim : int
        Dimension d of the space the acquisition is maximized over (``d = D`` allowed: the
        same formula with ``d -> D``).

    Returns
    -------
    callable

    Raises
    ------
    TypeError, ValueError
        As :func:`hdbo.acquisition.get_beta_schedule`.

    Examples
    --------
    >>> round(resolve_tranthe_beta("tranthe2020", None, 100, 5)(1), 2)  # SPEC P3.A.3: about 43
    43.03
    """
    if beta != "tranthe2020":
        return resolve_beta(beta, beta_params, subspace_dim)
    params = dict(beta_params or {})
    params.setdefault("dim", dim)
    params.setdefault("subspace_dim", subspace_dim)
    if params["subspace_dim"] == params["dim"]:
        # The shared schedule follows the paper's d < D; the formula itself is defined at
        # d = D, which is what SPEC P3.B uses for the GP-UCB baseline.
        check = dict(params, dim=params["dim"] + 1)
        get_beta_schedule("tranthe2020", **check)  # validates a, b, delta
        return functools.partial(_tranthe2020_full, dim=int(params["dim"]), a=float(params.get("a", 1.0)),
                                 b=float(params.get("b", 1.0)), delta=float(params.get("delta", 0.1)))
    return get_beta_schedule("tranthe2020", **params)


class _Stop(Exception):
    """Raised inside the stacked L-BFGS-B objective when the local budget is spent."""


def stacked_lbfgsb(
    value_and_grad: Callable[[Array], tuple[Array, Array]], Y0: Array, v0: Array, budget: int
) -> tuple[Array, Array, int]:
    """Maximize k independent functions on ``[-1, 1]^d`` by one L-BFGS-B run on the stacked variables.

    The objective is ``sum_i a_i(y_i)`` over the rows of ``Y`` (shape (k, d)); its gradient
    separates by rows, so one vectorized call of ``value_and_grad`` on all k rows gives a
    step for every start. Each call costs k acquisition evaluations; the run stops before
    ``budget`` would be exceeded.

    Parameters
    ----------
    value_and_grad : callable
        ``Y (k, d) -> (values (k,), grads (k, d))`` of the functions to maximize.
    Y0 : ndarray of shape (k, d)
        Starting points in ``[-1, 1]^d``.
    v0 : ndarray of shape (k,)
        Their values (already paid for).
    budget : int
        Maximum number of evaluations (rows evaluated).

    Returns
    -------
    best_Y : ndarray of shape (k, d)
        Best point seen for each row (the start if nothing better was found).
    best_v : ndarray of shape (k,)
        Their values.
    used : int
        Evaluations spent, ``<= budget``.

    Examples
    --------
    >>> f = lambda Y: (-np.sum((Y - 0.5) ** 2, axis=1), -2.0 * (Y - 0.5))
    >>> Y, v, used = stacked_lbfgsb(f, np.zeros((3, 2)), f(np.zeros((3, 2)))[0], budget=60)
    >>> bool(np.allclose(Y, 0.5, atol=1e-4)), used <= 60
    (True, True)
    """
    k, d = Y0.shape
    best_y, best_v = Y0.copy(), np.where(np.isfinite(v0), v0, -np.inf).astype(float)
    used = 0
    if budget < 2 * k:
        return best_y, best_v, used

    def objective(v: Array) -> tuple[float, Array]:
        nonlocal used
        if used + k > budget:
            raise _Stop
        Y = np.clip(v.reshape(k, d), -1.0, 1.0)
        values, grads = value_and_grad(Y)
        used += k
        ok = np.isfinite(values)
        better = ok & (values > best_v)
        best_v[better], best_y[better] = values[better], Y[better]
        if not (ok.all() and np.all(np.isfinite(grads))):
            return np.inf, np.zeros(k * d)
        return -float(values.sum()), -np.asarray(grads, dtype=float).ravel()

    try:
        minimize(objective, np.clip(Y0, -1.0, 1.0).ravel(), jac=True, method="L-BFGS-B",
                 bounds=Bounds(-np.ones(k * d), np.ones(k * d)),
                 options={"maxfun": budget // k, "maxiter": budget // k, "ftol": 1e-15, "gtol": 1e-10})
    except _Stop:
        pass
    return best_y, best_v, used


def start_lengthscale(n_inputs: int, bounds: tuple[float, float]) -> float:
    """Starting length-scale of the ML-II fit for a GP on ``n_inputs`` coordinates in ``[-1, 1]``.

    ``max(0.5, 0.2 sqrt(n_inputs))`` clipped to ``bounds``. Uniform points of ``[-1, 1]^n`` lie
    about ``0.8 sqrt(n)`` apart; from a length-scale of 0.5 at n = 100 that is 16 length-scales,
    where the Matern covariances of 20 initial points (and the likelihood's gradient) vanish and
    the fit stays at its start (a GP equal to its prior away from the data). Starting at
    ``0.2 sqrt(n)`` keeps them about 4 length-scales apart; up to 6 inputs the start is 0.5.

    Parameters
    ----------
    n_inputs : int
        Number of GP input coordinates.
    bounds : (float, float)
        Length-scale bounds.

    Returns
    -------
    float

    Examples
    --------
    >>> start_lengthscale(5, (0.05, 20.0)), start_lengthscale(100, (0.05, 20.0))
    (0.5, 2.0)
    """
    lo, hi = bounds
    return float(min(max(0.5, 0.2 * math.sqrt(n_inputs), lo), hi))


class SubspaceUCBMixin:
    """Shared options, ``beta_t``, state and diagnostics of the subspace UCB methods.

    Use as ``class M(SubspaceUCBMixin, GPMethod)``: this ``__init__`` takes the GP options
    whose defaults follow the MS-UCB paper's common settings (20 initial points, Matern-5/2,
    one isotropic length-scale refitted after every observation, multi-start L-BFGS-B, no
    polish) and passes the rest to :class:`~hdbo.methods.gp_based.GPMethod`. The subclass
    calls :meth:`_set_subspace_dim` once it knows the dimension it searches, sets ``name`` and
    may override :meth:`_default_acq_budget` and :meth:`_gp_input_dim`; it stores the facts of
    its last acquisition step in ``self.last_`` (a JSON dict).

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box.
    beta : str or float, default "tranthe2020"
        beta_t schedule name or a constant (see :func:`resolve_tranthe_beta`).
    beta_params : dict, optional
        Schedule parameters.
    n_init, refit_every, refit_growth, kernel, ard
        GP options of :class:`~hdbo.methods.gp_based.GPMethod` with the defaults above.
    maximizer : {"lbfgsb"}
        The methods maximize with their own multi-start L-BFGS-B.
    polish : bool, default False
        Must be False.
    gp_prior : {"none", "dim-scaled"}, default "none"
        Bare marginal likelihood by default: the paper's isotropic kernel has one
        length-scale, which ML-II does not overfit the way it overfits D ARD length-scales
        (the dimension-scaled prior is for those). Measured on Branin hidden in D = 50 (the
        LineBO test of ``tests/methods/test_line_bo.py``, 8 seeds, 40 evaluations): median
        regret 0.10 with ML-II, 0.39 with the prior, whose length-scale location
        ``0.2 sqrt(D)`` suits D relevant coordinates, not 2.
    **kwargs
        Other :class:`~hdbo.methods.gp_based.GPMethod` options.

    Raises
    ------
    ValueError
        If ``maximizer != "lbfgsb"`` or ``polish`` is True.

    Notes
    -----
    Batches: every proposal is one iteration of the method, made on the GP conditioned on the
    pending points at its posterior mean (GP-BUCB, Desautels, Krause and Burdick, JMLR 2014):
    the mean is unchanged and the variance shrinks where points are out, so ``ask(n)`` returns
    ``n`` points spread by the acquisition itself. A subclass whose GP sees transformed inputs
    (:meth:`_gp_data`) maps the pending points the same way in :meth:`_pending_gp_inputs`. The
    iteration :attr:`~hdbo.methods.gp_based.GPMethod.iteration` counts the pending proposals as
    well (GP-BUCB's round index),
    so each point of a batch gets its own ``t``, as if the points had been asked one at a time;
    in sequential use nothing is pending when a point is proposed, and ``t`` is the usual one.
    Should the search's best point still be a pending one (a face or corner of the box where a
    very smooth model's mean is largest, which conditioning on the point hardly changes), the
    subclass proposes the best other point its search evaluated (:meth:`_best_not_pending`)
    rather than leaving the repeat to the base class's random replacement.
    """

    #: the acquisition search is the mixin's own (MS-UCB and DropoutUCB batch their starts
    #: always, LineBO searches 1-D lines), not ``GPMethod._maximize``
    _batch_starts_supported = False

    # set by Method / GPMethod / the subclass
    name: str
    dim: int
    n_pending: int
    pending_canonical: Array
    space: Any
    acq_budget: int | None
    maximizer: str
    polish: bool
    kernel: str
    ard: bool
    lengthscale_bounds: tuple[float, float]

    def __init__(
        self,
        bounds: Any,
        *,
        beta: str | float = "tranthe2020",
        beta_params: dict[str, Any] | None = None,
        n_init: int = 20,
        refit_every: int = 1,
        refit_growth: float | None = None,
        kernel: str = "matern52",
        ard: bool = False,
        maximizer: str = "lbfgsb",
        polish: bool = False,
        gp_prior: str = "none",
        **kwargs: Any,
    ) -> None:
        super().__init__(bounds, n_init=n_init, refit_every=refit_every,  # type: ignore[call-arg]
                         refit_growth=refit_growth, kernel=kernel, ard=ard, maximizer=maximizer, polish=polish,
                         gp_prior=gp_prior, **kwargs)
        if self.maximizer != "lbfgsb":
            raise ValueError(f"{self.name} maximizes its acquisition by its own multi-start L-BFGS-B; maximizer "
                             f"must be 'lbfgsb', got {self.maximizer!r}")
        if self.polish:
            raise ValueError(f"{self.name} has no separate polish step; polish must be False")
        self.beta = beta
        self.beta_params = dict(beta_params or {})
        self._beta_fn: Callable[[int], float] | None = None
        self.last_: dict[str, Any] = {}

    def _best_not_pending(self, values: Array, point: Callable[[int], Array]) -> int | None:
        """The candidate of largest value that does not repeat a pending point.

        Used when a search's best point is one of the points already out: the hallucinated
        variance did not move the maximizer (a face or corner of the box where the posterior
        mean is largest, with a model so smooth that conditioning on a point changes little
        around it). The candidates are assembled one at a time, best first, so the cost is
        that of the few candidates looked at.

        Parameters
        ----------
        values : ndarray of shape (n,)
            Acquisition values of the candidates (non-finite ones come last).
        point : callable
            ``i -> x`` the i-th candidate as a canonical point, shape (D,).

        Returns
        -------
        int or None
            The index of the best candidate farther than ``1e-6`` (largest coordinate
            difference, after clipping into the canonical box) from every pending point, or
            None if there is none.
        """
        P = self.pending_canonical
        order = np.argsort(-np.where(np.isfinite(values), values, -np.inf), kind="stable")
        for i in order:
            x = self.space.clip(point(int(i)))
            if P.shape[0] == 0 or float(np.min(np.max(np.abs(P - x), axis=1))) > _REPEAT_TOL:
                return int(i)
        return None

    def _set_subspace_dim(self, subspace_dim: int) -> None:
        """Resolve ``beta_t`` for a search space of dimension ``subspace_dim`` (validates ``beta``)."""
        self._beta_fn = resolve_tranthe_beta(self.beta, self.beta_params, self.dim, subspace_dim)

    def _gp_input_dim(self) -> int:
        """Number of GP input coordinates (default D)."""
        return self.dim

    def _make_kernel(self) -> Kernel:
        """The covariance function, its length-scale fit started at :func:`start_lengthscale`."""
        n = self._gp_input_dim()
        return make_kernel(self.kernel, n, ard=self.ard, lengthscale_bounds=self.lengthscale_bounds,
                           lengthscale=start_lengthscale(n, self.lengthscale_bounds))

    def _default_acq_budget(self) -> int:
        """Acquisition evaluations per iteration when ``acq_budget`` is not given: ``300 D``."""
        return 300 * self.dim

    @property
    def acquisition_budget(self) -> int:
        """Acquisition evaluations per iteration (``acq_budget`` or the method's default)."""
        return self.acq_budget if self.acq_budget is not None else self._default_acq_budget()

    def beta_t(self, t: int | None = None) -> float:
        """The exploration weight beta_t (default: of the upcoming iteration)."""
        assert self._beta_fn is not None, "_set_subspace_dim was not called"
        return float(self._beta_fn(self.iteration if t is None else t))

    def _get_internal_state(self) -> dict[str, Any]:
        return dict(super()._get_internal_state(), last=self.last_)  # type: ignore[misc]

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        self.last_ = dict(state_mapping(state.get("last") or {}, "state['internal']['last']"))
        super()._set_internal_state(state)  # type: ignore[misc]

    def diagnostics(self) -> dict[str, Any]:
        """The facts of the last acquisition step (``last_``) and the GP hyperparameters."""
        out = dict(super().diagnostics())  # type: ignore[misc]
        out.update(self.last_)
        return out


class MultiStartSubspaceMixin(SubspaceUCBMixin):
    """The "random screening, then one stacked L-BFGS-B run" search of MS-UCB and DropoutUCB.

    Each iteration spends ``screen_fraction`` of the acquisition budget (default ``300 D``) on
    random candidates evaluated in vectorized batches and the rest on :func:`stacked_lbfgsb`
    from the best of them (:meth:`_split_budget`, :meth:`_n_local_starts`).

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box.
    n_starts : int, optional
        L-BFGS-B starts per iteration, default ``10 D`` (the MS-UCB paper's count), capped by
        ``local budget // min_evals_per_start``.
    screen_fraction : float, default 1/3
        Fraction of the acquisition budget spent on random screening, in (0, 1).
    min_evals_per_start : int, default 10
        Smallest local budget (acquisition evaluations) a start may get, ``>= 2``.
    **kwargs
        :class:`SubspaceUCBMixin` and :class:`~hdbo.methods.gp_based.GPMethod` options.

    Raises
    ------
    TypeError, ValueError
        If an option is invalid.
    """

    def __init__(
        self,
        bounds: Any,
        *,
        n_starts: int | None = None,
        screen_fraction: float = 1.0 / 3.0,
        min_evals_per_start: int = 10,
        **kwargs: Any,
    ) -> None:
        super().__init__(bounds, **kwargs)
        self.n_starts = check_int(n_starts, "n_starts", low=1, allow_none=True, high=MAX_COUNT)
        self.screen_fraction = check_real(screen_fraction, "screen_fraction", low=0, high=1,
                                          low_inclusive=False, high_inclusive=False)
        self.min_evals_per_start = check_int(min_evals_per_start, "min_evals_per_start", low=2, high=MAX_COUNT)

    @property
    def starts_budget(self) -> int:
        """L-BFGS-B starts asked for per iteration (``n_starts`` or ``10 D``, the paper's count)."""
        return self.n_starts if self.n_starts is not None else 10 * self.dim

    def _split_budget(self) -> tuple[int, int]:
        """``(S, L)``: screening evaluations (``screen_fraction`` of the budget, >= 1) and local ones."""
        B = self.acquisition_budget
        S = max(1, int(B * self.screen_fraction))
        return S, B - S

    def _n_local_starts(self, local_budget: int, n_candidates: int) -> int:
        """Starts of the stacked L-BFGS-B: ``min(starts_budget, L // min_evals_per_start, n_candidates)``."""
        return max(0, min(self.starts_budget, local_budget // self.min_evals_per_start, n_candidates))
