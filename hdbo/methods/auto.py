"""``method="auto"``: hdbo's default for a black box of any dimension.

What it runs today, for every D: a vanilla GP that does not overfit in high dimension, an
acquisition that keeps its gradient far from the data, and a search that works in hundreds of
dimensions (the recipe of Hvarfner, Hellsten and Nardi, ICML 2024, with the local search
behaviour that Papenmeier, Poloczek and Nardi, ICML 2025, found to matter):

* a GP with a Matern-5/2 ARD kernel whose hyperparameters are fitted by MAP under the
  dimension-scaled prior (:func:`hdbo.gp.dimension_scaled_prior`: log-normal length-scale
  priors located at about ``0.2 sqrt(D)`` of the box, a noise floor of 1e-6), refitted on the
  schedule of :class:`~hdbo.methods.gp_based.GPMethod` and updated in O(t^2) in between;
* LogEI (:class:`hdbo.acquisition.LogEI`, Ament et al. 2023) over the best posterior mean at
  the observed points (the best observed value for noise-free data);
* the acquisition maximized by :func:`~hdbo.acquisition.maximizers.maximize_local`: the best
  observed points with random subsets of about 20 coordinates changed, plus uniform points,
  then L-BFGS-B with analytic gradients from the best five.

``diagnostics()`` reports the choice (``"choice"``) and why (``"reason"``), so that a later
version that picks among several strategies from the data (a structured method, a trust
region) keeps the same contract; the choice is part of the state.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_bool, check_real
from ..acquisition import LogEI
from ..gp import GaussianProcess
from ..space import Box
from .gp_based import GPMethod
from ._state import state_float, state_int, state_mapping
from .registry import register

__all__ = ["Auto"]

# Trust region (option trust_region=True): TuRBO-1's side lengths on the unit cube (initial 0.8,
# between 0.5**7 and 1.6) and its success tolerance 3; its failure tolerance max(4, D) exceeds
# the whole budget in hundreds of dimensions, so ours is 5 (our choice).
_TR_INIT, _TR_MIN, _TR_MAX, _TR_SUCC, _TR_FAIL = 0.8, 0.5**7, 1.6, 3, 5

_CHOICE = "vanilla-gp"
_REASON = ("the only strategy of this version: MAP GP with the dimension-scaled prior, LogEI, "
           "local acquisition search; it needs no structure in the objective")


@register
class Auto(GPMethod):
    """hdbo's default method (see the module docstring).

    Parameters
    ----------
    bounds, seed, budget, structure, n_init, refit_every, kernel, ard, noise_variance,
    fit_noise, n_restarts, maximizer, acq_budget, polish, refit_growth,
    lengthscale_bounds, gp_prior
        As in :class:`~hdbo.methods.gp_based.GPMethod` (defaults: ``n_init=10``, the
        dimension-scaled prior, the local acquisition search).
    xi : float, default 0.0
        Margin over the incumbent, in units of the outputs' standard deviation.
    trust_region : bool, default False
        Search the acquisition only inside a box around the best point (TuRBO-1's rule,
        Eriksson et al. 2019: side ``L`` times the relative length-scales, ``L`` starting at
        0.8 of the unit cube, doubled after 3 improving evaluations up to 1.6, halved after 5
        that do not improve, reset when below ``0.5**7``). Off by default: see
        ``benchmarks/dev_sweep_2026-11-25.md`` for what it did on the development instances.

    Raises
    ------
    TypeError, ValueError
        If an option is invalid (see :class:`~hdbo.methods.gp_based.GPMethod`) or ``xi`` is
        negative or not finite.

    Examples
    --------
    >>> import numpy as np
    >>> import hdbo
    >>> res = hdbo.minimize(lambda x: float(np.sum((x - 0.3) ** 2)), [(0, 1)] * 5, budget=15, seed=0)
    >>> res.nfev
    15
    """

    name = "auto"

    def __init__(self, bounds: Box | ArrayLike, *, xi: float = 0.0, trust_region: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(bounds, **kwargs)
        self.xi = check_real(xi, "xi", low=0)
        self.trust_region = check_bool(trust_region, "trust_region")
        self._check_maximizer_dim(self.dim)
        self._tr = {"length": _TR_INIT, "succ": 0, "fail": 0, "best": None}

    def _on_tell(self, u: NDArray[np.float64], y: float) -> None:
        super()._on_tell(u, y)
        if self.trust_region and np.isfinite(y):
            self._update_trust_region()

    def _update_trust_region(self) -> None:
        """TuRBO's rule (Eriksson et al. 2019) for one new successful observation."""
        tr, best = self._tr, float(np.max(self.y_obs))
        if tr["best"] is not None:
            if best > tr["best"] + 1e-3 * abs(tr["best"]):
                tr["succ"], tr["fail"] = tr["succ"] + 1, 0
            else:
                tr["succ"], tr["fail"] = 0, tr["fail"] + 1
            if tr["succ"] >= _TR_SUCC:
                tr["length"], tr["succ"] = min(2.0 * tr["length"], _TR_MAX), 0
            elif tr["fail"] >= _TR_FAIL:
                tr["length"], tr["fail"] = tr["length"] / 2.0, 0
                if tr["length"] < _TR_MIN:  # collapsed: start a fresh region around the incumbent
                    tr["length"] = _TR_INIT
        tr["best"] = best

    def _trust_region_bounds(self, gp: GaussianProcess) -> NDArray[np.float64]:
        centre = self.X_obs[int(np.argmax(self.y_obs))]
        ls = getattr(gp.kernel, "lengthscale", np.ones(1))
        ls = np.broadcast_to(np.asarray(ls, dtype=float), (self.dim,))
        w = ls / np.exp(np.mean(np.log(ls)))  # relative widths, geometric mean 1
        half = 0.5 * self._tr["length"] * w
        return np.column_stack([np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)])

    def _acquire(self, gp: GaussianProcess) -> NDArray[np.float64]:
        X = self.X_obs
        best = float(np.max(gp.predict(X)[0])) if X.shape[0] else float(np.max(self.y_obs))
        acq = LogEI(gp, best, xi=self.xi)
        if not self.trust_region:
            return self._maximize(acq, acq.value_and_grad)
        return self._maximize(acq, acq.value_and_grad, bounds=self._trust_region_bounds(gp))

    def _get_internal_state(self) -> dict[str, Any]:
        state = super()._get_internal_state()
        if self.trust_region:
            state["trust_region"] = dict(self._tr)
        return state

    def _set_internal_state(self, state: dict[str, Any]) -> None:
        super()._set_internal_state(state)
        if self.trust_region and "trust_region" in state:
            tr = state_mapping(state["trust_region"], "state['internal']['trust_region']")
            name = "state['internal']['trust_region']"
            self._tr = {
                "length": state_float(tr.get("length"), f"{name}['length']", low=0.0, low_inclusive=False),
                "succ": state_int(tr.get("succ"), f"{name}['succ']", low=0),
                "fail": state_int(tr.get("fail"), f"{name}['fail']", low=0),
                "best": None if tr.get("best") is None else state_float(tr.get("best"), f"{name}['best']"),
            }

    def diagnostics(self) -> dict[str, Any]:
        """The strategy chosen and why, plus the GP's hyperparameters once fitted.

        Returns
        -------
        dict
            ``"choice"`` (str), ``"reason"`` (str) and, after the first model fit,
            ``"hyperparameters"`` as in :meth:`GPMethod.diagnostics`.
        """
        return {"choice": _CHOICE, "reason": _REASON, **super().diagnostics()}
