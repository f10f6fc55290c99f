"""Acquisition functions over a GP posterior: UCB, expected improvement, probability of improvement.

hdbo maximizes, so every acquisition here is large where a query looks promising. Each one
wraps a *model* that exposes the posterior through

``model.predict(X, return_grad=False) -> (mean, std)`` with arrays of shape (n,), and
``model.predict(X, return_grad=True) -> (mean, std, dmean, dstd)`` with gradients of shape (n, d).

The acquisition objects are vectorized: ``acq(X)`` evaluates a batch, and
``acq.value_and_grad(X)`` adds the analytic input gradient obtained by the chain rule through
the posterior mean and standard deviation. They are exactly the callables the maximizers in
:mod:`hdbo.acquisition.maximizers` expect.

Units. On a :class:`~hdbo.gp.GaussianProcess` the acquisitions are computed on its
standardized posterior, the posterior of ``(f - y_shift_) / y_scale_``
(:meth:`~hdbo.gp.GaussianProcess.predict` with ``standardized=True``): UCB values are
``(mean + sqrt(beta) std - y_shift_) / y_scale_``, EI values are divided by ``y_scale_``, PI is
unchanged, ``best`` is given in raw units and ``xi`` in units of ``y_scale_``. The maximizer of
each is the same as in raw units; what changes is that the values, and so the tolerances of the
maximizers (DIRECT's ``eps |f_min|``, L-BFGS-B's ``ftol`` and ``pgtol``), no longer depend on the
objective's units: a GP method proposes the same points for ``f``, ``1e-12 f`` and ``f + 1e12``.
Any other model is used in its own units.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import erfcx, log_ndtr, ndtr

from .._docstrings import fill_doc
from .._validation import check_real
from ..gp import GaussianProcess
from ..gp.kernels import _as_2d

__all__ = ["Acquisition", "UCB", "EI", "LogEI", "PI", "acquisition_from_name", "ACQUISITIONS"]

Array = NDArray[np.float64]

_SQRT_HALF_PI = math.sqrt(math.pi / 2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# Below z = -40 the standard normal density underflows to 0 in float64, so EI and PI are
# exactly 0 there; clipping keeps erfcx away from inf * 0.
_Z_MIN = -40.0

# Docstring sections shared by the acquisitions (filled in by ``fill_doc``).
_DOC = {
    "query_points": """
        Parameters
        ----------
        X : array_like of shape (n, d) or (d,)
            Query points; a 1-D array is one point.
    """,
    "raises_ndim": """
        Raises
        ------
        ValueError
            If X has more than two dimensions.
    """,
    "raises_as_ei": """
        Raises
        ------
        TypeError, ValueError
            As for :class:`EI`.
    """,
}


def _norm_pdf(z: Array) -> Array:
    return _INV_SQRT_2PI * np.exp(-0.5 * z * z)


class Acquisition(ABC):
    """Base class: turns the posterior (mean, std) of ``model`` into an acquisition value.

    Subclasses implement :meth:`_from_moments`, which maps ``(mean, std)`` to the values and
    to the partial derivatives with respect to ``mean`` and ``std``; the input gradient
    follows by the chain rule.

    Parameters
    ----------
    model : object
        Anything with ``predict(X, return_grad=...)`` as described in the module docstring.

    Raises
    ------
    TypeError
        If ``model`` has no ``predict`` method.
    """

    def __init__(self, model: Any) -> None:
        if not callable(getattr(model, "predict", None)):
            raise TypeError(
                f"model must have a predict(X, return_grad=...) method, got {type(model).__name__}"
            )
        self.model = model
        # a GP is used in its standardized units (module docstring)
        self._standardized = isinstance(model, GaussianProcess)

    # ------------------------------------------------------------------ public interface
    @fill_doc(**_DOC)
    def __call__(self, X: ArrayLike) -> Array:
        """Acquisition values.

        %(query_points)s

        Returns
        -------
        ndarray of shape (n,)
            Values (shape (1,) for a single point).

        %(raises_ndim)s
        """
        X = _as_2d(X)
        units = {"standardized": True} if self._standardized else {}
        # A fitted GaussianProcess gives the same values with less per-call overhead.
        fast, X_train = getattr(self.model, "posterior_fn", None), getattr(self.model, "X_", None)
        if fast is not None and X_train is not None and X.shape[1] == X_train.shape[1]:
            mean, std = fast(**units)(X)
        else:
            mean, std = self.model.predict(X, return_grad=False, **units)
        mean, std = self._moments(mean, std, X.shape[0])
        return self._from_moments(mean, std)[0]

    @fill_doc(**_DOC)
    def value_and_grad(self, X: ArrayLike) -> tuple[Array, Array]:
        """Acquisition values and their gradients with respect to the inputs.

        %(query_points)s

        Returns
        -------
        values : ndarray of shape (n,)
        grads : ndarray of shape (n, d)
            Row i is the gradient at ``X[i]``.

        %(raises_ndim)s
        """
        X = _as_2d(X)
        n, d = X.shape
        units = {"standardized": True} if self._standardized else {}
        mean, std, dmean, dstd = self.model.predict(X, return_grad=True, **units)
        mean, std = self._moments(mean, std, n)
        dmean = np.asarray(dmean, dtype=float).reshape(n, d)
        dstd = np.asarray(dstd, dtype=float).reshape(n, d)
        values, d_dmean, d_dstd = self._from_moments(mean, std)
        return values, d_dmean[:, None] * dmean + d_dstd[:, None] * dstd

    # ------------------------------------------------------------------ helpers
    @abstractmethod
    def _from_moments(self, mean: Array, std: Array) -> tuple[Array, Array, Array]:
        """Return ``(values, dvalue/dmean, dvalue/dstd)``, each of shape (n,)."""

    @staticmethod
    def _moments(mean: ArrayLike, std: ArrayLike, n: int) -> tuple[Array, Array]:
        mean = np.asarray(mean, dtype=float).reshape(n)
        # A GP may return tiny negative variances turned into std by round-off; clamp at 0.
        std = np.maximum(np.asarray(std, dtype=float).reshape(n), 0.0)
        return mean, std

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if k != "model")
        return f"{type(self).__name__}({params})"


class UCB(Acquisition):
    """Upper confidence bound ``mean(x) + sqrt(beta) * std(x)`` (GP-UCB).

    On a :class:`~hdbo.gp.GaussianProcess`, in its standardized units (module docstring).

    Parameters
    ----------
    model : object
        Posterior with ``predict(X, return_grad=...)``.
    beta : float
        Exploration weight ``beta_t >= 0`` (see :mod:`hdbo.acquisition.schedules`).

    Raises
    ------
    TypeError
        If ``beta`` is not a real number, or ``model`` has no ``predict`` method.
    ValueError
        If ``beta`` is negative or not finite.

    References
    ----------
    N. Srinivas, A. Krause, S. Kakade, M. Seeger. Gaussian process optimization in the bandit
    setting: no regret and experimental design. ICML 2010 (the GP-UCB rule, SPEC 0.A.3).

    Examples
    --------
    >>> class Flat:
    ...     def predict(self, X, return_grad=False):
    ...         return np.zeros(len(X)), np.ones(len(X))
    >>> UCB(Flat(), beta=4.0)(np.zeros((2, 3)))
    array([2., 2.])
    """

    def __init__(self, model: Any, beta: float) -> None:
        super().__init__(model)
        self.beta = check_real(beta, "beta", low=0)

    def _from_moments(self, mean: Array, std: Array) -> tuple[Array, Array, Array]:
        root = math.sqrt(self.beta)
        return mean + root * std, np.ones_like(mean), np.full_like(std, root)


class _Improvement(Acquisition):
    """Shared set-up of EI and PI: incumbent ``best`` and margin ``xi``."""

    def __init__(self, model: Any, best: float, xi: float = 0.0) -> None:
        super().__init__(model)
        self.best = check_real(best, "best")
        self.xi = check_real(xi, "xi", low=0)

    def _best_in_model_units(self) -> float:
        """``best`` in the units of the moments: ``(best - y_shift_) / y_scale_`` on a GP."""
        if not self._standardized:
            return self.best
        return float(self.model.transform_outputs([self.best])[0])

    def _z(self, mean: Array, std: Array) -> tuple[Array, Array]:
        """Improvement ``mean - best - xi`` and ``z = improvement / std``.

        Where ``std == 0`` the score is ``+inf``/``-inf`` by the sign of the improvement (0 for
        none), which makes the normal cdf an indicator and the density 0: the noise-free limits.
        """
        imp = mean - self._best_in_model_units() - self.xi
        with np.errstate(divide="ignore", invalid="ignore"):
            z = imp / std
        return imp, np.nan_to_num(z, nan=0.0, posinf=np.inf, neginf=-np.inf)


class EI(_Improvement):
    """Expected improvement over the incumbent, for maximization.

    ``EI(x) = E[max(f(x) - best - xi, 0)] = (mean - best - xi) Phi(z) + std phi(z)`` with
    ``z = (mean - best - xi) / std``. Where ``std == 0`` it equals ``max(mean - best - xi, 0)``.

    Parameters
    ----------
    model : object
        Posterior with ``predict(X, return_grad=...)``.
    best : float
        Incumbent value (usually the best observation or best posterior mean so far), in the
        objective's units.
    xi : float, default 0.0
        Non-negative margin that favours exploration; on a :class:`~hdbo.gp.GaussianProcess`
        in units of its ``y_scale_`` (the outputs' standard deviation), else in the
        objective's units.

    Raises
    ------
    TypeError
        If ``best`` or ``xi`` is not a real number, or ``model`` has no ``predict`` method.
    ValueError
        If ``best`` or ``xi`` is not finite, or ``xi < 0``.

    Notes
    -----
    For ``z < 0`` the value is computed as ``std phi(z) (1 + z sqrt(pi/2) erfcx(-z/sqrt 2))``,
    which avoids the cancellation of the textbook form deep in the tail. The derivatives are
    ``dEI/dmean = Phi(z)`` and ``dEI/dstd = phi(z)``.

    References
    ----------
    D. R. Jones, M. Schonlau, W. J. Welch. Efficient global optimization of expensive
    black-box functions. J. Global Optimization 13, 1998.
    """

    def _from_moments(self, mean: Array, std: Array) -> tuple[Array, Array, Array]:
        imp, z = self._z(mean, std)
        cdf, pdf = ndtr(z), _norm_pdf(z)
        zc = np.maximum(z, _Z_MIN)
        with np.errstate(invalid="ignore", over="ignore"):
            tail = std * _norm_pdf(zc) * (1.0 + zc * _SQRT_HALF_PI * erfcx(-zc / math.sqrt(2.0)))
            head = imp * cdf + std * pdf
        values = np.where(z < 0.0, tail, head)
        return np.maximum(values, 0.0), cdf, pdf


_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_HALF_LOG_HALF_PI = 0.5 * math.log(math.pi / 2.0)
# Beyond |z| = 1e5 (z < 0) the expansion h(z) ~ phi(z) / z^2 is exact to double precision.
_Z_ASYMPTOTIC = -1e5


def _log1mexp(x: Array) -> Array:
    """``log(1 - exp(x))`` for ``x < 0``, accurate near 0 and far below it."""
    with np.errstate(divide="ignore"):
        return np.where(x > -math.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def log_h(z: Array) -> Array:
    """``log(phi(z) + z Phi(z))``, the log of EI's standardized form, accurate for every z.

    For ``z > -1`` directly; below, through ``erfcx`` without cancellation
    (``h(z) = phi(z) (1 - |z| sqrt(pi/2) erfcx(|z|/sqrt 2))``); beyond ``|z| = 1e5`` by the
    expansion ``h(z) ~ phi(z) / z^2`` (Ament et al. 2023, eq. 9 and appendix).
    """
    z = np.asarray(z, dtype=float)
    out = np.empty_like(z)
    hi = z > -1.0
    zh = z[hi]
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        out[hi] = np.log(_norm_pdf(zh) + zh * ndtr(zh))
    mid = (~hi) & (z >= _Z_ASYMPTOTIC)
    zm = z[mid]
    out[mid] = -0.5 * zm * zm - _HALF_LOG_2PI + _log1mexp(np.log(erfcx(-zm / math.sqrt(2.0)) * -zm) + _HALF_LOG_HALF_PI)
    far = z < _Z_ASYMPTOTIC
    zf = z[far]
    out[far] = -0.5 * zf * zf - _HALF_LOG_2PI - 2.0 * np.log(-zf)
    return out


@fill_doc(**_DOC)
class LogEI(_Improvement):
    """The logarithm of expected improvement, computed without underflow (Ament et al. 2023).

    ``log EI(x) = log std + log h(z)`` with ``h(z) = phi(z) + z Phi(z)`` and
    ``z = (mean - best - xi) / std``. It has the maximizers of :class:`EI`, but where EI and
    its gradient underflow to 0 (far from the incumbent, as most of a high-dimensional box
    is) LogEI stays finite with an informative gradient, so a gradient-based search can climb
    it from anywhere.

    Parameters
    ----------
    model, best, xi
        As for :class:`EI`.

    %(raises_as_ei)s

    Notes
    -----
    ``dlogEI/dmean = Phi(z) / (std h(z))`` and ``dlogEI/dstd = phi(z) / (std h(z))``, each
    ratio computed in log space. Where ``std == 0`` the value is ``log(max(improvement, 0))``
    (``-inf`` without improvement, a wall for the maximizers).

    References
    ----------
    S. Ament, S. Daulton, D. Eriksson, M. Balandat, E. Bakshy. Unexpected improvements to
    expected improvement for Bayesian optimization. NeurIPS 2023.
    """

    def _from_moments(self, mean: Array, std: Array) -> tuple[Array, Array, Array]:
        imp, z = self._z(mean, std)
        live = std > 0.0
        values = np.empty_like(z)
        d_mean = np.zeros_like(z)
        d_std = np.zeros_like(z)
        zl, sl = z[live], std[live]
        lh = log_h(zl)
        values[live] = np.log(sl) + lh
        d_mean[live] = np.exp(log_ndtr(zl) - lh) / sl
        d_std[live] = np.exp(-0.5 * zl * zl - _HALF_LOG_2PI - lh) / sl
        with np.errstate(divide="ignore"):
            values[~live] = np.log(np.maximum(imp[~live], 0.0))
        return values, d_mean, d_std


@fill_doc(**_DOC)
class PI(_Improvement):
    """Probability of improvement ``Phi((mean - best - xi) / std)``, for maximization.

    Where ``std == 0`` it is 1 if ``mean > best + xi``, 0 if below and 1/2 on the boundary.

    Parameters
    ----------
    model : object
        Posterior with ``predict(X, return_grad=...)``.
    best : float
        Incumbent value, in the objective's units.
    xi : float, default 0.0
        Non-negative margin (units as for :class:`EI`).

    %(raises_as_ei)s

    Notes
    -----
    ``dPI/dmean = phi(z) / std`` and ``dPI/dstd = -z phi(z) / std``, both 0 where ``std == 0``.

    References
    ----------
    H. J. Kushner. A new method of locating the maximum point of an arbitrary multipeak curve
    in the presence of noise. J. Basic Engineering 86, 1964.
    """

    def _from_moments(self, mean: Array, std: Array) -> tuple[Array, Array, Array]:
        _, z = self._z(mean, std)
        pdf = _norm_pdf(z)
        d_mean = np.zeros_like(z)
        live = (pdf > 0.0) & (std > 0.0)
        d_mean[live] = pdf[live] / std[live]
        d_std = np.zeros_like(z)
        d_std[live] = -z[live] * d_mean[live]
        return ndtr(z), d_mean, d_std


ACQUISITIONS: dict[str, type[Acquisition]] = {"ucb": UCB, "ei": EI, "logei": LogEI, "pi": PI}


def acquisition_from_name(
    name: str,
    model: Any,
    *,
    beta: float | None = None,
    best: float | None = None,
    xi: float = 0.0,
) -> Acquisition:
    """Build an acquisition function by name.

    Parameters
    ----------
    name : {"ucb", "ei", "logei", "pi"}
        Case-insensitive.
    model : object
        Posterior with ``predict(X, return_grad=...)``.
    beta : float, optional
        Required for ``"ucb"``.
    best : float, optional
        Required for ``"ei"``, ``"logei"`` and ``"pi"``.
    xi : float, default 0.0
        Margin for ``"ei"``, ``"logei"`` and ``"pi"``.

    Returns
    -------
    Acquisition

    Raises
    ------
    ValueError
        If ``name`` is unknown (the message lists the valid names) or its required
        parameter is missing.
    """
    key = name.lower() if isinstance(name, str) else name
    if key not in ACQUISITIONS:
        raise ValueError(f"unknown acquisition name {name!r}; valid names are {sorted(ACQUISITIONS)}")
    if key == "ucb":
        if beta is None:
            raise ValueError("beta is required for the 'ucb' acquisition, got None")
        return UCB(model, beta)
    if best is None:
        raise ValueError(f"best is required for the {key!r} acquisition, got None")
    return ACQUISITIONS[key](model, best, xi)
