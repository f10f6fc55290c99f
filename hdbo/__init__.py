"""hdbo: Bayesian optimization of expensive, noisy black-box functions in high dimensions.

Public API: :func:`minimize`, :func:`maximize`, :class:`Optimizer` (ask/tell),
:class:`OptimizeResult`, :class:`Box`. Methods, problems, GP models and acquisition
maximizers live in the subpackages :mod:`hdbo.methods`, :mod:`hdbo.problems`,
:mod:`hdbo.gp` and :mod:`hdbo.acquisition`.
"""

from __future__ import annotations

from .api import History, OptimizeResult, Optimizer, maximize, minimize
from .methods import available_methods
from .space import Box

__version__ = "0.1.0"

__all__ = ["Box", "History", "OptimizeResult", "Optimizer", "available_methods", "maximize", "minimize", "__version__"]
