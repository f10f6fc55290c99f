"""Acquisition functions, exploration schedules ``beta_t`` and budgeted acquisition maximizers.

* :mod:`~hdbo.acquisition.functions`: :class:`UCB`, :class:`EI`, :class:`PI` over a model with
  ``predict(X, return_grad=...)``, with analytic input gradients.
* :mod:`~hdbo.acquisition.schedules`: the papers' ``beta_t`` formulas and a name registry.
* :mod:`~hdbo.acquisition.maximizers`: DIRECT, multi-start L-BFGS-B, random and grid search,
  all counting acquisition evaluations against an exact budget.
"""

from __future__ import annotations

from .functions import ACQUISITIONS, EI, PI, UCB, Acquisition, LogEI, acquisition_from_name
from .maximizers import (
    MAXIMIZERS,
    MaximizeResult,
    Maximizer,
    maximize,
    maximize_direct,
    maximize_direct_many,
    maximize_grid,
    maximize_lbfgsb,
    maximize_local,
    maximize_random,
    perturb_subsets,
)
from .schedules import (
    BETA_SCHEDULES,
    available_beta_schedules,
    constant,
    get_beta_schedule,
    kandasamy2015,
    kandasamy2015_theory,
    srinivas_continuous,
    srinivas_finite,
    tranthe2020,
)

__all__ = [
    "Acquisition",
    "UCB",
    "EI",
    "LogEI",
    "PI",
    "ACQUISITIONS",
    "acquisition_from_name",
    "MaximizeResult",
    "Maximizer",
    "MAXIMIZERS",
    "maximize",
    "maximize_direct",
    "maximize_direct_many",
    "maximize_lbfgsb",
    "maximize_local",
    "perturb_subsets",
    "maximize_random",
    "maximize_grid",
    "BETA_SCHEDULES",
    "available_beta_schedules",
    "get_beta_schedule",
    "srinivas_finite",
    "srinivas_continuous",
    "constant",
    "kandasamy2015",
    "kandasamy2015_theory",
    "tranthe2020",
]
