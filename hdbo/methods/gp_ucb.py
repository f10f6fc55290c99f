"""GP-UCB (Srinivas et al., 2010) on the full D-dimensional box: the baseline of every paper.

``x_t = argmax_x mu_{t-1}(x) + sqrt(beta_t) sigma_{t-1}(x)``, the acquisition maximized by
DIRECT with ``min(5000, 100 D)`` evaluations by default (Kandasamy et al. 2015, §5), the
hyperparameters re-learned every ``refit_every`` observations (N_cyc = 25) after
``n_init = 10`` uniform random points.

beta_t: ``"kandasamy2015"`` (default) is ``0.2 D log(2t)``, the practical schedule used for
GP-UCB by Kandasamy et al. (2015) and Li et al. (2016); any name of
:func:`hdbo.acquisition.available_beta_schedules` or a float (constant) may be given, with
``beta_params`` for the schedule's parameters (``d``/``dim`` default to D).

References
----------
Srinivas, Krause, Kakade, Seeger. Gaussian process optimization in the bandit setting:
no regret and experimental design. ICML 2010.
"""

from __future__ import annotations

import inspect

from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._validation import check_real
from ..acquisition import UCB
from ..acquisition.schedules import BETA_SCHEDULES, get_beta_schedule
from ..gp import GaussianProcess
from ..space import Box
from .gp_based import GPMethod
from .registry import register

__all__ = ["GPUCB", "resolve_beta"]


def resolve_beta(beta: str | float, beta_params: dict[str, Any] | None, dim: int) -> Callable[[int], float]:
    """Turn a schedule name (or a positive constant) plus parameters into ``t -> beta_t``.

    Parameters
    ----------
    beta : str or float
        A name from :func:`hdbo.acquisition.available_beta_schedules`, or a positive
        constant (the ``"constant"`` schedule).
    beta_params : dict or None
        The schedule's parameters (ignored for a constant). A parameter named ``d`` or
        ``dim`` that is not given defaults to ``dim``.
    dim : int
        The dimension the schedule's ``d``/``dim`` defaults to.

    Returns
    -------
    callable
        ``t -> beta_t`` (see :func:`hdbo.acquisition.get_beta_schedule`).

    Raises
    ------
    TypeError
        If ``beta`` is neither a string nor a real number, or a parameter has the wrong type.
    ValueError
        If a constant is not positive and finite, the schedule name is unknown, or its
        parameters are missing, unknown or invalid.
    """
    if isinstance(beta, (int, float)) and not isinstance(beta, bool):
        return get_beta_schedule("constant", value=check_real(beta, "beta", low=0, low_inclusive=False))
    if not isinstance(beta, str):
        raise TypeError(f"beta must be a schedule name or a positive float, got {type(beta).__name__}")
    params = dict(beta_params or {})
    if beta in BETA_SCHEDULES:
        for key in ("d", "dim"):
            if key in inspect.signature(BETA_SCHEDULES[beta]).parameters:
                params.setdefault(key, dim)
    return get_beta_schedule(beta, **params)


class _ScheduledUCB(GPMethod):
    """Base of the GP methods that weigh exploration by a ``beta_t`` schedule (GP-UCB, Add-GP-UCB).

    A subclass's ``__init__`` sets ``_beta_fn``, the schedule from :func:`resolve_beta`; the
    other parameters are those of :class:`~hdbo.methods.gp_based.GPMethod`.
    """

    _beta_fn: Callable[[int], float]

    def beta_t(self, t: int | None = None) -> float:
        """The exploration weight of an iteration.

        Parameters
        ----------
        t : int, optional
            Iteration, ``t >= 1``; default :attr:`iteration`, the upcoming query.

        Returns
        -------
        float
        """
        return float(self._beta_fn(self.iteration if t is None else t))


@register
class GPUCB(_ScheduledUCB):
    """GP-UCB on the full box (see the module docstring).

    Parameters
    ----------
    bounds, seed, budget, structure, n_init, refit_every, kernel, ard, noise_variance,
    fit_noise, n_restarts, restart_schedule, maximizer, acq_budget
        As in :class:`~hdbo.methods.gp_based.GPMethod`.
    beta : str or float, default "kandasamy2015"
        beta_t schedule name, or a constant.
    beta_params : dict, optional
        Parameters of the schedule (``d``/``dim`` default to D).

    Raises
    ------
    TypeError, ValueError
        If an option is invalid (see :class:`~hdbo.methods.gp_based.GPMethod` and
        :func:`resolve_beta`), or ``maximizer="grid"`` is used with ``D > 3``.

    Examples
    --------
    >>> import numpy as np
    >>> from hdbo.methods import make_method
    >>> m = make_method("gp-ucb", [(0, 1)] * 3, seed=0, n_init=3, acq_budget=50)
    >>> for _ in range(5):
    ...     x = m.ask()
    ...     m.tell(x, -float(np.sum((x - 0.3) ** 2)))
    >>> m.n_told
    5
    """

    name = "gp-ucb"

    def __init__(
        self,
        bounds: Box | ArrayLike,
        *,
        beta: str | float = "kandasamy2015",
        beta_params: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(bounds, **kwargs)
        self.beta = beta
        self.beta_params = dict(beta_params or {})
        self._beta_fn = resolve_beta(beta, self.beta_params, self.dim)
        self._check_maximizer_dim(self.dim)

    def _acquire(self, gp: GaussianProcess) -> NDArray[np.float64]:
        acq = UCB(gp, self.beta_t())
        return self._maximize(acq, acq.value_and_grad)

