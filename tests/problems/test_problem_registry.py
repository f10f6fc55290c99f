"""Tests of the problem registry (:func:`hdbo.problems.get`) and of noisy evaluation."""

from __future__ import annotations

import json

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from hdbo.problems import (
    Problem,
    available_problems,
    branin,
    embed,
    get,
    problem_spec,
    register_problem,
    registry,
    rescale,
)
from hdbo.space import Box


@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let a test register problems without leaking them into the global registry."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))


def test_builtin_names() -> None:
    names = available_problems()
    assert names == sorted(names)
    for name in ("branin", "beale", "camelback", "hartmann6", "ackley", "levy", "hyper-ellipsoid", "rosenbrock"):
        assert name in names
    assert problem_spec("branin").native_dim == 2
    assert problem_spec("hartmann6").native_dim == 6
    assert problem_spec("ackley").native_dim is None
    assert problem_spec("rosenbrock").min_dim == 2


def test_fixed_dim_native(rng: np.random.Generator) -> None:
    X = branin().bounds.sample(10, rng)
    for p in (get("branin"), get("branin", dim=2)):
        assert p.name == "branin" and p.dim == 2
        assert p.bounds == branin().bounds
        assert_array_equal(p(X), branin()(X))
        assert "active_dims" not in p.structure
        assert p.params == {"name": "branin", "dim": 2, "noise_std": 0.0, "domain": None, "seed": 0}


def test_example_branin_in_20_dims_on_the_unit_cube(rng: np.random.Generator) -> None:
    p = get("branin", dim=20, domain="unit", seed=3)
    assert p.name == "branin" and p.dim == 20
    assert p.bounds == Box.unit(20)
    expected = rescale(embed(branin(), 20, seed=3), "unit")
    assert p.structure["active_dims"] == expected.structure["active_dims"]
    Z = p.bounds.sample(20, rng)
    assert_array_equal(p(Z), expected(Z))
    assert_allclose(p(p.optimizer), p.optimum_value, rtol=1e-12)
    assert p.params == {"name": "branin", "dim": 20, "noise_std": 0.0, "domain": "unit", "seed": 3}


def test_seed_picks_the_active_dims() -> None:
    a = get("camelback", dim=50, seed=1).structure["active_dims"]
    assert a == get("camelback", dim=50, seed=1).structure["active_dims"]
    assert a != get("camelback", dim=50, seed=2).structure["active_dims"]


def test_any_dim_problem(rng: np.random.Generator) -> None:
    p = get("levy", dim=8, domain="symmetric", seed=5)
    assert p.dim == 8 and p.bounds == Box.symmetric(8)
    assert "active_dims" not in p.structure  # any-D problems are not embedded
    assert p.params["dim"] == 8


def test_params_rebuild_exactly(rng: np.random.Generator) -> None:
    p = get("hartmann6", dim=15, noise_std=0.2, domain="symmetric", seed=9)
    params = json.loads(json.dumps(p.params))
    q = get(**params)
    assert q.noise_std == 0.2 and q.structure == p.structure
    X = p.bounds.sample(10, rng)
    assert_array_equal(q(X), p(X))


# --------------------------------------------------------------------------- errors
def test_unknown_name_lists_the_names() -> None:
    with pytest.raises(ValueError, match=r"unknown problem 'branim'; available problems: .*branin"):
        get("branim")
    with pytest.raises(TypeError, match="name must be a string"):
        get(3)


def test_dim_errors() -> None:
    with pytest.raises(ValueError, match="dim is required for problem 'ackley'"):
        get("ackley")
    with pytest.raises(ValueError, match=r"dim must be >= 2 for problem 'branin' \(its native dimension\), got 1"):
        get("branin", dim=1)
    with pytest.raises(ValueError, match=r"dim must be >= 2 for problem 'rosenbrock'"):
        get("rosenbrock", dim=1)
    with pytest.raises(ValueError, match="dim must be >= 1"):
        get("ackley", dim=0)
    with pytest.raises(TypeError, match="dim must be an int"):
        get("ackley", dim=2.5)
    with pytest.raises(TypeError, match="dim must be an int"):
        get("ackley", dim="10")


def test_noise_domain_seed_errors() -> None:
    with pytest.raises(ValueError, match="noise_std must be finite and >= 0, got -0.1"):
        get("branin", noise_std=-0.1)
    with pytest.raises(ValueError, match="noise_std must be finite"):
        get("branin", noise_std=float("nan"))
    with pytest.raises(TypeError, match="noise_std must be a real number"):
        get("branin", noise_std="0.1")
    with pytest.raises(ValueError, match="domain must be None or one of 'unit', 'symmetric', got 'box'"):
        get("branin", domain="box")
    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        get("branin", seed=-1)
    with pytest.raises(TypeError, match="seed must be an int"):
        get("branin", seed=np.random.default_rng(0))


def test_unknown_parameter_names_the_accepted_ones() -> None:
    with pytest.raises(TypeError, match="problem 'branin' takes: no extra parameters"):
        get("branin", colour="red")


# --------------------------------------------------------------------------- registering
def test_register_custom_factory(scratch_registry: None, rng: np.random.Generator) -> None:
    calls = []

    def shifted_sphere(dim: int, *, seed: int, scale: float = 1.0) -> Problem:
        calls.append((dim, seed, scale))
        centre = np.random.default_rng(seed).uniform(-0.5, 0.5, dim)
        return Problem(
            lambda X: -scale * np.sum((X - centre) ** 2, axis=1),
            Box.symmetric(dim),
            name="sphere",
            optimum_value=0.0,
            optimizer=centre,
        )

    assert register_problem("test-sphere", shifted_sphere) is shifted_sphere
    register_problem("test-sphere", shifted_sphere)  # same registration again is harmless
    assert "test-sphere" in available_problems()
    p = get("test-sphere", dim=4, seed=8, scale=2.0, noise_std=0.5)
    assert calls == [(4, 8, 2.0)]
    assert p.name == "test-sphere" and p.noise_std == 0.5
    assert p.params == {"name": "test-sphere", "dim": 4, "noise_std": 0.5, "domain": None, "seed": 8, "scale": 2.0}
    assert p(p.optimizer) == 0.0
    assert_array_equal(get(**p.params)(p.optimizer[None]), [0.0])
    with pytest.raises(TypeError, match="problem 'test-sphere' takes: scale"):
        get("test-sphere", dim=4, shape="round")
    with pytest.raises(TypeError, match="JSON-serializable; not: scale"):
        get("test-sphere", dim=4, scale=object())


def test_register_errors(scratch_registry: None) -> None:
    with pytest.raises(ValueError, match="'branin' is already registered"):
        register_problem("branin", lambda: branin())
    with pytest.raises(TypeError, match="factory must be callable"):
        register_problem("test-x", 3)
    with pytest.raises(ValueError, match="native_dim must be an int >= 1"):
        register_problem("test-x", branin, native_dim=0)

    register_problem("test-wrong-dim", branin, native_dim=3)
    with pytest.raises(ValueError, match="returned dimension 2, expected 3"):
        get("test-wrong-dim")
    register_problem("test-not-problem", lambda: "nope", native_dim=1)
    with pytest.raises(TypeError, match="returned str, not a Problem"):
        get("test-not-problem")


# --------------------------------------------------------------------------- noise
def test_evaluate_adds_noise_of_the_right_std(rng: np.random.Generator) -> None:
    p = get("branin", dim=5, noise_std=0.3, seed=1)
    x = p.bounds.sample(1, rng)
    X = np.repeat(x, 20_000, axis=0)
    y, f = p.evaluate(X, np.random.default_rng(0))
    assert_array_equal(f, p(X))
    residual = y - f
    assert abs(residual.std() - 0.3) < 0.3 * 0.03
    assert abs(residual.mean()) < 4 * 0.3 / np.sqrt(20_000)


def test_evaluate_is_deterministic_under_a_seed(rng: np.random.Generator) -> None:
    p = get("ackley", dim=6, noise_std=1.0)
    X = p.bounds.sample(10, rng)
    y1, _ = p.evaluate(X, np.random.default_rng(42))
    y2, _ = p.evaluate(X, np.random.default_rng(42))
    y3, _ = p.evaluate(X, np.random.default_rng(43))
    assert_array_equal(y1, y2)
    assert not np.array_equal(y1, y3)
    y, f = p.evaluate(X[0], np.random.default_rng(42))
    assert isinstance(f, float) and np.shape(y) == ()


def test_noise_free_evaluate_returns_f(rng: np.random.Generator) -> None:
    p = get("levy", dim=3)
    X = p.bounds.sample(4, rng)
    y, f = p.evaluate(X, np.random.default_rng(0))
    assert_array_equal(y, f)


def test_transforms_keep_noise_std() -> None:
    p = branin(noise_std=0.7)
    assert embed(p, 9, seed=0).noise_std == 0.7
    assert rescale(p, "unit").noise_std == 0.7


@pytest.mark.parametrize("name, dim", [("hyper-ellipsoid", 4), ("branin", 12), ("hartmann6", 6)])
def test_problems_pickle_for_worker_processes(name: str, dim: int, rng: np.random.Generator) -> None:
    # Not for persistence (that is params/JSON): process pools and Dask send problems by pickle.
    import pickle

    p = get(name, dim=dim, domain="symmetric", noise_std=0.1, seed=4)
    q = pickle.loads(pickle.dumps(p))
    X = p.bounds.sample(5, rng)
    assert_array_equal(q(X), p(X))
    assert q.params == p.params and q.noise_std == p.noise_std
