"""Contract tests over every registered problem, and formula checks of the synthetic ones."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.optimize import minimize

from hdbo.problems import (
    Problem,
    ackley,
    available_problems,
    beale,
    branin,
    camelback,
    get,
    hartmann6,
    hyper_ellipsoid,
    levy,
    problem_spec,
    rosenbrock,
)


def _default_dim(name: str) -> int:
    spec = problem_spec(name)
    return spec.native_dim if spec.native_dim is not None else max(spec.min_dim, 3)


def _builtin_problems() -> list[str]:
    """hdbo's own problems (tests elsewhere register toy problems through a plugin, and
    whether those are registered at collection time depends on the order pytest imports
    the test folders)."""
    return [n for n in available_problems() if problem_spec(n).factory.__module__.startswith("hdbo.")]


# Every problem of hdbo in a small dimension, plus embedded / rescaled variants.
CASES = [(name, _default_dim(name), None) for name in _builtin_problems()] + [
    ("branin", 10, "unit"),
    ("camelback", 20, "symmetric"),
    ("beale", 5, "symmetric"),
    ("hartmann6", 12, None),
    ("ackley", 5, "symmetric"),
    ("levy", 4, "unit"),
]


def _case_id(case: tuple[str, int, str | None]) -> str:
    name, dim, domain = case
    return f"{name}-{dim}d" + (f"-{domain}" if domain else "")


@pytest.fixture(params=CASES, ids=[_case_id(c) for c in CASES])
def problem(request: pytest.FixtureRequest) -> Problem:
    name, dim, domain = request.param
    return get(name, dim=dim, domain=domain, seed=7)


def test_every_registered_problem_is_covered() -> None:
    assert len(_builtin_problems()) >= 19
    assert {c[0] for c in CASES} >= set(_builtin_problems())


def test_value_at_optimizer_equals_optimum(problem: Problem) -> None:
    if problem.optimum_value is None:
        assert problem.optimizer is None  # nothing documented, nothing to check
        return
    assert problem.optimizer is not None
    X = np.atleast_2d(problem.optimizer)
    assert_allclose(problem(X), problem.optimum_value, rtol=1e-12, atol=1e-12)


def test_optimizer_inside_bounds(problem: Problem) -> None:
    if problem.optimizer is None:
        return
    X = np.atleast_2d(problem.optimizer)
    assert X.shape[1] == problem.dim
    assert np.all(problem.bounds.contains(X))


def test_optimum_not_beaten_by_search(problem: Problem, rng: np.random.Generator) -> None:
    """20k uniform points, then L-BFGS-B from the best few and from each documented optimizer."""
    if problem.optimum_value is None:
        return
    X = problem.bounds.sample(20_000, rng)
    f = problem(X)
    starts = list(X[np.argsort(f)[-5:]])
    if problem.optimizer is not None:
        starts += list(np.atleast_2d(problem.optimizer))
    best = float(f.max())
    bounds = list(map(tuple, problem.bounds.bounds))
    for x0 in starts:
        res = minimize(lambda x: -problem(x), x0, method="L-BFGS-B", bounds=bounds)
        best = max(best, -float(res.fun))
    tol = 1e-9 * (1.0 + abs(problem.optimum_value))
    assert best <= problem.optimum_value + tol


def test_vectorized_equals_row_by_row(problem: Problem, rng: np.random.Generator) -> None:
    X = problem.bounds.sample(7, rng)
    f = problem(X)
    assert isinstance(f, np.ndarray) and f.shape == (7,) and f.dtype == np.float64
    rows = np.array([problem(x) for x in X])
    assert all(isinstance(problem(x), float) for x in X[:2])
    assert_allclose(f, rows, rtol=1e-14, atol=0)
    assert problem(X[:1]).shape == (1,)


def test_params_are_json_and_rebuild_the_problem(problem: Problem, rng: np.random.Generator) -> None:
    params = json.loads(json.dumps(problem.params))
    again = get(**params)
    X = problem.bounds.sample(5, rng)
    assert again.bounds == problem.bounds
    assert_allclose(again(X), problem(X), rtol=0, atol=0)
    assert again.structure.keys() == problem.structure.keys()


def test_values_finite_over_the_box(problem: Problem, rng: np.random.Generator) -> None:
    corners = np.vstack([problem.bounds.lower, problem.bounds.upper])
    X = np.vstack([corners, problem.bounds.sample(100, rng)])
    assert np.all(np.isfinite(problem(X)))


# --------------------------------------------------------------------------- formulas
# Straightforward textbook implementations (usual minimization form, one point at a time),
# to check the vectorized, rearranged ones.
def _naive_branin(x):
    b, c, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 1 / (8 * math.pi)
    return (x[1] - b * x[0] ** 2 + c * x[0] - 6) ** 2 + 10 * (1 - t) * math.cos(x[0]) + 10


def _naive_beale(x):
    u, v = x
    return (1.5 - u + u * v) ** 2 + (2.25 - u + u * v**2) ** 2 + (2.625 - u + u * v**3) ** 2


def _naive_camel(x):
    u, v = x
    return (4 - 2.1 * u**2 + u**4 / 3) * u**2 + u * v + (-4 + 4 * v**2) * v**2


def _naive_hartmann6(x):
    alpha = [1.0, 1.2, 3.0, 3.2]
    A = [[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14], [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]]
    P = [
        [1312, 1696, 5569, 124, 8283, 5886],
        [2329, 4135, 8307, 3736, 1004, 9991],
        [2348, 1451, 3522, 2883, 3047, 6650],
        [4047, 8828, 8732, 5743, 1091, 381],
    ]
    total = 0.0
    for i in range(4):
        total += alpha[i] * math.exp(-sum(A[i][j] * (x[j] - P[i][j] * 1e-4) ** 2 for j in range(6)))
    return -total


def _naive_ackley(x):
    D = len(x)
    s1 = sum(v * v for v in x) / D
    s2 = sum(math.cos(2 * math.pi * v) for v in x) / D
    return -20 * math.exp(-0.2 * math.sqrt(s1)) - math.exp(s2) + 20 + math.e


def _naive_levy(x):
    w = [1 + (v - 1) / 4 for v in x]
    total = math.sin(math.pi * w[0]) ** 2
    for i in range(len(x) - 1):
        total += (w[i] - 1) ** 2 * (1 + 10 * math.sin(math.pi * w[i] + 1) ** 2)
    return total + (w[-1] - 1) ** 2 * (1 + math.sin(2 * math.pi * w[-1]) ** 2)


def _naive_hyper_ellipsoid(x):
    return sum(sum(x[j] ** 2 for j in range(i + 1)) for i in range(len(x)))


def _naive_rosenbrock(x):
    return sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (x[i] - 1) ** 2 for i in range(len(x) - 1))


FORMULAS = [
    (branin, {}, _naive_branin),
    (beale, {}, _naive_beale),
    (camelback, {}, _naive_camel),
    (hartmann6, {}, _naive_hartmann6),
    (ackley, {"dim": 5}, _naive_ackley),
    (ackley, {"dim": 1}, _naive_ackley),
    (levy, {"dim": 5}, _naive_levy),
    (levy, {"dim": 1}, _naive_levy),
    (hyper_ellipsoid, {"dim": 6}, _naive_hyper_ellipsoid),
    (hyper_ellipsoid, {"dim": 1}, _naive_hyper_ellipsoid),
    (rosenbrock, {"dim": 5}, _naive_rosenbrock),
    (rosenbrock, {"dim": 2}, _naive_rosenbrock),
]


@pytest.mark.parametrize(
    "factory, kwargs, naive", FORMULAS, ids=[f"{f.__name__}-{k.get('dim', '')}" for f, k, _ in FORMULAS]
)
def test_matches_textbook_formula(factory, kwargs, naive, rng: np.random.Generator) -> None:
    p = factory(**kwargs)
    X = p.bounds.sample(50, rng)
    expected = np.array([-naive(list(x)) for x in X])  # maximization: f = -F
    assert_allclose(p(X), expected, rtol=1e-11, atol=1e-11)
    if p.optimizer is not None:
        opt = np.atleast_2d(p.optimizer)
        assert_allclose(p(opt), [-naive(list(x)) for x in opt], rtol=1e-12, atol=1e-13)


def test_reference_optima() -> None:
    """Documented values from the literature."""
    assert_allclose(branin().optimum_value, -0.397887, atol=1e-6)
    for x in ([-math.pi, 12.275], [math.pi, 2.275], [9.42478, 2.475]):
        assert_allclose(branin()(x), -0.397887, atol=1e-6)
    cam = camelback()
    assert_allclose(cam.optimum_value, 1.0316284535, atol=1e-10)
    assert_allclose(cam([0.0898, -0.7126]), 1.0316, atol=1e-4)
    assert_allclose(cam([-0.0898, 0.7126]), 1.0316, atol=1e-4)
    h6 = hartmann6()
    assert_allclose(h6.optimum_value, 3.32237, atol=1e-5)
    published = [0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573]
    assert_allclose(h6(published), h6.optimum_value, atol=1e-9)
    assert_allclose(h6.optimizer, published, atol=1e-5)
    assert beale()([3.0, 0.5]) == 0.0


def test_exact_zero_at_optimum_for_any_dim() -> None:
    for factory in (ackley, levy, hyper_ellipsoid):
        for D in (1, 2, 50, 1000):
            p = factory(D)
            assert p(p.optimizer) == 0.0
    assert rosenbrock(100)(np.ones(100)) == 0.0


def test_domains() -> None:
    assert branin().bounds.to_dict() == {"lower": [-5.0, 0.0], "upper": [10.0, 15.0]}
    assert camelback().bounds.to_dict() == {"lower": [-3.0, -2.0], "upper": [3.0, 2.0]}
    assert beale().bounds.to_dict() == {"lower": [-4.5, -4.5], "upper": [4.5, 4.5]}
    assert hartmann6().bounds.to_dict() == {"lower": [0.0] * 6, "upper": [1.0] * 6}
    assert ackley(3).bounds.to_dict() == {"lower": [-32.768] * 3, "upper": [32.768] * 3}
    assert levy(3).bounds.to_dict() == {"lower": [-10.0] * 3, "upper": [10.0] * 3}
    assert hyper_ellipsoid(3).bounds.to_dict() == {"lower": [-65.536] * 3, "upper": [65.536] * 3}
    assert rosenbrock(3).bounds.to_dict() == {"lower": [-5.0] * 3, "upper": [10.0] * 3}


def test_hyper_ellipsoid_is_the_rotated_one() -> None:
    # Sum_i Sum_{j<=i} x_j^2 weights x_1 by D and x_D by 1 (the axis-parallel form is the reverse).
    p = hyper_ellipsoid(4)
    assert_allclose(p(np.eye(4)), [-4.0, -3.0, -2.0, -1.0])


@pytest.mark.parametrize("factory", [ackley, levy, hyper_ellipsoid, rosenbrock])
def test_any_dim_factories_reject_bad_dim(factory) -> None:
    with pytest.raises(ValueError, match="dim must be >="):
        factory(0)
    with pytest.raises(TypeError, match="dim must be an int"):
        factory(2.0)
    with pytest.raises(TypeError, match="dim must be an int"):
        factory(True)


def test_rosenbrock_needs_two_dims() -> None:
    with pytest.raises(ValueError, match="dim must be >= 2"):
        rosenbrock(1)


def test_factories_set_noise_and_params() -> None:
    p = ackley(4, noise_std=0.25)
    assert p.noise_std == 0.25
    assert p.params == {"name": "ackley", "dim": 4, "noise_std": 0.25}
    again = get(**p.params)
    assert again.noise_std == 0.25 and again.dim == 4
    with pytest.raises(ValueError, match="noise_std"):
        branin(noise_std=-1.0)
