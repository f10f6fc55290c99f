"""GP-EI: expected improvement (Mockus 1978; Jones et al. 1998), the baseline of Kandasamy et al. (2015).

Same model, schedule and acquisition maximizer as :mod:`hdbo.methods.gp_ucb`; the
acquisition is ``E[max(f(x) - y_best - xi, 0)]`` with ``y_best`` the largest observed value,
computed on the GP's standardized posterior (``xi`` in units of the outputs' standard deviation).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_real
from ..acquisition import EI
from ..gp import GaussianProcess
from ..space import Box
from .gp_based import GPMethod
from .registry import register

__all__ = ["GPEI"]


@register
class GPEI(GPMethod):
    """GP expected improvement on the full box.

    Parameters
    ----------
    bounds, seed, budget, structure, n_init, refit_every, kernel, ard, noise_variance,
    fit_noise, n_restarts, restart_schedule, maximizer, acq_budget
        As in :class:`~hdbo.methods.gp_based.GPMethod`.
    xi : float, default 0.0
        Exploration margin added to the incumbent, in units of the GP's output scale (the
        standard deviation of the observed values), so it means the same for ``f`` and
        ``1e-12 f``.

    Raises
    ------
    TypeError, ValueError
        If an option is invalid (see :class:`~hdbo.methods.gp_based.GPMethod`), ``xi`` is
        negative or not finite, or ``maximizer="grid"`` is used with ``D > 3``.
    """

    name = "gp-ei"

    def __init__(self, bounds: Box | ArrayLike, *, xi: float = 0.0, **kwargs: Any) -> None:
        super().__init__(bounds, **kwargs)
        self.xi = check_real(xi, "xi", low=0)
        self._check_maximizer_dim(self.dim)

    def _acquire(self, gp: GaussianProcess) -> NDArray[np.float64]:
        # The incumbent of the GP's own data: with points pending (a batch) the conditioned GP
        # holds them at their believed means (the Kriging believer), which raise the incumbent
        # where they exceed the best value, so EI there drops to zero; otherwise max(y_obs).
        acq = EI(gp, float(np.max(gp.y_)), xi=self.xi)
        return self._maximize(acq, acq.value_and_grad)
