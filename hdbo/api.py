"""The practitioner's entry points: :func:`minimize`, :func:`maximize` and :class:`Optimizer`.

:class:`Optimizer` is the ask/tell building block (for evaluations that run elsewhere);
:func:`minimize` and :func:`maximize` are a loop over it.

Failure policy
--------------
An objective that raises an ``Exception`` (with ``on_error="record"``, the default), or
returns None, NaN or +-inf, is recorded as a *failed evaluation*: it stays in the history
(value NaN, the error message kept), is never shown to the model, counts against the budget,
and the run goes on. ``on_error="raise"`` lets exceptions pass through unchanged instead.
``KeyboardInterrupt`` always passes through.
"""

from __future__ import annotations

import decimal
import numbers
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._docstrings import fill_doc
from ._progress import Progress
from ._threads import blas_threads as limit_blas_threads
from .exceptions import StateError
from .methods import Method, available_methods, get_method_class, make_method
from .methods.registry import reserve_option_names
from .space import Box, as_box

__all__ = ["OptimizeResult", "History", "Optimizer", "minimize", "maximize"]

_DIRECTIONS = ("minimize", "maximize")
_STATE_FORMAT = "hdbo.optimizer/1"


@dataclass
class History:
    """Everything that happened during a run, one entry per evaluation.

    Attributes
    ----------
    X : ndarray of shape (n, D)
        Evaluated points, in the user's units.
    y : ndarray of shape (n,)
        Objective values as the user's function returned them (NaN for failures).
    ask_seconds, eval_seconds, seconds : ndarray of shape (n,)
        Wall time spent proposing each point (a batch's time shared among its points),
        evaluating it (measured where it ran), and both.
    errors : list of (int, str)
        ``(index, message)`` for every failed evaluation.
    ask_order : ndarray of int, shape (n,)
        Position of each evaluation in the order the points were asked. Entries are in the
        order the evaluations completed (and were told), so with several evaluations in
        flight (``n_workers > 1``) ``ask_order`` is a permutation; run sequentially it is
        ``0, 1, ..., n - 1``.
    """

    X: NDArray[np.float64]
    y: NDArray[np.float64]
    ask_seconds: NDArray[np.float64]
    eval_seconds: NDArray[np.float64]
    errors: list[tuple[int, str]] = field(default_factory=list)
    ask_order: NDArray[np.int64] | None = None

    def __post_init__(self) -> None:
        if self.ask_order is None:
            self.ask_order = np.arange(len(self.y))

    @property
    def seconds(self) -> NDArray[np.float64]:
        """Wall time per iteration (ask plus evaluation)."""
        return self.ask_seconds + self.eval_seconds

    @property
    def failed(self) -> NDArray[np.bool_]:
        """Which evaluations failed, shape (n,)."""
        return ~np.isfinite(self.y)


@dataclass
class OptimizeResult:
    """The outcome of :func:`minimize` / :func:`maximize` (SciPy's fields plus a history).

    Attributes
    ----------
    x : ndarray of shape (D,) or None
        Best point found (None if every evaluation failed).
    fun : float
        Objective value at ``x`` (NaN if every evaluation failed).
    success : bool
        True when at least one evaluation succeeded.
    status : int
        0: the budget was used; 1: every evaluation failed; 2: a callback stopped the run;
        3: the method finished before the budget (``Method.done``).
    message : str
        Human-readable status.
    nfev : int
        Evaluations made (failed ones included).
    nit : int
        Same as ``nfev`` (one evaluation per iteration).
    nfailed : int
        Failed evaluations.
    history : History
        All points, values and timings.
    method : Method
        The method object (learned structure: ``method.diagnostics()``).
    """

    x: NDArray[np.float64] | None
    fun: float
    success: bool
    status: int
    message: str
    nfev: int
    nit: int
    nfailed: int
    history: History
    method: Method

    def __repr__(self) -> str:
        x = None if self.x is None else np.array2string(self.x, precision=5, threshold=8)
        return (
            f"OptimizeResult(fun={self.fun:.6g}, x={x}, success={self.success}, "
            f"nfev={self.nfev}, nfailed={self.nfailed}, message={self.message!r})"
        )


class Optimizer:
    """Ask/tell interface to any registered method.

    Call :meth:`ask` for a point (or ``ask(n)`` for a batch), evaluate it wherever you like,
    and :meth:`tell` its value. Points asked and not yet told are *pending*
    (:attr:`pending`): the next ``ask`` accounts for them, so several evaluations can be in
    flight at once and be told back in any order (asynchronous use: ask one point whenever
    a worker frees up). GP methods condition their posterior on the pending points at the
    posterior mean (GP-BUCB; the Kriging believer for EI), so a batch is spread out. A method
    that must see results before it can propose more (``"direct"``, the sequential tests of
    ``"hds"``) returns fewer points from ``ask(n)``, and ``ask()`` raises
    :class:`~hdbo.exceptions.PendingError`. An evaluation that will never be told can be
    dropped with :meth:`cancel`. Run sequentially (each point told before the next ask), a
    seeded run gives the same points as before batches existed.

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        One ``(lower, upper)`` pair per variable, in the user's units.
    method : str, default "auto"
        Registered method name (:func:`hdbo.methods.available_methods`); ``"auto"`` is hdbo's
        default for any dimension (:mod:`hdbo.methods.auto`).
    seed : int or None
        Seed of every random choice; the same seed gives the same run.
    budget : int, optional
        Planned number of evaluations (two-phase methods split it between their phases).
    direction : {"minimize", "maximize"}, default "minimize"
        Whether lower or higher values are better.
    **method_options
        Options of the method (e.g. ``n_init=5``, ``acq_budget=500``).

    Raises
    ------
    ValueError
        Bad bounds, unknown method or direction, non-positive budget.
    TypeError
        An option the method does not take.

    Attributes
    ----------
    method : Method
        The underlying method (its learned structure: ``method.diagnostics()``).
    direction : {"minimize", "maximize"}

    Examples
    --------
    >>> opt = Optimizer([(-1, 1), (-1, 1)], method="random", seed=0)
    >>> x = opt.ask()
    >>> opt.tell(x, float(x @ x))
    >>> opt.best[1] == float(x @ x)
    True

    A batch of four distinct points, told back in another order:

    >>> opt = Optimizer([(0, 1)] * 2, method="gp-ucb", seed=0, n_init=2, acq_budget=50)
    >>> for _ in range(2):
    ...     x = opt.ask()
    ...     opt.tell(x, float(x.sum()))
    >>> X = opt.ask(4)
    >>> X.shape, opt.n_pending, len({tuple(row) for row in X})
    ((4, 2), 4, 4)
    >>> opt.tell(X[::-1], [float(x.sum()) for x in X[::-1]])
    >>> opt.n_pending, opt.n_told
    (0, 6)
    """

    def __init__(
        self,
        bounds: Box | ArrayLike,
        *,
        method: str = "auto",
        seed: int | None = None,
        budget: int | None = None,
        direction: str = "minimize",
        **method_options: Any,
    ) -> None:
        if direction not in _DIRECTIONS:
            hint = ""
            if isinstance(method, str) and method in available_methods():
                new = get_method_class(method).renamed_options.get("direction")
                hint = f" (method {method!r} calls its own direction option {new!r})" if new else ""
            raise ValueError(f"direction must be 'minimize' or 'maximize', got {direction!r}{hint}")
        box = as_box(bounds)
        self.direction = direction
        self._sign = -1.0 if direction == "minimize" else 1.0
        self.method = make_method(method, box, seed=seed, budget=budget, **method_options)
        self._errors: list[tuple[int, str]] = []

    @property
    def bounds(self) -> Box:
        """The search box."""
        return self.method.bounds

    @property
    def done(self) -> bool:
        """Whether the method finished before its budget (see :attr:`hdbo.methods.Method.done`)."""
        return self.method.done

    @property
    def n_told(self) -> int:
        """Evaluations told so far."""
        return self.method.n_told

    @property
    def pending(self) -> NDArray[np.float64]:
        """Points asked and not yet told, shape (n_pending, D), in asking order."""
        return self.method.pending

    @property
    def n_pending(self) -> int:
        """Number of pending points."""
        return self.method.n_pending

    def ask(self, n: int | None = None) -> NDArray[np.float64]:
        """The next point to evaluate, or a batch of up to ``n`` distinct points.

        Each point returned is pending until told (see the class docstring).

        Parameters
        ----------
        n : int, optional
            Number of points wanted; without it, one point.

        Returns
        -------
        ndarray of shape (D,), or (m, D) with ``m <= n`` when ``n`` is given
            Points inside the bounds, in the user's units; ``m < n`` only for a method that
            must see results first (its docstring says when).

        Raises
        ------
        TypeError, ValueError
            ``n`` is not an int >= 1.
        hdbo.exceptions.PendingError
            Without ``n``: the method cannot propose before a pending point is told.
        """
        return self.method.ask(n)

    def tell(self, x: ArrayLike, y: Any, *, error: str | None = None) -> None:
        """Report the objective value ``y`` at ``x`` (None/NaN/inf: a failed evaluation), or a batch.

        Parameters
        ----------
        x : array_like of shape (D,) or (n, D)
            The point(s) evaluated, normally ones :meth:`ask` returned (any point of the box
            may be told; a pending one stops being pending).
        y : float or None, or a sequence of n of them when ``x`` is a batch
            The objective value(s) in the user's sign; None, NaN or inf records a failed
            evaluation (kept in the history, never shown to the model).
        error : str, optional
            Why the evaluation(s) failed (kept in the history for each failed one).

        Raises
        ------
        TypeError
            A value is not a real number or None.
        ValueError
            ``x`` does not have shape (D,) or (n, D), is outside the bounds, or a batch has
            another number of values than points.
        """
        try:
            arr = np.asarray(x, dtype=float)
        except (TypeError, ValueError):
            arr = None  # not numbers: the method's check names x
        if arr is None or arr.ndim != 2:
            self._tell_one(x, y, error)
            return
        if y is None or np.ndim(y) == 0:
            raise ValueError(f"tell got {arr.shape[0]} points (x of shape {arr.shape}) but a single value; "
                             "give one value per point")
        values = list(y)
        if len(values) != arr.shape[0]:
            raise ValueError(f"tell got {arr.shape[0]} points (x of shape {arr.shape}) but {len(values)} value(s)")
        for i, row in enumerate(arr):
            self.bounds.check_point(row, name=f"x[{i}]")  # all checked before any is recorded
        for i, v in enumerate(values):
            _tell_value(v, f"y[{i}]")
        for row, v in zip(arr, values):
            self._tell_one(row, v, error)

    def _tell_one(self, x: ArrayLike, y: Any, error: str | None) -> None:
        value = _tell_value(y, "y")
        self.method.tell(x, None if value is None else self._sign * value)
        if value is None or not np.isfinite(value):
            self._errors.append((self.method.n_told - 1, error or f"non-finite value {value!r}"))

    def cancel(self, x: ArrayLike | None = None) -> int:
        """Drop pending points that will never be told (all of them when ``x`` is None).

        Returns
        -------
        int
            Number of pending points dropped. See :meth:`hdbo.methods.Method.cancel`.
        """
        return self.method.cancel(x)

    @property
    def best(self) -> tuple[NDArray[np.float64], float] | None:
        """``(x, y)`` of the best successful evaluation so far (user's sign), or None."""
        b = self.method.best
        return None if b is None else (b[0], self._sign * b[1])

    @property
    def history(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(X, y)`` of every evaluation told: ``X`` of shape (n, D), ``y`` of shape (n,).

        ``y`` is in the user's sign, NaN for failed evaluations.
        """
        return self.method.X_all, self._sign * self.method.y_all

    def state_dict(self) -> dict[str, Any]:
        """JSON-serializable snapshot.

        Returns
        -------
        dict
            ``format`` (``"hdbo.optimizer/1"``), ``direction``, ``errors`` (``[index,
            message]`` pairs) and ``method`` (:meth:`Method.state_dict`, history included);
            :meth:`from_state` resumes from it exactly.
        """
        return {"format": _STATE_FORMAT, "direction": self.direction, "errors": [[i, m] for i, m in self._errors],
                "method": self.method.state_dict()}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> "Optimizer":
        """Resume from :meth:`state_dict` output; the next ``ask`` is what it would have been.

        A state is data: every field is checked (see :meth:`hdbo.methods.Method.from_state`
        for the method's part). A state without ``format`` (written before the field existed)
        is read as format ``"hdbo.optimizer/1"``.

        Parameters
        ----------
        state : dict
            Output of :meth:`state_dict` (possibly through a JSON round trip).

        Returns
        -------
        Optimizer

        Raises
        ------
        hdbo.exceptions.StateError
            (a ``ValueError``) The state is not a dict of that form: a missing, unknown or
            malformed field (the message names it), e.g. a ``direction`` other than
            "minimize"/"maximize", ``errors`` that are not ``[index, message]`` pairs of
            failed evaluations, or a method state that cannot be loaded.
        """
        if not isinstance(state, dict):
            raise StateError(f"state must be a dict (the output of Optimizer.state_dict), got {type(state).__name__} "
                             f"{state!r:.60}")
        if state.get("format", _STATE_FORMAT) != _STATE_FORMAT:
            raise StateError(f"state['format'] must be {_STATE_FORMAT!r}, got {state['format']!r:.60}")
        missing = [k for k in ("direction", "errors", "method") if k not in state]
        if missing:
            raise StateError(f"state lacks the field(s) {', '.join(map(repr, missing))}")
        unknown = sorted(set(map(str, state)) - {"format", "direction", "errors", "method"})
        if unknown:
            raise StateError(f"state has unknown field(s) {', '.join(map(repr, unknown))}")
        direction = state["direction"]
        if not isinstance(direction, str) or direction not in _DIRECTIONS:
            raise StateError(f"state['direction'] must be 'minimize' or 'maximize', got {direction!r:.60}")
        try:
            method = Method.from_state(state["method"])
        except StateError as exc:  # its fields are inside state['method']
            text = str(exc).replace("state[", "state['method'][")
            raise StateError("state['method'] " + text[6:] if text.startswith("state ") else text) from None
        errors = state["errors"]
        if not isinstance(errors, list):
            raise StateError(f"state['errors'] must be a list of [index, message] pairs, got {type(errors).__name__}")
        failed = ~np.isfinite(method.y_all)
        checked: list[tuple[int, str]] = []
        for k, e in enumerate(errors):
            ok = isinstance(e, (list, tuple)) and len(e) == 2 and isinstance(e[1], str)
            ok = ok and isinstance(e[0], (int, np.integer)) and not isinstance(e[0], bool)
            if not ok:
                raise StateError(f"state['errors'][{k}] must be an [index, message] pair (int, str), got {e!r:.60}")
            i = int(e[0])
            if not (0 <= i < method.n_told and failed[i]):
                raise StateError(f"state['errors'][{k}] must name a failed evaluation (an index in [0, "
                                 f"{method.n_told}) whose value is missing), got index {i}")
            checked.append((i, e[1]))
        obj = cls.__new__(cls)
        obj.direction = direction
        obj._sign = -1.0 if direction == "minimize" else 1.0
        obj.method = method
        obj._errors = checked
        return obj


def _tell_value(y: Any, name: str) -> float | None:
    """A told value as a float (None stays None); TypeError naming ``name`` otherwise."""
    if y is None:
        return None
    try:
        return float(y)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a real number or None, got {type(y).__name__}") from exc


def _scalar(raw: Any) -> float | None:
    """The objective's return value as a float (None stays None: a failed evaluation).

    Raises
    ------
    TypeError
        If the value is not a real scalar (a programming error, not a failed evaluation).
    """
    if raw is None:
        return None
    if isinstance(raw, (numbers.Real, decimal.Decimal)) and not isinstance(raw, (bool, np.bool_)):
        try:  # fractions, decimals and other real numbers that numpy keeps as objects
            return float(raw)
        except (TypeError, ValueError, OverflowError) as exc:
            raise TypeError(f"fun must return a real scalar (or None), got {type(raw).__name__} {raw!r:.60}") from exc
    arr = np.asarray(raw)
    if arr.size != 1 or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool) or np.iscomplexobj(arr):
        raise TypeError(f"fun must return a real scalar (or None), got {type(raw).__name__} {raw!r:.60}")
    return float(arr.reshape(()))


def _optimize(
    fun: Callable[..., Any],
    bounds: Box | ArrayLike,
    *,
    direction: str,
    method: str,
    budget: int,
    seed: int | None,
    args: tuple[Any, ...],
    callback: Callable[[NDArray[np.float64], float], Any] | None,
    on_error: str,
    progress: bool,
    method_options: dict[str, Any],
    blas_threads: int | None = 1,
    n_workers: int = 1,
    executor: Any = None,
) -> OptimizeResult:
    if isinstance(n_workers, bool) or not isinstance(n_workers, (int, np.integer)):
        raise TypeError(f"n_workers must be an int, got {type(n_workers).__name__}")
    if n_workers < 1:
        raise ValueError(f"n_workers must be >= 1, got {n_workers}")
    if executor is not None and not callable(getattr(executor, "submit", None)):
        raise TypeError(f"executor must have a submit(fn, *args) method returning a future (a concurrent.futures "
                        f"executor or a dask.distributed.Client), got {type(executor).__name__}")
    if blas_threads is not None and (isinstance(blas_threads, bool) or not isinstance(blas_threads, int)
                                     or blas_threads < 1):
        raise ValueError(f"blas_threads must be an int >= 1 or None, got {blas_threads!r}")
    if not callable(fun):
        raise TypeError(f"fun must be callable, got {type(fun).__name__}")
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)):
        raise TypeError(f"budget must be an int, got {type(budget).__name__}")
    if budget <= 0:
        raise ValueError(f"budget must be > 0, got {budget}")
    if on_error not in ("record", "raise"):
        raise ValueError(f"on_error must be 'record' or 'raise', got {on_error!r}")
    if "direction" in method_options:
        # Optimizer's own argument; minimize/maximize fix it, and no method option has this name.
        hint = " (line-bo's option is line_direction)" if method == "line-bo" else ""
        raise TypeError(f"{direction}() got an unexpected keyword argument 'direction': use hdbo.minimize or "
                        f"hdbo.maximize to choose the direction{hint}")
    opt = Optimizer(bounds, method=method, seed=seed, budget=int(budget), direction=direction, **method_options)
    ask_s, eval_s = [], []
    status = 0
    bar = Progress(int(budget), enabled=progress, desc=f"hdbo {method}", unit="eval", leave=False)
    if n_workers > 1 or executor is not None:
        try:
            ask_s, eval_s, order, status = _run_in_flight(opt, fun, args, int(budget), int(n_workers), executor,
                                                          callback, on_error, bar, blas_threads)
        finally:
            bar.close()
        return _result(opt, ask_s, eval_s, order, status)
    try:
        for _ in range(int(budget)):
            t0 = time.perf_counter()
            with limit_blas_threads(blas_threads):  # the method's linear algebra, not the objective
                x = opt.ask()
            t1 = time.perf_counter()
            error = None
            try:
                raw = fun(x.copy(), *args)
            except Exception as exc:  # noqa: BLE001 - the failure policy records it
                if on_error == "raise":
                    raise
                value, error = None, f"{type(exc).__name__}: {exc}"
                warnings.warn(f"objective raised at evaluation {opt.n_told}: {error}; recorded as failed",
                              RuntimeWarning, stacklevel=3)
            else:
                value = _scalar(raw)
            t2 = time.perf_counter()
            if value is not None and not np.isfinite(value):
                warnings.warn(f"objective returned {value} at evaluation {opt.n_told}; recorded as failed",
                              RuntimeWarning, stacklevel=3)
            opt.tell(x, value, error=error)
            ask_s.append(t1 - t0)
            eval_s.append(t2 - t1)
            best = opt.best
            bar.update(postfix="no success yet" if best is None else f"best={best[1]:.6g}")
            if callback is not None and value is not None and np.isfinite(value) and callback(x, value):
                status = 2
                break
            if opt.method.done:
                status = 3
                break
    finally:
        bar.close()
    return _result(opt, ask_s, eval_s, list(range(len(ask_s))), status)


def _result(opt: Optimizer, ask_s: list[float], eval_s: list[float], order: list[int], status: int
            ) -> OptimizeResult:
    """The :class:`OptimizeResult` of a finished loop."""
    X, y = opt.history
    history = History(X=X, y=y, ask_seconds=np.array(ask_s, dtype=float), eval_seconds=np.array(eval_s, dtype=float),
                      errors=list(opt._errors), ask_order=np.array(order, dtype=np.int64))
    best = opt.best
    nfailed = int(np.sum(history.failed))
    if best is None:
        status, message = 1, f"all {len(y)} evaluations failed"
    elif status == 2:
        message = f"stopped by callback after {len(y)} evaluations ({nfailed} failed)"
    elif status == 3:
        message = f"method finished after {len(y)} evaluations ({nfailed} failed)"
    else:
        message = f"budget of {len(y)} evaluations used ({nfailed} failed)"
    return OptimizeResult(
        x=None if best is None else best[0],
        fun=float("nan") if best is None else best[1],
        success=best is not None,
        status=status,
        message=message,
        nfev=len(y),
        nit=len(y),
        nfailed=nfailed,
        history=history,
        method=opt.method,
    )


def _evaluate_remote(fun: Callable[..., Any], x: NDArray[np.float64], args: tuple[Any, ...], record: bool
                     ) -> tuple[Any, str | None, float]:
    """Run ``fun(x, *args)`` where the executor runs it: ``(raw value, error text or None, seconds)``.

    With ``record`` an exception of the objective comes back as text (the failure policy);
    anything else the executor raises (a function it cannot send to a process, a lost
    worker) reaches the caller as an exception.
    """
    t0 = time.perf_counter()
    try:
        raw = fun(x, *args)
    except Exception as exc:  # noqa: BLE001 - the failure policy records it
        if not record:
            raise
        return None, f"{type(exc).__name__}: {exc}", time.perf_counter() - t0
    return raw, None, time.perf_counter() - t0


def _run_in_flight(opt: Optimizer, fun: Callable[..., Any], args: tuple[Any, ...], budget: int, n_workers: int,
                   executor: Any, callback: Any, on_error: str, bar: Progress, blas_threads: int | None
                   ) -> tuple[list[float], list[float], list[int], int]:
    """Keep ``n_workers`` evaluations in flight on ``executor``; tell each result as it completes.

    Returns the per-evaluation ask and evaluation seconds and ask positions, in the order of
    completion, and the status (0 budget used, 2 callback, 3 method done). After a stop
    (callback or method done) the evaluations already in flight are waited for and told.
    """
    import queue
    from concurrent.futures import ThreadPoolExecutor

    own = executor is None
    pool = ThreadPoolExecutor(max_workers=n_workers, thread_name_prefix="hdbo-eval") if own else executor
    done_q: "queue.Queue[Any]" = queue.Queue()
    in_flight: dict[Any, tuple[int, NDArray[np.float64], float]] = {}
    ask_s: list[float] = []
    eval_s: list[float] = []
    order: list[int] = []
    submitted, status, stop = 0, 0, False
    record = on_error == "record"
    extra = {"pure": False} if type(pool).__module__.split(".")[0] == "distributed" else {}
    try:
        while True:
            free = min(n_workers - len(in_flight), budget - submitted)
            if free > 0 and not stop:
                t0 = time.perf_counter()
                with limit_blas_threads(blas_threads):
                    X = opt.ask(free)
                share = (time.perf_counter() - t0) / max(len(X), 1)
                for x in X:
                    # a Dask client would merge equal tasks (pure=True): each evaluation is its own
                    fut = pool.submit(_evaluate_remote, fun, x.copy(), args, record, **extra)
                    in_flight[fut] = (submitted, x, share)
                    submitted += 1
                    fut.add_done_callback(done_q.put)
                if not in_flight:
                    raise RuntimeError(f"method {opt.method.name!r} proposed no point with none in flight")
            if not in_flight:
                break
            fut = done_q.get()
            k, x, share = in_flight.pop(fut)
            try:
                raw, error, seconds = fut.result()
            except Exception:  # noqa: BLE001 - the objective raised (on_error="raise") or the executor failed
                raise
            value = None if error is not None else _scalar(raw)
            if error is not None:
                warnings.warn(f"objective raised at evaluation {opt.n_told}: {error}; recorded as failed",
                              RuntimeWarning, stacklevel=4)
            elif value is not None and not np.isfinite(value):
                warnings.warn(f"objective returned {value} at evaluation {opt.n_told}; recorded as failed",
                              RuntimeWarning, stacklevel=4)
            opt.tell(x, value, error=error)
            ask_s.append(share)
            eval_s.append(float(seconds))
            order.append(k)
            best = opt.best
            bar.update(postfix="no success yet" if best is None else f"best={best[1]:.6g}")
            if not stop and callback is not None and value is not None and np.isfinite(value) and callback(x, value):
                status, stop = 2, True
            if not stop and opt.method.done:
                status, stop = 3, True
    except BaseException:
        for fut in in_flight:
            fut.cancel()
        opt.cancel()
        raise
    finally:
        if own:
            pool.shutdown(wait=False, cancel_futures=True)
    return ask_s, eval_s, order, status


# The argument and error sections of minimize and maximize, written once (``fill_doc``).
_ENTRY_DOC = {
    "parameters": """
    fun : callable
        ``fun(x, *args) -> float`` with ``x`` of shape (D,).
    bounds : Box or array_like of shape (D, 2)
        One ``(lower, upper)`` pair per variable.
    method : str, default "auto"
        Registered method name; see ``hdbo list methods``. ``"auto"`` is hdbo's default for
        any dimension (:mod:`hdbo.methods.auto`).
    budget : int
        Number of evaluations of ``fun``.
    seed : int, optional
        The same seed gives the same sequence of points.
    args : tuple
        Extra arguments of ``fun``.
    callback : callable, optional
        ``callback(x, value)`` after each successful evaluation; returning True stops the run.
    on_error : {"record", "raise"}, default "record"
        What to do when ``fun`` raises (see the module's failure policy).
    progress : bool, default False
        Show progress on stderr with the best value so far: a bar on a terminal (tqdm if
        installed, else one line redrawn in place), otherwise one line per 10% of the budget.
    blas_threads : int or None, default 1
        Most BLAS threads while the method proposes a point (the objective runs unchanged);
        ``None`` leaves the BLAS alone. The GP's matrices have a few hundred rows, where extra
        threads gain little and, on a busy machine, cost a lot: one ``auto`` run on Hartmann-6
        hidden in D = 300 (budget 100) took 105 s with OpenBLAS's default threads and 14 s with
        one, while three other processes shared the two cores. The environment variables are
        set for the block, and ``threadpoolctl`` (the ``fast`` extra) limits a BLAS already loaded.
    n_workers : int, default 1
        Evaluations kept in flight at once. With ``n_workers > 1`` (or an ``executor``) the
        points are asked as workers free up (``Optimizer.ask(n)``, so a GP method accounts for
        the points still out) and told as the evaluations complete; the history is in the
        order of completion (``history.ask_order`` gives the order of asking). The budget
        counts evaluations; the failure policy is unchanged; after a callback stops the run,
        the evaluations already in flight are waited for and recorded.
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where evaluations run: anything with ``submit(fn, *args)`` returning a future with
        ``result()`` and ``add_done_callback``. Default: a thread pool of ``n_workers``
        threads, made and shut down here (right for objectives that wait on a simulator, a
        subprocess or a remote job, or release the GIL). A ``ProcessPoolExecutor`` or a
        Dask client needs a picklable ``fun`` (a module-level function, not a lambda) and
        ``n_workers`` should match its workers. The executor is not shut down.
    **method_options
        Options of the method, e.g. ``n_init=5`` or ``acq_budget=500``.
    """,
    "raises": """
    Raises
    ------
    ValueError
        Bad bounds, unknown method, budget <= 0, bad ``on_error``, ``n_workers < 1``.
    TypeError
        ``fun`` not callable, non-integer budget or ``n_workers``, an ``executor`` without
        ``submit``, unknown method option.
    """,
}


@fill_doc(**_ENTRY_DOC)
def minimize(
    fun: Callable[..., Any],
    bounds: Box | ArrayLike,
    *,
    method: str = "auto",
    budget: int,
    seed: int | None = None,
    args: tuple[Any, ...] = (),
    callback: Callable[[NDArray[np.float64], float], Any] | None = None,
    on_error: str = "record",
    progress: bool = False,
    blas_threads: int | None = 1,
    n_workers: int = 1,
    executor: Any = None,
    **method_options: Any,
) -> OptimizeResult:
    """Minimize an expensive black-box function over a box.

    Parameters
    ----------
    %(parameters)s

    Returns
    -------
    OptimizeResult
        ``x`` of shape (D,), ``fun``, ``history.X`` of shape (nfev, D) and ``history.y`` of
        shape (nfev,).

    %(raises)s

    Examples
    --------
    >>> import hdbo
    >>> res = hdbo.minimize(lambda x: float((x ** 2).sum()), [(-2, 2)] * 2, method="random",
    ...                     budget=30, seed=1)
    >>> res.nfev, res.success
    (30, True)
    """
    return _optimize(fun, bounds, direction="minimize", method=method, budget=budget, seed=seed, args=args,
                     callback=callback, on_error=on_error, progress=progress, method_options=method_options,
                     blas_threads=blas_threads, n_workers=n_workers, executor=executor)


@fill_doc(**_ENTRY_DOC)
def maximize(
    fun: Callable[..., Any],
    bounds: Box | ArrayLike,
    *,
    method: str = "auto",
    budget: int,
    seed: int | None = None,
    args: tuple[Any, ...] = (),
    callback: Callable[[NDArray[np.float64], float], Any] | None = None,
    on_error: str = "record",
    progress: bool = False,
    blas_threads: int | None = 1,
    n_workers: int = 1,
    executor: Any = None,
    **method_options: Any,
) -> OptimizeResult:
    """Maximize an expensive black-box function over a box.

    The same as :func:`minimize` with "higher is better"; values in the result and the
    history are as ``fun`` returned them.

    Parameters
    ----------
    %(parameters)s

    Returns
    -------
    OptimizeResult
        ``x`` of shape (D,) maximizes ``fun`` among the evaluations; ``fun`` is its value.

    %(raises)s

    Examples
    --------
    >>> import hdbo
    >>> res = hdbo.maximize(lambda x: -float((x ** 2).sum()), [(-2, 2)] * 2, method="random",
    ...                     budget=20, seed=1)
    >>> res.fun <= 0.0 and res.nfev == 20
    True
    """
    return _optimize(fun, bounds, direction="maximize", method=method, budget=budget, seed=seed, args=args,
                     callback=callback, on_error=on_error, progress=progress, method_options=method_options,
                     blas_threads=blas_threads, n_workers=n_workers, executor=executor)


# Method options are keyword arguments of these three: no option may take one of their argument
# names (registration refuses it; this also checks the methods registered so far).
reserve_option_names(minimize, maximize, Optimizer)
