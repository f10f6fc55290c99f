"""HDS + GP-UCB (Chen, Castro, Krause, ICML 2012): variable selection, then GP-UCB on the selection.

Phase 1 runs Hierarchical Diagonal Sampling (Algorithm 1) with the FDT or GPT sequential test
(:class:`hdbo.structure.variable_selection.HDSSelector`); every one of its queries is an
``ask``/``tell`` of this method, so it is counted, stored and resumable. Phase 2 runs GP-UCB
(Section 4) on the coordinates declared active, the others held at the background vector
``x0`` of phase 1. The method works on ``[-1, 1]^D`` (``domain = "symmetric"``).

Choices (SPEC.md P2.A.6 where the paper is silent):

* The model of the paper is assumed known: ``sigma_s^2`` (``signal_variance``), ``b``
  (``bandwidth``) and the noise variance ``sigma^2`` (``noise_variance``) are used by the tests
  and by the GP of phase 2: zero mean, SE kernel ``sigma_s^2 exp(-|x_S - x'_S|^2 / b^2)`` on the
  selected coordinates S (length-scale ``b / sqrt(2)`` in hdbo's convention), no
  standardization. ``fit_hyperparameters=True`` instead fits an SE kernel (and, with
  ``fit_noise=True``, the noise) by marginal likelihood on standardized outputs.
* FDT's pair distance is the paper's ``delta = 3 b`` from the ``bandwidth`` told to the method,
  unless ``fdt_delta`` sets it: with a wrong ``bandwidth``, ``delta = 3 b_hat`` puts the pair
  at the wrong scale (``b_hat = 0.001`` makes active nodes look constant), while a fixed
  ``delta`` makes FDT independent of ``b`` (``docs/reproductions/chen2012-misspec-diagnosis.md``).
* All observations of phase 1 are reused in phase 2 (only their selected coordinates matter).
* ``beta="chen2012"`` (default) is beta_t of Theorem 4.1 with ``d = |S|`` and ``delta_o = 0.1``
  (``beta_params={"delta": ...}``), with ``t`` the index of the query in the whole run (HDS
  queries count towards the horizon, SPEC.md P2.A.6). Any schedule of
  :mod:`hdbo.acquisition.schedules` (``d`` defaults to ``|S|``) or a constant may be given,
  e.g. the practical ``"kandasamy2015"`` (``0.2 |S| log 2t``).
* Acquisition: ``acq_budget`` evaluations per query (default 500): 80% screen uniform random
  points of ``[-1, 1]^|S|`` in one vectorized call, the rest go to L-BFGS-B runs (analytic
  gradients) from the best ``2 |S|`` of them. SPEC.md P2.A.6 proposes ``10 |S|`` starts; fewer,
  longer runs were as good on ``|S| <= 6`` and keep a query well under a second.
* Budget sharing: selection gets ``selection_budget`` evaluations (default: half of
  ``budget``, or all of it with ``optimize=False``; 2000, the paper's cap, when the budget is
  unknown); phase 2 starts as soon as the tree search ends or that budget is spent. If nothing
  was selected, phase 2 searches all D coordinates (with a warning). A selection budget too
  small for one step of the test (HDS-FDT needs a pair of evaluations, so a total budget of
  3 or less leaves the default half too small) skips the selection: every budget >= 1 runs,
  as GP-UCB on all D coordinates.
* Evaluations its structure learning needs: the tree search is sequential and ends when its
  tests have decided. Measured with our quick-scale runs of the paper's Fig. 2 (a GP sample
  with 2 active coordinates, noise variance 0.1, default options, mean of 2 runs per D;
  ``docs/reproductions/chen2012.md``): FDT 181 evaluations at D = 10, 350 at D = 20, 446 at
  D = 40, 459 at D = 80, 554 at D = 200, 652 at D = 400; GPT 85, 137, 177, 180, 207, 257.
  :meth:`HDS.structure_evaluations` interpolates these linearly in log D (the paper's HDS
  grows linearly in log D). Within budgets of 100-300 at D >= 100 the default half-budget
  selection usually ends on its budget, and GP-UCB then runs on what was selected so far
  (``diagnostics()`` reports the selection and its count).
* ``optimize=False`` is the paper's variable-selection experiment: :attr:`done` becomes True
  when the selection ends, so runners stop there and the evaluations used are the sample
  complexity.
* Batches (``ask(n)``, points pending): the selection proposes the design points of its test
  whose positions do not depend on values not yet told, and no more: an FDT pair's two points
  (``z`` and ``z + delta``, both fixed once the pair is drawn), or GPT's one point. The next
  step's node (and, for GPT, its position) depends on the LLR those values update, so a batch
  asked during the selection returns fewer points (``ask()`` raises
  :class:`~hdbo.exceptions.PendingError` while the step's points are all out). The values of
  a pair may be told in any order. Phase 2 is GP-UCB with the pending points hallucinated on
  the selected coordinates (GP-BUCB, :meth:`~hdbo.methods.gp_based.GPMethod._acquire_with_pending`),
  so ``ask(n)`` returns ``n`` points there.

References
----------
B. Chen, R. M. Castro, A. Krause. Joint optimization and variable selection of
high-dimensional Gaussian processes. ICML 2012 (``../shared/papers/001_fbcc165fdee27bb5.txt``),
Algorithm 1, Theorem 4.1.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import MAX_COUNT, check_bool, check_choice, check_int, check_real
from ..acquisition import UCB
from ..acquisition.maximizers import maximize
from ..gp import GaussianProcess, SquaredExponential
from ..space import Box
from ..structure.variable_selection import TESTS, HDSSelector
from ..exceptions import StateError
from ._state import internal_field, internal_indices, state_array, state_float, state_mapping
from .gp_based import GPMethod
from .gp_ucb import resolve_beta
from .registry import register

__all__ = ["HDS", "SelectThenOptimize", "chen2012_beta", "SELECTION_EVALUATIONS_MEASURED"]

_DEFAULT_SELECTION_CAP = 2000

#: Evaluations HDS's selection used in our quick-scale runs of Chen et al.'s Fig. 2 (a GP sample
#: with 2 active coordinates, noise variance 0.1, default options; mean of 2 runs, rounded;
#: ``docs/reproductions/chen2012.md``): D -> {test: evaluations}. Measurements, not a bound.
SELECTION_EVALUATIONS_MEASURED: dict[int, dict[str, int]] = {
    10: {"fdt": 181, "gpt": 85},
    20: {"fdt": 350, "gpt": 137},
    40: {"fdt": 446, "gpt": 177},
    80: {"fdt": 459, "gpt": 180},
    200: {"fdt": 554, "gpt": 207},
    400: {"fdt": 652, "gpt": 257},
}


def chen2012_beta(t: float, *, d: int, bandwidth: float, signal_variance: float, delta: float = 0.1) -> float:
    """beta_t of Theorem 4.1 (Chen et al. 2012).

    ``beta_t = 2 log(2 pi^2 t^2 / (3 delta)) + 2 d log(2 t^2 d sigma_s / b * sqrt(log(4 d / delta)))``.

    Parameters
    ----------
    t : float
        Iteration, ``t >= 1``.
    d : int
        Number of (selected) active coordinates.
    bandwidth : float
        ``b``.
    signal_variance : float
        ``sigma_s^2`` (the formula uses ``sigma_s``).
    delta : float, default 0.1
        Confidence parameter ``delta_o``.

    Returns
    -------
    float
    """
    t = max(float(t), 1.0)
    sigma_s = math.sqrt(signal_variance)
    root = math.sqrt(math.log(4.0 * d / delta))
    return 2.0 * math.log(2.0 * math.pi**2 * t * t / (3.0 * delta)) + 2.0 * d * math.log(
        2.0 * t * t * d * sigma_s / bandwidth * root)


def _same(u: NDArray[np.float64], v: NDArray[np.float64]) -> bool:
    """Whether two canonical points are the same (within 1e-9 in every coordinate, as the base class)."""
    return bool(np.max(np.abs(np.asarray(u) - np.asarray(v))) <= 1e-9)


def _true_active(structure: dict[str, Any]) -> list[int] | None:
    """The problem's active coordinates (``structure["active_dims"]``, or ``"active"``), if known."""
    for key in ("active_dims", "active"):
        if structure.get(key) is not None:
            return sorted(int(i) for i in structure[key])
    return None


class SelectThenOptimize(GPMethod):
    """Base of two-phase methods: a variable-selection phase, then GP-UCB on the selection.

    Subclasses implement :meth:`_selection_propose`, :meth:`_selection_consume`,
    :meth:`_selection_done`, :meth:`_selection_result`, and the state/diagnostics hooks of
    their selection phase. See the module docstring for the options.

    ``_selection_propose`` returns the next design point of the selection that is neither told
    nor pending (:attr:`~hdbo.methods.base.Method.pending_canonical`), or None when every
    point the selection can place without further values is out: a batch then returns fewer
    points. In phase 2 the pending points, restricted to the searched coordinates, are
    hallucinated in the GP (:meth:`_gp_input_of`), so batches are full there.

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box (mapped to ``[-1, 1]^D``).
    bandwidth : float, default 0.1
        ``b``.
    signal_variance : float, default 1.0
        ``sigma_s^2``.
    noise_variance : float, default 0.1
        Assumed noise variance ``sigma^2`` (also the GP's, fixed unless ``fit_noise=True``).
    selection_budget : int, optional
        Evaluations for the selection phase (see the module docstring for the default).
    optimize : bool, default True
        Run GP-UCB after the selection; False ends the run (:attr:`done`) after it.
    beta : str or float, default "chen2012"
        beta_t of phase 2.
    beta_params : dict, optional
        Parameters of the schedule (``"chen2012"``: ``delta``).
    fit_hyperparameters : bool, default False
        Fit the GP of phase 2 by marginal likelihood instead of using the known model.
    **kwargs
        :class:`~hdbo.methods.gp_based.GPMethod` options. Defaults here: ``n_init=1``,
        ``kernel="se"``, ``ard=False``, ``fit_noise=False``, ``refit_growth=None``,
        ``maximizer="lbfgsb"``.
    """

    restart_schedules = ("every",)  # its own refits restart at every refit

    domain = "symmetric"

    def __init__(
        self,
        bounds: Box | ArrayLike,
        *,
        bandwidth: float = 0.1,
        signal_variance: float = 1.0,
        noise_variance: float = 0.1,
        selection_budget: int | None = None,
        optimize: bool = True,
        beta: str | float = "chen2012",
        beta_params: dict[str, Any] | None = None,
        fit_hyperparameters: bool = False,
        **kwargs: Any,
    ) -> None:
        for key, value in (("n_init", 1), ("kernel", "se"), ("ard", False), ("fit_noise", False),
                           ("refit_growth", None), ("maximizer", "lbfgsb")):
            kwargs.setdefault(key, value)
        super().__init__(bounds, noise_variance=noise_variance, **kwargs)
        self.bandwidth = check_real(bandwidth, "bandwidth", low=0, low_inclusive=False)
        self.signal_variance = check_real(signal_variance, "signal_variance", low=0, low_inclusive=False)
        self.selection_budget = check_int(selection_budget, "selection_budget", low=1, allow_none=True, high=MAX_COUNT)
        self.optimize = check_bool(optimize, "optimize")
        self.fit_hyperparameters = check_bool(fit_hyperparameters, "fit_hyperparameters")
        self.beta = beta
        self.beta_params = dict(beta_params or {})
        if isinstance(beta, str) and beta == "chen2012":
            unknown = set(self.beta_params) - {"delta"}
            if unknown:
                raise ValueError(f"beta_params for 'chen2012' take only 'delta', got {sorted(unknown)}")
            check_real(self.beta_params.get("delta", 0.1), "beta_params['delta']", low=0, high=1,
                       low_inclusive=False, high_inclusive=False)
        else:
            resolve_beta(beta, self.beta_params, 1)  # validates early
        self.true_active_ = _true_active(self.structure)
        self.selected_: list[int] | None = None
        self._beta_fn: Callable[[int], float] | None = None

    # ------------------------------------------------------------------ budget
    @property
    def selection_limit(self) -> int:
        """Evaluations the selection phase may use."""
        if self.selection_budget is not None:
            return self.selection_budget
        if self.budget is None:
            return _DEFAULT_SELECTION_CAP
        return self.budget if not self.optimize else max(1, self.budget // 2)

    @property
    def selecting(self) -> bool:
        """True while the selection phase runs."""
        return self.selected_ is None

    @property
    def done(self) -> bool:
        """True after the selection when ``optimize=False`` (see :attr:`Method.done`)."""
        return (not self.optimize) and not self.selecting

    # ------------------------------------------------------------------ subclass hooks
    def _selection_propose(self) -> NDArray[np.float64] | None:
        raise NotImplementedError

    def _selection_consume(self, u: NDArray[np.float64], y: float) -> None:
        raise NotImplementedError

    def _selection_done(self) -> bool:
        raise NotImplementedError

    def _selection_result(self) -> list[int]:
        raise NotImplementedError

    def _background(self) -> NDArray[np.float64]:
        raise NotImplementedError

    # ------------------------------------------------------------------ phases
    def _finish_selection(self, reason: str = "no variable was selected") -> None:
        selected = sorted(int(i) for i in self._selection_result())
        if not selected and self.optimize:
            warnings.warn(f"{self.name}: {reason}; GP-UCB will search all {self.dim} coordinates",
                          RuntimeWarning, stacklevel=3)
            self.selected_ = []
        else:
            self.selected_ = selected
        self.gp_ = None
        self._n_at_refit = 0

    @property
    def search_dims(self) -> list[int]:
        """Coordinates GP-UCB searches: the selection, or all of them if it is empty."""
        if self.selected_ is None:
            raise RuntimeError("the selection phase is not finished")
        return self.selected_ if self.selected_ else list(range(self.dim))

    def _ask(self) -> NDArray[np.float64] | None:
        if self.selecting and self._selection_done():
            # The selection budget cannot pay for one step of the test (e.g. HDS-FDT's pair of
            # evaluations with budget <= 3): skip the selection, GP-UCB on every coordinate.
            self._finish_selection(f"a selection budget of {self.selection_limit} evaluation(s) cannot pay for "
                                   "one selection step, so the selection is skipped")
        if self.selecting:
            return self._selection_propose()
        return super()._ask()

    def _on_tell(self, u: NDArray[np.float64], y: float) -> None:
        if self.selecting:
            self._selection_consume(u, y)
            if self._selection_done():
                self._finish_selection()

    # ------------------------------------------------------------------ GP-UCB phase
    def _gp_data(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return self.X_obs[:, self.search_dims], self.y_obs

    def _gp_input_of(self, U: NDArray[np.float64]) -> NDArray[np.float64]:
        # the selected coordinates; with the known model's noise (sigma^2 = 0.1 by default) a
        # pending point keeps a variance of about sigma^2, so GP-UCB may propose it again and
        # GPMethod._acquire_with_pending hallucinates it once more
        return U[:, self.search_dims]

    def _make_kernel(self) -> SquaredExponential:
        k = len(self.search_dims)
        ls = self.bandwidth / math.sqrt(2.0)  # paper: exp(-r^2 / b^2) = exp(-r^2 / (2 (b/sqrt 2)^2))
        if self.fit_hyperparameters:
            lo, hi = self.lengthscale_bounds
            return SquaredExponential(k, lengthscale=min(max(ls, lo), hi), ard=self.ard,
                                      lengthscale_bounds=self.lengthscale_bounds)
        return SquaredExponential(k, lengthscale=ls, variance=self.signal_variance).fix(
            variance=self.signal_variance, lengthscale=ls)

    def _make_gp(self) -> GaussianProcess:
        if self.fit_hyperparameters:
            return super()._make_gp()
        nv = self.noise_variance
        return GaussianProcess(self._make_kernel(), noise_variance=nv, noise_bounds=(nv, nv), mean="zero",
                               standardize=False, n_restarts=0)

    def _refit(self, X: NDArray[np.float64], y: NDArray[np.float64]) -> GaussianProcess:
        gp = self.gp_ if self.gp_ is not None else self._make_gp()
        return gp.fit(X, y, optimize=self.fit_hyperparameters, rng=self.rng)

    def beta_t(self, t: int | None = None) -> float:
        """beta_t of phase 2.

        Parameters
        ----------
        t : int, optional
            Default: the index of the upcoming query in the whole run (``n_told + 1``, pending
            points counted as told: GP-BUCB's index of the decision).

        Returns
        -------
        float
        """
        if self._beta_fn is None:
            k = len(self.search_dims)
            if isinstance(self.beta, str) and self.beta == "chen2012":
                delta = float(self.beta_params.get("delta", 0.1))
                bw, sv = self.bandwidth, self.signal_variance
                self._beta_fn = lambda s: chen2012_beta(s, d=k, bandwidth=bw, signal_variance=sv, delta=delta)
            else:
                self._beta_fn = resolve_beta(self.beta, self.beta_params, k)
        return float(self._beta_fn(self.n_told + self.n_pending + 1 if t is None else t))

    @property
    def acquisition_budget(self) -> int:
        """Acquisition evaluations per query (``acq_budget``, default 500)."""
        return self.acq_budget if self.acq_budget is not None else 500

    def _acquire(self, gp: GaussianProcess) -> NDArray[np.float64]:
        dims = self.search_dims
        acq = UCB(gp, self.beta_t())
        bounds = self.space.bounds[dims]
        if self.maximizer == "lbfgsb":
            # 80% of the budget screens random points in one vectorized call, the rest goes to
            # L-BFGS-B runs (analytic gradients) from the best 2 |S| of them.
            budget = self.acquisition_budget
            res = maximize("lbfgsb", acq, bounds, budget=budget, rng=self.rng, fun_and_grad=acq.value_and_grad,
                           n_starts=max(2, 2 * len(dims)), n_raw=max(1, (4 * budget) // 5),
                           batched=self.batch_starts)
            z, self.last_acq_nfev_ = res.x, res.nfev
        else:
            z = self._maximize(acq, acq.value_and_grad, bounds=bounds)
        u = self._background().copy()
        u[dims] = z
        return u

    # ------------------------------------------------------------------ state & diagnostics
    def _get_internal_state(self) -> dict[str, Any]:
        state = super()._get_internal_state() if not self.selecting else {"gp": None, "n_at_refit": 0}
        state["selected"] = self.selected_
        return state

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        self.selected_ = internal_indices(state, "selected", high=self.dim, allow_none=True)
        self._beta_fn = None
        if self.selected_ is not None:
            super()._set_internal_state(state)

    def _recovery(self, selected: list[int]) -> dict[str, Any]:
        if self.true_active_ is None:
            return {}
        sel, true = set(selected), set(self.true_active_)
        return {"recovered": sel == true, "false_positives": len(sel - true), "false_negatives": len(true - sel)}

    def diagnostics(self) -> dict[str, Any]:
        """What the selection found and, if the truth is known, how well.

        Returns
        -------
        dict
            ``selected`` (list of int, or None while selecting), ``n_selected``,
            ``selection_finished`` (bool), ``selection_evaluations`` (evaluations used by the
            selection); with ``structure["active_dims"]`` known and the selection finished,
            ``recovered`` (bool: selected set equals the true one), ``false_positives`` and
            ``false_negatives`` (counts); after the first GP fit, ``hyperparameters``.
        """
        info: dict[str, Any] = super().diagnostics() if not self.selecting else {}
        info.update(selected=self.selected_, n_selected=None if self.selected_ is None else len(self.selected_),
                    selection_finished=not self.selecting)
        if self.selected_ is not None:
            info.update(self._recovery(self.selected_))
        return info


@register
class HDS(SelectThenOptimize):
    """HDS variable selection (FDT or GPT test), then GP-UCB on the selection (module docstring).

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box (the method works on ``[-1, 1]^D``).
    test : {"fdt", "gpt"}, default "fdt"
        Sequential test of Algorithm 1.
    theta1 : float, default 10.0
        Upper LLR threshold ``Theta_1`` (node active).
    theta0 : float, default -10.0
        Lower LLR threshold ``Theta_0`` (node inactive).
    fdt_factor : float, default 0.95
        ``sigma_1^2 = 2 (fdt_factor sigma_s^2 + sigma^2)`` (FDT).
    fdt_delta : float, optional
        FDT's pair distance ``delta`` (the pair is ``z`` and ``z + delta``), a positive finite
        float; values above 2 are capped at 2. None (default) is the paper's ``delta = 3 b``
        with ``b`` the ``bandwidth`` option. Setting it keeps the pair at the problem's scale
        when the ``bandwidth`` told to the method is wrong: with ``delta`` fixed, FDT does not
        use ``b`` at all (``sigma_1^2`` uses the constant ``fdt_factor``), as in the paper's
        robustness-to-``b`` experiment (Sec. 5, Fig. 3; see
        ``docs/reproductions/chen2012-misspec-diagnosis.md``). GPT ignores it.
    grid_size : int, default 201
        Grid of the GPT sampling rule on ``[-1, 1]``.
    gpt_offset_variance : float, default 0.0
        GPT: prior variance of an unknown constant added to both hypotheses (0 = the paper's
        test; see :class:`~hdbo.structure.variable_selection.HDSSelector`).
    **kwargs
        :class:`SelectThenOptimize` options (``bandwidth``, ``signal_variance``,
        ``noise_variance``, ``selection_budget``, ``optimize``, ``beta``, ``beta_params``,
        ``fit_hyperparameters``) and :class:`~hdbo.methods.gp_based.GPMethod` options.

    Attributes
    ----------
    selector_ : HDSSelector
        The tree search (phase 1).
    selected_ : list of int or None
        The selected coordinates, once the selection ended.

    Raises
    ------
    TypeError, ValueError
        If an option has the wrong type or is out of range.

    Notes
    -----
    Batches: during the selection a batch returns fewer points than asked. With FDT,
    ``ask(n)`` returns at most the two points of the pair in progress (``z`` and
    ``z + delta`` are fixed when the pair is drawn); with GPT at most one point. Once they are
    out, ``ask(n)`` returns an empty ``(0, D)`` array and ``ask()`` raises
    :class:`~hdbo.exceptions.PendingError` until they are told, because the next step's node
    (and GPT's next position) depends on the LLR their values update. A pair's values may be
    told in either order. If the first point of a pair fails while the second is out, the
    pair is dropped (as in sequential use) and the second point's evaluation, when told,
    counts against the selection budget without entering the test. After the selection,
    ``ask(n)`` returns ``n`` points (GP-UCB with the pending points hallucinated).

    Examples
    --------
    >>> import numpy as np
    >>> from hdbo.methods import make_method
    >>> m = make_method("hds", [(-1, 1)] * 16, seed=0, test="gpt", optimize=False, budget=500)
    >>> rng = np.random.default_rng(1)
    >>> while not m.done:
    ...     x = m.ask()
    ...     m.tell(x, np.sin(10 * x[5]) + 0.3 * rng.standard_normal())
    >>> m.selected_
    [5]
    """

    name = "hds"

    def __init__(
        self,
        bounds: Box | ArrayLike,
        *,
        test: str = "fdt",
        theta1: float = 10.0,
        theta0: float = -10.0,
        fdt_factor: float = 0.95,
        fdt_delta: float | None = None,
        grid_size: int = 201,
        gpt_offset_variance: float = 0.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(bounds, **kwargs)
        self.test, self.theta1, self.theta0 = test, theta1, theta0
        self.fdt_factor = fdt_factor
        self.fdt_delta = check_real(fdt_delta, "fdt_delta", low=0, low_inclusive=False, allow_none=True)
        self.grid_size = check_int(grid_size, "grid_size", low=2, high=MAX_COUNT)
        self.gpt_offset_variance = gpt_offset_variance
        background = self.rng.uniform(-1.0, 1.0, self.dim)  # x0, drawn before any query
        self.selector_ = self._new_selector(background)
        # A batch may tell a pair's second point before its first: its value waits here,
        # (canonical point, value; NaN = failed), until the first point's value is in.
        self._early: tuple[NDArray[np.float64], float] | None = None
        # Points of a dropped pair (its first point failed) that are still out (canonical).
        self._orphans: list[NDArray[np.float64]] = []

    @classmethod
    def structure_evaluations(cls, dim: int, **options: Any) -> int | None:
        """Evaluations HDS's selection needs at dimension ``dim``, from our measurements.

        The counts of :data:`SELECTION_EVALUATIONS_MEASURED` (our runs of Chen et al.'s Fig. 2:
        2 active coordinates, noise variance 0.1, default options) are interpolated linearly
        in ``log D`` between the measured dimensions, and extrapolated above D = 400 along the
        last segment. Below D = 10 the D = 10 count is returned (a smaller tree needs fewer,
        but the first segment's line reaches zero between D = 3 and D = 5). These are
        measurements of our runs, not a bound: the count grows with the number of active
        coordinates and with the noise (FDT at D = 200 used 1554 evaluations at noise variance
        0.36).

        Parameters
        ----------
        dim : int
            Input dimension D (``>= 1``).
        **options
            HDS options; only ``test`` (default ``"fdt"``) changes the count.

        Returns
        -------
        int
            Rounded to an integer: FDT 482 at D = 100 and 611 at D = 300; GPT 187 and 236.

        Raises
        ------
        TypeError
            If ``dim`` is not an int, or an option is not one of HDS's.
        ValueError
            If ``dim < 1`` or ``test`` is not ``"fdt"`` or ``"gpt"``.

        Examples
        --------
        >>> HDS.structure_evaluations(200), HDS.structure_evaluations(200, test="gpt")
        (554, 207)
        """
        dim = cls._check_structure_options(dim, options)
        test = check_choice(options.get("test", "fdt"), "test", TESTS)
        dims = np.log(np.array(sorted(SELECTION_EVALUATIONS_MEASURED), dtype=float))
        counts = np.array([SELECTION_EVALUATIONS_MEASURED[d][test] for d in sorted(SELECTION_EVALUATIONS_MEASURED)],
                          dtype=float)
        x = math.log(dim)
        if x <= dims[0]:
            value = counts[0]
        elif x >= dims[-1]:
            slope = (counts[-1] - counts[-2]) / (dims[-1] - dims[-2])
            value = counts[-1] + slope * (x - dims[-1])
        else:
            value = float(np.interp(x, dims, counts))
        return int(math.floor(value + 0.5))

    def _new_selector(self, background: NDArray[np.float64]) -> HDSSelector:
        return HDSSelector(
            self.dim, background=background, test=self.test, theta1=self.theta1, theta0=self.theta0,
            bandwidth=self.bandwidth, signal_variance=self.signal_variance, noise_variance=self.noise_variance,
            max_evaluations=self.selection_limit, fdt_factor=self.fdt_factor, delta=self.fdt_delta,
            grid_size=self.grid_size, offset_variance=self.gpt_offset_variance)

    def _step_points(self) -> list[NDArray[np.float64]]:
        """The design points of the test step in progress that the selector has not consumed, in order.

        FDT before its first value: ``[x_I(z), x_I(z + delta)]``; FDT after it: the second
        point; GPT: its one point; no step in progress: ``[]``. Draws no random numbers.
        """
        sel = self.selector_
        step = sel.pending
        if step is None:
            return []
        first = sel.propose(np.random.default_rng(0))  # a step in progress: no randomness is used
        if sel.test != "fdt" or step["stage"] != 0:
            return [first]
        node = next(n for n in sel.nodes if n.id == step["node"])
        return [first, sel.point(node.dims, min(step["z"] + sel.delta, 1.0))]

    def _selection_propose(self) -> NDArray[np.float64] | None:
        sel = self.selector_
        if sel.pending is None:
            if (self._orphans and sel.max_evaluations is not None
                    and sel.max_evaluations - sel.n_evaluations - len(self._orphans) < sel.cost_per_step):
                return None  # the budget left after the points still out cannot pay for a step
            return sel.propose(self.rng)
        for u in self._step_points():
            if not self._repeats_pending(u) and not (self._early is not None and _same(u, self._early[0])):
                return u
        return None  # the step's points are out: the next step depends on their values

    def _selection_consume(self, u: NDArray[np.float64], y: float) -> None:
        sel = self.selector_
        points = self._step_points()
        if points and _same(u, points[0]):
            sel.consume(u, y)
            if self._early is not None:  # the pair's second value arrived first
                (v, yv), self._early = self._early, None
                if sel.pending is not None:
                    sel.consume(v, yv)
                else:  # the first point failed, which dropped the pair: count the evaluation only
                    sel.n_evaluations += 1
            elif sel.pending is None and len(points) == 2 and self._repeats_pending(points[1]):
                self._orphans.append(points[1])  # dropped pair whose second point is out
        elif len(points) == 2 and _same(u, points[1]) and self._early is None:
            self._early = (u.copy(), float(y))
        else:
            for i, v in enumerate(self._orphans):
                if _same(u, v):
                    del self._orphans[i]
                    sel.n_evaluations += 1  # an evaluation the selection asked for, its value unused
                    break

    def _on_cancel(self, u: NDArray[np.float64] | None) -> None:
        if u is None:
            self._orphans = []
        else:
            self._orphans = [v for v in self._orphans if not _same(u, v)]

    def _selection_done(self) -> bool:
        return self.selector_.done

    def _selection_result(self) -> list[int]:
        return list(self.selector_.selected)

    def _background(self) -> NDArray[np.float64]:
        return self.selector_.background

    def _get_internal_state(self) -> dict[str, Any]:
        state = super()._get_internal_state()
        state["selector"] = self.selector_.state_dict()
        state["early"] = None if self._early is None else {
            "x": self._early[0].tolist(), "y": self._early[1] if np.isfinite(self._early[1]) else None}
        state["orphans"] = [v.tolist() for v in self._orphans]
        return state

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        selector = HDSSelector.from_state(state_mapping(internal_field(state, "selector"),
                                                        "state['internal']['selector']"))
        if selector.dim != self.dim:
            raise StateError(f"state['internal']['selector'] is for {selector.dim} dimensions, not {self.dim}")
        if selector.pending is not None:  # the query in progress must be a point (no randomness is drawn)
            u = selector.propose(np.random.default_rng(0))
            if u.shape != (self.dim,) or not np.all(np.abs(u) <= 1.0):
                raise StateError("state['internal']['selector']['pending'] does not give a point of the box")
        self.selector_ = selector
        # states written before batches have neither entry
        early = state.get("early")
        if early is not None:
            early = state_mapping(early, "state['internal']['early']")
            x = state_array(internal_field(early, "x", "state['internal']['early']"), "state['internal']['early']['x']",
                            shape=(self.dim,), low=-1.0, high=1.0)
            y = state_float(internal_field(early, "y", "state['internal']['early']"),
                            "state['internal']['early']['y']", allow_none=True)
            self._early = (x, float("nan") if y is None else y)
        else:
            self._early = None
        orphans = state.get("orphans", [])
        if isinstance(orphans, list) and not orphans:
            self._orphans = []
        else:
            rows = state_array(orphans, "state['internal']['orphans']", shape=(None, self.dim), low=-1.0, high=1.0)
            self._orphans = [row.copy() for row in rows]
        super()._set_internal_state(state)

    def diagnostics(self) -> dict[str, Any]:
        """Selection results (see :meth:`SelectThenOptimize.diagnostics`) plus the tree search's counts.

        Returns
        -------
        dict
            Also ``test``, ``selection_iterations`` (FDT pairs or GPT samples),
            ``tree_nodes`` (nodes decided), ``selection_failed_evaluations`` and
            ``undetermined_nodes`` (left when the budget ran out).
        """
        info = super().diagnostics()
        sel = self.selector_
        info.update(test=self.test, selection_evaluations=sel.n_evaluations, selection_iterations=sel.n_iterations,
                    tree_nodes=len(sel.decided), undetermined_nodes=len(sel.nodes),
                    selection_failed_evaluations=sel.n_failed)
        return info

