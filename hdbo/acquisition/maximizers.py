"""Budgeted maximizers of acquisition functions over a box.

Every maximizer has the signature ::

    maximize_xxx(fun, bounds, *, budget, rng, **options) -> MaximizeResult

``fun`` is a vectorized callable mapping points of shape (n, d) to values of shape (n,) and is
*maximized*. The budget counts acquisition evaluations: one point evaluated is one
evaluation, whether or not a gradient comes with it. The papers compare methods "at equal
computational budget", so the count is enforced exactly: ``result.nfev <= budget`` always,
even where SciPy would overshoot its own ``maxfun``.

Shared policies
---------------
* Points are clipped into the box before ``fun`` sees them, and the returned ``x`` is the best
  point evaluated (ties: the first one found).
* A non-finite value (NaN, +-inf) counts as ``-inf``: it is never returned as the best unless
  nothing finite was seen, and local searches treat it as a wall.
* ``x0_candidates`` (e.g. the best observed points) are evaluated first, inside the budget.
* Results depend only on the arguments and the state of ``rng``.
* Exceptions raised by ``fun`` pass through unchanged.
* Arguments are checked before the first evaluation: a wrong type raises ``TypeError``, a
  wrong value ``ValueError``, with the argument's name in the message.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import Bounds, direct, minimize

from .._docstrings import fill_doc
from .._validation import check_bool, check_choice, check_int
from ..space import Box, as_box
from ._direct import direct_minimize, direct_minimize_many

__all__ = [
    "MaximizeResult",
    "Maximizer",
    "maximize_direct",
    "maximize_direct_many",
    "maximize_lbfgsb",
    "maximize_local",
    "perturb_subsets",
    "maximize_random",
    "maximize_grid",
    "MAXIMIZERS",
    "maximize",
    "callback_exception",
]

Array = NDArray[np.float64]
Fun = Callable[[Array], ArrayLike]
FunAndGrad = Callable[[Array], tuple[ArrayLike, ArrayLike]]
#: Every maximizer: ``(fun, bounds, *, budget, rng, **options) -> MaximizeResult``.
Maximizer = Callable[..., "MaximizeResult"]
_SQRT_EPS = math.sqrt(np.finfo(float).eps)

# Docstring sections shared by the maximizers (filled in by ``fill_doc``).
_DOC = {
    "fun_bounds": """
        fun : callable
            Vectorized ``(n, d) -> (n,)``.
        bounds : Box or array_like of shape (d, 2)
            The box.
    """,
    "batch_size": """
        batch_size : int, default 1000
            Points per call of ``fun``.
    """,
    "x0_candidates": """
        x0_candidates : array_like of shape (m, d), optional
            Points evaluated first.
    """,
    "returns": """
        Returns
        -------
        MaximizeResult
    """,
}


@dataclass
class MaximizeResult:
    """Outcome of a budgeted maximization.

    Attributes
    ----------
    x : ndarray of shape (d,)
        Best point evaluated, inside the bounds.
    value : float
        ``fun(x)``; ``-inf`` only if no evaluation returned a finite value.
    nfev : int
        Number of points evaluated (``<= budget``).
    method : str
        Registry name of the maximizer.
    n_starts : int
        Local searches run (``"lbfgsb"``); 0 for the other maximizers.
    message : str
        Why the search stopped.
    """

    x: Array
    value: float
    nfev: int
    method: str
    n_starts: int = 0
    message: str = ""


# ---------------------------------------------------------------------- shared machinery
class _BudgetExhausted(Exception):
    """Raised inside a SciPy solver's callback to stop it once its budget is spent."""


class _Evaluator:
    """Counts evaluations against a hard limit and remembers the best point seen."""

    def __init__(self, fun: Fun, box: Box, budget: int) -> None:
        self.fun, self.lower, self.upper = fun, box.lower, box.upper
        self.limit = budget
        self.nfev = 0
        self.x: Array | None = None
        self.value = -np.inf
        self.lowest: float | None = None  # smallest finite value seen, a stand-in for bad points

    def _reserve(self, n: int) -> None:
        if self.nfev + n > self.limit:
            raise _BudgetExhausted

    def values(self, X: Array) -> Array:
        """Evaluate ``fun`` on X of shape (n, d); non-finite values come back as -inf."""
        n = X.shape[0]
        self._reserve(n)
        X = np.clip(X, self.lower, self.upper)
        v = _check_output(self.fun(X), (n,), "fun", X.shape)
        self.nfev += n
        return self._record(X, v)

    def value_one(self, x: Array) -> float:
        """Evaluate ``fun`` at the single point x of shape (d,): :meth:`values` for one point,
        with less overhead (the inner loop of DIRECT). Non-finite values come back as -inf."""
        if self.nfev >= self.limit:
            raise _BudgetExhausted
        X = np.clip(x, self.lower, self.upper)[None, :]
        out = self.fun(X)
        if not (isinstance(out, np.ndarray) and out.shape == (1,)):
            out = _check_output(out, (1,), "fun", X.shape)
        v = float(out[0])
        self.nfev += 1
        if not math.isfinite(v):
            v = -math.inf
        elif self.lowest is None or v < self.lowest:
            self.lowest = v
        if self.x is None or v > self.value:
            self.x, self.value = X[0], v
        return v

    def values_and_grads(self, X: Array, fun_and_grad: FunAndGrad) -> tuple[Array, Array]:
        """Evaluate ``fun_and_grad`` on X of shape (n, d)."""
        n = X.shape[0]
        self._reserve(n)
        X = np.clip(X, self.lower, self.upper)
        out = fun_and_grad(X)
        if not isinstance(out, tuple) or len(out) != 2:
            raise ValueError(f"fun_and_grad must return a (values, grads) tuple, got {type(out).__name__}")
        v = _check_output(out[0], (n,), "fun_and_grad values", X.shape)
        g = _check_output(out[1], X.shape, "fun_and_grad grads", X.shape)
        self.nfev += n
        return self._record(X, v), g

    def _record(self, X: Array, v: Array) -> Array:
        finite = np.isfinite(v)
        v = np.where(finite, v, -np.inf)
        i = int(np.argmax(v))
        if self.x is None or v[i] > self.value:
            self.x, self.value = X[i].copy(), float(v[i])
        if finite.any():
            low = float(v[finite].min())
            self.lowest = low if self.lowest is None else min(self.lowest, low)
        return v

    def result(self, method: str, **extra: Any) -> MaximizeResult:
        assert self.x is not None  # every maximizer evaluates at least one point
        x = np.clip(self.x, self.lower, self.upper)
        return MaximizeResult(x=x, value=self.value, nfev=self.nfev, method=method, **extra)


def _check_output(out: Any, shape: tuple[int, ...], name: str, xshape: tuple[int, ...]) -> Array:
    arr = np.asarray(out, dtype=float)
    if arr.shape != shape:
        raise ValueError(
            f"{name} must return an array of shape {shape} for X of shape {xshape}, got shape {arr.shape}"
        )
    return arr


def _int(value: Any, name: str, *, low: int) -> int:
    """:func:`check_int` whose TypeError states the range as well ("budget must be an int >= 1, got float 2.5")."""
    try:
        return check_int(value, name, low=low)
    except TypeError:
        raise TypeError(f"{name} must be an int >= {low}, got {type(value).__name__} {value!r}") from None


def _setup(
    fun: Any, bounds: Any, budget: Any, rng: Any, x0_candidates: ArrayLike | None
) -> tuple[_Evaluator, Box, Array]:
    """Validate the shared arguments; return the evaluator, the box and the candidates (m, d)."""
    if not callable(fun):
        raise TypeError(f"fun must be callable, got {type(fun).__name__}")
    box = as_box(bounds, name="bounds")
    budget = _int(budget, "budget", low=1)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    d = box.dim
    if x0_candidates is None:
        x0 = np.empty((0, d))
    else:
        x0 = np.asarray(x0_candidates, dtype=float)
        x0 = x0[None, :] if x0.ndim == 1 else x0
        if x0.ndim != 2 or x0.shape[1] != d:
            raise ValueError(f"x0_candidates must have shape (m, {d}) or ({d},), got shape {x0.shape}")
        if not np.all(np.isfinite(x0)):
            raise ValueError("x0_candidates must be finite, got NaN or inf entries")
        x0 = np.clip(x0, box.lower, box.upper)
    return _Evaluator(fun, box, budget), box, x0


def _uniform(box: Box, n: int, rng: np.random.Generator) -> Array:
    """``n`` uniform points in the box, shape (n, d)."""
    return box.lower + box.width * rng.random((n, box.dim))


def _evaluate_candidates(ev: _Evaluator, x0: Array) -> Array:
    """Evaluate as many rows of ``x0`` as the budget allows; return their values."""
    m = min(x0.shape[0], ev.limit - ev.nfev)
    return ev.values(x0[:m]) if m > 0 else np.empty(0)


# ---------------------------------------------------------------------- DIRECT
@fill_doc(**_DOC)
def maximize_direct(
    fun: Fun,
    bounds: Box | ArrayLike,
    *,
    budget: int,
    rng: np.random.Generator,
    locally_biased: bool = False,
    x0_candidates: ArrayLike | None = None,
    backend: str = "batched",
) -> MaximizeResult:
    """Maximize with DIRECT (dividing rectangles).

    Parameters
    ----------
    fun : callable
        Vectorized ``(n, d) -> (n,)``. The batched backend calls it once per DIRECT iteration
        with all the points that iteration samples; SciPy calls it with one point at a time.
    bounds : Box or array_like of shape (d, 2)
        The box.
    budget : int
        Maximum number of evaluations (``maxfun``); ``x0_candidates`` count against it.
    rng : numpy.random.Generator
        Accepted for the common signature; DIRECT is deterministic.
    locally_biased : bool, default False
        False runs the original DIRECT of Jones et al. (1993), which the papers cite;
        True runs the locally biased DIRECT-L.
    x0_candidates : array_like of shape (m, d), optional
        Extra points evaluated before DIRECT starts; the best of everything is returned.
    backend : {"batched", "scipy"}, default "batched"
        ``"batched"`` runs hdbo's implementation of the original DIRECT
        (:mod:`hdbo.acquisition._direct`), which evaluates each iteration's points in one
        vectorized call; ``"scipy"`` runs ``scipy.optimize.direct``. DIRECT-L
        (``locally_biased=True``) always runs SciPy's.

    %(returns)s

    Raises
    ------
    TypeError
        If ``fun`` is not callable, ``budget`` is not an int, ``rng`` is not a Generator, or
        ``locally_biased`` is not a bool.
    ValueError
        If the bounds are invalid, ``budget < 1``, ``x0_candidates`` has the wrong shape or
        non-finite entries, ``backend`` is unknown, or ``fun`` returns an array of the wrong
        shape.

    Notes
    -----
    SciPy's DIRECT may finish its current iteration past ``maxfun``; here the evaluation that
    would exceed the budget stops the search instead, so ``nfev <= budget`` (the batched
    backend evaluates the part of the last iteration that fits). DIRECT can also stop earlier
    on its own tolerances (SciPy: ``len_tol``, ``vol_tol``; batched: ``len_tol`` only). A
    non-finite value is shown to DIRECT as the worst finite value seen so far, so the hull
    computations stay finite.

    The two backends follow the same algorithm but break ties between equally good
    rectangles differently, so their points differ after the first iterations; on Branin,
    Hartmann-6 and Rastrigin in 5 and 40 dimensions with budgets of 100-2000 the best values
    they reach agree or favour the batched backend (``benchmarks/bench_direct.py``). With a
    GP acquisition the batched backend is several times faster per point.

    References
    ----------
    D. R. Jones, C. D. Perttunen, B. E. Stuckman. Lipschitzian optimization without the
    Lipschitz constant. J. Optimization Theory and Applications 79, 1993. SPEC 0.A.4.
    """
    ev, box, x0 = _setup(fun, bounds, budget, rng, x0_candidates)
    locally_biased = check_bool(locally_biased, "locally_biased")
    backend = check_choice(backend, "backend", ("batched", "scipy"))
    _evaluate_candidates(ev, x0)
    remaining = ev.limit - ev.nfev
    if remaining == 0:
        return ev.result("direct", message="budget used up by x0_candidates")
    if backend == "batched" and not locally_biased:
        _, message = direct_minimize(_unit_cube_objective(ev, box), box.dim, remaining)
        return ev.result("direct", message=message)

    def objective(x: Array) -> float:
        v = ev.value_one(x)
        if v > -math.inf:
            return -v
        return 0.0 if ev.lowest is None else -ev.lowest

    try:
        try:
            res = direct(
                objective,
                Bounds(box.lower, box.upper),
                maxfun=remaining,
                maxiter=max(1000, remaining),  # never binds (>= 2 points per iteration); a huge value costs ~25 ms of allocation per call
                locally_biased=locally_biased,
            )
        except SystemError as exc:
            raise callback_exception(exc) from None
        message = str(res.message)
    except _BudgetExhausted:
        message = f"budget of {ev.limit} evaluations used up"
    return ev.result("direct", message=message)


def _unit_cube_objective(ev: _Evaluator, box: Box) -> Callable[[Array], Array]:
    """The batched DIRECT's objective: minimize -fun on the unit cube, non-finite values shown
    as the worst finite value seen."""
    lower, width = box.lower, box.width

    def objective(U: Array) -> Array:
        v = ev.values(lower + width * U)
        worst = 0.0 if ev.lowest is None else -ev.lowest
        return np.where(v > -np.inf, -v, worst)

    return objective


def maximize_direct_many(
    funs: Sequence[Fun],
    bounds: Sequence[Box | ArrayLike],
    *,
    budgets: Sequence[int],
    rng: np.random.Generator,
) -> list[MaximizeResult]:
    """Maximize several functions, each over its own box, with DIRECT searches run in lockstep.

    Gives the same results as ``[maximize_direct(f, b, budget=n, rng=rng) for f, b, n in
    zip(funs, bounds, budgets)]`` (the batched backend, original DIRECT), faster when there
    are many small searches: the searches share each iteration's bookkeeping
    (:func:`hdbo.acquisition._direct.direct_minimize_many`). Each function is still called
    once per iteration with its own points. Add-GP-UCB uses it to maximize the acquisition of
    every group at once.

    Parameters
    ----------
    funs : sequence of callables
        ``funs[i]`` is vectorized, ``(n, d_i) -> (n,)``, and maximized over ``bounds[i]``.
    bounds : sequence of Box or array_like of shape (d_i, 2)
        One box per function.
    budgets : sequence of int
        Maximum number of evaluations of each function, >= 1.
    rng : numpy.random.Generator
        Accepted for the common signature; DIRECT is deterministic.

    Returns
    -------
    list of MaximizeResult
        One per function, in order.

    Raises
    ------
    TypeError, ValueError
        As :func:`maximize_direct`, per function; ``ValueError`` also if ``funs``, ``bounds``
        and ``budgets`` are empty or differ in length.
    """
    funs, bounds, budgets = list(funs), list(bounds), list(budgets)
    if not funs or not (len(funs) == len(bounds) == len(budgets)):
        raise ValueError(
            "funs, bounds and budgets must be non-empty and of the same length, got lengths "
            f"{len(funs)}, {len(bounds)} and {len(budgets)}"
        )
    setups = [_setup(f, b, n, rng, None)[:2] for f, b, n in zip(funs, bounds, budgets)]
    outcomes = direct_minimize_many(
        [_unit_cube_objective(ev, box) for ev, box in setups],
        [box.dim for _, box in setups],
        [ev.limit for ev, _ in setups],
    )
    return [ev.result("direct", message=message) for (ev, _), (_, message) in zip(setups, outcomes)]


def callback_exception(exc: SystemError) -> BaseException:
    """The exception a Python callback raised inside ``scipy.optimize.direct``.

    SciPy releases before 1.17.1 cannot propagate an exception raised in the objective: they
    raise ``SystemError`` with the original exception as its cause. Callers re-raise what
    this returns, so they behave alike on every SciPy.

    Parameters
    ----------
    exc : SystemError
        The error raised by ``scipy.optimize.direct``.

    Returns
    -------
    BaseException
        ``exc.__cause__``, else ``exc.__context__``, else ``exc`` itself.
    """
    inner = exc.__cause__ or exc.__context__
    return inner if inner is not None else exc


# ---------------------------------------------------------------------- multi-start L-BFGS-B
@fill_doc(**_DOC)
def maximize_lbfgsb(
    fun: Fun,
    bounds: Box | ArrayLike,
    *,
    budget: int,
    rng: np.random.Generator,
    fun_and_grad: FunAndGrad | None = None,
    n_starts: int = 10,
    n_raw: int | None = None,
    x0_candidates: ArrayLike | None = None,
    batched: bool = False,
) -> MaximizeResult:
    """Multi-start L-BFGS-B from the best of a batch of random points.

    1. Evaluate ``x0_candidates`` and ``n_raw`` uniform random points (one vectorized call).
    2. Take the best ``n_starts`` of them with a finite value as starting points.
    3. Run ``scipy.optimize.minimize(method="L-BFGS-B")`` on ``-fun`` from each start in turn.
       Each run gets an equal share of the budget still left (so budget a run does not use
       passes to the later ones), as SciPy's ``maxfun`` and as a hard limit. A share too
       small for one step (two gradient evaluations) is skipped and passed on.
       With ``batched=True`` (and ``fun_and_grad``) the starts instead run together, as one
       L-BFGS-B run on their summed values, each step one vectorized call, with at most the
       budget left over the number of starts as steps, after up to two starts' shares (at most
       half the budget left) are set aside for one more run of its own from the best point
       found (the shared line search moves every start by one step length, so the best one
       may stop short of its maximum).

    Parameters
    ----------
    %(fun_bounds)s
    budget : int
        Maximum number of evaluations, start-point screening included.
    rng : numpy.random.Generator
        Source of the random points.
    fun_and_grad : callable, optional
        ``X (n, d) -> (values (n,), grads (n, d))``, the analytic gradient of ``fun`` (e.g.
        :meth:`hdbo.acquisition.UCB.value_and_grad`); one point costs one evaluation. If None,
        gradients come from forward differences: each step evaluates ``fun`` once on the
        ``(d + 1, d)`` stencil, costing ``d + 1`` evaluations.
    n_starts : int, default 10
        Maximum number of local runs (SPEC P3.A.4 uses ``10 * D``).
    n_raw : int, optional
        Random points screened for starts. Default ``max(1, min(budget // 2, 100 * n_starts))``,
        i.e. at most half the budget. Reduced if ``x0_candidates`` leave less room.
    x0_candidates : array_like of shape (m, d), optional
        Points screened before the random ones (they have priority within the budget).
    batched : bool, default False
        Run the starts together (see step 3). One call per step instead of one per start and
        step: several times faster per query when each call of ``fun_and_grad`` costs little
        more for many points than for one (a GP acquisition in few dimensions), at about the
        same acquisition values (``benchmarks/bench_lbfgsb_batch.py``). The runs are no
        longer independent: the line search and the stopping test are shared. Ignored
        without ``fun_and_grad`` (forward differences run one start at a time).

    Returns
    -------
    MaximizeResult
        ``n_starts`` is the number of local runs actually made.

    Raises
    ------
    ValueError
        If ``n_raw == 0`` and no ``x0_candidates`` are given (there is nothing to start from),
        ``n_starts < 1`` or ``n_raw < 0``, or ``fun_and_grad`` returns arrays of the wrong
        shapes; also for the shared arguments, as in :func:`maximize_direct`.
    TypeError
        If ``fun_and_grad`` is not callable or ``n_starts``/``n_raw`` is not an int; also for
        the shared arguments.

    References
    ----------
    R. H. Byrd, P. Lu, J. Nocedal, C. Zhu. A limited memory algorithm for bound constrained
    optimization. SIAM J. Scientific Computing 16, 1995. SPEC 0.A.5 and P3.A.4.
    """
    ev, box, x0 = _setup(fun, bounds, budget, rng, x0_candidates)
    n_starts = _int(n_starts, "n_starts", low=1)
    if fun_and_grad is not None and not callable(fun_and_grad):
        raise TypeError(f"fun_and_grad must be callable or None, got {type(fun_and_grad).__name__}")
    if n_raw is None:
        n_raw = max(1, min(ev.limit // 2, 100 * n_starts))
    n_raw = _int(n_raw, "n_raw", low=0)
    if n_raw == 0 and x0.shape[0] == 0:
        raise ValueError("n_raw must be >= 1 when no x0_candidates are given, got 0")
    if not isinstance(batched, (bool, np.bool_)):
        raise TypeError(f"batched must be a bool, got {type(batched).__name__}")

    # 1-2. screen candidates, keep the best finite ones as starts
    v0 = _evaluate_candidates(ev, x0)
    n_raw = min(n_raw, ev.limit - ev.nfev)
    raw = _uniform(box, n_raw, rng) if n_raw > 0 else np.empty((0, box.dim))
    cand = np.vstack([x0[: v0.size], raw])
    vals = np.concatenate([v0, ev.values(raw) if n_raw > 0 else np.empty(0)])
    order = np.argsort(-vals, kind="stable")
    starts = cand[order[np.isfinite(vals[order])][:n_starts]]

    # 3. local runs
    n_batched = 0
    if batched and fun_and_grad is not None and len(starts) > 1:
        # up to two starts' shares (at most half the budget left) are kept for a run of its own
        # from the batched run's best point
        left = ev.limit - ev.nfev
        reserve = min(left // 2, 2 * (left // len(starts)))
        cap, ev.limit = ev.limit, ev.limit - reserve
        try:
            n_batched = _batched_lbfgsb(ev, box, starts, fun_and_grad, max_steps=None, per_start_ftol=True)
        finally:
            ev.limit = cap
        n_local = n_batched + _local_runs(ev, box, ev.x[None, :], fun_and_grad)
    else:
        n_local = _local_runs(ev, box, starts, fun_and_grad)
    how = f" ({n_batched} batched)" if n_batched else ""
    message = f"{n_local} local runs{how} from {len(starts)} starts after screening {vals.size} points"
    return ev.result("lbfgsb", n_starts=n_local, message=message)


def _local_runs(ev: _Evaluator, box: Box, starts: Array, fun_and_grad: FunAndGrad | None) -> int:
    """L-BFGS-B from each start in turn, each with an equal share of the budget left.

    A share too small for one step (two gradient evaluations) is skipped and passed on.
    Returns the number of runs made.
    """
    cost = 1 if fun_and_grad is not None else box.dim + 1
    objective = _lbfgsb_objective(ev, box, fun_and_grad)
    scipy_bounds = Bounds(box.lower, box.upper)
    n_local = 0
    for i, x_start in enumerate(starts):
        share = (ev.limit - ev.nfev) // (len(starts) - i)
        if share < 2 * cost:  # not even one step past the start: leave the budget to later runs
            continue
        cap, ev.limit = ev.limit, ev.nfev + share
        try:
            minimize(objective, x_start, jac=True, method="L-BFGS-B", bounds=scipy_bounds,
                     options={"maxfun": share // cost})
        except _BudgetExhausted:
            pass
        finally:
            ev.limit = cap
        n_local += 1
    return n_local


#: SciPy's default ``ftol`` of L-BFGS-B (``factr = 1e7`` times the machine epsilon)
_LBFGSB_FTOL = 1e7 * np.finfo(float).eps


def _batched_lbfgsb(ev: _Evaluator, box: Box, starts: Array, fun_and_grad: FunAndGrad,
                    max_steps: int | None = 100, per_start_ftol: bool = False) -> int:
    """One L-BFGS-B run on all starts at once, with the rest of the budget.

    The k starts are stacked into one vector of k d variables and the objective is the sum of
    the k values: it is separable, so its maximizers are the k local maxima, and every step
    evaluates the k points in one vectorized call (the batching BoTorch's ``optimize_acqf``
    uses), at most ``max_steps`` of them (100 for the local search: a cap on the cost of a
    query in hundreds of dimensions; None: as many as the budget allows). A non-finite value
    counts as the lowest value seen, with a zero gradient. SciPy stops when the relative
    decrease of the summed value falls below ``ftol``; the sum is about k times one start's
    value, so ``per_start_ftol`` divides ``ftol`` (default 2.2e-9) by k, the test one start
    alone would face.
    Returns the number of starts.
    """
    k, d = starts.shape
    left = ev.limit - ev.nfev
    if k == 0 or left < 2 * k:
        return 0

    def objective(v: Array) -> tuple[float, Array]:
        vals, grads = ev.values_and_grads(v.reshape(k, d), fun_and_grad)
        ok = np.isfinite(vals) & np.all(np.isfinite(grads), axis=1)
        floor = ev.lowest if ev.lowest is not None else -1e300
        vals = np.where(ok, vals, floor)
        grads = np.where(ok[:, None], grads, 0.0)
        return -float(np.sum(vals)), -grads.reshape(-1)

    lower, upper = np.tile(box.lower, k), np.tile(box.upper, k)
    try:
        minimize(objective, starts.reshape(-1), jac=True, method="L-BFGS-B", bounds=Bounds(lower, upper),
                 options={"maxfun": left // k if max_steps is None else min(left // k, max_steps),
                          **({"ftol": _LBFGSB_FTOL / k} if per_start_ftol else {})})
    except _BudgetExhausted:
        pass
    return k


# ---------------------------------------------------------------------- local search around the best points
def perturb_subsets(
    centres: Array, n: int, box: Box, rng: np.random.Generator, *, n_perturbed: int = 20,
    best_share: float = 0.5,
) -> Array:
    """``n`` points that each change a random subset of a centre's coordinates.

    Centre 0 (the best observed point, by the caller's convention) is the parent of a
    ``best_share`` of the points, the other centres share the rest equally. Each coordinate is
    changed with probability ``min(1, n_perturbed / d)`` (at least one per point). Half of the
    points draw the changed coordinates uniformly in the box (a random axis-aligned subspace
    through the centre, as in the RAASP sampling of Papenmeier, Poloczek and Nardi, ICML 2025);
    the other half move them by a normal step whose standard deviation, drawn log-uniformly
    between 0.1% and 50% of the box's width per point, covers fine and coarse moves.

    Parameters
    ----------
    centres : ndarray of shape (m, d), m >= 1
    n : int
    box : Box
    rng : numpy.random.Generator
    n_perturbed : int, default 20
        Expected number of coordinates changed per point (capped at d).
    best_share : float, default 0.5
        Fraction of the points whose parent is centre 0.

    Returns
    -------
    ndarray of shape (n, d)
        Points inside the box.
    """
    m, d = centres.shape
    if n <= 0 or m == 0:
        return np.empty((0, d))
    n_best = n if m == 1 else int(round(best_share * n))
    parents = np.concatenate([np.zeros(n_best, dtype=int), 1 + rng.integers(0, m - 1, n - n_best)])
    X = centres[parents].copy()
    mask = rng.random((n, d)) < min(1.0, n_perturbed / d)
    none = ~mask.any(axis=1)
    mask[np.flatnonzero(none), rng.integers(0, d, int(none.sum()))] = True
    uniform_rows = np.arange(n) < n // 2
    fresh = _uniform(box, n, rng)
    step = np.exp(rng.uniform(np.log(1e-3), np.log(0.5), (n, 1))) * box.width * rng.standard_normal((n, d))
    moved = np.where(uniform_rows[:, None], fresh, X + step)
    return np.clip(np.where(mask, moved, X), box.lower, box.upper)


@fill_doc(**_DOC)
def maximize_local(
    fun: Fun,
    bounds: Box | ArrayLike,
    *,
    budget: int,
    rng: np.random.Generator,
    fun_and_grad: FunAndGrad | None = None,
    x0_candidates: ArrayLike | None = None,
    n_starts: int = 5,
    screen_fraction: float = 0.6,
    n_perturbed: int = 20,
    near_fraction: float = 0.75,
) -> MaximizeResult:
    """Search around the best points, then polish with L-BFGS-B: hdbo's default in high dimension.

    DIRECT divides the whole box and needs far more evaluations than a query's budget once d
    reaches the tens; a global random screen hardly ever lands near the acquisition's maxima
    in hundreds of dimensions, which lie close to the observed points. This search:

    1. evaluates ``x0_candidates`` (the centres: the best observed points, best first);
    2. screens ``screen_fraction`` of the budget in one vectorized batch: a ``near_fraction``
       of it are the centres with a few coordinates changed (:func:`perturb_subsets`), the
       rest uniform points of the box (all of it uniform when there are no centres);
    3. runs L-BFGS-B from the best ``n_starts`` screened points with the rest of the budget:
       with ``fun_and_grad``, one run on all starts at once (their values summed, each step
       one vectorized call, see ``_batched_lbfgsb``); otherwise one run per start with
       forward-difference gradients.

    Parameters
    ----------
    %(fun_bounds)s
    budget : int
        Maximum number of evaluations.
    rng : numpy.random.Generator
        Source of the random points.
    fun_and_grad : callable, optional
        ``X (n, d) -> (values (n,), grads (n, d))``.
    x0_candidates : array_like of shape (m, d), optional
        The centres, best first.
    n_starts : int, default 5
        Maximum number of local runs.
    screen_fraction : float, default 0.6
        Share of the budget spent on the screen (the rest goes to the local runs).
    n_perturbed : int, default 20
        Expected number of coordinates changed per perturbed point.
    near_fraction : float, default 0.75
        Share of the screen spent near the centres, within [0, 1].

    %(returns)s

    Raises
    ------
    ValueError
        If ``screen_fraction`` is not within (0, 1], ``near_fraction`` not within [0, 1],
        ``n_starts < 1`` or ``n_perturbed < 1``;
        also for the shared arguments, as in :func:`maximize_direct`.
    TypeError
        For the shared arguments, or ``n_starts``/``n_perturbed`` not an int.
    """
    ev, box, x0 = _setup(fun, bounds, budget, rng, x0_candidates)
    n_starts = _int(n_starts, "n_starts", low=1)
    n_perturbed = _int(n_perturbed, "n_perturbed", low=1)
    if fun_and_grad is not None and not callable(fun_and_grad):
        raise TypeError(f"fun_and_grad must be callable or None, got {type(fun_and_grad).__name__}")
    frac = float(screen_fraction)
    if not 0.0 < frac <= 1.0:
        raise ValueError(f"screen_fraction must lie in (0, 1], got {screen_fraction!r}")
    near_fraction = float(near_fraction)
    if not 0.0 <= near_fraction <= 1.0:
        raise ValueError(f"near_fraction must lie in [0, 1], got {near_fraction!r}")
    v0 = _evaluate_candidates(ev, x0)
    n_screen = min(max(1, int(frac * ev.limit)), ev.limit - ev.nfev)
    n_near = int(near_fraction * n_screen) if v0.size else 0
    near = perturb_subsets(x0[: v0.size], n_near, box, rng, n_perturbed=n_perturbed)
    cand = np.vstack([near, _uniform(box, n_screen - n_near, rng)]) if n_screen > 0 else np.empty((0, box.dim))
    vals = ev.values(cand) if cand.shape[0] else np.empty(0)
    cand, vals = np.vstack([x0[: v0.size], cand]), np.concatenate([v0, vals])
    order = np.argsort(-vals, kind="stable")
    starts = cand[order[np.isfinite(vals[order])][:n_starts]]
    if fun_and_grad is not None:
        n_local = _batched_lbfgsb(ev, box, starts, fun_and_grad)
    else:
        n_local = _local_runs(ev, box, starts, fun_and_grad)
    message = f"{n_local} local runs after screening {vals.size} points ({n_near} near the centres)"
    return ev.result("local", n_starts=n_local, message=message)


def _lbfgsb_objective(
    ev: _Evaluator, box: Box, fun_and_grad: FunAndGrad | None
) -> Callable[[Array], tuple[float, Array]]:
    """``x (d,) -> (-fun(x), -grad)`` for SciPy; a non-finite value becomes +inf (a wall)."""
    d = box.dim

    def wall() -> tuple[float, Array]:
        return np.inf, np.zeros(d)

    if fun_and_grad is not None:

        def objective(x: Array) -> tuple[float, Array]:
            v, g = ev.values_and_grads(x[None, :], fun_and_grad)
            if not (np.isfinite(v[0]) and np.all(np.isfinite(g))):
                return wall()
            return -v[0], -g[0]

        return objective

    def fd_objective(x: Array) -> tuple[float, Array]:
        x = np.clip(x, box.lower, box.upper)
        h = _SQRT_EPS * np.maximum(np.abs(x), box.width)
        h = np.where(x + h > box.upper, -h, h)  # step inwards at the upper face
        h = (x + h) - x  # the step actually representable
        v = ev.values(np.vstack([x, x + np.diag(h)]))
        if not np.all(np.isfinite(v)):
            return wall()
        return -v[0], -(v[1:] - v[0]) / h

    return fd_objective


# ---------------------------------------------------------------------- random and grid search
@fill_doc(**_DOC)
def maximize_random(
    fun: Fun,
    bounds: Box | ArrayLike,
    *,
    budget: int,
    rng: np.random.Generator,
    batch_size: int = 1000,
    x0_candidates: ArrayLike | None = None,
) -> MaximizeResult:
    """Pure random search: ``budget`` uniform points, evaluated in vectorized batches.

    Parameters
    ----------
    %(fun_bounds)s
    budget : int
        Number of evaluations, ``x0_candidates`` included.
    rng : numpy.random.Generator
        Source of the points.
    %(batch_size)s
    %(x0_candidates)s

    %(returns)s

    Raises
    ------
    TypeError
        If ``fun`` is not callable, ``budget`` or ``batch_size`` is not an int, or ``rng`` is
        not a Generator.
    ValueError
        If the bounds are invalid, ``budget < 1``, ``batch_size < 1``, ``x0_candidates`` has
        the wrong shape or non-finite entries, or ``fun`` returns an array of the wrong shape.
    """
    ev, box, x0 = _setup(fun, bounds, budget, rng, x0_candidates)
    batch_size = _int(batch_size, "batch_size", low=1)
    _evaluate_candidates(ev, x0)
    while (left := ev.limit - ev.nfev) > 0:
        ev.values(_uniform(box, min(batch_size, left), rng))
    return ev.result("random", message=f"{ev.nfev} points evaluated")


@fill_doc(**_DOC)
def maximize_grid(
    fun: Fun,
    bounds: Box | ArrayLike,
    *,
    budget: int,
    rng: np.random.Generator,
    x0_candidates: ArrayLike | None = None,
    batch_size: int = 1000,
) -> MaximizeResult:
    """Exhaustive search on a regular grid (for ``d <= 3``).

    The grid has ``k = floor(n ** (1/d))`` points per axis, endpoints included, where ``n`` is
    the budget left after ``x0_candidates``; ``k`` must be at least 2.

    Parameters
    ----------
    fun : callable
        Vectorized ``(n, d) -> (n,)``.
    bounds : Box or array_like of shape (d, 2)
        The box, with ``1 <= d <= 3``.
    budget : int
        Maximum number of evaluations; the grid uses ``k ** d <= budget - m`` of them.
    rng : numpy.random.Generator
        Accepted for the common signature; the grid is deterministic.
    %(x0_candidates)s
    %(batch_size)s

    %(returns)s

    Raises
    ------
    ValueError
        If ``d > 3``, or the budget leaves fewer than ``2 ** d`` points for the grid; also
        for the shared arguments, as in :func:`maximize_random`.
    TypeError
        For the shared arguments, as in :func:`maximize_random`.
    """
    ev, box, x0 = _setup(fun, bounds, budget, rng, x0_candidates)
    batch_size = _int(batch_size, "batch_size", low=1)
    d = box.dim
    if d > 3:
        raise ValueError(f"bounds: grid search supports 1 <= d <= 3 dimensions, got d={d}")
    n_grid = ev.limit - min(x0.shape[0], ev.limit)
    k = int(round(n_grid ** (1.0 / d)))
    if k**d > n_grid:  # floor of the d-th root, robust to round-off in the power
        k -= 1
    if k < 2:
        raise ValueError(
            f"budget must leave at least 2**d = {2**d} points for the grid (two per axis) after "
            f"{x0.shape[0]} x0_candidates, got budget={budget}"
        )
    _evaluate_candidates(ev, x0)
    total = k**d
    for start in range(0, total, batch_size):
        idx = np.unravel_index(np.arange(start, min(start + batch_size, total)), (k,) * d)
        ev.values(box.lower + box.width * (np.column_stack(idx) / (k - 1)))
    return ev.result("grid", message=f"{k} points per axis, {total} grid points")


# ---------------------------------------------------------------------- registry
MAXIMIZERS: dict[str, Maximizer] = {
    "direct": maximize_direct,
    "lbfgsb": maximize_lbfgsb,
    "local": maximize_local,
    "random": maximize_random,
    "grid": maximize_grid,
}


@fill_doc(**_DOC)
def maximize(
    name: str,
    fun: Fun,
    bounds: Box | ArrayLike,
    *,
    budget: int,
    rng: np.random.Generator,
    **options: Any,
) -> MaximizeResult:
    """Run the maximizer registered under ``name``.

    Parameters
    ----------
    name : {"direct", "lbfgsb", "local", "random", "grid"}
        Registry key in :data:`MAXIMIZERS`.
    fun, bounds, budget, rng, **options
        Passed to the maximizer.

    %(returns)s

    Raises
    ------
    ValueError
        If ``name`` is unknown (the message lists the valid names).

    Examples
    --------
    >>> res = maximize("grid", lambda X: -((X - 0.25) ** 2).sum(axis=1), [(0.0, 1.0)],
    ...                budget=5, rng=np.random.default_rng(0))
    >>> res.x, res.nfev
    (array([0.25]), 5)
    """
    if name not in MAXIMIZERS:
        raise ValueError(f"unknown maximizer {name!r}; valid names are {sorted(MAXIMIZERS)}")
    return MAXIMIZERS[name](fun, bounds, budget=budget, rng=rng, **options)
