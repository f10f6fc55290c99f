"""Gaussian-process models: kernels and exact regression with incremental updates."""

from __future__ import annotations

from .kernels import Additive, Kernel, Matern, Projected, SquaredExponential, Stationary, make_kernel
from .priors import LogNormalPrior, dimension_scaled_prior
from .regression import GaussianProcess

__all__ = [
    "Additive",
    "GaussianProcess",
    "Kernel",
    "LogNormalPrior",
    "Matern",
    "Projected",
    "SquaredExponential",
    "Stationary",
    "dimension_scaled_prior",
    "make_kernel",
]
