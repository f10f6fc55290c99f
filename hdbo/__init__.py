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

# Subpackages reachable as attributes of ``hdbo`` without an explicit import
# (``import hdbo; hdbo.problems.get("galaxy-likelihood", dim=20)``). They are imported on first
# access (PEP 562), so ``import hdbo`` stays as cheap as before.
_SUBPACKAGES = frozenset({"acquisition", "experiments", "gp", "integrations", "methods", "problems", "structure"})


def __getattr__(name: str):
    if name in _SUBPACKAGES:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _SUBPACKAGES)
