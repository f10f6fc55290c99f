"""CWS, coordinate-wise sampling: the variable-selection baseline of Chen, Castro, Krause (ICML 2012).

"CWS computes finite differences along each dimension separately using the same number of
samples, and outputs the dimensions with the largest variance" (Section 5); then, like HDS,
GP-UCB on the selected coordinates (:class:`~hdbo.methods.hds.SelectThenOptimize`).

Procedure (SPEC.md P2.B): rounds r = 1, 2, ...; in each round, for every coordinate i in
turn, draw ``z ~ U[-1, 1 - delta]`` (``delta = 3 b``, capped at 2) and evaluate the background
vector ``x0`` with coordinate i set to ``z`` and to ``z + delta``; store ``dy^2``. After a
round the ``n_select`` coordinates with the largest mean ``dy^2`` are the current selection.
Stopping:

* ``rounds=k``: after k rounds (k samples per coordinate, 2 k D evaluations);
* ``rounds=None`` (default) is the paper's *clairvoyant* setting: stop at the first round
  whose top ``n_select`` equal the true active set (``structure["active_dims"]``), so the
  evaluations used are the smallest CWS sample size that recovers the set in this run.

Either way the selection also stops when ``selection_budget`` (default as for HDS) is spent:
at the end of a round that leaves less than a full round (``2 D`` evaluations), or, if the
budget is smaller than one round, when it runs out. The selection is then the top
``n_select`` after the last full round (after no full round: the top ``n_select`` of the
coordinates sampled so far). In clairvoyant mode a run whose budget runs out before the top
``n_select`` equal the truth has ``recovered = False`` (the paper's failed run). A failed
evaluation drops the pair in progress; the coordinate is sampled again. ``n_select``
defaults to the size of the true active set when the problem provides it. On a plain
objective (no ``structure["active_dims"]``) the defaults are ``n_select = ceil(sqrt(D))`` and
rounds until the selection budget is spent (see :class:`CWS`); the reproductions keep the
clairvoyant settings.

Evaluations its structure learning needs (:meth:`CWS.structure_evaluations`): one round costs
``2 D`` evaluations (200 at D = 100, 600 at D = 300), and a selection needs several rounds,
so within budgets of 100-300 at those dimensions it cannot select and no optimization phase
would run: the public suite (``experiments/highdim/``) reports it as excluded.

Sample counts (``diagnostics()``): ``selection_evaluations`` (function evaluations, 2 per
finite difference) and ``selection_iterations`` (finite differences).

Batches: a round's design points do not depend on its values (each pair's ``z`` is drawn when
its first point is asked, in the order of the coordinates), so ``ask(n)`` returns the round's
next ``n`` points, up to the end of the round and of the selection budget. Without failures a
batch run asks the same points as a sequential one. The values may be told in any order; a
pair's finite difference is taken when both of its values are in. Whether another round
follows (and, after a failed evaluation, the pair that replaces the dropped one) depends on
the round's values, so once all of the round's points are out ``ask(n)`` returns fewer
(``ask()`` raises :class:`~hdbo.exceptions.PendingError`). The second point of a pair whose
first point failed while it was out counts against the selection budget when told, without
entering the test.

References
----------
B. Chen, R. M. Castro, A. Krause. Joint optimization and variable selection of
high-dimensional Gaussian processes. ICML 2012, Section 5.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import MAX_COUNT, check_int
from ..space import Box
from ..exceptions import StateError
from ._state import (internal_array, internal_bool, internal_field, internal_indices, internal_int, state_float,
                     state_int, state_mapping)
from .hds import SelectThenOptimize
from .registry import register

__all__ = ["CWS"]


@register
class CWS(SelectThenOptimize):
    """Coordinate-wise finite-difference selection, then GP-UCB (module docstring).

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box (the method works on ``[-1, 1]^D``).
    n_select : int, optional
        Number of coordinates to keep. Default: the size of ``structure["active_dims"]``
        (the papers' setting), and on a problem that does not give it (a plain objective)
        ``ceil(sqrt(D))`` (10 at D = 100), a number of coordinates a GP can be fitted on from
        the few dozen evaluations of the optimization phase; give it when you know how many
        variables matter.
    rounds : int, optional
        Samples (finite differences) per coordinate. None: with ``structure["active_dims"]``,
        stop clairvoyantly (the papers' setting, module docstring); on a plain objective, take
        rounds while the selection budget pays for one (``selection_budget``, by default half
        the budget: ``floor(budget / (4 D))`` rounds, and if that is 0, the part of a round
        the budget pays for, ranked by what was sampled).
    **kwargs
        :class:`~hdbo.methods.hds.SelectThenOptimize` options (``bandwidth`` sets
        ``delta = 3 b``; ``selection_budget``, ``optimize``, ``beta``, ...).

    Raises
    ------
    ValueError
        If ``n_select > D`` or a count is below 1.
    TypeError
        If ``n_select``/``rounds`` is not an int.

    Notes
    -----
    Batches: during the selection, ``ask(n)`` returns the current round's next points (all
    ``2 D`` of a round can be out at once); it returns fewer, down to an empty ``(0, D)``
    array (``ask()``: :class:`~hdbo.exceptions.PendingError`), when the round's remaining
    points are all out or the selection budget is taken by the points out, because the next
    round, the stopping decision and the replacement of a failed pair depend on their values.
    After the selection, GP-UCB hallucinates the pending points and returns ``n`` points.

    Examples
    --------
    >>> import numpy as np
    >>> from hdbo.methods import make_method
    >>> m = make_method("cws", [(-1, 1)] * 6, seed=0, n_select=1, rounds=3, optimize=False)
    >>> while not m.done:
    ...     x = m.ask()
    ...     m.tell(x, np.sin(10 * x[2]))
    >>> m.selected_, m.n_told
    ([2], 36)
    """

    name = "cws"

    def __init__(
        self,
        bounds: Box | ArrayLike,
        *,
        n_select: int | None = None,
        rounds: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(bounds, **kwargs)
        self.n_select = check_int(n_select, "n_select", low=1, high=self.dim, allow_none=True)
        self.rounds = check_int(rounds, "rounds", low=1, allow_none=True, high=MAX_COUNT)
        self.delta = min(3.0 * self.bandwidth, 2.0)
        self.background_ = self.rng.uniform(-1.0, 1.0, self.dim)
        self.sum_sq_ = np.zeros(self.dim)  # sum over rounds of dy^2, per coordinate
        self.count_ = np.zeros(self.dim, dtype=int)
        # Pairs of this round started (z drawn) and not complete, in asking order:
        # {"coord": i, "z": z, "y": [value at z or None, value at z + delta or None],
        #  "out": [point 0 pending, point 1 pending]} ("out" is not saved: it is read from the
        # pending points when a state is loaded).
        self._pairs: list[dict[str, Any]] = []
        self._proposed: tuple[dict[str, Any], int] | None = None  # the pair point _ask just returned
        # Coordinates of this round still without a pair, in the order they will be asked (a
        # coordinate whose pair failed goes first).
        self._queue: list[int] = list(range(self.dim))
        # Points of dropped pairs (a failed value) still out, canonical: told, they count as
        # selection evaluations without entering the test.
        self._orphans: list[NDArray[np.float64]] = []
        self.rounds_done_ = 0
        self.selection_evaluations_ = 0
        self._stopped = False
        self.top_: list[int] = []

    @classmethod
    def structure_evaluations(cls, dim: int, **options: Any) -> int | None:
        """Evaluations of CWS's selection at dimension ``dim``: ``2 D`` per round.

        With ``rounds`` given, the selection takes ``rounds`` full rounds, ``2 D rounds``
        evaluations. With the default clairvoyant stopping (``rounds=None``) the number of
        rounds is not known in advance; the count is then one round, ``2 D``, the least any
        selection takes (it usually takes several).

        Parameters
        ----------
        dim : int
            Input dimension D (``>= 1``).
        **options
            CWS options; only ``rounds`` changes the count.

        Returns
        -------
        int
            With the defaults: 200 at D = 100, 600 at D = 300.

        Raises
        ------
        TypeError
            If ``dim`` or ``rounds`` is not an int, or an option is not one of CWS's.
        ValueError
            If ``dim`` or ``rounds`` is below 1.

        Examples
        --------
        >>> CWS.structure_evaluations(100), CWS.structure_evaluations(100, rounds=3)
        (200, 600)
        """
        dim = cls._check_structure_options(dim, options)
        rounds = check_int(options.get("rounds"), "rounds", low=1, allow_none=True, high=MAX_COUNT)
        return 2 * dim * (rounds if rounds is not None else 1)

    @property
    def k(self) -> int:
        """Number of coordinates kept: ``n_select``, else the true active set's size, else ``ceil(sqrt(D))``."""
        if self.n_select is not None:
            return self.n_select
        if self.true_active_ is not None:
            return len(self.true_active_)
        return min(self.dim, math.ceil(math.sqrt(self.dim)))

    def _point(self, i: int, z: float) -> NDArray[np.float64]:
        x = self.background_.copy()
        x[i] = z
        return x

    def _pair_point(self, pair: dict[str, Any], k: int) -> NDArray[np.float64]:
        """Point ``k`` (0: at ``z``, 1: at ``z + delta``) of a pair."""
        return self._point(pair["coord"], min(pair["z"] + (self.delta if k else 0.0), 1.0))

    def _n_out(self) -> int:
        """Selection points asked and not yet told (pending)."""
        return len(self._orphans) + sum(p["out"][k] and p["y"][k] is None for p in self._pairs for k in (0, 1))

    def _selection_propose(self) -> NDArray[np.float64] | None:
        if self.selection_evaluations_ + self._n_out() >= self.selection_limit:
            return None  # the points out take the rest of the selection budget
        for pair in self._pairs:  # a started pair's point neither told nor out
            for k in (0, 1):
                if pair["y"][k] is None and not pair["out"][k]:
                    self._proposed = (pair, k)
                    return self._pair_point(pair, k)
        if not self._queue:
            return None  # the round's points are all out: what follows depends on their values
        z = float(self.rng.uniform(-1.0, 1.0 - self.delta)) if self.delta < 2.0 else -1.0
        pair = {"coord": self._queue.pop(0), "z": z, "y": [None, None], "out": [False, False]}
        self._pairs.append(pair)
        self._proposed = (pair, 0)
        return self._pair_point(pair, 0)

    def _on_asked(self, u: NDArray[np.float64]) -> None:
        proposed, self._proposed = self._proposed, None
        if proposed is not None and np.max(np.abs(u - self._pair_point(*proposed))) <= 1e-9:
            proposed[0]["out"][proposed[1]] = True  # (not when the base class replaced it)

    def _match(self, u: NDArray[np.float64]) -> tuple[dict[str, Any] | None, int]:
        """The started pair and the index of its untold point equal to ``u`` (1e-9), or (None, orphan index or -1)."""
        for pair in self._pairs:
            for k in (0, 1):
                if pair["y"][k] is None and np.max(np.abs(u - self._pair_point(pair, k))) <= 1e-9:
                    return pair, k
        for i, v in enumerate(self._orphans):
            if np.max(np.abs(u - v)) <= 1e-9:
                return None, i
        return None, -1

    def _rank(self) -> list[int]:
        """The ``k`` coordinates with the largest mean ``dy^2`` (unsampled ones last), sorted."""
        mean = np.where(self.count_ > 0, self.sum_sq_ / np.maximum(self.count_, 1), -np.inf)
        order = [int(i) for i in np.argsort(-mean, kind="stable") if self.count_[i] > 0]
        return sorted(order[: self.k])

    def _selection_consume(self, u: NDArray[np.float64], y: float) -> None:
        pair, k = self._match(u)
        if pair is None and k < 0:
            return  # not a point of the test (e.g. a replaced proposal or a foreign tell)
        self.selection_evaluations_ += 1
        if pair is None:
            del self._orphans[k]  # its pair was dropped: the value is not used
        elif not np.isfinite(y):
            # drop the pair; the same coordinate is sampled again, next
            self._pairs.remove(pair)
            self._queue.insert(0, pair["coord"])
            if pair["y"][1 - k] is None and pair["out"][1 - k]:
                self._orphans.append(self._pair_point(pair, 1 - k))
        else:
            pair["y"][k] = float(y)
            if pair["y"][1 - k] is not None:
                i = pair["coord"]
                dy = pair["y"][0] - pair["y"][1]
                self.sum_sq_[i] += dy * dy
                self.count_[i] += 1
                self._pairs.remove(pair)
                if not self._pairs and not self._queue:  # a round ends: rank the coordinates
                    self._queue = list(range(self.dim))
                    self.rounds_done_ += 1
                    self.top_ = self._rank()
                    if self.rounds is not None:
                        self._stopped = self.rounds_done_ >= self.rounds
                    elif self.true_active_ is not None:  # clairvoyant (the paper's setting)
                        self._stopped = self.top_ == self.true_active_
                    # else: rounds until the selection budget is spent (below)
                    # Stop when the budget cannot pay for another full round.
                    if self.selection_limit - self.selection_evaluations_ - len(self._orphans) < 2 * self.dim:
                        self._stopped = True
        if not self._stopped and self.selection_evaluations_ >= self.selection_limit:
            # Budget spent within a round: keep the ranking of the last full round, or, if
            # no round was completed, rank the coordinates sampled so far.
            self._stopped = True
            if self.rounds_done_ == 0:
                self.top_ = self._rank()
        if self._stopped:
            self._pairs, self._queue, self._orphans = [], [], []

    def _on_cancel(self, u: NDArray[np.float64] | None) -> None:
        # a cancelled point of a started pair is asked again; a dropped pair's point is forgotten
        if u is None:
            self._orphans = []
            for pair in self._pairs:
                pair["out"] = [False, False]
            return
        self._orphans = [v for v in self._orphans if np.max(np.abs(u - v)) > 1e-9]
        for pair in self._pairs:
            for k in (0, 1):
                if np.max(np.abs(u - self._pair_point(pair, k))) <= 1e-9:
                    pair["out"][k] = False

    def _selection_done(self) -> bool:
        return self._stopped

    def _selection_result(self) -> list[int]:
        return list(self.top_)

    def _background(self) -> NDArray[np.float64]:
        return self.background_

    def _get_internal_state(self) -> dict[str, Any]:
        state = super()._get_internal_state()
        state.update(background=self.background_.tolist(), sum_sq=self.sum_sq_.tolist(), count=self.count_.tolist(),
                     pairs=[{"coord": p["coord"], "z": p["z"], "y": list(p["y"])} for p in self._pairs],
                     queue=list(self._queue), orphans=[v.tolist() for v in self._orphans],
                     rounds_done=self.rounds_done_, selection_evaluations=self.selection_evaluations_,
                     stopped=self._stopped, top=self.top_)
        return state

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        D = self.dim
        self.background_ = internal_array(state, "background", shape=(D,), low=-1.0, high=1.0)
        self.sum_sq_ = internal_array(state, "sum_sq", shape=(D,), low=0.0)
        count = internal_array(state, "count", shape=(D,), low=0.0)
        if np.any(count != np.round(count)):
            raise StateError(f"state['internal']['count'] must hold non-negative integers, got {count.tolist()}")
        self.count_ = count.astype(int)
        if "pairs" in state:
            self._set_pairs(state)
        else:
            self._set_old_pair(state)
        self._mark_out()
        self._proposed = None
        self.rounds_done_ = internal_int(state, "rounds_done", low=0)
        self.selection_evaluations_ = internal_int(state, "selection_evaluations", low=0, high=self.n_told)
        self._stopped = internal_bool(state, "stopped")
        self.top_ = internal_indices(state, "top", high=D)
        super()._set_internal_state(state)

    def _set_pairs(self, state: dict[str, Any]) -> None:
        """Started pairs, coordinates to go and dropped points out, as :meth:`_get_internal_state` saves them."""
        D = self.dim
        pairs = internal_field(state, "pairs")
        if not isinstance(pairs, list):
            raise StateError(f"state['internal']['pairs'] must be a list, got {type(pairs).__name__}")
        self._pairs = []
        for j, pair in enumerate(pairs):
            name = f"state['internal']['pairs'][{j}]"
            pair = state_mapping(pair, name)
            if set(pair) != {"coord", "z", "y"}:
                raise StateError(f"{name} must have the keys 'coord', 'z' and 'y', got {sorted(pair)}")
            y = pair["y"]
            if not isinstance(y, list) or len(y) != 2 or (y[0] is not None and y[1] is not None):
                raise StateError(f"{name}['y'] must be a list of 2 values, at least one of them None (not told)")
            self._pairs.append({"coord": state_int(pair["coord"], f"{name}['coord']", low=0, high=D - 1),
                                "z": state_float(pair["z"], f"{name}['z']", low=-1.0),
                                "y": [state_float(v, f"{name}['y'][{k}]", allow_none=True) for k, v in enumerate(y)]})
        self._queue = internal_indices(state, "queue", high=D)
        orphans = internal_field(state, "orphans")
        if isinstance(orphans, list) and not orphans:
            self._orphans = []
        else:
            rows = internal_array(state, "orphans", shape=(None, D), low=-1.0, high=1.0)
            self._orphans = [row.copy() for row in rows]

    def _set_old_pair(self, state: dict[str, Any]) -> None:
        """Load a state written before batches: the coordinate in progress and its single pair."""
        D = self.dim
        coord = internal_int(state, "coord", low=0, high=D - 1)
        pending = internal_field(state, "pending")
        self._pairs, self._orphans = [], []
        if pending is not None:
            name = "state['internal']['pending']"
            pending = dict(state_mapping(pending, name))
            if set(pending) != {"z", "stage", "y"}:
                raise StateError(f"{name} must have the keys 'z', 'stage' and 'y', got {sorted(pending)}")
            z = state_float(pending["z"], f"{name}['z']", low=-1.0)
            stage = state_int(pending["stage"], f"{name}['stage']", low=0, high=1)
            y = state_float(pending["y"], f"{name}['y']", allow_none=stage == 0)
            self._pairs = [{"coord": coord, "z": z, "y": [y if stage == 1 else None, None]}]
            coord += 1
        self._queue = list(range(coord, D))

    def _mark_out(self) -> None:
        """Set each started pair's "out" flags from the pending points (restored before the internal state)."""
        P = self.pending_canonical
        for pair in self._pairs:
            pair["out"] = [bool(pair["y"][k] is None and len(P)
                                and np.any(np.max(np.abs(P - self._pair_point(pair, k)), axis=1) <= 1e-9))
                           for k in (0, 1)]

    def diagnostics(self) -> dict[str, Any]:
        """Selection results (see :meth:`SelectThenOptimize.diagnostics`) plus ``rounds`` and evaluations.

        Returns
        -------
        dict
            Also ``selection_evaluations`` (evaluations), ``selection_iterations`` (finite
            differences) and ``selection_rounds`` (completed rounds = samples per coordinate).
        """
        info = super().diagnostics()
        info.update(selection_evaluations=self.selection_evaluations_,
                    selection_iterations=int(self.count_.sum()), selection_rounds=self.rounds_done_)
        return info
