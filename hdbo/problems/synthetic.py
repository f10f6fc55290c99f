"""Classical synthetic test functions with known optima.

Every factory returns a :class:`~hdbo.problems.base.Problem` to be **maximized**: the
functions below are usually stated for minimization as ``F``, and the problem's objective
is ``f = -F``. ``optimum_value`` is therefore ``-F*`` (e.g. ``-5 / (4 pi)`` for Branin) and
``optimizer`` holds the point(s) where ``F`` attains ``F*``.

Fixed-dimension functions: :func:`branin`, :func:`beale`, :func:`camelback` (2-D) and
:func:`hartmann6` (6-D). Functions of any dimension: :func:`ackley`, :func:`levy`,
:func:`hyper_ellipsoid` and :func:`rosenbrock`.

All implementations are vectorized over the rows of ``X`` and arranged so that the value at
the optimizer is computed without cancellation wherever possible (Ackley, Levy and Beale
are exactly ``0`` at their optimizers).

References
----------
.. [1] S. Surjanovic and D. Bingham, "Virtual Library of Simulation Experiments: Test
   Functions and Datasets", Simon Fraser University (definitions, domains, optima).
.. [2] M. Jamil and X.-S. Yang, "A literature survey of benchmark functions for global
   optimisation problems", Int. J. Math. Modelling and Numerical Optimisation 4(2), 2013.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
from numpy.typing import NDArray

from .._docstrings import fill_doc
from .._validation import check_int
from ..space import Box
from .base import Problem
from .registry import register_problem

__all__ = [
    "branin",
    "beale",
    "camelback",
    "hartmann6",
    "ackley",
    "levy",
    "hyper_ellipsoid",
    "rosenbrock",
]


def _check_dim(dim: object, *, name: str, min_dim: int = 1) -> int:
    """Validate the ``dim`` argument of an any-dimensional factory."""
    dim = check_int(dim, "dim")
    if dim < min_dim:
        raise ValueError(f"dim must be >= {min_dim} for {name!r}, got {dim}")
    return dim


def _any_dim_doc(optimizer: str, min_dim: int = 1) -> dict[str, str]:
    """The Parameters, Returns and Raises sections (``%(sections)s``) of an any-dimensional factory.

    ``optimizer`` is the maximizer as the docstring writes it (``"0"``, ``"(1, ..., 1)"``) and
    ``min_dim`` the smallest dimension allowed.
    """
    return {
        "sections": f"""
            Parameters
            ----------
            dim : int
                Dimension ``D >= {min_dim}``.
            noise_std : float, default 0.0
                Standard deviation of the observation noise.

            Returns
            -------
            Problem
                ``optimum_value = 0`` at ``optimizer = {optimizer}``.

            Raises
            ------
            TypeError, ValueError
                If ``dim`` is not an int >= {min_dim}, or ``noise_std`` is not a finite number >= 0.
            """,
    }


#: The same sections for the fixed-dimensional factories (their one argument is ``noise_std``).
_FIXED_DIM_DOC = {
    "parameters": """
        Parameters
        ----------
        noise_std : float, default 0.0
            Standard deviation of the observation noise.
        """,
    "raises": """
        Raises
        ------
        TypeError, ValueError
            If ``noise_std`` is not a finite number >= 0.
        """,
}


def _cube(dim: int, low: float, high: float) -> Box:
    return Box(np.full(dim, low), np.full(dim, high))


def _any_dim_problem(name: str, fun: Callable[[NDArray[np.float64]], NDArray[np.float64]], dim: object, low: float,
                     high: float, *, optimizer_value: float, noise_std: float, min_dim: int = 1) -> Problem:
    """A problem of any dimension on ``[low, high]^D``, optimum 0 at ``(optimizer_value, ..., optimizer_value)``."""
    D = _check_dim(dim, name=name, min_dim=min_dim)
    return Problem(
        fun,
        _cube(D, low, high),
        name=name,
        optimum_value=0.0,
        optimizer=np.full(D, optimizer_value),
        noise_std=noise_std,
        params={"name": name, "dim": D, "noise_std": float(noise_std)},
    )


def _fixed_dim_problem(name: str, fun: Callable[[NDArray[np.float64]], NDArray[np.float64]], domain: Box, *,
                       optimum_value: float, optimizer: NDArray[np.float64], noise_std: float) -> Problem:
    """A problem of fixed dimension on ``domain`` (its parameters are only ``noise_std``)."""
    return Problem(fun, domain, name=name, optimum_value=optimum_value, optimizer=optimizer, noise_std=noise_std,
                   params={"name": name, "noise_std": float(noise_std)})


# --------------------------------------------------------------------------- 2-D functions
_BRANIN_B = 5.1 / (4.0 * math.pi**2)
_BRANIN_C = 5.0 / math.pi
_BRANIN_T = 1.0 / (8.0 * math.pi)


def _branin(X: NDArray[np.float64]) -> NDArray[np.float64]:
    x1, x2 = X[:, 0], X[:, 1]
    quad = x2 - _BRANIN_B * x1**2 + _BRANIN_C * x1 - 6.0
    F = quad**2 + 10.0 * (1.0 - _BRANIN_T) * np.cos(x1) + 10.0
    return -F


@fill_doc(**_FIXED_DIM_DOC)
def branin(*, noise_std: float = 0.0) -> Problem:
    r"""Branin(-Hoo) function, negated (2-D, three global maximizers).

    .. math::

        F(x) = \left(x_2 - \frac{5.1}{4\pi^2} x_1^2 + \frac{5}{\pi} x_1 - 6\right)^2
               + 10 \left(1 - \frac{1}{8\pi}\right) \cos x_1 + 10,
        \qquad f = -F,

    on ``x1 in [-5, 10]``, ``x2 in [0, 15]``.

    %(parameters)s

    Returns
    -------
    Problem
        ``dim = 2``; ``optimum_value = -5 / (4 pi) = -0.3978873577297384``;
        ``optimizer`` of shape (3, 2): ``(-pi, 12.275)``, ``(pi, 2.275)``, ``(3 pi, 2.475)``.

    %(raises)s

    Notes
    -----
    At the three optimizers the squared term vanishes and ``cos x1 = -1``, so
    ``F* = 10 / (8 pi)`` exactly.

    References
    ----------
    .. [1] L. C. W. Dixon and G. P. Szegö, "The global optimisation problem: an
       introduction", in Towards Global Optimisation 2, 1978.

    Examples
    --------
    >>> p = branin()
    >>> round(p(p.optimizer[0]), 10)
    -0.3978873577
    """
    optimizer = np.array([[-math.pi, 12.275], [math.pi, 2.275], [3.0 * math.pi, 2.475]])
    return _fixed_dim_problem("branin", _branin, Box([-5.0, 0.0], [10.0, 15.0]),
                              optimum_value=-5.0 / (4.0 * math.pi), optimizer=optimizer, noise_std=noise_std)


def _beale(X: NDArray[np.float64]) -> NDArray[np.float64]:
    x1, x2 = X[:, 0], X[:, 1]
    # 1.5 - x1 + x1 x2 = 1.5 - x1 (1 - x2), etc.; these are exactly 0 at (3, 0.5).
    t1 = 1.5 - x1 * (1.0 - x2)
    t2 = 2.25 - x1 * (1.0 - x2**2)
    t3 = 2.625 - x1 * (1.0 - x2**3)
    return -(t1**2 + t2**2 + t3**2)


@fill_doc(**_FIXED_DIM_DOC)
def beale(*, noise_std: float = 0.0) -> Problem:
    r"""Beale function, negated (2-D).

    .. math::

        F(x) = (1.5 - x_1 + x_1 x_2)^2 + (2.25 - x_1 + x_1 x_2^2)^2
               + (2.625 - x_1 + x_1 x_2^3)^2, \qquad f = -F,

    on ``[-4.5, 4.5]^2``. The function is nearly flat on most of the box and very steep near
    its corners.

    %(parameters)s

    Returns
    -------
    Problem
        ``dim = 2``; ``optimum_value = 0`` at ``optimizer = (3, 0.5)``.

    %(raises)s

    References
    ----------
    .. [1] E. M. L. Beale, "On an iterative method for finding a local minimum of a function
       of more than one variable", Tech. Rep. 25, Princeton University, 1958.
    """
    return _fixed_dim_problem("beale", _beale, _cube(2, -4.5, 4.5),
                              optimum_value=0.0, optimizer=np.array([3.0, 0.5]), noise_std=noise_std)


def _camelback(X: NDArray[np.float64]) -> NDArray[np.float64]:
    x1, x2 = X[:, 0], X[:, 1]
    s1 = x1**2
    s2 = x2**2
    F = (4.0 - 2.1 * s1 + s1**2 / 3.0) * s1 + x1 * x2 + (4.0 * s2 - 4.0) * s2
    return -F


# Stationary points of the six-hump camel refined with 40-digit Newton iterations on the
# gradient, starting from the published (0.0898, -0.7126); F there is
# -1.03162845348987735041636543714940...
_CAMEL_X1 = 0.08984201310031806
_CAMEL_X2 = -0.7126564030207396
_CAMEL_FSTAR = -1.0316284534898774


@fill_doc(**_FIXED_DIM_DOC)
def camelback(*, noise_std: float = 0.0) -> Problem:
    r"""Six-hump camel(back) function, negated (2-D, two global maximizers).

    .. math::

        F(x) = \left(4 - 2.1 x_1^2 + \frac{x_1^4}{3}\right) x_1^2 + x_1 x_2
               + (-4 + 4 x_2^2)\, x_2^2, \qquad f = -F,

    on the standard domain ``x1 in [-3, 3]``, ``x2 in [-2, 2]``.

    %(parameters)s

    Returns
    -------
    Problem
        ``dim = 2``; ``optimum_value = 1.0316284534898774`` (``F* = -1.0316284534898774``) at
        ``(0.0898420131, -0.7126564030)`` and ``(-0.0898420131, 0.7126564030)``
        (``optimizer`` of shape (2, 2); ``F`` is symmetric under ``x -> -x``).

    %(raises)s

    Notes
    -----
    The optimizer coordinates are the published ``(+-0.0898, -+0.7126)`` refined to full
    double precision by Newton's method on the gradient in 40-digit arithmetic. Some papers
    use the smaller box ``[-2, 2] x [-1, 1]``; both contain the two global optimizers.

    References
    ----------
    .. [1] L. C. W. Dixon and G. P. Szegö, "The global optimisation problem: an
       introduction", in Towards Global Optimisation 2, 1978.
    """
    optimizer = np.array([[_CAMEL_X1, _CAMEL_X2], [-_CAMEL_X1, -_CAMEL_X2]])
    return _fixed_dim_problem("camelback", _camelback, Box([-3.0, -2.0], [3.0, 2.0]),
                              optimum_value=-_CAMEL_FSTAR, optimizer=optimizer, noise_std=noise_std)


# --------------------------------------------------------------------------- Hartmann-6
_H6_ALPHA = np.array([1.0, 1.2, 3.0, 3.2])
_H6_A = np.array(
    [
        [10.0, 3.0, 17.0, 3.5, 1.7, 8.0],
        [0.05, 10.0, 17.0, 0.1, 8.0, 14.0],
        [3.0, 3.5, 1.7, 10.0, 17.0, 8.0],
        [17.0, 8.0, 0.05, 10.0, 0.1, 14.0],
    ]
)
_H6_P = 1e-4 * np.array(
    [
        [1312.0, 1696.0, 5569.0, 124.0, 8283.0, 5886.0],
        [2329.0, 4135.0, 8307.0, 3736.0, 1004.0, 9991.0],
        [2348.0, 1451.0, 3522.0, 2883.0, 3047.0, 6650.0],
        [4047.0, 8828.0, 8732.0, 5743.0, 1091.0, 381.0],
    ]
)
# The published maximizer (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573),
# refined by Newton's method on the gradient in 40-digit arithmetic.
_H6_XSTAR = np.array(
    [
        0.20168951100670543,
        0.15001069182345797,
        0.476873974221897,
        0.2753324304940561,
        0.31165161660011326,
        0.6573005340656203,
    ]
)


def _hartmann6(X: NDArray[np.float64]) -> NDArray[np.float64]:
    diff = X[:, None, :] - _H6_P[None, :, :]  # (n, 4, 6)
    inner = np.einsum("ij,nij->ni", _H6_A, diff * diff)  # (n, 4)
    return np.exp(-inner) @ _H6_ALPHA  # f = -F = sum_i alpha_i exp(-inner_i)


@fill_doc(**_FIXED_DIM_DOC)
def hartmann6(*, noise_std: float = 0.0) -> Problem:
    r"""Hartmann 6-D function, negated.

    .. math::

        F(x) = -\sum_{i=1}^{4} \alpha_i \exp\left(-\sum_{j=1}^{6} A_{ij} (x_j - P_{ij})^2\right),
        \qquad f = -F,

    on ``[0, 1]^6``, with the standard ``alpha = (1, 1.2, 3, 3.2)`` and the standard 4 x 6
    matrices ``A`` and ``P`` (``P`` given in units of ``1e-4``).

    %(parameters)s

    Returns
    -------
    Problem
        ``dim = 6``; ``optimizer`` near ``(0.20169, 0.150011, 0.476874, 0.275332, 0.311652,
        0.6573)``; ``optimum_value`` is this implementation's value there,
        ``3.3223680114155...`` (reference value ``F* = -3.32237``).

    %(raises)s

    Notes
    -----
    The stored optimizer is the published point refined to full double precision by
    Newton's method on the gradient (it agrees with the published digits); the optimum
    value is computed from it when the problem is built.

    References
    ----------
    .. [1] L. C. W. Dixon and G. P. Szegö, "The global optimisation problem: an
       introduction", in Towards Global Optimisation 2, 1978.
    """
    value = float(_hartmann6(_H6_XSTAR[None, :])[0])
    return _fixed_dim_problem("hartmann6", _hartmann6, _cube(6, 0.0, 1.0),
                              optimum_value=value, optimizer=_H6_XSTAR.copy(), noise_std=noise_std)


# --------------------------------------------------------------------------- any dimension
def _ackley(X: NDArray[np.float64]) -> NDArray[np.float64]:
    D = X.shape[1]
    r = np.sqrt(np.einsum("nj,nj->n", X, X) / D)
    # mean(cos(2 pi x)) - 1 = -2 mean(sin^2(pi x)); expm1 keeps F(0) == 0 exactly and
    # avoids cancellation in 20 - 20 exp(.) and e - exp(.) near the optimum.
    s = np.sin(np.pi * X)
    cos_term = -2.0 * np.einsum("nj,nj->n", s, s) / D
    F = -20.0 * np.expm1(-0.2 * r) - math.e * np.expm1(cos_term)
    return -F


@fill_doc(**_any_dim_doc("0"))
def ackley(dim: int, *, noise_std: float = 0.0) -> Problem:
    r"""Ackley function, negated (any dimension).

    .. math::

        F(x) = -20 \exp\left(-0.2 \sqrt{\tfrac{1}{D} \sum_i x_i^2}\right)
               - \exp\left(\tfrac{1}{D} \sum_i \cos(2 \pi x_i)\right) + 20 + e,
        \qquad f = -F,

    on ``[-32.768, 32.768]^D``. Nearly flat far from the origin, with many local optima.

    %(sections)s

    Notes
    -----
    Computed as ``F = -20 expm1(-0.2 r) - e expm1(-2 mean(sin^2(pi x)))``, which equals the
    formula above and is exactly 0 at the origin.

    References
    ----------
    .. [1] D. H. Ackley, "A connectionist machine for genetic hillclimbing", Kluwer, 1987.
    """
    return _any_dim_problem("ackley", _ackley, dim, -32.768, 32.768, optimizer_value=0.0, noise_std=noise_std)


def _levy(X: NDArray[np.float64]) -> NDArray[np.float64]:
    v = (X - 1.0) / 4.0  # v = w - 1, exact 0 at the optimizer
    # sin(pi w) = -sin(pi v) and sin(2 pi w) = sin(2 pi v): exact zeros at v = 0.
    first = np.sin(np.pi * v[:, 0]) ** 2
    vi = v[:, :-1]
    middle = np.sum(vi**2 * (1.0 + 10.0 * np.sin(np.pi * (vi + 1.0) + 1.0) ** 2), axis=1)
    vD = v[:, -1]
    last = vD**2 * (1.0 + np.sin(2.0 * np.pi * vD) ** 2)
    return -(first + middle + last)


@fill_doc(**_any_dim_doc("(1, ..., 1)"))
def levy(dim: int, *, noise_std: float = 0.0) -> Problem:
    r"""Levy function, negated (any dimension).

    With ``w_i = 1 + (x_i - 1) / 4``:

    .. math::

        F(x) = \sin^2(\pi w_1)
               + \sum_{i=1}^{D-1} (w_i - 1)^2 \left[1 + 10 \sin^2(\pi w_i + 1)\right]
               + (w_D - 1)^2 \left[1 + \sin^2(2 \pi w_D)\right], \qquad f = -F,

    on ``[-10, 10]^D``. For ``D = 1`` the sum is empty.

    %(sections)s

    References
    ----------
    .. [1] A. V. Levy and A. Montalvo, "The tunneling algorithm for the global minimization
       of functions", SIAM J. Sci. Stat. Comput. 6(1), 1985.
    """
    return _any_dim_problem("levy", _levy, dim, -10.0, 10.0, optimizer_value=1.0, noise_std=noise_std)


def _hyper_ellipsoid(X: NDArray[np.float64]) -> NDArray[np.float64]:
    D = X.shape[1]
    weights = np.arange(D, 0, -1, dtype=float)  # x_1 appears in all D inner sums, x_D in one
    return -((X * X) @ weights)


@fill_doc(**_any_dim_doc("0"))
def hyper_ellipsoid(dim: int, *, noise_std: float = 0.0) -> Problem:
    r"""Rotated hyper-ellipsoid function, negated (any dimension).

    .. math::

        F(x) = \sum_{i=1}^{D} \sum_{j=1}^{i} x_j^2 = \sum_{j=1}^{D} (D - j + 1)\, x_j^2,
        \qquad f = -F,

    on ``[-65.536, 65.536]^D``.

    %(sections)s

    Notes
    -----
    MS-UCB (Tran-The et al., 2020) names the "Hyper-Ellipsoid" without a formula and uses it
    to show interacting variables; the *rotated* form of the standard test suites is used
    here, with its usual domain (SPEC §P3.C). It is evaluated through the equivalent
    weighted sum, in O(n D).

    References
    ----------
    .. [1] B. Tran-The, S. Gupta, S. Rana, S. Venkatesh, "Trading convergence rate with
       computational budget in high dimensional Bayesian optimization", AAAI 2020.
    """
    return _any_dim_problem("hyper-ellipsoid", _hyper_ellipsoid, dim, -65.536, 65.536, optimizer_value=0.0,
                            noise_std=noise_std)


def _rosenbrock(X: NDArray[np.float64]) -> NDArray[np.float64]:
    x, y = X[:, :-1], X[:, 1:]
    return -np.sum(100.0 * (y - x * x) ** 2 + (x - 1.0) ** 2, axis=1)


@fill_doc(**_any_dim_doc("(1, ..., 1)", min_dim=2))
def rosenbrock(dim: int, *, noise_std: float = 0.0) -> Problem:
    r"""Rosenbrock function, negated (any dimension ``D >= 2``).

    .. math::

        F(x) = \sum_{i=1}^{D-1} \left[100 (x_{i+1} - x_i^2)^2 + (x_i - 1)^2\right],
        \qquad f = -F,

    on ``[-5, 10]^D``.

    %(sections)s

    References
    ----------
    .. [1] H. H. Rosenbrock, "An automatic method for finding the greatest or least value of
       a function", The Computer Journal 3(3), 1960.
    """
    return _any_dim_problem("rosenbrock", _rosenbrock, dim, -5.0, 10.0, optimizer_value=1.0, noise_std=noise_std,
                            min_dim=2)


# --------------------------------------------------------------------------- registration

register_problem("branin", branin, native_dim=2)
register_problem("beale", beale, native_dim=2)
register_problem("camelback", camelback, native_dim=2)
register_problem("hartmann6", hartmann6, native_dim=6)
register_problem("ackley", ackley)
register_problem("levy", levy)
register_problem("hyper-ellipsoid", hyper_ellipsoid)
register_problem("rosenbrock", rosenbrock, min_dim=2)
