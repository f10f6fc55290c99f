"""Optimization methods, one module per algorithm, looked up by name in the registry."""

from __future__ import annotations

from .base import Method
from .registry import available_methods, get_method_class, make_method, register
from . import add_gp_ucb, direct_search, gp_ei, gp_ucb, random_search  # noqa: F401  (register the methods)
from . import dropout_ucb, line_bo, ms_ucb  # noqa: F401  (Tran-The et al. 2020 and its baselines)
from . import rpp_gp_ucb  # noqa: F401  (Li et al. 2016)
from . import hesbo, rembo, sre  # noqa: F401  (embedding baselines of Tran-The et al. 2020)
from . import si_bo, subspace_ucb  # noqa: F401  (Djolonga et al. 2013 and its baselines)
from . import cws, hds  # noqa: F401  (Chen et al. 2012 and its CWS baseline)
from . import auto  # noqa: F401  (the practitioner's default)
from . import peers  # noqa: F401  (BoTorch, Optuna, CMA-ES; their packages are imported when a peer is built)

__all__ = ["Method", "available_methods", "get_method_class", "make_method", "register"]
