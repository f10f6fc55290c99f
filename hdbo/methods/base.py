"""The interface every optimization method implements: ask / tell / best / state.

A method *maximizes* (as the papers do; :func:`hdbo.minimize` negates). It is built on the
user's :class:`~hdbo.space.Box` but works in a canonical domain (``domain = "unit"`` for
``[0, 1]^D``, ``"symmetric"`` for ``[-1, 1]^D``); the base class maps between the two.

Subclasses implement :meth:`Method._ask` (propose a canonical point) and optionally
:meth:`Method._on_tell`, :meth:`Method._get_internal_state`,
:meth:`Method._set_internal_state` and :meth:`Method.diagnostics`. They follow the
scikit-learn convention that ``__init__`` stores each keyword argument under its own name,
so :meth:`Method.get_params` can rebuild the method for :meth:`Method.from_state`.

Failure policy
--------------
``tell(x, y)`` with ``y`` None, NaN or infinite records a *failed* evaluation: it is kept in
the history (and counts against a budget) but is never shown to a model (``X_obs``/``y_obs``
only hold successful evaluations). If a method proposes a point that already failed
(within 1e-9 in the canonical domain, all coordinates), the base class replaces it by a
uniformly random point, so a deterministic failure cannot stall a run.

Batches and pending points
--------------------------
``ask(n)`` proposes up to ``n`` points at once and ``ask()`` one. Every point asked and not
yet told is *pending* (:attr:`Method.pending`): a later ``ask`` accounts for it, so points
can be handed to several workers and told back in any order (asynchronous use). How a
method accounts for pending points is its own (a GP method conditions its posterior on them
at their posterior mean, the hallucination of GP-BUCB; see :class:`~hdbo.methods.gp_based.GPMethod`).
``tell(x, y)`` removes the pending point equal to ``x`` (within 1e-9 in the canonical
domain); :meth:`Method.cancel` drops pending points that will never be told. A method whose
algorithm cannot propose more before some results are in returns fewer than ``n`` points
(``ask()`` raises :class:`~hdbo.exceptions.PendingError`); its docstring says when. A
proposal never repeats a pending point: should a method propose one, a uniformly random
point is returned instead, with a warning. Pending points are part of :meth:`Method.state_dict`.
"""

from __future__ import annotations

import inspect
import numbers
import warnings
from abc import ABC, abstractmethod
from typing import Any, Callable, ClassVar, Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import MAX_COUNT, check_choice, check_int
from ..exceptions import PendingError, StateError
from ..space import Box, as_box
from ..utils import as_generator, generator_from_state, generator_state, to_jsonable
from ._state import describe, state_array, state_int, state_mapping

__all__ = ["Method", "STATE_FORMAT", "option_names"]

STATE_FORMAT = "hdbo.method/1"

# Constructor arguments that are not hyperparameters of the method.
_NOT_PARAMS = {"self", "bounds", "seed", "structure"}
# ... nor options: ``budget`` is stored with the parameters but is an argument of Method itself.
_NOT_OPTIONS = _NOT_PARAMS | {"budget"}


def _constructor_arguments(cls: type, skip: set[str]) -> list[str]:
    """Named arguments of ``__init__`` along ``cls.__mro__`` (most derived first), less ``skip`` and ``*args``/``**kwargs``."""
    names: list[str] = []
    for klass in cls.__mro__:
        if klass is object or "__init__" not in vars(klass):
            continue
        for pname, p in inspect.signature(klass.__init__).parameters.items():
            if pname in skip or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL) or pname in names:
                continue
            names.append(pname)
    return names


def option_names(cls: type[Method]) -> list[str]:
    """The options of a method class: its constructor's keyword arguments along the class hierarchy.

    ``bounds``, ``seed``, ``budget`` and ``structure`` (the arguments of :class:`Method`
    itself) are not options. Also importable from :mod:`hdbo.methods.registry`.

    Parameters
    ----------
    cls : type
        A :class:`Method` subclass.

    Returns
    -------
    list of str
        In the order the constructors declare them, most derived class first.
    """
    return _constructor_arguments(cls, _NOT_OPTIONS)


def _no_methods() -> Mapping[str, type[Method]]:
    return {}


# How Method.from_state finds the class a state names when it is called on Method itself: a
# function returning the registered methods by name. hdbo.methods.registry sits above this
# module (it imports Method from here, never the other way round) and installs its table with
# _set_method_table when it is imported; until then no method is registered.
_method_table: Callable[[], Mapping[str, type[Method]]] = _no_methods


def _set_method_table(table: Callable[[], Mapping[str, type[Method]]]) -> None:
    """Make ``table()`` the registered methods :meth:`Method.from_state` looks names up in."""
    global _method_table
    _method_table = table


#: Numpydoc parameter entries that several method classes share, filled into their docstrings
#: by :func:`hdbo._docstrings.fill_doc`.
SHARED_DOCS = {
    "bounds": """
    bounds : Box or array_like of shape (D, 2)
        Search box.
    """,
}


class Method(ABC):
    """Base class of every optimization method.

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        The user's search box.
    seed : int, Generator or None
        Source of every random choice the method makes.
    budget : int, optional
        Total number of evaluations the caller plans to make. Methods with phases (SI-BO,
        HDS) use it to split the budget; others ignore it.
    structure : dict, optional
        Known problem structure (``Problem.structure``). Only oracle methods (``Add-*``,
        Exact-UCB) use it for optimization; others may report diagnostics against it.

    Attributes
    ----------
    name : str
        Registry name (class attribute).
    domain : {"unit", "symmetric"}
        Canonical coordinates the algorithm works in (class attribute).
    uses_seed : bool
        False for methods whose proposals do not depend on the seed (class attribute).
    renamed_options : dict of str -> str
        Old option name to current name, for options renamed after states and stores were
        written with the old one (class attribute; see :meth:`upgrade_params`).
    budget_independent : bool
        True for methods whose proposals do not depend on ``budget`` (class attribute): their
        run with budget T is the first T evaluations of the same run with a larger budget,
        which is what an experiment spec's ``prefix_of`` relies on.

    Raises
    ------
    TypeError
        If ``budget`` is not an int or None, or ``seed`` is of the wrong type.
    ValueError
        If the bounds are invalid, ``budget <= 0`` or ``seed`` is negative.
    """

    name: ClassVar[str] = ""
    domain: ClassVar[str] = "unit"
    uses_seed: ClassVar[bool] = True
    renamed_options: ClassVar[dict[str, str]] = {}
    budget_independent: ClassVar[bool] = False

    def __init__(
        self,
        bounds: Box | ArrayLike,
        *,
        seed: int | np.random.Generator | None = None,
        budget: int | None = None,
        structure: dict[str, Any] | None = None,
    ) -> None:
        self.bounds = as_box(bounds)
        budget = check_int(budget, "budget", allow_none=True)
        if budget is not None and budget <= 0:
            raise ValueError(f"budget must be > 0, got {budget}")
        self.budget = budget
        self.seed = seed if isinstance(seed, (int, np.integer)) or seed is None else None
        self.structure = dict(structure or {})
        self.rng = as_generator(seed)
        check_choice(self.domain, "domain", ("unit", "symmetric"))
        self.space = Box.unit(self.dim) if self.domain == "unit" else Box.symmetric(self.dim)
        self._X: list[NDArray[np.float64]] = []  # user units, as told
        self._y: list[float] = []  # nan marks a failed evaluation
        self._asked: list[NDArray[np.float64]] = []  # pending points (user units), in asking order

    # ------------------------------------------------------------------ coordinates
    @property
    def dim(self) -> int:
        """Number of input dimensions D."""
        return self.bounds.dim

    def to_canonical(self, X: ArrayLike) -> NDArray[np.float64]:
        """Map points from the user's box to the method's canonical domain.

        Parameters
        ----------
        X : array_like of shape (n, D) or (D,)
            Points in user units (not checked or clipped).

        Returns
        -------
        ndarray of the same shape as X
            Coordinates in ``[0, 1]`` or ``[-1, 1]`` (see :attr:`domain`).
        """
        return self.bounds.to_unit(X) if self.domain == "unit" else self.bounds.to_symmetric(X)

    def from_canonical(self, U: ArrayLike) -> NDArray[np.float64]:
        """Map points from the canonical domain to the user's box.

        The input is clipped into the canonical cube and the result into the box, so the
        output always lies in the bounds.

        Parameters
        ----------
        U : array_like of shape (n, D) or (D,)
            Points in canonical coordinates.

        Returns
        -------
        ndarray of the same shape as U
            Points in user units.
        """
        U = self.space.clip(U)
        X = self.bounds.from_unit(U) if self.domain == "unit" else self.bounds.from_symmetric(U)
        return self.bounds.clip(X)

    # ------------------------------------------------------------------ history
    @property
    def n_told(self) -> int:
        """Number of evaluations told so far (failed ones included)."""
        return len(self._y)

    @property
    def n_failed(self) -> int:
        """Number of failed evaluations told so far."""
        return int(np.sum(~np.isfinite(np.asarray(self._y, dtype=float)))) if self._y else 0

    @property
    def X_all(self) -> NDArray[np.float64]:
        """All told points in user units, shape (n_told, D)."""
        return np.array(self._X, dtype=float).reshape(-1, self.dim)

    @property
    def y_all(self) -> NDArray[np.float64]:
        """All told values, NaN for failures, shape (n_told,)."""
        return np.array(self._y, dtype=float)

    @property
    def X_obs(self) -> NDArray[np.float64]:
        """Successful points in canonical coordinates, shape (n_ok, D)."""
        ok = np.isfinite(self.y_all)
        return self.to_canonical(self.X_all[ok])

    @property
    def y_obs(self) -> NDArray[np.float64]:
        """Successful values, shape (n_ok,)."""
        y = self.y_all
        return y[np.isfinite(y)]

    @property
    def pending(self) -> NDArray[np.float64]:
        """Points asked and not yet told (user units), shape (n_pending, D), in asking order."""
        return np.array(self._asked, dtype=float).reshape(-1, self.dim)

    @property
    def n_pending(self) -> int:
        """Number of pending points."""
        return len(self._asked)

    @property
    def pending_canonical(self) -> NDArray[np.float64]:
        """The pending points in canonical coordinates, shape (n_pending, D).

        Subclasses read it in :meth:`_ask` to account for the points already out.
        """
        return self.to_canonical(self.pending)

    @property
    def best(self) -> tuple[NDArray[np.float64], float] | None:
        """``(x, y)`` with the largest successful observed value (user units), or None."""
        y = self.y_all
        ok = np.flatnonzero(np.isfinite(y))
        if ok.size == 0:
            return None
        i = int(ok[np.argmax(y[ok])])
        return self.X_all[i].copy(), float(y[i])

    @property
    def done(self) -> bool:
        """Whether the method has finished before its budget.

        False for most methods. A method with a natural end (e.g. a variable-selection-only
        run whose selection is complete) returns True after the :meth:`tell` that ends it;
        :func:`hdbo.minimize`/:func:`hdbo.maximize` and the experiment runner then stop and
        record the run as finished with fewer evaluations than the budget. ``ask`` still
        works when called anyway.
        """
        return False

    # ------------------------------------------------------------------ ask / tell
    def ask(self, n: int | None = None) -> NDArray[np.float64]:
        """Propose the next point, or a batch of up to ``n`` distinct points.

        Each point returned becomes *pending* until it is told (see the module docstring):
        the next ``ask`` accounts for it. If a proposal repeats a point that already failed
        or a pending point, a uniformly random point is returned instead.

        Parameters
        ----------
        n : int, optional
            Number of points wanted. Without it, one point of shape (D,) is returned.

        Returns
        -------
        ndarray of shape (D,), or of shape (m, D) with ``0 <= m <= n`` when ``n`` is given
            Points in user units, inside the bounds. Fewer than ``n`` (possibly none) only
            when the method must see results of pending points before it can propose more;
            its docstring says when.

        Raises
        ------
        TypeError
            If ``n`` is not an int or None.
        ValueError
            If ``n < 1``.
        PendingError
            (a ``RuntimeError``) Without ``n``, if the method cannot propose a point before
            some pending points are told.
        RuntimeError
            If the subclass proposed a point of the wrong size or with non-finite entries.

        Warns
        -----
        RuntimeWarning
            When a proposal that repeats a failed or pending point is replaced by a random one.
        """
        single = n is None
        k = 1 if single else check_int(n, "n", low=1, high=MAX_COUNT)
        out: list[NDArray[np.float64]] = []
        try:
            self._ask_into(k, out)
        except BaseException:
            # an error (or Ctrl-C) mid-batch: the points of this call never reached the caller
            for x in out:
                u = self.to_canonical(x)
                if self._drop_pending(u):
                    self._on_cancel(u)
            raise
        if single:
            if not out:
                if not self._asked:
                    raise RuntimeError(f"{type(self).__name__}._ask proposed no point with none pending")
                raise PendingError(
                    f"{self.name}: cannot propose another point before the value(s) of its {self.n_pending} pending "
                    "point(s) are told; tell them (or cancel them), or call ask(n), which returns fewer points")
            return out[0]
        return np.array(out, dtype=float).reshape(-1, self.dim)

    def _ask_into(self, k: int, out: list[NDArray[np.float64]]) -> None:
        """Propose up to ``k`` points, appending each (user units, pending) to ``out``."""
        for _ in range(k):
            u = self._ask()
            if u is None:
                break
            u = np.asarray(u, dtype=float).reshape(-1)
            if u.size != self.dim or not np.all(np.isfinite(u)):
                raise RuntimeError(f"{type(self).__name__}._ask returned an invalid point {u!r}")
            repeats = "already failed once" if self._repeats_failure(u) else (
                "is pending (asked, not yet told)" if self._repeats_pending(u) else None)
            if repeats is not None:
                warnings.warn(f"{self.name}: proposed point {repeats}; proposing a random point instead",
                              RuntimeWarning, stacklevel=2)
                u = self.space.sample(1, self.rng)[0]
            x = self.from_canonical(u)
            self._asked.append(x)
            out.append(x.copy())
            self._on_asked(self.to_canonical(x))

    def tell(self, x: ArrayLike, y: float | None | ArrayLike) -> None:
        """Record the value ``y`` observed at ``x``, or a batch of values.

        Any point of the box may be told, not only the ones asked for; a told point that is
        pending stops being pending.

        Parameters
        ----------
        x : array_like of shape (D,) or (n, D)
            The evaluated point(s), in user units. A point outside the box by no more than
            round-off (``1e-9`` of the width) is clipped in.
        y : float or None, or array_like of shape (n,) with x of shape (n, D)
            The observed value(s), to be maximized. None, NaN or +-inf records a failed
            evaluation (see the module docstring). A batch is recorded in its order.

        Raises
        ------
        ValueError
            If ``x`` has the wrong shape, is not finite or lies outside the bounds, or a
            batch has another number of values than points.
        TypeError
            If a value is not a real number or None.
        """
        try:
            arr = np.asarray(x, dtype=float)
        except (TypeError, ValueError):
            arr = np.empty(0)  # not numbers: check_point below names x
        if arr.ndim == 2:
            values = [y] if (y is None or np.ndim(y) == 0) else list(np.asarray(y, dtype=object).reshape(-1))
            if len(values) != arr.shape[0]:
                raise ValueError(f"tell got {arr.shape[0]} points (x of shape {arr.shape}) but {len(values)} "
                                 "value(s) in y")
            points = [self.bounds.check_point(row, name=f"x[{i}]") for i, row in enumerate(arr)]
            checked = [_told_value(v, f"y[{i}]") for i, v in enumerate(values)]
        else:
            points = [self.bounds.check_point(x, name="x")]
            checked = [_told_value(y, "y")]
        for xi, yv in zip(points, checked):
            self._X.append(xi)
            self._y.append(yv)
            u = self.to_canonical(xi)
            self._drop_pending(u)
            self._on_tell(u, yv)

    def cancel(self, x: ArrayLike | None = None) -> int:
        """Stop treating pending points as out, without recording an evaluation.

        Use it for evaluations that were abandoned and will never be told (telling a
        failure instead, ``tell(x, None)``, records it and counts it against a budget). A
        method forgets what it kept about a cancelled proposal: told later after all, the
        point is recorded like any point it did not ask for (e.g. REMBO then models it only
        if its embedding reproduces it).

        Parameters
        ----------
        x : array_like of shape (D,) or (n, D), optional
            The pending point(s) to drop; all of them when omitted.

        Returns
        -------
        int
            Number of pending points dropped (points that are not pending are ignored).

        Raises
        ------
        ValueError
            If ``x`` has the wrong shape or is not finite.
        """
        if x is None:
            n, self._asked = len(self._asked), []
            self._on_cancel(None)
            return n
        arr = np.asarray(x, dtype=float)
        rows = arr.reshape(1, -1) if arr.ndim == 1 else arr
        if rows.ndim != 2 or rows.shape[1] != self.dim or not np.all(np.isfinite(rows)):
            raise ValueError(f"x must be a finite point of shape ({self.dim},) or a batch of shape (n, {self.dim}), "
                             f"got shape {arr.shape}")
        n = 0
        for row in rows:
            u = self.to_canonical(row)
            if self._drop_pending(u):
                n += 1
                self._on_cancel(u)
        return n

    def _pending_index(self, u: NDArray[np.float64]) -> int | None:
        """Index in :attr:`pending` of the first pending point equal to canonical ``u`` (1e-9), or None."""
        if not self._asked:
            return None
        close = np.max(np.abs(self.pending_canonical - u), axis=1) <= 1e-9
        hits = np.flatnonzero(close)
        return int(hits[0]) if hits.size else None

    def _drop_pending(self, u: NDArray[np.float64]) -> bool:
        i = self._pending_index(u)
        if i is None:
            return False
        del self._asked[i]
        return True

    def _repeats_pending(self, u: NDArray[np.float64]) -> bool:
        return self._pending_index(u) is not None

    def _repeats_failure(self, u: NDArray[np.float64]) -> bool:
        y = self.y_all
        if y.size == 0 or np.all(np.isfinite(y)):
            return False
        failed = self.to_canonical(self.X_all[~np.isfinite(y)])
        return bool(np.any(np.max(np.abs(failed - u), axis=1) <= 1e-9))

    # ------------------------------------------------------------------ subclass hooks
    @abstractmethod
    def _ask(self) -> NDArray[np.float64] | None:
        """Return the next point in canonical coordinates, shape (D,).

        The points already out are :attr:`pending_canonical` (in a batch, the earlier points
        of the batch are among them). Return None when the algorithm cannot propose a point
        before some of them are told.
        """

    def _on_tell(self, u: NDArray[np.float64], y: float) -> None:
        """Hook called after each tell with the canonical point and value (NaN = failed).

        When it runs, the told point is in the history and no longer pending.
        """

    def _on_asked(self, u: NDArray[np.float64]) -> None:
        """Hook called when the canonical point ``u`` has become pending (what :meth:`ask` returns).

        ``u`` is the proposal of :meth:`_ask`, or the random point that replaced it; a
        subclass that keeps facts per proposal attaches them to ``u`` here.
        """

    def _on_cancel(self, u: NDArray[np.float64] | None) -> None:
        """Hook called after :meth:`cancel` dropped the pending canonical point ``u`` (None: all)."""

    def _get_internal_state(self) -> dict[str, Any]:
        """JSON-serializable state beyond the history and the generator (default: none)."""
        return {}

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`_get_internal_state` returned (history is already loaded)."""

    def diagnostics(self) -> dict[str, Any]:
        """Facts worth storing with a run, such as learned structure or hyperparameters.

        Returns
        -------
        dict
            JSON-serializable; empty for the base class.
        """
        return {}

    # ------------------------------------------------------------------ structure learning
    @classmethod
    def structure_evaluations(cls, dim: int, **options: Any) -> int | None:
        """Evaluations the method spends learning its structure at dimension ``dim``, before it can use it.

        A method whose structure is learned in a separate phase (a variable selection, a
        subspace identification) needs that many evaluations before its optimization uses
        what was learned; with a smaller budget it cannot learn its structure, and a
        comparison at that budget says nothing about the structure. The method is not built.

        Parameters
        ----------
        dim : int
            Input dimension D of the problem (``>= 1``).
        **options
            The method's options (:func:`option_names`); those left
            out take their defaults. Options that do not change the count are accepted and
            ignored.

        Returns
        -------
        int or None
            The count, or None when the method has no separate learning phase: it learns
            as it optimizes (a GP's hyperparameters, an additive decomposition, a set of
            random subspaces) or learns no structure at all (a fixed random embedding or
            subspace). This default returns None; methods with a learning phase override it
            and state in their docstring where the count comes from.

        Raises
        ------
        TypeError
            If ``dim`` is not an int, or an option is not one of the method's.
        ValueError
            If ``dim < 1`` or an option that enters the count is invalid.

        Examples
        --------
        >>> from hdbo.methods import get_method_class
        >>> get_method_class("si-bo").structure_evaluations(100)
        930
        >>> get_method_class("hesbo").structure_evaluations(100) is None
        True
        """
        cls._check_structure_options(dim, options)
        return None

    @classmethod
    def _check_structure_options(cls, dim: int, options: dict[str, Any]) -> int:
        """``dim`` checked (returned as an int); a TypeError for an option the method does not take."""
        dim = check_int(dim, "dim", low=1)
        valid = option_names(cls)
        unknown = sorted(set(cls.upgrade_params(options)) - set(valid))
        if unknown:
            raise TypeError(f"method {cls.name!r} has no option(s) {', '.join(map(repr, unknown))}; "
                            f"its options: {', '.join(valid)}")
        return dim

    # ------------------------------------------------------------------ parameters & state
    @classmethod
    def upgrade_params(cls, params: dict[str, Any], *, warn: bool = False) -> dict[str, Any]:
        """``params`` with every renamed option (:attr:`renamed_options`) under its current name.

        Parameters
        ----------
        params : dict
            Options, possibly under names they had before a rename.
        warn : bool, default False
            Issue a ``FutureWarning`` for each old name (user input; stored states and run
            parameters are upgraded silently).

        Returns
        -------
        dict
            A new dict.

        Raises
        ------
        TypeError
            If an option is given under both its old and its current name.
        """
        out = dict(params)
        for old, new in cls.renamed_options.items():
            if old not in out:
                continue
            if new in out:
                raise TypeError(f"method {cls.name!r} got option {new!r} twice: as {new!r} and under its old name "
                                f"{old!r}")
            if warn:
                warnings.warn(f"method {cls.name!r}: option {old!r} was renamed {new!r}; use {new}=...",
                              FutureWarning, stacklevel=3)
            out[new] = out.pop(old)
        return out

    def get_params(self) -> dict[str, Any]:
        """The constructor's arguments, as stored, from which :meth:`from_state` rebuilds the method.

        Collects every named parameter of ``__init__`` along the class hierarchy except
        ``bounds``, ``seed`` and ``structure`` (``budget`` is included), reading the
        attribute of the same name.

        Returns
        -------
        dict
            Parameter name to value.
        """
        return {pname: getattr(self, pname) for pname in _constructor_arguments(type(self), _NOT_PARAMS)}

    def state_dict(self, *, include_history: bool = True) -> dict[str, Any]:
        """A JSON-serializable snapshot from which :meth:`from_state` resumes exactly.

        Parameters
        ----------
        include_history : bool, default True
            Include the told points and values. The experiment store keeps them in its
            own table and passes them back to :meth:`from_state` instead.

        Returns
        -------
        dict
            JSON-serializable, with keys ``format``, ``method``, ``params``
            (:meth:`get_params`), ``bounds``, ``seed`` (None unless an int was given),
            ``structure``, ``rng`` (the generator's state, so a Generator seed resumes too),
            ``n_told``, ``internal`` (the subclass's state), ``pending`` (the pending points,
            user units) and, with ``include_history``, ``history = {"X": [...], "y": [...]}``
            with None for failed values.
        """
        state: dict[str, Any] = {
            "format": STATE_FORMAT,
            "method": self.name,
            "params": to_jsonable(self.get_params()),
            "bounds": self.bounds.to_dict(),
            "seed": None if self.seed is None else int(self.seed),
            "structure": to_jsonable(self.structure),
            "rng": generator_state(self.rng),
            "n_told": self.n_told,
            "internal": to_jsonable(self._get_internal_state()),
            "pending": self.pending.tolist(),
        }
        if include_history:
            state["history"] = {
                "X": self.X_all.tolist(),
                "y": [None if not np.isfinite(v) else v for v in self._y],
            }
        return state

    @classmethod
    def from_state(
        cls,
        state: dict[str, Any],
        *,
        history: tuple[ArrayLike, ArrayLike] | None = None,
    ) -> "Method":
        """Rebuild a method from :meth:`state_dict` output.

        Called on :class:`Method` itself it looks the class up in the registry by name.
        A state is data (it may have been edited or come from elsewhere): every field is
        checked before it is used, and a malformed state raises :class:`StateError` naming
        the field, never another exception.

        Parameters
        ----------
        state : dict
            Output of :meth:`state_dict` (possibly through a JSON round trip).
        history : (X, y), optional
            Told points (user units, shape (n_told, D)) and values (shape (n_told,), None
            or NaN for failures), if ``state`` was saved without them.

        Returns
        -------
        Method
            A method in the same state: its next :meth:`ask` is the one the saved method
            would have made.

        Raises
        ------
        StateError
            (a ``ValueError``) If ``state`` is not such a dict: another format, a method that
            is not registered (or not this class), a missing or unknown field, a field of the
            wrong type, options the method refuses, a history of the wrong shape, with
            non-finite points or points outside the bounds (by more than ``1e-9`` of the
            width), a length other than ``n_told``, an invalid generator state, or an
            ``internal`` state the method cannot load.
        """
        if not isinstance(state, dict):
            raise StateError(f"state must be a dict (the output of Method.state_dict), got {describe(state)}")
        if state.get("format") != STATE_FORMAT:
            raise StateError(f"state['format'] must be {STATE_FORMAT!r}, got {state.get('format')!r:.60}")
        required = ["method", "params", "bounds", "seed", "structure", "rng", "n_told", "internal"]
        if history is None:
            required.append("history")
        missing = [k for k in required if k not in state]
        if missing:
            extra = " (or pass history=(X, y))" if missing == ["history"] else ""
            raise StateError(f"state lacks the field(s) {', '.join(map(repr, missing))}{extra}")
        unknown = sorted(set(map(str, state)) - set(required) - {"format", "history", "pending"})
        if unknown:
            raise StateError(f"state has unknown field(s) {', '.join(map(repr, unknown))}")
        name = state["method"]
        if not isinstance(name, str):
            raise StateError(f"state['method'] must be a method name, got {describe(name)}")
        if cls is Method or not cls.name:
            registered = _method_table()
            if name not in registered:
                raise StateError(f"state['method'] names no registered method: {name!r:.60}; "
                                 f"available: {', '.join(sorted(registered))}")
            cls = registered[name]
        elif name != cls.name:
            raise StateError(f"state['method'] is {name!r:.60}, not {cls.name!r}")
        try:
            params = cls.upgrade_params(state_mapping(state["params"], "state['params']"))
        except TypeError as exc:
            raise StateError(f"state['params']: {exc}") from None
        try:
            bounds = Box.from_dict(state_mapping(state["bounds"], "state['bounds']"))
        except StateError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise StateError(f"state['bounds'] must be {{'lower': [...], 'upper': [...]}} of a valid box: "
                             f"{type(exc).__name__}: {exc}") from None
        seed = state_int(state["seed"], "state['seed']", low=0, allow_none=True)
        structure = state["structure"]
        if structure is not None:
            state_mapping(structure, "state['structure']")
        n_told = state_int(state["n_told"], "state['n_told']", low=0)
        try:
            obj = cls(bounds, seed=seed, structure=structure, **params)
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, ArithmeticError) as exc:
            raise StateError(f"state['params'] (with state['structure']) do not build method {cls.name!r}: "
                             f"{type(exc).__name__}: {exc}") from None
        where = "history"
        if history is None:
            hist = state_mapping(state["history"], "state['history']")
            missing = [k for k in ("X", "y") if k not in hist]
            if missing or len(hist) != 2:
                raise StateError(f"state['history'] must have exactly the keys 'X' and 'y', got {sorted(hist)}")
            X, y = hist["X"], hist["y"]
            where = "state['history']"
        elif isinstance(history, (tuple, list)) and len(history) == 2:
            X, y = history
        else:
            raise StateError(f"history must be a pair (X, y), got {describe(history)}")
        X_arr = np.asarray(state_array(X, f"{where}['X']"))
        if X_arr.size == 0:
            X_arr = np.empty((0, obj.dim))
        if X_arr.ndim != 2 or X_arr.shape[1] != obj.dim:
            raise StateError(f"{where}['X'] must have shape (n_told, {obj.dim}), got shape {X_arr.shape}")
        tol = 1e-9 * obj.bounds.width
        if np.any(X_arr < obj.bounds.lower - tol) or np.any(X_arr > obj.bounds.upper + tol):
            raise StateError(f"{where}['X'] has points outside the bounds (state['bounds'])")
        y_list = _history_values(y, f"{where}['y']")
        if X_arr.shape[0] != len(y_list) or len(y_list) != n_told:
            raise StateError(f"{where} has {X_arr.shape[0]} points and {len(y_list)} values, "
                             f"state['n_told'] is {n_told}")
        X_arr = np.clip(X_arr, obj.bounds.lower, obj.bounds.upper)
        obj._X = [row.copy() for row in X_arr]
        obj._y = y_list
        # states written before pending points were recorded have none
        P = np.asarray(state_array(state.get("pending", []), "state['pending']"))
        if P.size == 0:
            P = np.empty((0, obj.dim))
        if P.ndim != 2 or P.shape[1] != obj.dim:
            raise StateError(f"state['pending'] must have shape (n_pending, {obj.dim}), got shape {P.shape}")
        if np.any(P < obj.bounds.lower - tol) or np.any(P > obj.bounds.upper + tol):
            raise StateError("state['pending'] has points outside the bounds (state['bounds'])")
        obj._asked = [row.copy() for row in np.clip(P, obj.bounds.lower, obj.bounds.upper)]
        obj.rng = generator_from_state(state["rng"], name="state['rng']")
        internal = state_mapping(state["internal"], "state['internal']")
        try:
            obj._set_internal_state(internal)
        except StateError as exc:
            raise StateError(f"{exc} (method {cls.name!r})") from None
        except KeyError as exc:
            raise StateError(f"state['internal'] of method {cls.name!r} lacks the entry {exc} (or refers to a "
                             "missing one)") from None
        except (TypeError, ValueError, IndexError, AttributeError, ArithmeticError) as exc:
            raise StateError(f"state['internal'] of method {cls.name!r} cannot be loaded: "
                             f"{type(exc).__name__}: {exc}") from None
        try:  # what diagnostics() reads (e.g. the structure it compares against) is usable too
            obj.diagnostics()
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, ArithmeticError) as exc:
            raise StateError(f"method {cls.name!r} rebuilt from state['structure'] and state['internal'] cannot "
                             f"report its diagnostics: {type(exc).__name__}: {exc}") from None
        return obj

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dim={self.dim}, n_told={self.n_told})"


def _told_value(y: Any, name: str) -> float:
    """A told value as a float; NaN for None and non-finite values (a failed evaluation)."""
    if y is None:
        return float("nan")
    try:
        yv = float(y)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a real number or None, got {type(y).__name__}") from exc
    return yv if np.isfinite(yv) else float("nan")


def _history_values(y: Any, field: str) -> list[float]:
    """Told values of a saved history as floats (None, NaN and +-inf: NaN, a failed evaluation)."""
    if isinstance(y, np.ndarray):
        y = y.tolist()
    if not isinstance(y, (list, tuple)):
        raise StateError(f"{field} must be a list of numbers or None, got {describe(y)}")
    out = []
    for i, v in enumerate(y):
        if v is None:
            out.append(float("nan"))
        elif isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
            raise StateError(f"{field}[{i}] must be a number or None, got {describe(v)}")
        else:
            fv = float(v)
            out.append(fv if np.isfinite(fv) else float("nan"))
    return out
