r"""A public high-dimensional comparison suite (issue 18): shifted, rotated and hidden problems.

Every problem here lives on the unit cube ``[0, 1]^D``, is to be **maximized** (the usually
minimized functions are negated, ``f = -F``, as in :mod:`hdbo.problems.synthetic`) and takes an
``instance`` parameter (int >= 0). Instance 0 is for development and tuning; reported runs use
instances 1-5, so no default can be tuned to the instances that judge it.

Registered names (``get(name, dim=D, instance=k)``; the factories' default ``dim`` is the
suite's dimension):

=========================== ====== ==============================================================
name                        D      function
=========================== ====== ==============================================================
``suite-levy``              100    Levy, usual domain ``[-10, 10]``
``suite-ackley``            100    Ackley, usual domain ``[-32.768, 32.768]``
``suite-styblinski-tang``   100    Styblinski-Tang, usual domain ``[-5, 5]``
``suite-rosenbrock``        60     Rosenbrock, usual domain ``[-5, 10]``
``suite-hartmann6-hidden``  300    Hartmann-6 on 6 random coordinates (axis-aligned)
``suite-hartmann6-rotated`` 100    Hartmann-6 through 6 random orthonormal directions (also 300)
``suite-branin-rotated``    100    Branin through 2 random orthonormal directions
``suite-svm``               32     RBF-SVM on breast-cancer data, 5-fold CV error (no optimum)
``suite-halfcheetah``       102    linear policy for MuJoCo HalfCheetah-v5, return (no optimum)
=========================== ====== ==============================================================

The map from the cube to the function (the "shift")
---------------------------------------------------
For a function ``h`` on ``R^k`` with a global minimizer ``x*`` (in ``h``'s units) and the widths
``w`` of its usual domain, the problem is

.. math::

    f(u) = -F\big(x^* + w \odot A (u - c)\big), \qquad u \in [0, 1]^D,

where

* ``c ~ U[0, 1)^D`` is drawn from the instance: ``f``'s optimizer is ``u* = c`` (an interior
  point, uniform over the cube; it moves with the instance), and ``optimum_value = -F(x*)``;
* ``A`` (shape (k, D)) is the identity (``k = D``; Levy, Ackley, Styblinski-Tang, Rosenbrock),
  rows of the identity at ``k`` random coordinates (Hartmann-6 hidden), or ``k`` random
  orthonormal rows (the rotated problems).

For ``A = I`` this is the function on its usual domain **translated** by a random vector: the
box seen is ``[lo, hi] + (x* - lo - w c)``, a copy of the usual box that contains ``x*`` at the
uniformly random relative position ``c``. Neither the cube's centre nor its corners are
special, and the function stays continuous and smooth. We chose this rather than the wrapped
shift ``u -> frac(u + s)`` (which keeps the usual box but makes ``f`` discontinuous where the
coordinates wrap, a feature no real objective has and one that penalizes smooth surrogates
for no reason). The price is that part of the translated box lies outside the usual domain;
each function is evaluated there by its own formula, and for every function here the global
minimum over the translated box is still ``F(x*)`` because ``x*`` is a global minimizer over all
of ``R^k``:

* Levy, Rosenbrock: sums of non-negative terms, zero only at ``(1, ..., 1)``;
* Ackley: ``F >= 0`` with equality only at the origin;
* Styblinski-Tang: separable, ``t^4 - 16 t^2 + 5 t`` has its global minimum over ``R`` at
  ``t* = -2.903534...``;
* Hartmann-6: a positive sum of Gaussian bumps whose centres lie in ``[0, 1]^6``, so outside the
  cube it decreases in every coordinate moving away from it: its maximum over ``R^6`` is the
  one in the cube;
* Branin: ``F >= 10 / (8 pi)`` everywhere, with equality at ``((2m+1) pi, b x1^2 - c x1 + 6)``;
  on ``R^2`` there are infinitely many global minimizers; the problem's documented optimizer
  maps to ``x* = (pi, 2.275)``, others may lie in the cube too (same value).

**Points whose image leaves the usual domain are not clipped** (for the rotated problems
``A (u - c)`` has components of standard deviation about 0.3-0.4 over the cube, like a uniform
coordinate on ``[0, 1]``, but corners of the cube reach much further): the formula is evaluated
there, which keeps ``f`` smooth, and by the bullets above no such point beats the optimum. The
optimum is reached at ``u = c`` (inside the cube), and for the rotated problems on the whole
affine set ``{u : A (u - c) = 0}`` within the cube.

Drawing an instance
-------------------
``rng = np.random.default_rng([instance, PROBLEM_ID])`` with the fixed ``PROBLEM_ID`` of each
problem (:data:`PROBLEM_IDS`); then, in this order:

1. ``c = rng.random(D)``;
2. hidden problems: ``active = rng.choice(D, size=k, replace=False)`` (in that order,
   coordinate ``active[j]`` plays the role of the function's coordinate ``j``); rotated
   problems: ``Q, R = np.linalg.qr(rng.standard_normal((D, k)))`` and ``A = Q.T`` (orthonormal
   rows; as in :func:`hdbo.problems.subspace.random_orthonormal_rows`);
3. ``suite-svm`` and ``suite-halfcheetah``: see :func:`suite_svm` and :func:`suite_halfcheetah`.

``instance`` defaults to the registry's ``seed`` (and to 0 without one): ``get(name, dim=D,
seed=k)`` is instance ``k``, so an experiment's run with seed ``k`` is on instance ``k``
unless its problem parameters fix ``instance``; an explicit ``instance`` wins over ``seed``.

References
----------
.. [1] S. Surjanovic and D. Bingham, "Virtual Library of Simulation Experiments: Test
   Functions and Datasets", Simon Fraser University (definitions, domains, optima).
.. [2] N. Hansen, A. Auger, R. Ros, O. Mersmann, T. Tusar, D. Brockhoff, "COCO: a platform
   for comparing continuous optimizers in a black-box setting", Optim. Methods Softw. 36(1),
   2021 (instances drawn by random shifts and rotations).
"""

from __future__ import annotations

import warnings

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._docstrings import fill_doc
from .._validation import check_int
from ..space import Box
from .base import Problem
from .registry import register_problem
from .synthetic import _ackley, _branin, _check_dim, _hartmann6, _H6_XSTAR, _levy, _rosenbrock

__all__ = [
    "PROBLEM_IDS",
    "suite_levy",
    "suite_ackley",
    "suite_styblinski_tang",
    "suite_rosenbrock",
    "suite_hartmann6_hidden",
    "suite_hartmann6_rotated",
    "suite_branin_rotated",
    "suite_svm",
    "suite_halfcheetah",
]

Array = NDArray[np.float64]

#: The fixed second word of each problem's seed sequence ``[instance, PROBLEM_ID]``.
PROBLEM_IDS: dict[str, int] = {
    "suite-levy": 1801,
    "suite-ackley": 1802,
    "suite-styblinski-tang": 1803,
    "suite-rosenbrock": 1804,
    "suite-hartmann6-hidden": 1805,
    "suite-hartmann6-rotated": 1806,
    "suite-branin-rotated": 1807,
    "suite-svm": 1808,
    "suite-halfcheetah": 1809,
}


def _check_instance(instance: Any, seed: Any = None) -> int:
    """``instance``, else ``seed``, else 0, checked to be an int >= 0."""
    if instance is None:
        instance = 0 if seed is None else seed
    instance = check_int(instance, "instance")
    if instance < 0:
        raise ValueError(f"instance must be an int >= 0, got {instance}")
    return instance


def _instance_rng(name: str, instance: int) -> np.random.Generator:
    return np.random.default_rng([instance, PROBLEM_IDS[name]])


# --------------------------------------------------------------------------- Styblinski-Tang
def _styblinski_tang_root() -> float:
    """The global minimizer of ``t^4 - 16 t^2 + 5 t`` over R, by Newton's method on ``4 t^3 - 32 t + 5``."""
    t = -2.9
    for _ in range(50):
        t_new = t - (4.0 * t**3 - 32.0 * t + 5.0) / (12.0 * t**2 - 32.0)
        if t_new == t:
            break
        t = t_new
    return t


_ST_XSTAR = _styblinski_tang_root()  # -2.903534027771178


def _styblinski_tang(X: Array) -> Array:
    """``f = -F`` with ``F(x) = sum_i (x_i^4 - 16 x_i^2 + 5 x_i) / 2``."""
    X2 = X * X
    return -0.5 * np.sum(X2 * X2 - 16.0 * X2 + 5.0 * X, axis=1)


# --------------------------------------------------------------------------- the shifted map
class _Shifted:
    """``U (n, D) -> h(x* + w * A (U - c))`` (picklable; ``A=None`` is the identity, ``active``
    picks coordinates instead of a matrix).

    The product with ``A`` uses :func:`numpy.einsum` (fixed summation order per row), so a
    row's value does not depend on the batch it is evaluated in.
    """

    def __init__(
        self,
        h: Any,
        xstar: Array,
        width: Array,
        c: Array,
        *,
        A: Array | None = None,
        active: NDArray[np.intp] | None = None,
    ) -> None:
        self.h, self.xstar, self.width, self.c, self.A, self.active = h, xstar, width, c, A, active

    def __call__(self, U: Array) -> Array:
        V = U - self.c
        if self.A is not None:
            V = np.einsum("ij,kj->ik", V, self.A)
        elif self.active is not None:
            V = V[:, self.active]
        return self.h(self.xstar + self.width * V)


def _draw_shift(name: str, dim: Any, instance: Any, seed: Any,
                min_dim: int) -> tuple[int, int, np.random.Generator, Array]:
    """``(D, instance, rng, c)``: ``dim`` and the instance checked, the instance's generator, the shift drawn first."""
    D = _check_dim(dim, name=name, min_dim=min_dim)
    instance = _check_instance(instance, seed)
    rng = _instance_rng(name, instance)
    return D, instance, rng, rng.random(D)


def _shifted_problem(name: str, fun: _Shifted, instance: int, noise_std: float,
                     structure: dict[str, Any] | None = None) -> Problem:
    """The problem maximizing ``fun`` on the unit cube, at its shift ``c``."""
    optimizer = fun.c.copy()
    return Problem(
        fun,
        Box.unit(fun.c.size),
        name=name,
        optimum_value=float(fun(optimizer[None, :])[0]) + 0.0,  # + 0.0: no -0.0
        optimizer=optimizer,
        noise_std=noise_std,
        structure=structure,
        params={"name": name, "dim": fun.c.size, "instance": instance, "noise_std": float(noise_std)},
    )


def _shifted_doc(dim: int, min_dim: int, drawn: str = "the shift ``c`` is") -> dict[str, str]:
    """The Parameters and Raises sections of a shifted problem's docstring, for :func:`fill_doc`.

    ``dim`` is the factory's default dimension, ``min_dim`` the smallest allowed, and ``drawn``
    ends the sentence "Instance (>= 0) from which ..." (what the instance draws).
    """
    return {
        "parameters": f"""
            Parameters
            ----------
            dim : int, default {dim}
                Dimension ``D >= {min_dim}``.
            instance : int, optional
                Instance (>= 0) from which {drawn} drawn;
                0 for development, 1-5 for reports.
            seed : int, optional
                The instance when ``instance`` is not given (the registry passes its ``seed``).
            noise_std : float, default 0.0
                Standard deviation of the observation noise.
            """,
        "raises": f"""
            Raises
            ------
            TypeError, ValueError
                If ``dim`` is not an int >= {min_dim}, ``instance`` not an int >= 0 or ``noise_std`` not
                a finite number >= 0.
            """,
    }


def _full_dim(name: str, h: Any, x_value: float, width: float, dim: int, instance: int | None,
              seed: int | None, noise_std: float, min_dim: int = 1) -> Problem:
    D, instance, _, c = _draw_shift(name, dim, instance, seed, min_dim)
    return _shifted_problem(name, _Shifted(h, np.full(D, x_value), np.full(D, width), c), instance, noise_std)


@fill_doc(**_shifted_doc(100, 1))
def suite_levy(dim: int = 100, *, instance: int | None = None, seed: int | None = None,
               noise_std: float = 0.0) -> Problem:
    """Levy, negated, on its usual domain ``[-10, 10]^D`` translated at random (see the module).

    %(parameters)s

    Returns
    -------
    Problem
        On ``[0, 1]^D``; ``f(u) = levy(1 + 20 (u - c))``; ``optimizer = c``,
        ``optimum_value = 0``.

    %(raises)s
    """
    return _full_dim("suite-levy", _levy, 1.0, 20.0, dim, instance, seed, noise_std)


@fill_doc(**_shifted_doc(100, 1))
def suite_ackley(dim: int = 100, *, instance: int | None = None, seed: int | None = None,
                 noise_std: float = 0.0) -> Problem:
    """Ackley, negated, on its usual domain ``[-32.768, 32.768]^D`` translated at random.

    %(parameters)s

    Returns
    -------
    Problem
        On ``[0, 1]^D``; ``f(u) = ackley(65.536 (u - c))``; ``optimizer = c``,
        ``optimum_value = 0``.

    %(raises)s
    """
    return _full_dim("suite-ackley", _ackley, 0.0, 65.536, dim, instance, seed, noise_std)


@fill_doc(**_shifted_doc(100, 1))
def suite_styblinski_tang(dim: int = 100, *, instance: int | None = None, seed: int | None = None,
                          noise_std: float = 0.0) -> Problem:
    r"""Styblinski-Tang, negated, on its usual domain ``[-5, 5]^D`` translated at random.

    .. math::

        F(x) = \frac{1}{2} \sum_{i=1}^{D} \left(x_i^4 - 16 x_i^2 + 5 x_i\right), \qquad f = -F.

    %(parameters)s

    Returns
    -------
    Problem
        On ``[0, 1]^D``; ``f(u) = -F(t* + 10 (u - c))`` with ``t* = -2.903534027771178`` (the
        root of ``4 t^3 - 32 t + 5`` refined by Newton's method); ``optimizer = c``,
        ``optimum_value = 39.16616570377142 D`` (computed at ``t*``).

    %(raises)s

    References
    ----------
    .. [1] M. A. Styblinski and T.-S. Tang, "Experiments in nonconvex optimization:
       stochastic approximation with function smoothing and simulated annealing", Neural
       Networks 3(4), 1990.
    """
    return _full_dim("suite-styblinski-tang", _styblinski_tang, _ST_XSTAR, 10.0, dim, instance, seed, noise_std)


@fill_doc(**_shifted_doc(60, 2))
def suite_rosenbrock(dim: int = 60, *, instance: int | None = None, seed: int | None = None,
                     noise_std: float = 0.0) -> Problem:
    """Rosenbrock, negated, on its usual domain ``[-5, 10]^D`` translated at random.

    %(parameters)s

    Returns
    -------
    Problem
        On ``[0, 1]^D``; ``f(u) = rosenbrock(1 + 15 (u - c))``; ``optimizer = c``,
        ``optimum_value = 0``.

    %(raises)s
    """
    return _full_dim("suite-rosenbrock", _rosenbrock, 1.0, 15.0, dim, instance, seed, noise_std, min_dim=2)


# --------------------------------------------------------------------------- hidden / rotated
@fill_doc(**_shifted_doc(300, 6, "the shift ``c`` and the active coordinates are"))
def suite_hartmann6_hidden(dim: int = 300, *, instance: int | None = None, seed: int | None = None,
                           noise_std: float = 0.0) -> Problem:
    """Hartmann-6 on 6 random coordinates among ``D`` (axis-aligned), translated at random.

    %(parameters)s

    Returns
    -------
    Problem
        On ``[0, 1]^D``; ``f(u) = hartmann6(x* + u[active] - c[active])``; ``optimizer = c``
        (any values of the other coordinates are equally optimal), ``optimum_value =
        3.32236801141...``; ``structure = {"active_dims": active}``.

    %(raises)s
    """
    name = "suite-hartmann6-hidden"
    D, instance, rng, c = _draw_shift(name, dim, instance, seed, 6)
    active = rng.choice(D, size=6, replace=False).astype(np.intp)
    fun = _Shifted(_hartmann6, _H6_XSTAR.copy(), np.ones(6), c, active=active)
    return _shifted_problem(name, fun, instance, noise_std, structure={"active_dims": active.tolist()})


def _rotated(name: str, h: Any, xstar: Array, width: Array, dim: int, instance: int | None,
             seed: int | None, noise_std: float) -> Problem:
    k = xstar.size
    D, instance, rng, c = _draw_shift(name, dim, instance, seed, k)
    Q, _ = np.linalg.qr(rng.standard_normal((D, k)))
    A = np.ascontiguousarray(Q.T)
    return _shifted_problem(name, _Shifted(h, xstar, width, c, A=A), instance, noise_std,
                            structure={"subspace": A.tolist()})


@fill_doc(**_shifted_doc(100, 6, 'the shift ``c`` and the orthonormal rows ``A`` (6 x D) are'))
def suite_hartmann6_rotated(dim: int = 100, *, instance: int | None = None, seed: int | None = None,
                            noise_std: float = 0.0) -> Problem:
    """Hartmann-6 through a random rotation: ``f(u) = hartmann6(x* + A (u - c))``.

    The suite uses ``D = 100`` and ``D = 300``.

    %(parameters)s

    Returns
    -------
    Problem
        On ``[0, 1]^D``; ``optimizer = c`` (as is every cube point with ``A (u - c) = 0``),
        ``optimum_value = 3.32236801141...``; ``structure = {"subspace": A}``. Points whose
        image ``x* + A (u - c)`` leaves ``[0, 1]^6`` are evaluated by the Hartmann formula
        itself, not clipped (no such point beats the optimum; see the module docstring).

    %(raises)s
    """
    return _rotated("suite-hartmann6-rotated", _hartmann6, _H6_XSTAR.copy(), np.ones(6), dim, instance, seed, noise_std)


@fill_doc(**_shifted_doc(100, 2, 'the shift ``c`` and the orthonormal rows ``A`` (2 x D) are'))
def suite_branin_rotated(dim: int = 100, *, instance: int | None = None, seed: int | None = None,
                         noise_std: float = 0.0) -> Problem:
    """Branin through a random rotation: ``f(u) = branin(x* + 15 A (u - c))``.

    %(parameters)s

    Returns
    -------
    Problem
        On ``[0, 1]^D``; ``x* = (pi, 2.275)`` (one of Branin's minimizers), the width 15 is
        that of both coordinates of Branin's usual domain; ``optimizer = c``, ``optimum_value
        = -5 / (4 pi) = -0.397887...``; ``structure = {"subspace": A}``. Images outside
        ``[-5, 10] x [0, 15]`` are evaluated by the Branin formula, not clipped.

    %(raises)s
    """
    xstar = np.array([math.pi, 2.275])
    return _rotated("suite-branin-rotated", _branin, xstar, np.full(2, 15.0), dim, instance, seed, noise_std)


# --------------------------------------------------------------------------- SVM
#: Intervals of the SVM's log10 parameters before the instance's offset: 30 feature scales,
#: then C, then gamma.
SVM_LOG10_LOWER = np.array([-1.0] * 30 + [-1.0, -4.0])
SVM_LOG10_UPPER = np.array([1.0] * 30 + [3.0, -1.0])
SUITE_INSTALL = "pip install 'hdbo[suite]'"

_DATA: dict[str, Any] = {}


def _import_sklearn() -> Any:
    try:
        import sklearn.datasets  # noqa: F401
        import sklearn.model_selection  # noqa: F401
        import sklearn.svm  # noqa: F401
    except ImportError as exc:
        raise ModuleNotFoundError(
            f"problem 'suite-svm' needs scikit-learn, which is not installed ({exc}); {SUITE_INSTALL}",
            name="sklearn",
        ) from None
    return sklearn


def _breast_cancer() -> tuple[Array, NDArray[np.int64]]:
    if "X" not in _DATA:
        from sklearn.datasets import load_breast_cancer

        X, y = load_breast_cancer(return_X_y=True)
        _DATA["X"], _DATA["y"] = np.asarray(X, dtype=float), np.asarray(y)
    return _DATA["X"], _DATA["y"]


class _SVMError:
    """``U (n, 32) -> -(5-fold CV error)`` of an RBF-SVC (picklable; one fit per row and fold)."""

    def __init__(self, lower: Array, width: Array, fold_seed: int) -> None:
        self.lower, self.width, self.fold_seed = lower, width, fold_seed
        self._folds: list[tuple[NDArray[np.intp], NDArray[np.intp]]] | None = None

    def folds(self) -> list[tuple[NDArray[np.intp], NDArray[np.intp]]]:
        if self._folds is None:
            from sklearn.model_selection import StratifiedKFold

            X, y = _breast_cancer()
            kfold = StratifiedKFold(n_splits=5, shuffle=True, random_state=self.fold_seed)
            self._folds = list(kfold.split(X, y))
        return self._folds

    def cv_error(self, log10_params: Array) -> float:
        """CV error at ``(log10 scales (30), log10 C, log10 gamma)``."""
        from sklearn.svm import SVC

        X, y = _breast_cancer()
        scales = 10.0 ** log10_params[:30]
        C, gamma = 10.0 ** log10_params[30], 10.0 ** log10_params[31]
        wrong = 0
        for train, test in self.folds():
            mean, std = X[train].mean(axis=0), X[train].std(axis=0)
            Z = (X - mean) / std * scales
            model = SVC(C=C, kernel="rbf", gamma=gamma).fit(Z[train], y[train])
            wrong += int(np.sum(model.predict(Z[test]) != y[test]))
        return wrong / y.size

    def __call__(self, U: Array) -> Array:
        P = self.lower + self.width * U
        return np.array([-self.cv_error(p) for p in P])


def suite_svm(*, instance: int | None = None, seed: int | None = None,
              noise_std: float = 0.0) -> Problem:
    """RBF-SVM with per-feature log-scales on the breast-cancer data; ``f = -(5-fold CV error)``.

    Needs scikit-learn (``pip install 'hdbo[suite]'``). The data are scikit-learn's bundled
    Wisconsin breast-cancer set (569 samples, 30 features, 2 classes; no download).

    The 32 coordinates of ``u in [0, 1]^32`` are the log10 of 30 per-feature scales, of ``C``
    and of ``gamma``: ``log10 p = lower + delta + (upper - lower) u`` with ``lower, upper =
    [-1, 1]`` (scales), ``[-1, 3]`` (C), ``[-4, -1]`` (gamma) and an offset ``delta_j ~
    U(-w_j / 8, w_j / 8)`` (``w = upper - lower``) drawn from the instance, so the centre of
    the cube is not the centre of the usual ranges. (Wider ranges, e.g. scales in ``[-2, 2]``,
    make a third or more of the cube a plateau where the SVM predicts the majority class,
    error 0.373; with these ranges about 2 % of uniform points are on it, the median error
    is about 0.06.) For each of 5 stratified folds the features
    are standardized with the training part's mean and standard deviation, multiplied by the
    scales, and an ``SVC(C=C, kernel="rbf", gamma=gamma)`` is fit on the training part; the
    objective is minus the fraction of the 569 samples misclassified when held out.

    Parameters
    ----------
    instance : int, optional
        Instance (>= 0): ``rng = np.random.default_rng([instance, 1808])``; ``delta =
        rng.uniform(-1, 1, 32) * w / 8``, then the folds' ``random_state =
        int(rng.integers(2**31))`` for ``StratifiedKFold(5, shuffle=True)``.
    seed : int, optional
        The instance when ``instance`` is not given (the registry passes its ``seed``).
    noise_std : float, default 0.0
        Standard deviation of extra observation noise (the objective itself is deterministic).

    Returns
    -------
    Problem
        ``dim = 32``, ``optimum_value = None``, ``optimizer = None`` (unknown). Instead
        ``structure["reference_value"]`` is ``f`` of scikit-learn's default SVC (all scales
        1, ``C = 1``, ``gamma = "scale"``, which is ``1/30`` on standardized data) with the
        instance's folds (about ``-0.023``, i.e. 2.3 % error), and
        ``structure["reference_point"]`` is that point in the cube (inside it for every
        instance, since ``|delta| <= w/8``).

    Raises
    ------
    ModuleNotFoundError
        If scikit-learn is not installed (the message names the extra).
    TypeError, ValueError
        If ``instance`` is not an int >= 0 or ``noise_std`` not a finite number >= 0.

    Notes
    -----
    One evaluation fits 5 SVMs on 455 samples: about 0.03-0.1 s. The CV error takes only the
    values ``k / 569``, so ``f`` is piecewise constant.
    """
    name = "suite-svm"
    instance = _check_instance(instance, seed)
    _import_sklearn()
    rng = _instance_rng(name, instance)
    width = SVM_LOG10_UPPER - SVM_LOG10_LOWER
    delta = rng.uniform(-1.0, 1.0, 32) * width / 8.0
    fold_seed = int(rng.integers(2**31))
    fun = _SVMError(SVM_LOG10_LOWER + delta, width, fold_seed)
    default = np.array([0.0] * 30 + [0.0, math.log10(1.0 / 30.0)])
    reference_point = (default - fun.lower) / width
    return Problem(
        fun,
        Box.unit(32),
        name=name,
        noise_std=noise_std,
        structure={
            "reference_value": -fun.cv_error(default),
            "reference_point": reference_point.tolist(),
        },
        params={"name": name, "instance": instance, "noise_std": float(noise_std)},
    )


# --------------------------------------------------------------------------- HalfCheetah
#: Interval of each policy weight before the instance's offset.
HALFCHEETAH_WEIGHT_BOUNDS = (-1.0, 1.0)


def _import_gymnasium() -> Any:
    try:
        import gymnasium
        import mujoco  # noqa: F401
    except ImportError as exc:
        raise ModuleNotFoundError(
            f"problem 'suite-halfcheetah' needs gymnasium[mujoco], which is not installed ({exc}); "
            f"{SUITE_INSTALL}",
            name="gymnasium",
        ) from None
    return gymnasium


class _HalfCheetahReturn:
    """``U (n, 102) -> return`` of the linear policy ``a = clip(W obs, -1, 1)``, one episode per row.

    The environment is made on first use and not pickled (a copy makes its own).
    """

    def __init__(self, lower: Array, width: float, episode_seed: int, steps: int) -> None:
        self.lower, self.width, self.episode_seed, self.steps = lower, width, episode_seed, steps
        self._env: Any = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_env"] = None
        return state

    def episode_return(self, weights: Array) -> float:
        """Return of one episode (reset with the fixed seed) under the weights (6 x 17, row-major)."""
        if self._env is None:
            gymnasium = _import_gymnasium()
            import mujoco

            # MuJoCo's default warning handler appends to MUJOCO_LOG.TXT in the working folder
            # (HalfCheetah's model uses a deprecated attribute); route its warnings to Python's
            # warnings while the model compiles, then restore the handler.
            previous = mujoco.get_mju_user_warning()
            mujoco.set_mju_user_warning(lambda msg: warnings.warn(f"MuJoCo: {msg}", RuntimeWarning, stacklevel=2))
            try:
                self._env = gymnasium.make("HalfCheetah-v5", max_episode_steps=self.steps)
            finally:
                mujoco.set_mju_user_warning(previous)
        W = weights.reshape(6, 17)
        obs, _ = self._env.reset(seed=self.episode_seed)
        total = 0.0
        for _ in range(self.steps):
            obs, reward, terminated, truncated, _ = self._env.step(np.clip(W @ obs, -1.0, 1.0))
            total += float(reward)
            if terminated or truncated:
                break
        return total

    def __call__(self, U: Array) -> Array:
        P = self.lower + self.width * U
        return np.array([self.episode_return(p) for p in P])


def suite_halfcheetah(*, instance: int | None = None, seed: int | None = None,
                      noise_std: float = 0.0, steps: int = 1000) -> Problem:
    """A linear policy for gymnasium's MuJoCo ``HalfCheetah-v5``; ``f`` = the episode's return.

    Needs gymnasium with MuJoCo (``pip install 'hdbo[suite]'``; no download at run time). The
    102 coordinates of ``u in [0, 1]^102`` are the weights of ``W`` (6 x 17, row-major), the
    action being ``clip(W obs, -1, 1)`` on the raw 17-D observation: ``W = -1 + delta + 2 u``
    with an offset ``delta_j ~ U(-1/4, 1/4)`` drawn from the instance (the centre of the cube
    is not the zero policy). ``f`` is the (undiscounted) return of one episode of ``steps``
    steps, the environment reset with a fixed seed drawn from the instance; it is to be
    maximized (``-f`` is the usual minimization form).

    Parameters
    ----------
    instance : int, optional
        Instance (>= 0): ``rng = np.random.default_rng([instance, 1809])``; ``delta =
        rng.uniform(-1, 1, 102) / 4``, then the episode seed ``int(rng.integers(2**31))``.
    seed : int, optional
        The instance when ``instance`` is not given (the registry passes its ``seed``).
    noise_std : float, default 0.0
        Standard deviation of extra observation noise (the episode itself is deterministic).
    steps : int, default 1000
        Episode length (HalfCheetah never terminates early; 1000 is its standard length).

    Returns
    -------
    Problem
        ``dim = 102``, ``optimum_value = None``, ``optimizer = None`` (unknown). Instead
        ``structure["reference_value"]`` is the return of the zero policy (``W = 0``; about
        ``-0.7`` for 1000 steps: standing nearly still costs nothing and earns nothing; random
        policies score about -300 to -3000) and
        ``structure["reference_point"]`` is that point in the cube (``u = (1 - delta) / 2``).

    Raises
    ------
    ModuleNotFoundError
        If gymnasium or mujoco is not installed (the message names the extra).
    TypeError, ValueError
        If ``instance`` is not an int >= 0, ``steps`` not an int >= 1 or ``noise_std`` not a
        finite number >= 0.

    Notes
    -----
    One evaluation (1000 steps) takes about 0.04 s.
    """
    name = "suite-halfcheetah"
    instance = _check_instance(instance, seed)
    steps = check_int(steps, "steps", low=1)
    _import_gymnasium()
    rng = _instance_rng(name, instance)
    lo, hi = HALFCHEETAH_WEIGHT_BOUNDS
    delta = rng.uniform(-1.0, 1.0, 102) / 4.0
    episode_seed = int(rng.integers(2**31))
    fun = _HalfCheetahReturn(lo + delta, hi - lo, episode_seed, steps)
    reference_point = (0.0 - fun.lower) / fun.width
    return Problem(
        fun,
        Box.unit(102),
        name=name,
        noise_std=noise_std,
        structure={
            "reference_value": fun.episode_return(np.zeros(102)),
            "reference_point": reference_point.tolist(),
        },
        params={"name": name, "instance": instance, "steps": steps, "noise_std": float(noise_std)},
    )


# --------------------------------------------------------------------------- registration
register_problem("suite-levy", suite_levy)
register_problem("suite-ackley", suite_ackley)
register_problem("suite-styblinski-tang", suite_styblinski_tang)
register_problem("suite-rosenbrock", suite_rosenbrock, min_dim=2)
register_problem("suite-hartmann6-hidden", suite_hartmann6_hidden, min_dim=6)
register_problem("suite-hartmann6-rotated", suite_hartmann6_rotated, min_dim=6)
register_problem("suite-branin-rotated", suite_branin_rotated, min_dim=2)
register_problem("suite-svm", suite_svm, native_dim=32)
register_problem("suite-halfcheetah", suite_halfcheetah, native_dim=102)
