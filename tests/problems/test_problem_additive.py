"""Tests of the trimodal and additive-trimodal problems (Kandasamy et al. 2015, §5.1)."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import minimize, minimize_scalar

from hdbo.problems import (
    KANDASAMY2015_CONFIGS,
    Problem,
    additive_trimodal,
    get,
    trimodal,
)
from hdbo.space import Box

# SPEC §P5-C1: (D, d', M', max f_d' per group, f*), as printed there (3 and 2 decimals).
SPEC_REFERENCE = [
    (10, 3, 3, 3.763, 11.29),
    (24, 6, 4, 7.541, 30.16),
    (24, 11, 2, 13.678, 27.36),
    (40, 5, 8, 6.293, 50.34),
    (40, 18, 2, 22.081, 44.16),
    (40, 35, 1, 41.98, 41.98),
    (96, 5, 19, 6.293, 119.56),
    (96, 29, 3, 35.020, 105.06),
    (120, 55, 2, 64.857, 129.71),
]

V_LEAD = np.array([[0.62, -0.38], [0.18, 0.58], [-0.58, -0.56]])
V_REST = np.array([-0.66, -0.19, 0.62])
WEIGHTS = (0.1, 0.8, 0.1)


def _centres(d: int) -> np.ndarray:
    return np.array([list(V_LEAD[k, : min(d, 2)]) + [V_REST[k]] * (d - 2) for k in range(3)])


def _naive_trimodal(z: np.ndarray) -> float:
    """Eq. (7) with the SPEC's reading, one point at a time, straight from the densities."""
    d = len(z)
    h = 0.01 * d**0.1
    V = _centres(d)
    density = sum(
        p * (2 * math.pi * h) ** (-d / 2) * math.exp(-float(np.sum((z - v) ** 2)) / (2 * h))
        for p, v in zip(WEIGHTS, V)
    )
    return max(-700.0, math.log(density)) if density > 0 else -700.0


def _closed_form_peak(d: int) -> float:
    """``log 0.8 - (d/2) log(2 pi h_d)``: the value at v2 ignoring the two other modes."""
    return math.log(0.8) - 0.5 * d * math.log(2 * math.pi * 0.01 * d**0.1)


def _search_best(problem: Problem, starts: list[np.ndarray], rng: np.random.Generator) -> float:
    """Best of 20k uniform points and of L-BFGS-B runs from the best 5 of them and ``starts``."""
    X = problem.bounds.sample(20_000, rng)
    f = problem(X)
    best = float(f.max())
    bounds = list(map(tuple, problem.bounds.bounds))
    for x0 in list(X[np.argsort(f)[-5:]]) + starts:
        res = minimize(lambda x: -problem(x), x0, method="L-BFGS-B", bounds=bounds,
                       options={"ftol": 1e-15, "gtol": 1e-12})
        best = max(best, -float(res.fun))
    return best


# --------------------------------------------------------------------------- f_d and f*
def test_trimodal_matches_naive_formula(rng: np.random.Generator) -> None:
    for d in (1, 2, 3, 5, 11):
        p = trimodal(d)
        assert p.bounds == Box.symmetric(d)
        # Points near each centre (values well above the floor) and uniform ones.
        near = np.vstack([v + 0.1 * rng.standard_normal((4, d)) for v in _centres(d)])
        Z = np.clip(np.vstack([near, p.bounds.sample(8, rng)]), -1, 1)
        assert_allclose(p(Z), [_naive_trimodal(z) for z in Z], rtol=1e-12, atol=1e-12)


def test_trimodal_floor() -> None:
    """Far from all three centres the log-density is below -700 and floored there."""
    p = trimodal(55)
    far = np.where(np.arange(55) % 2 == 0, 1.0, -1.0)
    assert _naive_trimodal(far) == -700.0  # the density underflows to 0
    assert p(far) == -700.0
    assert -700.0 < p(np.ones(55)) < 0  # 1 is near v3's 0.62 in 53 coordinates
    assert p(_centres(55)[1]) > 0


@pytest.mark.parametrize("D, d, M, per_group, total", SPEC_REFERENCE)
def test_spec_reference_values(D: int, d: int, M: int, per_group: float, total: float) -> None:
    """The SPEC's f* use the closed form at v2, ignoring the two other modes.

    For d >= 2 those modes change f_d at its peak by less than e^-50, far below double
    precision, so the computed optimum equals the closed form to rounding, and the SPEC's
    numbers agree to the digits they print: the tolerance is half a unit in their last digit.
    """
    peak = trimodal(d).optimum_value
    assert_allclose(peak, _closed_form_peak(d), rtol=1e-14)
    digits = 2 if per_group == 41.98 else 3
    assert abs(peak - per_group) <= 0.5 * 10.0**-digits + 1e-12
    p = additive_trimodal(D, d, M, seed=0)
    assert p.optimum_value == M * peak
    assert abs(p.optimum_value - total) <= 0.005 + 1e-12


def test_trimodal_peak_for_d1_is_pulled_off_v2() -> None:
    """In 1-D the weaker mode at 0.62 moves the peak visibly; check it against a 1-D search."""
    p = trimodal(1)
    x_peak = float(p.optimizer[0])
    assert 3e-6 < x_peak - 0.18 < 4e-6
    assert p.optimum_value > p(np.array([0.18]))
    res = minimize_scalar(lambda t: -p(np.array([t])), bracket=(0.17, 0.18, 0.19), tol=1e-12)
    assert abs(res.x - x_peak) < 1e-7
    assert -res.fun <= p.optimum_value + 1e-14
    eps = 1e-6
    slope = (p(np.array([x_peak + eps])) - p(np.array([x_peak - eps]))) / (2 * eps)
    assert abs(slope) < 1e-7


@pytest.mark.parametrize("d", [2, 3, 5, 6, 11, 18, 29, 35, 55])
def test_trimodal_peak_is_v2_to_double_precision(d: int) -> None:
    p = trimodal(d)
    assert_allclose(p.optimizer, _centres(d)[1], rtol=0, atol=1e-15)
    assert p(p.optimizer) == p.optimum_value


@pytest.mark.parametrize("d", [1, 5])
def test_trimodal_optimum_not_beaten(d: int, rng: np.random.Generator) -> None:
    p = trimodal(d)
    starts = [p.optimizer, *_centres(d), *np.clip(p.optimizer + 0.05 * rng.standard_normal((5, d)), -1, 1)]
    best = _search_best(p, starts, rng)
    assert best <= p.optimum_value + 1e-9 * (1 + abs(p.optimum_value))
    assert best >= p.optimum_value - 1e-8  # the search does reach the peak


@pytest.mark.parametrize("D, d, M", [(10, 3, 3), (5, 5, 1)])
def test_additive_optimum_not_beaten(D: int, d: int, M: int, rng: np.random.Generator) -> None:
    p = additive_trimodal(D, d, M, seed=4)
    starts = [p.optimizer]
    starts += list(np.clip(p.optimizer + 0.03 * rng.standard_normal((5, D)), 0, 1))
    # Every group at a random one of its three modes.
    modes = (_centres(d) + 1) / 2
    for _ in range(5):
        x0 = rng.random(D)
        for g in p.structure["groups"]:
            x0[g] = modes[rng.integers(3)]
        starts.append(x0)
    best = _search_best(p, starts, rng)
    assert best <= p.optimum_value + 1e-9 * (1 + abs(p.optimum_value))
    assert best >= p.optimum_value - 1e-8  # the search does reach the peak


@pytest.mark.parametrize("config", KANDASAMY2015_CONFIGS, ids=str)
def test_value_at_optimizer_equals_optimum(config: tuple[int, int, int]) -> None:
    D, d, M = config
    p = additive_trimodal(D, d, M, seed=1)
    assert p.dim == D and p.bounds == Box.unit(D)
    assert_allclose(p(p.optimizer), p.optimum_value, rtol=1e-13)
    x_peak = trimodal(d).optimizer
    for g in p.structure["groups"]:
        assert_allclose(2 * p.optimizer[g] - 1, x_peak, rtol=0, atol=1e-15)
    unused = np.setdiff1d(np.arange(D), p.structure["active_dims"])
    assert_array_equal(p.optimizer[unused], 0.5)


# --------------------------------------------------------------------------- groups
@pytest.mark.parametrize("config", KANDASAMY2015_CONFIGS, ids=str)
def test_groups_are_disjoint_and_of_size_d(config: tuple[int, int, int]) -> None:
    D, d, M = config
    p = additive_trimodal(D, d, M, seed=2)
    groups = p.structure["groups"]
    assert len(groups) == M
    assert all(len(g) == d and g == sorted(g) for g in groups)
    flat = [j for g in groups for j in g]
    assert len(set(flat)) == d * M
    assert all(isinstance(j, int) and 0 <= j < D for j in flat)
    assert p.structure["active_dims"] == sorted(flat)
    json.dumps(p.structure)


def test_groups_are_drawn_from_a_permutation() -> None:
    """Consecutive blocks of ``default_rng(seed).permutation(D)``, sorted within each block."""
    p = additive_trimodal(24, 6, 3, seed=11)
    perm = np.random.default_rng(11).permutation(24)
    assert p.structure["groups"] == [sorted(int(j) for j in perm[6 * k : 6 * k + 6]) for k in range(3)]


@pytest.mark.parametrize("D, d, M", [(10, 3, 3), (40, 35, 1), (96, 29, 3), (120, 55, 2)])
def test_unused_coordinates_have_no_effect(D: int, d: int, M: int, rng: np.random.Generator) -> None:
    p = additive_trimodal(D, d, M, seed=5)
    unused = np.setdiff1d(np.arange(D), p.structure["active_dims"])
    assert len(unused) == D - d * M > 0
    X = np.vstack([p.optimizer, p.bounds.sample(50, rng)])
    X[1:26] = np.clip(p.optimizer + 0.05 * rng.standard_normal((25, D)), 0, 1)  # above the floor
    Y = X.copy()
    Y[:, unused] = rng.random((len(X), len(unused)))
    assert_array_equal(p(Y), p(X))
    # ... while every used coordinate matters near the peak.
    for j in p.structure["active_dims"]:
        x = p.optimizer.copy()
        x[j] += 0.05
        assert p(x) < p.optimum_value


def test_same_seed_same_groups_other_seeds_differ() -> None:
    groups = [additive_trimodal(24, 6, 4, seed=s).structure["groups"] for s in range(5)]
    assert additive_trimodal(24, 6, 4, seed=3).structure["groups"] == groups[3]
    assert len({json.dumps(g) for g in groups}) == 5
    from_generator = additive_trimodal(24, 6, 4, seed=np.random.default_rng(3))
    assert from_generator.structure["groups"] == groups[3]


# --------------------------------------------------------------------------- evaluation
@pytest.mark.parametrize("D, d, M", [(10, 3, 3), (24, 11, 2), (96, 5, 19)])
def test_additivity(D: int, d: int, M: int, rng: np.random.Generator) -> None:
    p = additive_trimodal(D, d, M, seed=6)
    f_d = trimodal(d)
    X = np.vstack([p.bounds.sample(20, rng), np.clip(p.optimizer + 0.05 * rng.standard_normal((20, D)), 0, 1)])
    parts = np.column_stack([f_d(2 * X[:, g] - 1) for g in p.structure["groups"]])
    assert parts.max() > -700  # not only the floor
    assert_allclose(p(X), parts.sum(axis=1), rtol=1e-13, atol=1e-12)


@pytest.mark.parametrize("D, d, M", [(10, 3, 3), (120, 55, 2), (96, 5, 19)])
def test_vectorized_equals_row_by_row(D: int, d: int, M: int, rng: np.random.Generator) -> None:
    p = additive_trimodal(D, d, M, seed=7)
    X = np.vstack([p.bounds.sample(10, rng), np.clip(p.optimizer + 0.05 * rng.standard_normal((10, D)), 0, 1)])
    f = p(X)
    assert f.shape == (20,) and f.dtype == np.float64
    assert_allclose(f, [p(x) for x in X], rtol=1e-14, atol=0)


def test_large_batch_is_vectorized(rng: np.random.Generator) -> None:
    p = additive_trimodal(120, 55, 2, seed=0)
    X = p.bounds.sample(10_000, rng)
    start = time.perf_counter()
    f = p(X)
    elapsed = time.perf_counter() - start
    assert f.shape == (10_000,) and np.all(np.isfinite(f))
    assert elapsed < 5.0  # about 0.02 s; a Python loop over points would take seconds


# --------------------------------------------------------------------------- registry
def test_registry_builds_the_same_problems(rng: np.random.Generator) -> None:
    p = get("additive-trimodal", dim=24, d=6, M=4, seed=3)
    q = additive_trimodal(24, 6, 4, seed=3)
    assert p.name == "additive-trimodal"
    assert p.structure == q.structure and p.optimum_value == q.optimum_value
    X = p.bounds.sample(10, rng)
    assert_array_equal(p(X), q(X))
    assert p.params == {"name": "additive-trimodal", "dim": 24, "noise_std": 0.0, "domain": None,
                        "seed": 3, "d": 6, "M": 4}
    again = get(**json.loads(json.dumps(p.params)))
    assert again.structure == p.structure

    t = get("trimodal", dim=5)
    assert t.bounds == Box.symmetric(5) and t.optimum_value == trimodal(5).optimum_value
    Z = t.bounds.sample(10, rng)
    assert_array_equal(t(Z), trimodal(5)(Z))


def test_registry_defaults_and_domain(rng: np.random.Generator) -> None:
    p = get("additive-trimodal", dim=10, seed=0)  # d = 3, M = 10 // 3 = 3: the (10, 3, 3) case
    assert [len(g) for g in p.structure["groups"]] == [3, 3, 3]
    s = get("additive-trimodal", dim=10, seed=0, domain="symmetric")
    assert s.bounds == Box.symmetric(10) and s.structure == p.structure
    assert_allclose(s(s.optimizer), p.optimum_value, rtol=1e-13)


def test_noise_is_added_by_evaluate(rng: np.random.Generator) -> None:
    p = get("additive-trimodal", dim=10, d=3, M=3, seed=0, noise_std=0.5)
    y, f = p.evaluate(p.bounds.sample(200, rng), rng)
    assert 0.4 < np.std(y - f) < 0.6


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"dim": 10, "d": 0, "M": 3}, ValueError, r"^d must be an int >= 1, got 0"),
        ({"dim": 10, "d": 3, "M": 0}, ValueError, r"^M must be an int >= 1, got 0"),
        ({"dim": 8, "d": 3, "M": 3}, ValueError, r"^dim must be >= d \* M = 3 \* 3 = 9 .*got 8"),
        ({"dim": 2, "d": 3}, ValueError, r"^dim must be >= d = 3 .*got 2"),
        ({"dim": 0, "d": 3, "M": 1}, ValueError, r"^dim must be an int >= 1"),
        ({"dim": 10, "d": 2.0, "M": 3}, TypeError, r"^d must be an int, got float"),
        ({"dim": 10, "d": 3, "M": "3"}, TypeError, r"^M must be an int, got str"),
        ({"dim": 10, "d": 3, "M": 3, "seed": -1}, ValueError, r"seed must be a non-negative"),
        ({"dim": 10, "d": 3, "M": 3, "seed": True}, TypeError, r"^seed must be"),
    ],
)
def test_additive_errors(kwargs: dict, error: type, match: str) -> None:
    kwargs = {"seed": 0, **kwargs}
    with pytest.raises(error, match=match):
        additive_trimodal(**kwargs)


def test_seed_is_required_and_trimodal_errors() -> None:
    with pytest.raises(TypeError, match="seed"):
        additive_trimodal(10, 3, 3)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match=r"^dim must be an int >= 1, got 0"):
        trimodal(0)
    with pytest.raises(TypeError, match=r"^dim must be an int"):
        trimodal(3.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"dim must be >= d \* M"):
        get("additive-trimodal", dim=20, d=11, M=2)
