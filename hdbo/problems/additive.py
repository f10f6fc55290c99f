"""The synthetic additive functions of Kandasamy et al. (2015), Section 5.1.

Each group of ``d`` coordinates sees the same *trimodal* function ``f_d`` on ``[-1, 1]^d``:
the log-density of a mixture of three isotropic Gaussians (eq. 7 of the paper, read as in
SPEC §P5.A.6 items 5 to 7),

.. math::

    f_d(z) = \\max\\Bigl(-700,\\; \\log \\sum_{k=1}^{3} p_k\\,
             \\mathcal{N}(z;\\, v_k,\\, h_d I)\\Bigr), \\qquad h_d = 0.01\\, d^{0.1},

with ``h_d`` the **variance** of each component, weights ``p = (0.1, 0.8, 0.1)`` and centres
(from the authors' public code)

* ``v1 = (0.62, -0.38, -0.66, -0.66, ...)``,
* ``v2 = (0.18, 0.58, -0.19, -0.19, ...)``,
* ``v3 = (-0.58, -0.56, 0.62, 0.62, ...)``.

The paper as printed differs: its eq. (7) has ``+||x - v_k||^2 / (2 h^2)`` in the exponents
(a sign slip) and ``1 / h^d`` in front, i.e. reads ``h_d`` as a standard deviation. We keep the
authors' code and SPEC's reading (a variance): a standard deviation of ``0.01 d^0.1`` would make
each peak about ten times narrower, so our regrets are not on the scale of the paper's
Figures 3-4 and only the comparisons between methods carry over.

The additive problem places ``M`` copies of ``f_d`` on ``M`` disjoint groups of random
coordinates of a ``D``-dimensional input; the other ``D - d M`` coordinates have no effect.
The optimizer sees ``[0, 1]^D`` and each group is evaluated at ``z = 2 x - 1``.

:func:`trimodal` builds ``f_d`` alone and :func:`additive_trimodal` the sum. Both are
registered: ``get("trimodal", dim=d)`` and ``get("additive-trimodal", dim=D, d=d, M=M,
seed=s)``. :data:`KANDASAMY2015_CONFIGS` lists the paper's ``(D, d, M)`` configurations.

References
----------
.. [1] K. Kandasamy, J. Schneider and B. Póczos, "High dimensional Bayesian optimisation
   and bandits via additive models", ICML 2015, Section 5.1 and eq. (7).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.typing import NDArray
from scipy.special import logsumexp, softmax

from .._validation import check_int
from ..space import Box
from ..utils import as_generator
from .base import Problem
from .registry import register_problem

__all__ = ["KANDASAMY2015_CONFIGS", "additive_trimodal", "trimodal"]

#: The ``(D, d, M)`` configurations of Kandasamy et al. (2015), Figs. 3 and 4: input
#: dimension ``D``, group size ``d`` and number of groups ``M``.
KANDASAMY2015_CONFIGS: list[tuple[int, int, int]] = [
    (10, 3, 3),
    (24, 6, 4),
    (24, 11, 2),
    (40, 5, 8),
    (40, 18, 2),
    (40, 35, 1),
    (96, 5, 19),
    (96, 29, 3),
    (120, 55, 2),
]

_LOG_FLOOR = -700.0
_LOG_WEIGHTS = np.log(np.array([0.1, 0.8, 0.1]))
# Centres: two leading coordinates, then one repeated value per centre.
_LEADING = np.array([[0.62, -0.38], [0.18, 0.58], [-0.58, -0.56]])
_REST = np.array([-0.66, -0.19, 0.62])
_MAIN = 1  # index of the dominant centre (weight 0.8)


# --------------------------------------------------------------------------- f_d itself
def _variance(d: int) -> float:
    """The component variance ``h_d = 0.01 d^0.1``."""
    return 0.01 * d**0.1


def _centres(d: int) -> NDArray[np.float64]:
    """The three centres as rows of a (3, d) array (for ``d = 1``, the first coordinates)."""
    V = np.empty((3, d))
    V[:, : min(d, 2)] = _LEADING[:, : min(d, 2)]
    V[:, 2:] = _REST[:, None]
    return V


def _mixture_logits(Z: NDArray[np.float64], V: NDArray[np.float64], h: float) -> NDArray[np.float64]:
    """``log p_k - |z - v_k|^2 / (2 h)`` for ``Z`` of shape (..., d); returns shape (..., 3)."""
    diff = Z[..., None, :] - V  # (..., 3, d); differences, not |z|^2 - 2 z.v + |v|^2
    return _LOG_WEIGHTS - np.sum(diff * diff, axis=-1) / (2.0 * h)


def _trimodal_values(Z: NDArray[np.float64], V: NDArray[np.float64], h: float) -> NDArray[np.float64]:
    """``f_d`` at ``Z`` of shape (..., d) on ``[-1, 1]^d``; returns shape (...)."""
    d = Z.shape[-1]
    log_norm = -0.5 * d * math.log(2.0 * math.pi * h)
    values = logsumexp(_mixture_logits(Z, V, h), axis=-1) + log_norm
    return np.maximum(values, _LOG_FLOOR)


@functools.cache
def _peak(d: int) -> tuple[tuple[float, ...], float]:
    """The maximizer of ``f_d`` and the value there (see :func:`trimodal`, Notes)."""
    V, h = _centres(d), _variance(d)
    x = V[_MAIN].copy()
    for _ in range(200):
        # Stationarity of f_d: x = sum_k w_k(x) v_k with w the component responsibilities.
        # Iterating this map is Gaussian mean shift, which never decreases f_d.
        x_new = softmax(_mixture_logits(x, V, h)) @ V
        step = float(np.max(np.abs(x_new - x)))
        x = x_new
        if step <= 1e-15:
            break
    value = float(_trimodal_values(x, V, h))
    return tuple(float(t) for t in x), value


def trimodal(dim: int, *, noise_std: float = 0.0) -> Problem:
    r"""The trimodal function ``f_d`` of Kandasamy et al. (2015), eq. (7), on ``[-1, 1]^d``.

    .. math::

        f_d(x) = \max\Bigl(-700,\; \log \sum_{k=1}^{3} p_k\, (2\pi h_d)^{-d/2}
                 \exp\bigl(-\lVert x - v_k\rVert^2 / (2 h_d)\bigr)\Bigr),
        \qquad h_d = 0.01\, d^{0.1},

    with ``p = (0.1, 0.8, 0.1)`` and the centres ``v1 = (0.62, -0.38, -0.66, ...)``,
    ``v2 = (0.18, 0.58, -0.19, ...)``, ``v3 = (-0.58, -0.56, 0.62, ...)`` (to be maximized).

    Parameters
    ----------
    dim : int
        The group size ``d >= 1``.
    noise_std : float, default 0.0
        Standard deviation of the observation noise of :meth:`Problem.evaluate`.

    Returns
    -------
    Problem
        On ``[-1, 1]^d``, ``optimizer`` of shape (d,) next to ``v2`` and ``optimum_value``
        the value there (``3.763004...`` for ``d = 3``).

    Raises
    ------
    TypeError, ValueError
        If ``dim`` is not an int >= 1, or ``noise_std`` is not a finite number >= 0.

    Notes
    -----
    *Reading of eq. (7)* (SPEC §P5.A.6, items 5-7): the printed exponent's sign is an erratum
    (it must be negative); ``h_d`` is the variance of each component, as in the authors'
    code (``gaussVar = 0.01 * numDims^0.1``), and the normalising constant
    ``(2 pi h_d)^{-d/2}`` is included; the centres and the weights come from the authors'
    code (the paper names the dominant centre ``v3``; only the labels differ). As there,
    the log-value is floored at -700, so ``f_d`` is flat far from the centres (for large
    ``d`` on most of the box). It is computed with ``logsumexp`` over the three components
    and squared differences ``|x - v_k|^2`` (no expansion), so it is exact to rounding at
    the peak. For ``d = 1`` the centres are the first coordinates ``(0.62, 0.18, -0.58)``
    (the authors' code uses a different two-mode function there).

    *Optimizer.* The other two modes pull the maximizer off ``v2``. At a stationary point
    ``x = sum_k w_k(x) v_k``, with ``w(x)`` the softmax of the logits
    ``log p_k - |x - v_k|^2 / (2 h_d)``; starting at ``v2``, that map (Gaussian mean shift,
    which never decreases ``f_d``) is iterated until a step is below ``1e-15``. It contracts
    by about ``w_1 |v_1 - v_2|^2 / h_d``, at most ``2e-4`` (at ``d = 1``), so a few steps
    suffice. The pull is ``w_1 / w_2 = exp(-|v_1 - v_2|^2 / (2 h_d)) / 8``: about ``1e-5``
    for ``d = 1`` (the peak moves by ``3.5e-6``), but below ``e^{-50}`` for every
    ``d >= 2``, where the maximizer is ``v2`` to double precision and the optimum equals
    ``log 0.8 - (d / 2) log(2 pi h_d)``. The other modes are lower by about ``log 8``.

    References
    ----------
    .. [1] K. Kandasamy, J. Schneider and B. Póczos, "High dimensional Bayesian
       optimisation and bandits via additive models", ICML 2015, eq. (7).

    Examples
    --------
    >>> p = trimodal(3)
    >>> round(p.optimum_value, 6), p.optimizer.tolist()
    (3.763004, [0.18, 0.58, -0.19])
    """
    d = check_int(dim, "dim", low=1)
    V, h = _centres(d), _variance(d)
    x_peak, value = _peak(d)

    def fun(X: NDArray[np.float64]) -> NDArray[np.float64]:
        return _trimodal_values(X, V, h)

    return Problem(
        fun,
        Box(np.full(d, -1.0), np.full(d, 1.0)),
        name="trimodal",
        optimum_value=value,
        optimizer=np.array(x_peak),
        noise_std=noise_std,
        params={"name": "trimodal", "dim": d, "noise_std": float(noise_std)},
    )


# --------------------------------------------------------------------------- the sum
def additive_trimodal(
    dim: int,
    d: int = 3,
    M: int | None = None,
    *,
    seed: int | np.random.Generator | None,
    noise_std: float = 0.0,
) -> Problem:
    r"""Sum of ``M`` trimodal functions on random disjoint groups of ``d`` coordinates.

    .. math::

        f(x) = \sum_{j=1}^{M} f_d\bigl(2 x^{(j)} - 1\bigr), \qquad x \in [0, 1]^D,

    where ``x^{(j)} = x[groups[j]]`` and ``f_d`` is :func:`trimodal` on ``[-1, 1]^d``
    (Kandasamy et al. 2015, Section 5.1). The other ``D - d M`` coordinates have no effect.

    Parameters
    ----------
    dim : int
        The input dimension ``D >= d M``.
    d : int, default 3
        Group size ``d >= 1``.
    M : int, optional
        Number of groups ``M >= 1``. Default: as many as fit, ``D // d`` (so
        ``additive_trimodal(10, seed=s)`` is the paper's ``(10, 3, 3)``).
    seed : int, Generator or None
        Draws the groups (keyword-only and required, so every instance is reproducible).
    noise_std : float, default 0.0
        Standard deviation of the observation noise of :meth:`Problem.evaluate`.

    Returns
    -------
    Problem
        On ``[0, 1]^D``, with

        * ``structure = {"groups": [[...], ...], "active_dims": [...]}``: ``M`` lists of
          ``d`` coordinates, sorted within each group (``f_d`` reads them in that order),
          groups in draw order; ``active_dims`` is their sorted union;
        * ``optimizer`` of shape (D,): the peak of ``f_d`` (mapped to ``[0, 1]``) in every
          group and ``0.5`` in the unused coordinates;
        * ``optimum_value = M * f_d(x_peak)`` (:func:`trimodal`, Notes).

    Raises
    ------
    TypeError
        If ``dim``, ``d`` or ``M`` is not an int, ``seed`` is of the wrong type, or
        ``noise_std`` is not a real number.
    ValueError
        If ``d < 1``, ``M < 1``, ``dim < d M``, ``seed`` is negative, or ``noise_std`` is
        negative or not finite.

    Notes
    -----
    The groups are drawn as in the authors' code: a random permutation of the ``D``
    coordinates (``as_generator(seed).permutation(D)``) cut into ``M`` consecutive blocks
    of ``d``; the rest are unused. The ``3^M`` modes of ``f`` are the combinations of the
    modes of the groups. Evaluation gathers the groups into an array of shape (n, M, d)
    and costs ``O(n d M)``, with no loop in Python.

    References
    ----------
    .. [1] K. Kandasamy, J. Schneider and B. Póczos, "High dimensional Bayesian
       optimisation and bandits via additive models", ICML 2015, Section 5.1.

    Examples
    --------
    >>> p = additive_trimodal(10, 3, 3, seed=0)
    >>> p.dim, len(p.structure["groups"]), round(p.optimum_value, 4)
    (10, 3, 11.289)
    """
    D = check_int(dim, "dim", low=1)
    d = check_int(d, "d", low=1)
    if M is None:
        if D < d:
            raise ValueError(f"dim must be >= d = {d} (at least one group), got {D}")
        M = D // d
    M = check_int(M, "M", low=1)
    if D < d * M:
        raise ValueError(f"dim must be >= d * M = {d} * {M} = {d * M} (the grouped coordinates), got {D}")
    rng = as_generator(seed)

    perm = rng.permutation(D)
    G = np.sort(perm[: d * M].reshape(M, d), axis=1)  # (M, d)
    groups = [[int(j) for j in row] for row in G]
    active_dims = sorted(j for row in groups for j in row)

    V, h = _centres(d), _variance(d)
    x_peak, value = _peak(d)
    optimizer = np.full(D, 0.5)
    optimizer[G] = (np.array(x_peak) + 1.0) / 2.0

    def fun(X: NDArray[np.float64]) -> NDArray[np.float64]:
        Z = 2.0 * X[:, G] - 1.0  # (n, M, d), on [-1, 1]
        return np.sum(_trimodal_values(Z, V, h), axis=1)

    return Problem(
        fun,
        Box.unit(D),
        name="additive-trimodal",
        optimum_value=M * value,
        optimizer=optimizer,
        noise_std=noise_std,
        structure={"groups": groups, "active_dims": active_dims},
        params={
            "name": "additive-trimodal",
            "dim": D,
            "d": d,
            "M": M,
            "seed": int(seed) if isinstance(seed, (int, np.integer)) else None,
            "noise_std": float(noise_std),
        },
    )


# --------------------------------------------------------------------------- registration

register_problem("trimodal", trimodal)
register_problem("additive-trimodal", additive_trimodal)
