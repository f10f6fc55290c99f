from __future__ import annotations

import functools
import math

import pytest
from numpy.testing import assert_allclose

from hdbo.acquisition import schedules as S
from hdbo.acquisition.schedules import available_beta_schedules, get_beta_schedule

PI2 = math.pi**2

# name, params, t, hand-computed value
CASES = [
    ("srinivas_finite", {"n_points": 1001, "delta": 0.1}, 3, 2 * math.log(1001 * 9 * PI2 / 0.6)),
    (
        "srinivas_continuous",
        {"dim": 2, "delta": 0.1, "a": 1.0, "b": 2.0, "r": 1.5},
        2,
        2 * math.log(8 * PI2 / 0.3) + 4 * math.log(4 * 2 * 2 * 1.5 * math.sqrt(math.log(80))),
    ),
    ("constant", {"value": 3.5}, 7, 3.5),
    ("kandasamy2015", {"d": 5}, 10, 0.2 * 5 * math.log(20)),
    (
        "kandasamy2015_theory",
        {"d": 3, "M": 4, "D": 12, "delta": 0.05},
        2,
        2 * math.log(4 * PI2 * 4 / 0.1) + 6 * math.log(96),
    ),
    (
        "tranthe2020",
        {"dim": 100, "subspace_dim": 5},
        1,
        2 * math.log(PI2 / 0.1) + 10 * math.log(10 * math.sqrt(math.log(6000))),
    ),
    ("tranthe2020", {"dim": 20, "subspace_dim": 0, "delta": 0.2}, 4, 4 * math.log(PI2 * 16 / 0.4)),
]


@pytest.mark.parametrize("name, params, t, expected", CASES)
def test_hand_computed_values(name, params, t, expected):
    assert_allclose(getattr(S, name)(t, **params), expected, rtol=1e-12)
    assert_allclose(get_beta_schedule(name, **params)(t), expected, rtol=1e-12)


def test_documented_examples():
    # SPEC P3.A.3: D = 100, d = 5, t = 1 gives about 43
    assert S.tranthe2020(1, dim=100, subspace_dim=5) == pytest.approx(43.0, abs=0.05)
    assert S.kandasamy2015(1, d=10) == pytest.approx(2 * math.log(2))  # SPEC P5.A.5: GP-UCB in 10-D
    assert S.kandasamy2015(3, d=2) == pytest.approx(0.4 * math.log(6))  # Add-2/5


@pytest.mark.parametrize("name, params, t, expected", CASES)
def test_t_below_one_rejected(name, params, t, expected):
    with pytest.raises(ValueError, match=r"t must be >= 1.*got 0"):
        getattr(S, name)(0, **params)
    with pytest.raises(TypeError, match="t must be a real number"):
        getattr(S, name)("1", **params)


@pytest.mark.parametrize(
    "name, params, match",
    [
        ("srinivas_finite", {"n_points": 0}, "n_points must be an int >= 1, got 0"),
        ("srinivas_finite", {"n_points": 10, "delta": 1.5}, r"delta must lie in \(0, 1\), got 1.5"),
        ("srinivas_continuous", {"dim": 2, "b": -1.0}, "b must be > 0, got -1.0"),
        ("srinivas_continuous", {"dim": 1, "a": 0.01}, r"4 \* dim \* a / delta must be > 1"),
        ("constant", {"value": -1.0}, "value must be >= 0"),
        ("kandasamy2015", {"d": 0}, "d must be an int >= 1"),
        ("kandasamy2015_theory", {"d": 2, "M": 0, "D": 10}, "M must be an int >= 1"),
        ("tranthe2020", {"dim": 5, "subspace_dim": 5}, "subspace_dim must be < dim=5, got 5"),
        ("tranthe2020", {"dim": 5, "subspace_dim": -1}, "subspace_dim must be an int >= 0"),
    ],
)
def test_bad_parameters(name, params, match):
    with pytest.raises(ValueError, match=match):
        getattr(S, name)(1, **params)
    with pytest.raises(ValueError, match=match):
        get_beta_schedule(name, **params)


def test_registry():
    names = available_beta_schedules()
    assert names == sorted(S.BETA_SCHEDULES) and len(names) == 6
    beta = get_beta_schedule("kandasamy2015", d=4)
    assert isinstance(beta, functools.partial) and beta.func is S.kandasamy2015 and beta.keywords == {"d": 4}
    assert beta(2) > beta(1) > 0
    with pytest.raises(ValueError, match=r"unknown beta schedule 'gpucb'; valid names are \['constant'"):
        get_beta_schedule("gpucb")
    with pytest.raises(ValueError, match=r"'srinivas_finite' requires parameter\(s\) \['n_points'\]"):
        get_beta_schedule("srinivas_finite", delta=0.1)
    with pytest.raises(ValueError, match=r"'constant' does not accept \['dim'\]; it accepts \['value'\]"):
        get_beta_schedule("constant", value=1.0, dim=3)
    with pytest.raises(TypeError, match="d must be an int, got float"):
        get_beta_schedule("kandasamy2015", d=2.5)
