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
        Wall time spent proposing each point, evaluating it, and both (per iteration).
    errors : list of (int, str)
        ``(index, message)`` for every failed evaluation.
    """

    X: NDArray[np.float64]
    y: NDArray[np.float64]
    ask_seconds: NDArray[np.float64]
    eval_seconds: NDArray[np.float64]
    errors: list[tuple[int, str]] = field(default_factory=list)

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

    One evaluation is in flight at a time: call :meth:`ask`, evaluate the point, then
    :meth:`tell` its value before asking again. Batch or parallel suggestions (several
    pending points) are not supported yet. The methods keep no record of points asked but
    not told, so a second :meth:`ask` without a :meth:`tell` ignores the first point:
    ``"direct"`` and the GP methods with ``maximizer="direct"`` return the same point again,
    and methods that draw random numbers while asking (``"random"``, the GP methods'
    default local acquisition search, the decomposition search of ``"add-gp-ucb"``) return
    another point chosen without regard to the pending one. An
    extra ask may also advance the method's random stream, so the run then differs from
    the seeded run without it. To use several workers, run independent optimizations
    (different seeds or problems, e.g. ``hdbo run --workers``).

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

    No pending-point handling: a deterministic acquisition search asked twice proposes the
    same point.

    >>> opt = Optimizer([(0, 1)] * 2, method="gp-ucb", seed=0, n_init=2, acq_budget=50, maximizer="direct")
    >>> for _ in range(2):
    ...     x = opt.ask()
    ...     opt.tell(x, float(x.sum()))
    >>> bool((opt.ask() == opt.ask()).all())
    True
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

    def ask(self) -> NDArray[np.float64]:
        """The next point to evaluate.

        Tell its value (:meth:`tell`) before asking again: there is no pending-point
        handling, and a model-based method asked twice returns the same point.

        Returns
        -------
        ndarray of shape (D,)
            A point inside the bounds, in the user's units.
        """
        return self.method.ask()

    def tell(self, x: ArrayLike, y: float | None, *, error: str | None = None) -> None:
        """Report the objective value ``y`` at ``x`` (None/NaN/inf: a failed evaluation).

        Parameters
        ----------
        x : array_like of shape (D,)
            The point evaluated, normally the one :meth:`ask` returned.
        y : float or None
            The objective value in the user's sign; None, NaN or inf records a failed
            evaluation (kept in the history, never shown to the model).
        error : str, optional
            Why the evaluation failed (kept in the history).

        Raises
        ------
        TypeError
            ``y`` is not a real number or None.
        ValueError
            ``x`` does not have shape (D,) or is outside the bounds.
        """
        value = None if y is None else y
        if value is not None:
            try:
                value = float(value)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"y must be a real number or None, got {type(y).__name__}") from exc
        self.method.tell(x, None if value is None else self._sign * value)
        if value is None or not np.isfinite(value):
            self._errors.append((self.method.n_told - 1, error or f"non-finite value {value!r}"))

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
) -> OptimizeResult:
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
    X, y = opt.history
    history = History(X=X, y=y, ask_seconds=np.array(ask_s), eval_seconds=np.array(eval_s), errors=list(opt._errors))
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
    **method_options: Any,
) -> OptimizeResult:
    """Minimize an expensive black-box function over a box.

    Parameters
    ----------
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
    **method_options
        Options of the method, e.g. ``n_init=5`` or ``acq_budget=500``.

    Returns
    -------
    OptimizeResult
        ``x`` of shape (D,), ``fun``, ``history.X`` of shape (nfev, D) and ``history.y`` of
        shape (nfev,).

    Raises
    ------
    ValueError
        Bad bounds, unknown method, budget <= 0, bad ``on_error``.
    TypeError
        ``fun`` not callable, non-integer budget, unknown method option.

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
                     blas_threads=blas_threads)


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
    **method_options: Any,
) -> OptimizeResult:
    """Maximize an expensive black-box function over a box.

    The same as :func:`minimize` with "higher is better"; values in the result and the
    history are as ``fun`` returned them.

    Parameters
    ----------
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
        Show progress on stderr (see :func:`minimize`).
    blas_threads : int or None, default 1
        Most BLAS threads while the method proposes a point (see :func:`minimize`).
    **method_options
        Options of the method.

    Returns
    -------
    OptimizeResult
        ``x`` of shape (D,) maximizes ``fun`` among the evaluations; ``fun`` is its value.

    Raises
    ------
    ValueError
        Bad bounds, unknown method, budget <= 0, bad ``on_error``.
    TypeError
        ``fun`` not callable, non-integer budget, unknown method option.

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
                     blas_threads=blas_threads)


# Method options are keyword arguments of these three: no option may take one of their argument
# names (registration refuses it; this also checks the methods registered so far).
reserve_option_names(minimize, maximize, Optimizer)
