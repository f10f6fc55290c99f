"""Priors on a GP's hyperparameters, for maximum a posteriori (MAP) fits.

A :class:`LogNormalPrior` puts an independent normal prior on each log-hyperparameter (a
log-normal prior on the hyperparameter itself), in the order of
:attr:`hdbo.gp.GaussianProcess.theta` (the kernel's hyperparameters, then the noise variance).
An entry with an infinite scale is flat (plain marginal likelihood for that hyperparameter).

:func:`dimension_scaled_prior` is hdbo's default for high-dimensional inputs. Fitting D
length-scales by bare marginal likelihood (ML-II) from a few dozen points overfits: some
length-scales run to their lower bound, others to the upper one, the noise to its floor, and
the posterior carries no information. Hvarfner, Hellsten and Nardi (ICML 2024, "Vanilla
Bayesian Optimization Performs Great in High Dimensions") put a log-normal prior on each
length-scale whose location grows like ``log sqrt(d)``, with ``d`` the number of inputs the
kernel sees, so that the prior complexity of the model does not grow with d. Their prior on
a length-scale l is ``LogNormal(sqrt(2) + log(d) / 2, sqrt(3))`` in l's own units, and the
fit maximizes its density in those units; we optimize over ``log l``, where the same
objective is a normal prior with location ``sqrt(2) - 3 + log(d) / 2`` (the log-density in l
carries the Jacobian term ``-log l``, which shifts the location by ``-sigma^2 = -3``). The
location, about ``0.2 sqrt(d)`` on the unit cube, is also where the fit starts.

Noise: ``LogNormal(-4, 1)`` on the noise variance of the standardized outputs (the same
convention, location ``-5`` in log units), above a floor (see :mod:`hdbo.methods.gp_based`).
Signal variance: ``log s ~ N(0, 1)``, a weak pull toward the standardized outputs' unit
variance.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .kernels import Additive, Kernel, Projected, Stationary

__all__ = ["LogNormalPrior", "dimension_scaled_prior", "kernel_input_dims"]

Array = NDArray[np.float64]

#: Location and scale of the dimension-scaled prior on log length-scales (plus log sqrt(d)).
LENGTHSCALE_LOC = math.sqrt(2.0) - 3.0
LENGTHSCALE_SCALE = math.sqrt(3.0)
#: Location and scale of the prior on the log noise variance (standardized outputs).
NOISE_LOC, NOISE_SCALE = -5.0, 1.0
#: Location and scale of the prior on the log signal variance.
VARIANCE_LOC, VARIANCE_SCALE = 0.0, 1.0


class LogNormalPrior:
    """Independent normal priors on log-hyperparameters.

    Parameters
    ----------
    loc : array_like of shape (p,)
        Prior means of the log-hyperparameters.
    scale : array_like of shape (p,)
        Prior standard deviations, positive; ``inf`` makes an entry flat.

    Raises
    ------
    ValueError
        If the shapes differ, ``loc`` is not finite or a scale is not positive.

    Examples
    --------
    >>> import numpy as np
    >>> prior = LogNormalPrior([0.0, 1.0], [1.0, np.inf])
    >>> lp, grad = prior.log_prob([1.0, 5.0])
    >>> round(lp, 4), [abs(g) for g in grad.tolist()]
    (-0.5, [1.0, 0.0])
    """

    def __init__(self, loc: ArrayLike, scale: ArrayLike) -> None:
        loc = np.asarray(loc, dtype=float).reshape(-1)
        scale = np.asarray(scale, dtype=float).reshape(-1)
        if loc.shape != scale.shape:
            raise ValueError(f"loc and scale must have the same length, got {loc.size} and {scale.size}")
        if not np.all(np.isfinite(loc)):
            raise ValueError("loc must be finite")
        if not np.all(scale > 0):
            raise ValueError("scale must be positive (inf for a flat entry)")
        self.loc = loc
        self.scale = scale

    @property
    def size(self) -> int:
        """Number of hyperparameters p."""
        return int(self.loc.size)

    def log_prob(self, theta: ArrayLike) -> tuple[float, Array]:
        """Log prior density (up to a constant) and its gradient at log-hyperparameters ``theta``.

        Parameters
        ----------
        theta : array_like of shape (p,)

        Returns
        -------
        value : float
            ``-sum((theta - loc)**2 / (2 scale**2))`` over the non-flat entries.
        grad : ndarray of shape (p,)
        """
        theta = np.asarray(theta, dtype=float).reshape(-1)
        if theta.size != self.size:
            raise ValueError(f"theta must have {self.size} entries, got {theta.size}")
        inv_var = 1.0 / self.scale**2  # 0 for a flat entry
        diff = theta - self.loc
        return float(-0.5 * np.sum(inv_var * diff**2)), -inv_var * diff

    def sample(self, rng: np.random.Generator, n: int, bounds: ArrayLike) -> Array:
        """``n`` draws of theta, each entry clipped into its log-space bounds.

        A flat entry is drawn uniformly between its bounds.

        Parameters
        ----------
        rng : numpy.random.Generator
        n : int
        bounds : array_like of shape (p, 2)

        Returns
        -------
        ndarray of shape (n, p)
        """
        bounds = np.asarray(bounds, dtype=float)
        lo, hi = bounds[:, 0], bounds[:, 1]
        flat = ~np.isfinite(self.scale)
        z = rng.standard_normal((n, self.size))
        u = rng.random((n, self.size))
        draws = np.where(flat, lo + (hi - lo) * u, self.loc + np.where(flat, 0.0, self.scale) * z)
        return np.clip(draws, lo, hi)

    def __repr__(self) -> str:
        return f"LogNormalPrior(p={self.size})"


def kernel_input_dims(kernel: Kernel, input_dim: int) -> list[int]:
    """The number of inputs seen by the component owning each kernel hyperparameter.

    Parameters
    ----------
    kernel : Kernel
        A :class:`~hdbo.gp.Stationary`, :class:`~hdbo.gp.Additive` or
        :class:`~hdbo.gp.Projected` kernel (others: ``input_dim`` for every entry).
    input_dim : int
        The number of columns of the GP's training inputs.

    Returns
    -------
    list of int
        One entry per element of ``kernel.theta``: the dimension d that the sub-kernel the
        hyperparameter belongs to is applied to (a group's size, the projected dimension).
    """
    if isinstance(kernel, Stationary):
        d = kernel.dim if kernel.dim is not None else input_dim
        return [int(d)] * kernel.n_params
    if isinstance(kernel, Projected):
        return kernel_input_dims(kernel.base, int(kernel.projection.shape[1]))
    if isinstance(kernel, Additive):
        if kernel.shared:  # one kernel for all groups: the typical group's size
            return kernel_input_dims(kernel.group_kernel(0), max(g.size for g in kernel.groups))
        return [d for j, g in enumerate(kernel.groups) for d in kernel_input_dims(kernel.group_kernel(j), g.size)]
    return [int(input_dim)] * kernel.n_params


def dimension_scaled_prior(kernel: Kernel, input_dim: int) -> LogNormalPrior:
    """hdbo's default prior (see the module docstring) for ``kernel`` on ``input_dim`` inputs.

    Parameters
    ----------
    kernel : Kernel
        The GP's kernel; hyperparameters named ``...variance`` get the signal-variance prior,
        every other one (the length-scales) the dimension-scaled one.
    input_dim : int
        The number of columns of the GP's training inputs.

    Returns
    -------
    LogNormalPrior
        Over ``[kernel.theta..., log noise_variance]``.
    """
    dims = kernel_input_dims(kernel, input_dim)
    loc, scale = [], []
    for name, d in zip(kernel.hyperparameter_names, dims):
        if name.split(".")[-1] == "variance":
            loc.append(VARIANCE_LOC)
            scale.append(VARIANCE_SCALE)
        else:
            loc.append(LENGTHSCALE_LOC + 0.5 * math.log(max(d, 1)))
            scale.append(LENGTHSCALE_SCALE)
    loc.append(NOISE_LOC)
    scale.append(NOISE_SCALE)
    return LogNormalPrior(loc, scale)
