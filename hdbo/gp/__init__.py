"""Gaussian-process models: kernels and exact regression with incremental updates."""

from __future__ import annotations

from .kernels import Additive, Kernel, Matern, Projected, SquaredExponential, Stationary, make_kernel
from .regression import GaussianProcess

__all__ = [
    "Additive",
    "GaussianProcess",
    "Kernel",
    "Matern",
    "Projected",
    "SquaredExponential",
    "Stationary",
    "make_kernel",
]
