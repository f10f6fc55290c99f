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

from .._validation import check_real
from ..acquisition import LogEI
from ..gp import GaussianProcess
from ..space import Box
from .gp_based import GPMethod
from .registry import register

__all__ = ["Auto"]

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

    def __init__(self, bounds: Box | ArrayLike, *, xi: float = 0.0, **kwargs: Any) -> None:
        super().__init__(bounds, **kwargs)
        self.xi = check_real(xi, "xi", low=0)
        self._check_maximizer_dim(self.dim)

    def _acquire(self, gp: GaussianProcess) -> NDArray[np.float64]:
        X = self.X_obs
        best = float(np.max(gp.predict(X)[0])) if X.shape[0] else float(np.max(self.y_obs))
        acq = LogEI(gp, best, xi=self.xi)
        return self._maximize(acq, acq.value_and_grad)

    def diagnostics(self) -> dict[str, Any]:
        """The strategy chosen and why, plus the GP's hyperparameters once fitted.

        Returns
        -------
        dict
            ``"choice"`` (str), ``"reason"`` (str) and, after the first model fit,
            ``"hyperparameters"`` as in :meth:`GPMethod.diagnostics`.
        """
        return {"choice": _CHOICE, "reason": _REASON, **super().diagnostics()}
