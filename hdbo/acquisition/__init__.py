"""Acquisition functions, exploration schedules ``beta_t`` and budgeted acquisition maximizers.

* :mod:`~hdbo.acquisition.functions`: :class:`UCB`, :class:`EI`, :class:`PI` over a model with
  ``predict(X, return_grad=...)``, with analytic input gradients.
* :mod:`~hdbo.acquisition.schedules`: the papers' ``beta_t`` formulas and a name registry.
* :mod:`~hdbo.acquisition.maximizers`: DIRECT, multi-start L-BFGS-B, random and grid search,
  all counting acquisition evaluations against an exact budget.
"""

from __future__ import annotations

# Each module's ``__all__`` is its public part; the package re-exports exactly those names.
from . import functions, maximizers, schedules
from .functions import *  # noqa: F403
from .maximizers import *  # noqa: F403
from .schedules import *  # noqa: F403

__all__ = [*functions.__all__, *maximizers.__all__, *schedules.__all__]
