"""DropoutUCB (Li, Gupta, Rana, Nguyen, Venkatesh, Shilton, IJCAI 2017): optimize d random coordinates.

Every iteration keeps ("does not drop") ``d`` of the D coordinates, chosen uniformly at random
without replacement; a GP is fitted on those coordinates of all the data and GP-UCB proposes
their values; the other ``D - d`` coordinates are filled in by one of Li et al.'s rules:

* ``"copy"`` (Dropout-Copy): the values of the best observed point (largest y);
* ``"random"`` (Dropout-Random): uniform values;
* ``"mix"`` (Dropout-Mix, the default): random with probability ``p``, otherwise copied (one draw
  per iteration, for all dropped coordinates). ``p`` is the probability of the *random* fill as
  in Li et al.; SPEC.md P3.B item 2 words it the other way round, which makes no difference at
  the default ``p = 0.5`` (SPEC's proposed value).

Choices where the papers leave room, following the MS-UCB paper's common settings (Tran-The et
al. 2020 ran DropoutUCB as a baseline with d = 5; SPEC.md P3.B):

* 20 uniform initial points in ``[-1, 1]^D``; Matern-5/2 GP with one isotropic length-scale
  (so the fitted hyperparameters carry over from one coordinate subset to the next), refitted
  by marginal likelihood after every observation (``refit_every = 1``; between refits the GP is
  refactorized on the new subset with the previous hyperparameters).
* ``beta_t = "tranthe2020"`` with subspace dimension ``d`` (the MS-UCB paper's weight for a
  d-dimensional search space).
* The d-dimensional UCB is maximized with at most ``acq_budget`` evaluations (default ``300 D``,
  as MS-UCB): a third on uniform random points plus the best observed point's coordinates
  (vectorized), the rest on one stacked L-BFGS-B run from the best ``min(10 D, ...)`` of them
  (:func:`hdbo.methods.ms_ucb.stacked_lbfgsb`, the same local search as MS-UCB).

Evaluations its structure learning needs: none, it learns no structure
(:meth:`~hdbo.methods.base.Method.structure_evaluations` is None). The d kept coordinates are
drawn uniformly afresh at every iteration, never from the data, so a given coordinate is kept
with probability d / D whatever was observed (5% at d = 5, D = 100; 1.7% at D = 300); only the
GP's hyperparameters are fitted as it optimizes.

Behaviour to expect (Branin hidden in D = 50, 40 evaluations, 8 problem seeds; simple regret
median / mean): random search 1.15 / 1.29, Dropout-Random 1.03 / 1.04, Dropout-Mix 1.45 / 1.57.
The d = 5 kept coordinates include one of the 2 active ones in only 19% of the iterations, and
the paper's ``beta_t`` (about 40 at d = 5) sends the kept coordinates to faces of the box, so
on a function with few active coordinates DropoutUCB is close to random search (see
``tests/methods/test_dropout_ucb.py``); Li et al. designed it for functions where every
coordinate matters.

References
----------
Li, Gupta, Rana, Nguyen, Venkatesh, Shilton. High dimensional Bayesian optimization using
dropout. IJCAI 2017, Algorithm 1 and Section 3.2 (fill-in strategies).
Tran-The, Gupta, Rana, Venkatesh, AAAI 2020 (the baseline setting); SPEC.md P3.B.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_choice, check_int, check_real
from ..acquisition import UCB
from ..gp import GaussianProcess
from ..space import Box
from ._state import internal_indices
from ._subspace_common import MultiStartSubspaceMixin, stacked_lbfgsb
from .gp_based import GPMethod
from .registry import register

__all__ = ["DropoutUCB"]

Array = NDArray[np.float64]


@register
class DropoutUCB(MultiStartSubspaceMixin, GPMethod):
    """GP-UCB on d randomly kept coordinates per iteration; see the module docstring.

    Parameters
    ----------
    bounds : Box or array_like of shape (D, 2)
        Search box (the method works on ``[-1, 1]^D``).
    d : int, default 5
        Coordinates optimized per iteration, ``1 <= d <= D``.
    fill : {"mix", "copy", "random"}, default "mix"
        How the other coordinates are set.
    p : float, default 0.5
        With ``fill="mix"``: probability of the random fill.
    n_starts : int, optional
        L-BFGS-B starts (default ``10 D``), capped by ``local budget // min_evals_per_start``.
    screen_fraction : float, default 1/3
        Fraction of ``acq_budget`` spent on random screening, in (0, 1).
    min_evals_per_start : int, default 10
        Smallest local budget a start may get.
    acq_budget : int, optional
        Acquisition evaluations per iteration (default ``300 D``).
    beta : str or float, default "tranthe2020"
        beta_t schedule (with subspace dimension d) or a constant.
    beta_params : dict, optional
        Schedule parameters.
    n_init, refit_every, refit_growth, kernel, noise_variance, fit_noise, n_restarts, restart_schedule,
    lengthscale_bounds
        GP options (:class:`~hdbo.methods.gp_based.GPMethod`); defaults: 20 initial points,
        Matern-5/2, refit after every observation.
    ard : bool, default False
        Must be False: the coordinate subset changes every iteration.
    maximizer : {"lbfgsb"}
        Accepted for the common interface.
    polish : bool, default False
        Must be False.

    Raises
    ------
    TypeError, ValueError
        If an option is invalid (``d`` out of range, ``p`` not in [0, 1], ``ard=True``, ...).

    Attributes
    ----------
    dims_ : ndarray of int, shape (d,)
        The coordinates optimized at the last iteration.

    Notes
    -----
    Batches: every proposal is one iteration, with its own d kept coordinates. The GP on
    those coordinates is conditioned on the pending points' values there (their projections,
    as the told points are projected) at its posterior mean, GP-BUCB's hallucination
    (:class:`~hdbo.methods._subspace_common.SubspaceUCBMixin`), so the UCB of a batch's later
    points is lower where earlier ones are out (should the best point be a pending one all the
    same, the best other searched values of the kept coordinates are used); ``ask(n)`` returns
    ``n`` points. The iteration ``t`` of ``beta_t`` counts the pending proposals. The
    hyperparameters are refitted only on told values: the later points of a batch reuse them
    on their own coordinates.
    """

    name = "dropout-ucb"
    domain = "symmetric"

    def __init__(
        self,
        bounds: Box | ArrayLike,
        *,
        d: int = 5,
        fill: str = "mix",
        p: float = 0.5,
        **kwargs: Any,
    ) -> None:
        if kwargs.get("ard"):
            raise ValueError("dropout-ucb needs an isotropic kernel (ard=False): its coordinate subset changes "
                             "every iteration")
        super().__init__(bounds, **kwargs)
        self.d = check_int(d, "d", low=1, high=self.dim)
        self.fill = check_choice(fill, "fill", ("mix", "copy", "random"))
        self.p = check_real(p, "p", low=0, high=1)
        self._set_subspace_dim(self.d)
        self.dims_: NDArray[np.int64] | None = None

    # ------------------------------------------------------------------ model on the kept coordinates
    def _gp_input_dim(self) -> int:
        return self.d

    def _gp_data(self) -> tuple[Array, Array]:
        X, y = self.X_obs, self.y_obs
        return (X if self.dims_ is None else X[:, self.dims_]), y

    def _pending_gp_inputs(self) -> Array:
        """The pending points on this iteration's kept coordinates, shape (n_pending, d)."""
        assert self.dims_ is not None, "_sync_gp draws the coordinates first"
        return self.pending_canonical[:, self.dims_]

    def _sync_gp(self) -> GaussianProcess:
        """Draw this iteration's coordinates, then fit the GP on them (re-learning on schedule)."""
        self.dims_ = np.sort(self.rng.choice(self.dim, size=self.d, replace=False))
        X, y = self._gp_data()
        due = self.gp_ is None or y.size - self._n_at_refit >= self.refit_every
        gp = self.gp_ if self.gp_ is not None else self._make_gp()
        if due:
            self._schedule_restarts(gp, y.size)
        self.gp_ = gp.fit(X, y, optimize=due, rng=self.rng)
        if due:
            self._n_at_refit = y.size
        return self.gp_

    # ------------------------------------------------------------------ acquisition
    def _acquire(self, gp: GaussianProcess) -> Array:
        assert self.dims_ is not None
        d = self.d
        acq = UCB(gp, self.beta_t())
        S, L = self._split_budget()
        X, y = self.X_obs, self.y_obs
        best_obs = X[int(np.argmax(y))]
        cand = np.vstack([best_obs[self.dims_][None, :], -1.0 + 2.0 * self.rng.random((S - 1, d))])
        vals = acq(cand)
        vals = np.where(np.isfinite(vals), vals, -np.inf)
        nfev = cand.shape[0]
        k = self._n_local_starts(L, S)
        best_y, best_v = cand[int(np.argmax(vals))], float(np.max(vals))
        Ys, vs = np.empty((0, d)), np.empty(0)
        if k >= 1:
            rows = np.argsort(-vals, kind="stable")[:k]
            Ys, vs, used = stacked_lbfgsb(acq.value_and_grad, cand[rows], vals[rows], L)
            nfev += used
            i = int(np.argmax(vs))
            if vs[i] > best_v:
                best_y, best_v = Ys[i], float(vs[i])

        # fill in the dropped coordinates
        if self.fill == "copy":
            mode = "copy"
        elif self.fill == "random":
            mode = "random"
        else:
            mode = "random" if self.rng.random() < self.p else "copy"
        x = best_obs.copy() if mode == "copy" else -1.0 + 2.0 * self.rng.random(self.dim)
        x[self.dims_] = best_y
        if self.n_pending:
            # a point already out is not proposed again: the best other searched values of the kept coordinates
            Yc, vc = np.vstack([best_y[None, :], Ys, cand]), np.concatenate([[best_v], vs, vals])
            fill, dims = x.copy(), self.dims_

            def point(j: int) -> Array:
                fill[dims] = Yc[j]
                return fill

            i = self._best_not_pending(vc, point)
            if i is not None:
                x[dims], best_v = Yc[i], float(vc[i])
        self.last_acq_nfev_ = nfev
        self.last_ = {"acq_nfev": nfev, "acq_value": best_v, "fill_random": mode == "random",
                      "dims": self.dims_.tolist()}
        return np.clip(x, -1.0, 1.0)

    # ------------------------------------------------------------------ state
    def _get_internal_state(self) -> dict[str, Any]:
        return dict(super()._get_internal_state(), dims=None if self.dims_ is None else self.dims_.tolist())

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        dims = internal_indices(state, "dims", high=self.dim, allow_none=True)
        self.dims_ = None if dims is None else np.asarray(dims, dtype=np.int64)
        super()._set_internal_state(state)

    def diagnostics(self) -> dict[str, Any]:
        """Facts of the last iteration and the GP hyperparameters.

        Returns
        -------
        dict
            ``acq_nfev``, ``acq_value`` (in the GP's standardized units, see
            :mod:`hdbo.acquisition.functions`), ``fill_random`` (whether the dropped coordinates
            were drawn at random), ``dims`` (list), plus ``hyperparameters``.
        """
        return super().diagnostics()
