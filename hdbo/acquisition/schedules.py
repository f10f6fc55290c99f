"""Exploration weights ``beta_t`` for GP-UCB-type acquisitions.

Each schedule is a plain function of the iteration ``t >= 1`` with its constants as keyword
arguments; :func:`get_beta_schedule` binds the constants once and returns a callable
``t -> beta_t``. ``log`` is the natural logarithm throughout.

Every schedule checks its arguments: ``t`` and the real constants must be real numbers
(``TypeError`` otherwise), the counts must be ints, and a value out of range (``t < 1``,
``delta`` outside (0, 1), a non-positive constant, ...) raises ``ValueError``.

Examples
--------
>>> beta = get_beta_schedule("kandasamy2015", d=5)
>>> round(beta(1), 6)
0.693147
"""

from __future__ import annotations

import functools
import inspect
import math
from typing import Any, Callable

from .._docstrings import fill_doc
from .._validation import check_int, check_real

__all__ = [
    "srinivas_finite",
    "srinivas_continuous",
    "constant",
    "kandasamy2015",
    "kandasamy2015_theory",
    "tranthe2020",
    "BETA_SCHEDULES",
    "get_beta_schedule",
    "available_beta_schedules",
]

_PI2 = math.pi**2

# Sections shared by the schedules' docstrings (filled in by ``fill_doc``).
_DOC = {
    "t": """
        t : int
            Iteration, ``t >= 1``.
    """,
    "delta": """
        delta : float, default 0.1
            Failure probability in (0, 1).
    """,
    "returns": """
        Returns
        -------
        float
            The weight ``beta_t``.

        Raises
        ------
        TypeError
            If an argument has the wrong type (e.g. a float count).
    """,
}


# ---------------------------------------------------------------------- argument checks
def _t(t: Any) -> float:
    return check_real(t, "t", low=1)


def _positive(value: Any, name: str) -> float:
    return check_real(value, name, low=0, low_inclusive=False)


def _delta(delta: Any) -> float:
    delta = check_real(delta, "delta")
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    return delta


def _positive_log(arg: float, what: str) -> float:
    """``log(arg)``, which must be > 0 because its square root is taken."""
    out = math.log(arg)
    if out <= 0:
        raise ValueError(f"{what} must be > 1 so that its log has a square root; got {arg!r}")
    return out


# ---------------------------------------------------------------------- schedules
@fill_doc(**_DOC)
def srinivas_finite(t: float, *, n_points: int, delta: float = 0.1) -> float:
    """GP-UCB weight for a finite domain: ``2 log(|D| t^2 pi^2 / (6 delta))``.

    Parameters
    ----------
    %(t)s
    n_points : int
        Size ``|D| >= 1`` of the finite domain.
    %(delta)s

    %(returns)s
    ValueError
        If ``t < 1``, ``n_points < 1`` or ``delta`` is not in (0, 1).

    References
    ----------
    Srinivas, Krause, Kakade, Seeger. Gaussian process optimization in the bandit setting,
    ICML 2010, Theorem 1. Used by SI-BO (Djolonga et al. 2013) on its grid; SPEC 0.A.3.

    Examples
    --------
    >>> round(srinivas_finite(1, n_points=100, delta=0.1), 4)
    14.8109
    """
    t, n = _t(t), check_int(n_points, "n_points", low=1)
    return 2.0 * math.log(n * t * t * _PI2 / (6.0 * _delta(delta)))


@fill_doc(**_DOC)
def srinivas_continuous(
    t: float, *, dim: int, delta: float = 0.1, a: float = 1.0, b: float = 1.0, r: float = 1.0
) -> float:
    """GP-UCB weight for a compact box ``[0, r]^d`` with f a GP sample.

    ``beta_t = 2 log(2 t^2 pi^2 / (3 delta)) + 2 d log(t^2 d b r sqrt(log(4 d a / delta)))``.

    Parameters
    ----------
    %(t)s
    dim : int
        Dimension ``d >= 1`` of the domain.
    %(delta)s
    a, b : float, default 1.0
        Constants of the gradient tail bound ``P(sup |df/dx_j| > L) <= a exp(-(L/b)^2)``.
    r : float, default 1.0
        Side length of the domain.

    %(returns)s
    ValueError
        If ``t < 1``, ``dim < 1``, ``a``, ``b`` or ``r`` is not positive, ``delta`` is not in
        (0, 1), or ``4 d a / delta <= 1`` (the square root of its log would not be real).

    References
    ----------
    Srinivas, Krause, Kakade, Seeger. Gaussian process optimization in the bandit setting,
    ICML 2010, Theorem 2. SPEC 0.A.3.
    """
    t, d = _t(t), check_int(dim, "dim", low=1)
    a, b, r, delta = _positive(a, "a"), _positive(b, "b"), _positive(r, "r"), _delta(delta)
    root = math.sqrt(_positive_log(4.0 * d * a / delta, "4 * dim * a / delta"))
    return 2.0 * math.log(2.0 * t * t * _PI2 / (3.0 * delta)) + 2.0 * d * math.log(t * t * d * b * r * root)


@fill_doc(**_DOC)
def constant(t: float, *, value: float) -> float:
    """A fixed weight ``beta_t = value`` (``value >= 0``; 0 is pure exploitation).

    Parameters
    ----------
    t : int
        Iteration, ``t >= 1`` (checked, otherwise unused).
    value : float
        The weight.

    %(returns)s
    ValueError
        If ``t < 1`` or ``value`` is negative or not finite.
    """
    _t(t)
    return check_real(value, "value", low=0)


@fill_doc(**_DOC)
def kandasamy2015(t: float, *, d: int) -> float:
    """Practical weight of Add-GP-UCB and RPP-GP-UCB: ``beta_t = 0.2 d log(2 t)``.

    Parameters
    ----------
    %(t)s
    d : int
        Dimension of the largest group (``d = D`` for plain GP-UCB).

    %(returns)s
    ValueError
        If ``t < 1`` or ``d < 1``.

    References
    ----------
    Kandasamy, Schneider, Poczos. High dimensional Bayesian optimisation and bandits via
    additive models, ICML 2015, Section 4.4 (SPEC P5.A.5); reused by Li et al., AISTATS 2016
    (SPEC P4.A.5).

    Examples
    --------
    >>> round(kandasamy2015(1, d=10), 6)  # GP-UCB on the 10-D problem: 2 log 2
    1.386294
    """
    return 0.2 * check_int(d, "d", low=1) * math.log(2.0 * _t(t))


@fill_doc(**_DOC)
def kandasamy2015_theory(t: float, *, d: int, M: int, D: int, delta: float = 0.1) -> float:
    """Add-GP-UCB weight of the regret bound: ``2 log(M pi^2 t^2 / (2 delta)) + 2 d log(D t^3)``.

    Parameters
    ----------
    %(t)s
    d : int
        Maximum group dimension.
    M : int
        Number of groups.
    D : int
        Ambient dimension.
    %(delta)s

    %(returns)s
    ValueError
        If ``t < 1``, a count is < 1 or ``delta`` is not in (0, 1).

    References
    ----------
    Kandasamy, Schneider, Poczos, ICML 2015, Theorem 5 (SPEC P5.A.5). The authors later
    reported an error in the analysis behind it (SPEC P5.A.6, item 11).
    """
    t, d, M, D = _t(t), check_int(d, "d", low=1), check_int(M, "M", low=1), check_int(D, "D", low=1)
    delta = _delta(delta)
    return 2.0 * math.log(M * _PI2 * t * t / (2.0 * delta)) + 2.0 * d * math.log(D * t**3)


@fill_doc(**_DOC)
def tranthe2020(
    t: float, *, dim: int, subspace_dim: int, a: float = 1.0, b: float = 1.0, delta: float = 0.1
) -> float:
    """MS-UCB weight: ``2 log(pi^2 t^2 / delta) + 2 d log(2 b d sqrt(log(6 D a / delta)) t^2)``.

    With ``subspace_dim == 0`` (every subspace is a single point) the paper's special case
    ``beta_t = 4 log(pi^2 t^2 / (2 delta))`` is returned.

    Parameters
    ----------
    %(t)s
    dim : int
        Ambient dimension ``D >= 1``.
    subspace_dim : int
        Subspace dimension ``d`` with ``0 <= d < D``.
    a, b : float, default 1.0
        Constants of the gradient tail bound (Assumption 1). The paper gives no values;
        1 is the PROPOSED choice of SPEC P3.A.3.
    delta : float, default 0.1
        Failure probability in (0, 1) (PROPOSED value 0.1).

    %(returns)s
    ValueError
        If ``t < 1``, ``dim < 1``, ``subspace_dim`` is not in ``[0, dim)``, ``a`` or ``b`` is
        not positive, ``delta`` is not in (0, 1), or ``6 D a / delta <= 1`` with ``d > 0``.

    References
    ----------
    Tran-The, Gupta, Rana, Venkatesh. Trading convergence rate with computational budget in
    high dimensional Bayesian optimization, AAAI 2020, Section "Proposed method" and
    Theorem 1 (SPEC P3.A.3).

    Examples
    --------
    >>> round(tranthe2020(1, dim=100, subspace_dim=5), 2)  # SPEC P3.A.3: about 43
    43.03
    """
    t, D = _t(t), check_int(dim, "dim", low=1)
    d = check_int(subspace_dim, "subspace_dim", low=0)
    if d >= D:
        raise ValueError(f"subspace_dim must be < dim={D}, got {d}")
    a, b, delta = _positive(a, "a"), _positive(b, "b"), _delta(delta)
    if d == 0:
        return 4.0 * math.log(_PI2 * t * t / (2.0 * delta))
    root = math.sqrt(_positive_log(6.0 * D * a / delta, "6 * dim * a / delta"))
    return 2.0 * math.log(_PI2 * t * t / delta) + 2.0 * d * math.log(2.0 * b * d * root * t * t)


# ---------------------------------------------------------------------- registry
BETA_SCHEDULES: dict[str, Callable[..., float]] = {
    "srinivas_finite": srinivas_finite,
    "srinivas_continuous": srinivas_continuous,
    "constant": constant,
    "kandasamy2015": kandasamy2015,
    "kandasamy2015_theory": kandasamy2015_theory,
    "tranthe2020": tranthe2020,
}


def available_beta_schedules() -> list[str]:
    """Names accepted by :func:`get_beta_schedule`.

    Returns
    -------
    list of str
        Sorted.
    """
    return sorted(BETA_SCHEDULES)


def get_beta_schedule(name: str, **params: Any) -> Callable[[int], float]:
    """Bind a schedule's constants and return ``t -> beta_t``.

    Parameters
    ----------
    name : str
        One of :func:`available_beta_schedules`.
    **params
        The schedule's keyword arguments (e.g. ``d=5`` for ``"kandasamy2015"``).

    Returns
    -------
    callable
        A :class:`functools.partial` of the schedule function; ``.func`` and ``.keywords``
        recover the name and constants (handy for JSON state).

    Raises
    ------
    ValueError
        If the name is unknown (the message lists the valid names), a required parameter is
        missing, a parameter is not accepted, or a value is invalid.
    TypeError
        If a parameter has the wrong type.
    """
    if name not in BETA_SCHEDULES:
        raise ValueError(f"unknown beta schedule {name!r}; valid names are {available_beta_schedules()}")
    fn = BETA_SCHEDULES[name]
    kw = {p.name: p for p in inspect.signature(fn).parameters.values() if p.kind is p.KEYWORD_ONLY}
    missing = [k for k, p in kw.items() if p.default is p.empty and k not in params]
    if missing:
        raise ValueError(f"beta schedule {name!r} requires parameter(s) {missing}; got {sorted(params)}")
    unknown = sorted(set(params) - set(kw))
    if unknown:
        raise ValueError(f"beta schedule {name!r} does not accept {unknown}; it accepts {list(kw)}")
    fn(1, **params)  # validates every constant now rather than at the first iteration
    return functools.partial(fn, **params)
