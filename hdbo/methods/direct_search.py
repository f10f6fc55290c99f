"""DIRECT (Jones et al. 1993) applied directly to the objective: the ``DiRect`` baseline.

Kandasamy et al. (2015) compare against "DiRect applied directly to f, each of its function
evaluations being one query". This module runs :func:`scipy.optimize.direct` (not a
reimplementation) as an ask/tell method.

Design
------
SciPy's ``direct`` calls the objective itself, while an hdbo method is asked for points and
told values. The two are joined by a worker thread:

* ``direct`` runs in a daemon thread on the canonical unit cube ``[0, 1]^D`` (the method's
  ``domain = "unit"``). Its objective callback puts the point DIRECT wants on a queue and
  blocks until the main thread answers with a value.
* :meth:`DirectSearch.ask` returns that point, DIRECT's *query*, which is then pending (see
  :class:`~hdbo.methods.base.Method`). While it is pending, DIRECT has nothing else to propose:
  ``ask()`` raises :class:`~hdbo.exceptions.PendingError` and ``ask(n)`` returns no point.
  :meth:`DirectSearch.tell` at the query answers DIRECT with ``-y`` (DIRECT minimizes, hdbo
  maximizes); :meth:`Method.cancel` of the query makes the next ``ask`` return it again.
* A told point that is not the query (the user may tell anything) is recorded in the
  history but not given to DIRECT, and the query stays out. Should DIRECT later
  want a point that was already told (within 1e-9 in every canonical coordinate), it gets the
  recorded value without a new query. This also keeps a point that failed once from being
  proposed again, which the base class would replace by a random point, leaving DIRECT
  waiting for ever.
* DIRECT cannot take NaN. A failed evaluation is given to it as the worst (largest, in its
  minimization) successful value it has received so far, as DIRECT's own treatment of
  infeasible points does (Gablonsky's ``fmax``); before any success it gets
  ``1e10``, so the failed rectangle is divided last.
* Once DIRECT stops (``maxfun`` evaluations done, which SciPy overshoots to finish an
  iteration, or a tolerance or its depth limit reached), the method proposes uniformly random
  points from the seeded generator. Restarting DIRECT would only repeat its points, since it
  is deterministic. DIRECT itself ignores the seed; only this continuation uses it. These
  points do not wait for results, so ``ask(n)`` then returns ``n`` of them.

State and exact resume: DIRECT is deterministic given the values it receives, so the state
is the history plus ``direct_answers``, the history index that answered each of DIRECT's
queries in order. :meth:`Method.from_state` restarts the thread and replays these values
(no real evaluations), checking that DIRECT asks for the recorded points again, so the
next ``ask`` is the one an uninterrupted run would make. A query that was pending when the
state was saved is pending in the resumed method (the base class stores pending points);
telling it there answers DIRECT as the original would have.

Threads: the worker holds no reference to the method. :meth:`DirectSearch.close`, or garbage
collection of the method (a :func:`weakref.finalize`), sends a sentinel that makes the
callback raise a private exception which ends SciPy's run and the thread. A closed method
can still be used: the next ``ask`` starts a new thread and replays. An instance is not
thread-safe; use it from one thread.
"""

from __future__ import annotations

import queue
import threading
import weakref
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import OptimizeResult, direct

from .._docstrings import fill_doc
from .._validation import MAX_COUNT, check_bool, check_int, check_real
from ..acquisition.maximizers import callback_exception
from ..exceptions import StateError
from ..space import Box
from ._state import internal_bool
from .base import SHARED_DOCS, Method
from .registry import register

__all__ = ["DirectSearch"]

# Two canonical points closer than this in every coordinate are the same point (the base
# class uses the same tolerance for repeated failures).
_SAME_POINT_TOL = 1e-9
# Value DIRECT gets for a failed evaluation before it has received any successful value.
_FAILURE_VALUE_BEFORE_ANY_SUCCESS = 1.0e10
# Seconds between liveness checks while waiting for the worker, and for close() to join it.
_POLL_SECONDS = 1.0
_JOIN_SECONDS = 5.0
# Sentinel sent to the worker instead of a value: end the run.
_STOP = object()


class _StopDirect(Exception):
    """Raised inside DIRECT's objective callback to end a run nobody waits for."""


class _DirectRun:
    """One run of :func:`scipy.optimize.direct` in a daemon thread, one point at a time.

    Parameters
    ----------
    dim : int
        Number of dimensions D; DIRECT searches ``[0, 1]^D``.
    options : dict
        Keyword arguments for :func:`scipy.optimize.direct`.

    Notes
    -----
    The worker posts ``("point", u)``, ``("done", result)`` or ``("error", exc)`` on
    ``_points``; the caller answers each point through :meth:`answer`. It holds no reference
    to the method that owns it, so that method can be garbage collected.
    """

    def __init__(self, dim: int, options: dict[str, Any]) -> None:
        self._bounds = [(0.0, 1.0)] * dim
        self._options = dict(options)
        self._points: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._values: queue.Queue[Any] = queue.Queue()
        self.result: OptimizeResult | None = None
        self.thread = threading.Thread(target=self._run, name="hdbo-direct", daemon=True)
        self.thread.start()

    # ---------------------------------------------------------------- worker thread
    def _objective(self, u: ArrayLike) -> float:
        self._points.put(("point", np.array(u, dtype=float)))
        value = self._values.get()
        if value is _STOP:
            raise _StopDirect
        return value

    def _run(self) -> None:
        try:
            try:
                result = direct(self._objective, self._bounds, **self._options)
            except SystemError as exc:  # SciPy < 1.17.1 wraps callback exceptions
                raise callback_exception(exc) from None
        except _StopDirect:
            return
        except BaseException as exc:  # noqa: BLE001  (handed to the caller, which re-raises it)
            self._points.put(("error", exc))
        else:
            self._points.put(("done", result))

    # ---------------------------------------------------------------- caller side
    def next_point(self) -> NDArray[np.float64] | None:
        """Wait for the next point DIRECT wants, shape (D,); None once DIRECT has finished.

        Raises
        ------
        RuntimeError
            If the worker ended without a result (it was stopped).
        """
        if self.result is not None:
            return None
        while True:
            try:
                kind, payload = self._points.get(timeout=_POLL_SECONDS)
                break
            except queue.Empty:
                if self.thread.is_alive():
                    continue
                try:  # it may have posted just before ending
                    kind, payload = self._points.get_nowait()
                    break
                except queue.Empty:
                    raise RuntimeError("the DIRECT worker thread ended without a result") from None
        if kind == "point":
            return payload
        if kind == "done":
            self.result = payload
            return None
        raise payload

    def answer(self, value: float) -> None:
        """Give DIRECT the (finite) value of the point it is waiting for."""
        self._values.put(float(value))

    def stop(self) -> None:
        """Ask the worker to end; it does at its next (or current) callback. Never blocks."""
        self._values.put(_STOP)


@register
@fill_doc(**SHARED_DOCS)
class DirectSearch(Method):
    """DIRECT run directly on the objective, each of its evaluations being one query.

    Parameters
    ----------
    %(bounds)s
    seed : int, Generator or None
        Used only for the uniformly random points proposed after DIRECT has stopped
        (DIRECT itself is deterministic).
    budget : int, optional
        Planned number of evaluations; DIRECT's ``maxfun`` unless ``maxfun`` is given.
    structure : dict, optional
        Unused.
    locally_biased : bool, default False
        False runs the original DIRECT of Jones et al. (1993), the variant the papers cite;
        True runs DIRECT-L (Gablonsky & Kelley 2001).
    eps : float, default 1e-4
        DIRECT's epsilon: how much a rectangle must promise to improve on the best value to
        be divided (SciPy's ``eps``).
    maxfun : int, optional
        Evaluations given to DIRECT (SciPy's ``maxfun``, which it overshoots to finish an
        iteration). Default: ``budget``, or ``1000 * D`` (SciPy's default) if there is none.
        DIRECT's memory grows with it.
    maxiter : int, optional
        DIRECT's iteration limit (SciPy's ``maxiter``; its initial sampling of the centre
        and 2D neighbours is the first iteration). Default ``max(1000, maxfun)``, which
        never stops DIRECT before ``maxfun`` since each iteration evaluates at least two
        points.
    vol_tol, len_tol : float, default 0.0
        SciPy's stopping tolerances on the size of the best rectangle, in [0, 1]. Zero
        turns them off so that DIRECT does not stop early on its own (its depth limit
        still applies).

    Raises
    ------
    TypeError
        If ``locally_biased`` is not a bool, ``maxfun``/``maxiter`` is not an int or None,
        or ``eps``, ``vol_tol`` or ``len_tol`` is not a real number.
    ValueError
        If ``maxfun`` or ``maxiter`` is < 1, ``eps`` is negative or NaN, or ``vol_tol`` or
        ``len_tol`` is outside [0, 1].

    Attributes
    ----------
    direct_result_ : OptimizeResult or None
        SciPy's result once DIRECT has stopped in this process, else None.

    Notes
    -----
    See the module docstring for how SciPy's ``direct`` is turned into ask/tell, how failed
    evaluations and foreign tells are handled, and what happens after DIRECT stops. Call
    :meth:`close` to stop the worker thread early; garbage collection also stops it.

    Batches: while DIRECT runs, ``ask(n)`` returns at most one point, because SciPy's DIRECT
    evaluates sequentially: it asks for one point and waits for its value before choosing
    the next. While that point is pending, ``ask(n)`` returns an empty ``(0, D)`` array and
    ``ask()`` raises :class:`~hdbo.exceptions.PendingError`; tell the point (or cancel it) to
    go on. Once DIRECT has stopped, the uniformly random points that follow are returned
    ``n`` at a time.

    References
    ----------
    .. [1] Jones, D. R., Perttunen, C. D. & Stuckman, B. E. Lipschitzian optimization
       without the Lipschitz constant. J Optim Theory Appl 79, 157-181 (1993).
    .. [2] Kandasamy, K., Schneider, J. & Poczos, B. High dimensional Bayesian optimisation
       and bandits via additive models. ICML (2015), section 5 (the DiRect baseline).

    Examples
    --------
    >>> import numpy as np
    >>> m = DirectSearch([[-1.0, 1.0], [0.0, 2.0]], budget=20)
    >>> x = m.ask()  # DIRECT starts at the centre of the box
    >>> x
    array([0., 1.])
    >>> m.ask(3).shape  # DIRECT waits for the value of its pending point
    (0, 2)
    >>> m.tell(x, -float(np.sum((x - 0.4) ** 2)))
    >>> for _ in range(20):
    ...     x = m.ask()
    ...     m.tell(x, -float(np.sum((x - 0.4) ** 2)))
    >>> m.close()
    """

    name = "direct"
    domain = "unit"
    uses_seed = False  # DIRECT is deterministic; the seed only drives points after it stops

    def __init__(
        self,
        bounds: Box | ArrayLike,
        *,
        budget: int | None = None,
        locally_biased: bool = False,
        eps: float = 1e-4,
        maxfun: int | None = None,
        maxiter: int | None = None,
        vol_tol: float = 0.0,
        len_tol: float = 0.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(bounds, budget=budget, **kwargs)  # kwargs: seed and structure (see Method)
        self.locally_biased = check_bool(locally_biased, "locally_biased")
        self.maxfun = check_int(maxfun, "maxfun", allow_none=True, high=MAX_COUNT)
        self.maxiter = check_int(maxiter, "maxiter", allow_none=True, high=MAX_COUNT)
        for arg_name, value in (("maxfun", self.maxfun), ("maxiter", self.maxiter)):
            if value is not None and value < 1:
                raise ValueError(f"{arg_name} must be >= 1, got {value}")
        self.eps = check_real(eps, "eps", low=0, finite=False)
        self.vol_tol = check_real(vol_tol, "vol_tol", low=0, high=1.0)
        self.len_tol = check_real(len_tol, "len_tol", low=0, high=1.0)

        self._run: _DirectRun | None = None
        self._finalizer: weakref.finalize | None = None
        self._query: NDArray[np.float64] | None = None  # DIRECT's unanswered point (canonical)
        self._answers: list[int] = []  # history index that answered each DIRECT query
        self._worst: float | None = None  # largest successful value given to DIRECT
        self._finished = False  # DIRECT has stopped
        self.direct_result_: OptimizeResult | None = None

    # ------------------------------------------------------------------ options
    def _direct_options(self) -> dict[str, Any]:
        """Keyword arguments for :func:`scipy.optimize.direct`."""
        if self.maxfun is not None:
            maxfun = int(self.maxfun)
        elif self.budget is not None:
            maxfun = int(self.budget)
        else:
            maxfun = 1000 * self.dim
        maxiter = int(self.maxiter) if self.maxiter is not None else max(1000, maxfun)
        return {
            "eps": float(self.eps),
            "maxfun": maxfun,
            "maxiter": maxiter,
            "locally_biased": bool(self.locally_biased),
            "vol_tol": float(self.vol_tol),
            "len_tol": float(self.len_tol),
        }

    # ------------------------------------------------------------------ ask / tell
    def _ask(self) -> NDArray[np.float64] | None:
        u = self._direct_point()
        if u is None:  # DIRECT has stopped: continue with uniformly random points
            return self.rng.random(self.dim)
        if self._repeats_pending(u):
            return None  # DIRECT waits for the value of its query, which is out
        return u.copy()

    def _on_tell(self, u: NDArray[np.float64], y: float) -> None:
        if self._query is not None and np.max(np.abs(u - self._query)) <= _SAME_POINT_TOL:
            self._query = None
            self._answer(self.n_told - 1)

    def _direct_point(self) -> NDArray[np.float64] | None:
        """The point DIRECT waits for (canonical), or None once DIRECT has stopped."""
        while self._query is None and not self._finished:
            self._ensure_run()
            u = self._fetch()
            if u is None:
                break
            i = self._told_index(u)
            if i is None:
                self._query = u
            else:  # already told: DIRECT gets the recorded value, no new query
                self._answer(i)
        return self._query

    def _told_index(self, u: NDArray[np.float64]) -> int | None:
        """Index of the latest told point equal to ``u`` (within 1e-9), or None."""
        if self.n_told == 0:
            return None
        close = np.max(np.abs(self.to_canonical(self.X_all) - u), axis=1) <= _SAME_POINT_TOL
        hits = np.flatnonzero(close)
        return int(hits[-1]) if hits.size else None

    def _answer(self, i: int) -> None:
        """Give DIRECT the value told at history index ``i`` (minimization: ``-y``)."""
        y = self._y[i]
        if np.isfinite(y):
            value = -y
            self._worst = value if self._worst is None else max(self._worst, value)
        else:  # failed: the worst value DIRECT has seen (see the module docstring)
            value = self._worst if self._worst is not None else _FAILURE_VALUE_BEFORE_ANY_SUCCESS
        self._answers.append(i)
        assert self._run is not None  # an answer always follows a fetched point
        self._run.answer(value)

    # ------------------------------------------------------------------ worker thread
    def _fetch(self) -> NDArray[np.float64] | None:
        """Next point from the running DIRECT, or None (and mark it finished) once it stopped."""
        assert self._run is not None
        u = self._run.next_point()
        if u is None:
            self._finished = True
            self.direct_result_ = self._run.result
            self._stop_run(join=True)
        return u

    def _ensure_run(self) -> None:
        """Start DIRECT if no run is alive, replaying the recorded answers (exact resume).

        Raises
        ------
        StateError
            If the replayed DIRECT asks for other points than the recorded ones, or stops
            before all recorded answers are given.
        """
        if self._run is not None:
            return
        answers = self._answers
        self._answers, self._query, self._worst = [], None, None
        self._finished, self.direct_result_ = False, None
        self._run = _DirectRun(self.dim, self._direct_options())
        self._finalizer = weakref.finalize(self, _DirectRun.stop, self._run)
        told = self.to_canonical(self.X_all)
        try:
            for k, i in enumerate(answers):
                u = self._fetch()
                if u is None:
                    raise StateError(
                        f"replaying DIRECT: it stopped after {k} queries, the state records {len(answers)}"
                    )
                gap = float(np.max(np.abs(u - told[i])))
                if gap > _SAME_POINT_TOL:
                    raise StateError(
                        f"replaying DIRECT: query {k} is {u.tolist()}, but the state answers it with "
                        f"history entry {i} at {told[i].tolist()} (max difference {gap:.3g})"
                    )
                self._answer(i)
        except BaseException:
            self._stop_run(join=True)
            raise

    def _stop_run(self, *, join: bool) -> None:
        run, self._run = self._run, None
        self._query = None
        if self._finalizer is not None:
            self._finalizer()  # sends the stop sentinel once
            self._finalizer = None
        if join and run is not None and run.thread is not threading.current_thread():
            run.thread.join(_JOIN_SECONDS)

    def close(self) -> None:
        """Stop DIRECT's worker thread and wait for it to end (idempotent).

        The method stays usable: a later :meth:`ask` starts a new worker and replays the
        values DIRECT was given, so the run continues exactly.
        """
        self._stop_run(join=True)

    # ------------------------------------------------------------------ state
    def _get_internal_state(self) -> dict[str, Any]:
        return {"direct_answers": list(self._answers), "direct_finished": self._finished}

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        answers = state.get("direct_answers")
        if not isinstance(answers, list):
            raise StateError("state['internal'] of method 'direct' has no list 'direct_answers'")
        if any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < self.n_told for i in answers):
            raise StateError(f"state['internal']['direct_answers'] must hold history indices in [0, {self.n_told})")
        finished = internal_bool(state, "direct_finished")
        self._stop_run(join=True)
        self._answers = list(answers)
        if self._answers:
            self._ensure_run()  # replay now: a state that does not replay fails on loading
        if finished and not self._finished:
            # DIRECT stopped right after its last recorded query; find out now, not at ask
            self._direct_point()
            if not self._finished:
                raise StateError("replaying DIRECT: the state says it stopped, but it wants more points")

    def diagnostics(self) -> dict[str, Any]:
        """Progress of the DIRECT run.

        Returns
        -------
        dict
            ``direct_queries`` (values DIRECT has received) and ``direct_finished``; once
            DIRECT has stopped in this process, also SciPy's ``direct_message`` and
            ``direct_nfev``.
        """
        out: dict[str, Any] = {"direct_queries": len(self._answers), "direct_finished": self._finished}
        if self.direct_result_ is not None:
            out["direct_message"] = str(self.direct_result_.message)
            out["direct_nfev"] = int(self.direct_result_.nfev)
        return out
