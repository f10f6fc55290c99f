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
defaults to the size of the true active set when the problem provides it; without it (and
without ``rounds``) the constructor raises ``ValueError``.

Evaluations its structure learning needs (:meth:`CWS.structure_evaluations`): one round costs
``2 D`` evaluations (200 at D = 100, 600 at D = 300), and a selection needs several rounds,
so within budgets of 100-300 at those dimensions it cannot select and no optimization phase
would run: the public suite (``experiments/highdim/``) reports it as excluded.

Sample counts (``diagnostics()``): ``selection_evaluations`` (function evaluations, 2 per
finite difference) and ``selection_iterations`` (finite differences).

References
----------
B. Chen, R. M. Castro, A. Krause. Joint optimization and variable selection of
high-dimensional Gaussian processes. ICML 2012, Section 5.
"""

from __future__ import annotations

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
        Number of coordinates to keep (default: the size of ``structure["active_dims"]``).
    rounds : int, optional
        Samples (finite differences) per coordinate; None stops clairvoyantly (needs
        ``structure["active_dims"]``).
    **kwargs
        :class:`~hdbo.methods.hds.SelectThenOptimize` options (``bandwidth`` sets
        ``delta = 3 b``; ``selection_budget``, ``optimize``, ``beta``, ...).

    Raises
    ------
    ValueError
        If ``n_select`` or ``rounds=None`` needs the true active set and the problem does
        not give it, or ``n_select > D``.
    TypeError
        If ``n_select``/``rounds`` is not an int.

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
        if self.n_select is None and self.true_active_ is None:
            raise ValueError("n_select is required when the problem's structure has no 'active_dims'")
        if self.rounds is None and self.true_active_ is None:
            raise ValueError("rounds=None (clairvoyant stopping) needs the problem's structure['active_dims']; "
                             "give rounds")
        self.delta = min(3.0 * self.bandwidth, 2.0)
        self.background_ = self.rng.uniform(-1.0, 1.0, self.dim)
        self.sum_sq_ = np.zeros(self.dim)  # sum over rounds of dy^2, per coordinate
        self.count_ = np.zeros(self.dim, dtype=int)
        self._coord = 0  # coordinate of the pair in progress
        self._pending: dict[str, Any] | None = None
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
        """Number of coordinates kept."""
        return self.n_select if self.n_select is not None else len(self.true_active_ or [])

    def _point(self, i: int, z: float) -> NDArray[np.float64]:
        x = self.background_.copy()
        x[i] = z
        return x

    def _selection_propose(self) -> NDArray[np.float64]:
        if self._pending is None:
            z = float(self.rng.uniform(-1.0, 1.0 - self.delta)) if self.delta < 2.0 else -1.0
            self._pending = {"z": z, "stage": 0, "y": None}
        z = self._pending["z"] + (self.delta if self._pending["stage"] else 0.0)
        return self._point(self._coord, min(z, 1.0))

    def _rank(self) -> list[int]:
        """The ``k`` coordinates with the largest mean ``dy^2`` (unsampled ones last), sorted."""
        mean = np.where(self.count_ > 0, self.sum_sq_ / np.maximum(self.count_, 1), -np.inf)
        order = [int(i) for i in np.argsort(-mean, kind="stable") if self.count_[i] > 0]
        return sorted(order[: self.k])

    def _selection_consume(self, u: NDArray[np.float64], y: float) -> None:
        if self._pending is None or np.max(np.abs(u - self._selection_propose())) > 1e-9:
            return  # not the pending query (e.g. a replaced proposal): not part of the test
        self.selection_evaluations_ += 1
        if not np.isfinite(y):
            self._pending = None  # drop the pair; the same coordinate is sampled again
        elif self._pending["stage"] == 0:
            self._pending["stage"], self._pending["y"] = 1, float(y)
        else:
            dy = self._pending["y"] - float(y)
            self.sum_sq_[self._coord] += dy * dy
            self.count_[self._coord] += 1
            self._pending = None
            self._coord += 1
            if self._coord == self.dim:  # a round ends: rank the coordinates
                self._coord = 0
                self.rounds_done_ += 1
                self.top_ = self._rank()
                if self.rounds is not None:
                    self._stopped = self.rounds_done_ >= self.rounds
                else:
                    self._stopped = self.top_ == self.true_active_
                # Stop when the budget cannot pay for another full round.
                if self.selection_limit - self.selection_evaluations_ < 2 * self.dim:
                    self._stopped = True
        if not self._stopped and self.selection_evaluations_ >= self.selection_limit:
            # Budget spent within a round: keep the ranking of the last full round, or, if
            # no round was completed, rank the coordinates sampled so far.
            self._stopped = True
            self._pending = None
            if self.rounds_done_ == 0:
                self.top_ = self._rank()

    def _selection_done(self) -> bool:
        return self._stopped

    def _selection_result(self) -> list[int]:
        return list(self.top_)

    def _background(self) -> NDArray[np.float64]:
        return self.background_

    def _get_internal_state(self) -> dict[str, Any]:
        state = super()._get_internal_state()
        state.update(background=self.background_.tolist(), sum_sq=self.sum_sq_.tolist(), count=self.count_.tolist(),
                     coord=self._coord, pending=self._pending, rounds_done=self.rounds_done_,
                     selection_evaluations=self.selection_evaluations_, stopped=self._stopped, top=self.top_)
        return state

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        D = self.dim
        self.background_ = internal_array(state, "background", shape=(D,), low=-1.0, high=1.0)
        self.sum_sq_ = internal_array(state, "sum_sq", shape=(D,), low=0.0)
        count = internal_array(state, "count", shape=(D,), low=0.0)
        if np.any(count != np.round(count)):
            raise StateError(f"state['internal']['count'] must hold non-negative integers, got {count.tolist()}")
        self.count_ = count.astype(int)
        self._coord = internal_int(state, "coord", low=0, high=D - 1)
        pending = internal_field(state, "pending")
        if pending is not None:
            name = "state['internal']['pending']"
            pending = dict(state_mapping(pending, name))
            if set(pending) != {"z", "stage", "y"}:
                raise StateError(f"{name} must have the keys 'z', 'stage' and 'y', got {sorted(pending)}")
            pending["z"] = state_float(pending["z"], f"{name}['z']", low=-1.0)
            pending["stage"] = state_int(pending["stage"], f"{name}['stage']", low=0, high=1)
            pending["y"] = state_float(pending["y"], f"{name}['y']", allow_none=pending["stage"] == 0)
        self._pending = pending
        self.rounds_done_ = internal_int(state, "rounds_done", low=0)
        self.selection_evaluations_ = internal_int(state, "selection_evaluations", low=0, high=self.n_told)
        self._stopped = internal_bool(state, "stopped")
        self.top_ = internal_indices(state, "top", high=D)
        super()._set_internal_state(state)

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
