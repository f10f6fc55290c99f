"""Tests of the projected-additive trimodal problem (Li et al. 2016, §5.1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.optimize import minimize

from hdbo.problems import get, projected_trimodal

V_LEAD = np.array([[0.62, -0.38], [0.18, 0.58], [-0.58, -0.56]])
V_REST = np.array([-0.66, -0.19, 0.62])


def _naive(x: np.ndarray, A: np.ndarray, d: int, mapped: bool = True) -> float:
    """The paper's formula, one group and one component at a time, centres mapped to [0, 1]
    (``mapped=False``: the Add-GP-UCB code's centres as they are, on [-1, 1])."""
    h = 0.01 * d**0.1
    V = [np.array(list(V_LEAD[k, : min(d, 2)]) + [V_REST[k]] * (d - 2)) for k in range(3)]
    V = [(v + 1) / 2 for v in V] if mapped else V
    total = 0.0
    for i in range(A.shape[1] // d):
        z = A[:, i * d:(i + 1) * d].T @ x
        dens = sum(p * (2 * math.pi * h) ** (-d / 2) * math.exp(-float(np.sum((z - v) ** 2)) / (2 * h))
                   for p, v in zip((0.1, 0.8, 0.1), V))
        total += max(-700.0, math.log(dens)) if dens > 0 else -700.0
    return total


@pytest.mark.parametrize("D", [4, 10, 50])
def test_matches_the_formula_and_structure(D, rng):
    p = projected_trimodal(D, seed=3)
    A = np.array(p.structure["projection"])
    d = D // 2
    s = min(0.25, 12.5 / D)
    assert np.all(np.abs(A - np.eye(D)) <= s)
    assert p.structure["projected_groups"] == [list(range(d)), list(range(d, D))]
    assert "groups" not in p.structure
    X = rng.random((4, D))
    assert_allclose(p(X), [_naive(x, A, d) for x in X], rtol=1e-10, atol=1e-9)


def test_paper_perturbation_widths():
    assert get("projected-trimodal", dim=50, seed=0).params["dim"] == 50
    for D, s in [(50, 0.25), (100, 0.125)]:
        A = np.array(projected_trimodal(D, seed=1).structure["projection"])
        assert np.abs(A - np.eye(D)).max() <= s and np.abs(A - np.eye(D)).max() > 0.9 * s


@pytest.mark.parametrize("D, seed", [(4, 0), (10, 1), (20, 0)])
def test_optimum_at_optimizer_and_not_beaten(D, seed, rng):
    p = projected_trimodal(D, seed=seed)
    x_star = p.optimizer
    assert np.all((x_star >= 0) & (x_star <= 1))
    assert p(x_star) == pytest.approx(p.optimum_value, abs=1e-12)
    X = rng.random((3000, D))
    f = p(X)
    best = f.max()
    for x0 in list(X[np.argsort(f)[-3:]]) + [np.clip(x_star + 0.05 * rng.normal(size=D), 0, 1)]:
        res = minimize(lambda x: -p(x), x0, method="L-BFGS-B", bounds=[(0, 1)] * D)
        best = max(best, -res.fun)
    assert best <= p.optimum_value + 1e-7 * (1 + abs(p.optimum_value))


def test_unconstrained_peak_value_when_inside():
    """With no perturbation, A = I and the peak (every group at v_peak) is inside the box."""
    p = projected_trimodal(50, s=0.0, seed=0)
    d = 25
    expected = 2 * (math.log(0.8) - d / 2 * math.log(2 * math.pi * 0.01 * d**0.1))
    assert p.optimum_value == pytest.approx(expected, abs=1e-9)
    assert p.optimum_value == pytest.approx(60.69, abs=0.01)  # SPEC.md P4-C1


def test_native_centres_reading(rng):
    """centres="native": x in [-1, 1]^D, the same A per seed, the centres not mapped."""
    p = projected_trimodal(10, seed=1, centres="native")
    q = projected_trimodal(10, seed=1)
    assert_allclose(p.bounds.lower, -1.0)
    assert_allclose(p.bounds.upper, 1.0)
    A = np.array(p.structure["projection"])
    assert_allclose(A, q.structure["projection"])
    X = rng.uniform(-1, 1, (4, 10))
    assert_allclose(p(X), [_naive(x, A, 5, mapped=False) for x in X], rtol=1e-10, atol=1e-9)
    assert np.all(np.abs(p.optimizer) <= 1) and p(p.optimizer) == pytest.approx(p.optimum_value, abs=1e-12)
    f = p(rng.uniform(-1, 1, (3000, 10)))
    assert f.max() <= p.optimum_value
    assert p.params["centres"] == "native" and "centres" not in q.params
    # through the registry too (whose own `domain` only rescales the box)
    r = get("projected-trimodal", dim=10, seed=1, centres="native")
    assert r.optimum_value == pytest.approx(p.optimum_value) and r(X[0]) == pytest.approx(p(X[0]))
    # the character the li2016 diagnosis rests on: at D = 50 the box centre is close to the
    # optimum under this reading (regret below 100) and far from it under the spec's (above 300)
    for seed in (0, 1):
        s50 = projected_trimodal(50, seed=seed, centres="native")
        u50 = projected_trimodal(50, seed=seed)
        assert s50.optimum_value - s50(np.zeros(50)) < 100
        assert u50.optimum_value - u50(np.full(50, 0.5)) > 300


def test_errors():
    with pytest.raises(ValueError, match="centres"):
        projected_trimodal(10, seed=0, centres="cube")
    with pytest.raises(ValueError, match="multiple"):
        projected_trimodal(10, d=3, seed=0)
    with pytest.raises(ValueError, match="s"):
        projected_trimodal(10, s=-1.0, seed=0)
    with pytest.raises(TypeError):
        projected_trimodal(10)  # seed is required
