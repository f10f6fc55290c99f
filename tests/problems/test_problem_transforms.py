"""Tests of :func:`hdbo.problems.embed` and :func:`hdbo.problems.rescale`."""

from __future__ import annotations

import json

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from hdbo.problems import Problem, ackley, beale, branin, embed, hartmann6, levy, rescale
from hdbo.space import Box


def _structured_problem() -> Problem:
    """f(x) = g(A x + b) with an additive g, on a non-cube box; noise 0.1."""
    A = np.array([[1.0, 2.0, 0.0, -1.0], [0.0, 1.0, 3.0, 0.5]])
    b = np.array([0.3, -0.2])

    def fun(X):
        U = X @ A.T + b
        return -(U[:, 0] ** 2) - np.sin(U[:, 1])

    return Problem(
        fun,
        Box([-1.0, 0.0, 2.0, -3.0], [1.0, 4.0, 5.0, 3.0]),
        name="toy",
        optimum_value=None,
        noise_std=0.1,
        structure={"subspace": A, "subspace_offset": b, "groups": [[0, 1], [2, 3]], "kind": "toy"},
        params={"a": 1},
    )


# --------------------------------------------------------------------------- embed
def test_embed_inactive_coordinates_have_no_effect(rng: np.random.Generator) -> None:
    p = embed(hartmann6(), 30, seed=1)
    active = p.structure["active_dims"]
    inactive = np.setdiff1d(np.arange(30), active)
    X = p.bounds.sample(50, rng)
    Y = X.copy()
    Y[:, inactive] = p.bounds.sample(50, rng)[:, inactive]
    assert_array_equal(p(X), p(Y))
    # ... and the active ones carry the inner function, in the recorded order.
    assert_array_equal(p(X), hartmann6()(X[:, active]))


def test_embed_records_active_dims() -> None:
    p = embed(branin(), 25, seed=4)
    active = p.structure["active_dims"]
    assert isinstance(active, list) and all(type(i) is int for i in active)
    assert len(active) == 2 and len(set(active)) == 2
    assert all(0 <= i < 25 for i in active)
    assert p.params["active_dims"] == active
    json.dumps(p.params)


def test_embed_same_seed_same_dims_different_seeds_differ() -> None:
    dims = [tuple(embed(ackley(5), 100, seed=s).structure["active_dims"]) for s in range(6)]
    assert dims[0] == tuple(embed(ackley(5), 100, seed=0).structure["active_dims"])
    assert len(set(dims)) == 6
    g = np.random.default_rng(0)
    assert tuple(embed(ackley(5), 100, seed=g).structure["active_dims"]) == dims[0]


def test_embed_active_dims_are_spread_over_the_range() -> None:
    # Over many seeds every coordinate is sometimes active (no "first d" bias).
    hits = np.zeros(20)
    for s in range(200):
        hits[embed(branin(), 20, seed=s).structure["active_dims"]] += 1
    assert hits.min() > 0


def test_embed_optimizer_bounds_and_value() -> None:
    inner = branin()
    p = embed(inner, 12, seed=3)
    active = p.structure["active_dims"]
    inactive = np.setdiff1d(np.arange(12), active)
    assert p.optimizer.shape == (3, 12)
    assert_allclose(p(p.optimizer), inner.optimum_value, rtol=1e-14)
    assert_array_equal(p.optimizer[:, active], inner.optimizer)
    assert_array_equal(p.optimizer[:, inactive], 0.5)  # centre of [0, 1]
    # Branin's box is not a cube: active coordinates keep their bounds, inactive get [0, 1].
    assert_array_equal(p.bounds.lower[active], [-5.0, 0.0])
    assert_array_equal(p.bounds.upper[active], [10.0, 15.0])
    assert_array_equal(p.bounds.lower[inactive], 0.0)
    assert_array_equal(p.bounds.upper[inactive], 1.0)
    assert p.optimum_value == inner.optimum_value


def test_embed_cube_keeps_its_interval_and_single_optimizer_shape() -> None:
    p = embed(beale(), 6, seed=0)
    assert p.bounds == Box(np.full(6, -4.5), np.full(6, 4.5))
    assert p.optimizer.shape == (6,)
    assert p(p.optimizer) == 0.0
    q = embed(beale(), 6, seed=0, inactive_bounds=(-2.0, 8.0))
    inactive = np.setdiff1d(np.arange(6), q.structure["active_dims"])
    assert_array_equal(q.bounds.lower[inactive], -2.0)
    assert_array_equal(q.optimizer[inactive], 3.0)


def test_embed_same_dimension_is_a_permutation(rng: np.random.Generator) -> None:
    p = embed(levy(4), 4, seed=5)
    active = p.structure["active_dims"]
    assert sorted(active) == [0, 1, 2, 3]
    X = p.bounds.sample(10, rng)
    assert_array_equal(p(X), levy(4)(X[:, active]))


def test_embed_remaps_structure_and_keeps_noise(rng: np.random.Generator) -> None:
    inner = _structured_problem()
    p = embed(inner, 9, seed=2, name="toy9")
    active = p.structure["active_dims"]
    assert p.name == "toy9" and p.noise_std == 0.1 and p.optimizer is None
    assert p.structure["groups"] == [[active[0], active[1]], [active[2], active[3]]]
    assert p.structure["kind"] == "toy"
    A9 = p.structure["subspace"]
    assert A9.shape == (2, 9)
    assert_array_equal(A9[:, active], inner.structure["subspace"])
    assert_array_equal(np.delete(A9, active, axis=1), 0.0)
    X = p.bounds.sample(5, rng)
    assert_allclose(A9 @ X.T, inner.structure["subspace"] @ X[:, active].T)
    assert p.params["inner"] == "toy" and p.params["inner_params"] == {"a": 1}
    assert p.params["transform"] == "embed" and p.params["seed"] == 2


def test_embed_twice_composes_active_dims(rng: np.random.Generator) -> None:
    once = embed(branin(), 5, seed=0)
    twice = embed(once, 40, seed=1)
    active = twice.structure["active_dims"]
    assert len(active) == 2
    inactive = np.setdiff1d(np.arange(40), active)
    X = twice.bounds.sample(20, rng)
    Y = X.copy()
    Y[:, inactive] = twice.bounds.sample(20, rng)[:, inactive]
    assert_array_equal(twice(X), twice(Y))


def test_embed_errors() -> None:
    with pytest.raises(ValueError, match="D must be >= the problem's dimension 6"):
        embed(hartmann6(), 5, seed=0)
    with pytest.raises(TypeError, match="D must be an int"):
        embed(branin(), 10.0, seed=0)
    with pytest.raises(TypeError, match="problem must be a Problem"):
        embed(lambda X: X, 10, seed=0)
    with pytest.raises(ValueError, match="inactive_bounds"):
        embed(branin(), 10, seed=0, inactive_bounds=(1.0, 1.0))


# --------------------------------------------------------------------------- rescale
@pytest.mark.parametrize("domain, low", [("unit", 0.0), ("symmetric", -1.0)])
def test_rescale_preserves_values_under_the_affine_map(domain: str, low: float, rng) -> None:
    inner = embed(branin(), 7, seed=11)
    p = rescale(inner, domain)
    assert p.bounds == Box(np.full(7, low), np.ones(7))
    Z = p.bounds.sample(100, rng)
    X = inner.bounds.from_unit((Z - low) / (1.0 - low))
    assert_allclose(p(Z), inner(X), rtol=1e-13, atol=1e-13)
    # corners go to corners
    assert_allclose(p(p.bounds.lower), inner(inner.bounds.lower), rtol=1e-13)
    assert_allclose(p(p.bounds.upper), inner(inner.bounds.upper), rtol=1e-13)
    # optimizer mapped, value kept
    assert np.all(p.bounds.contains(p.optimizer))
    assert_allclose(p(p.optimizer), inner.optimum_value, rtol=1e-12)
    assert_allclose(inner.bounds.from_unit((p.optimizer - low) / (1.0 - low)), inner.optimizer, atol=1e-12)
    assert p.optimum_value == inner.optimum_value
    assert p.structure["active_dims"] == inner.structure["active_dims"]
    assert p.name == inner.name
    assert p.params["transform"] == "rescale" and p.params["domain"] == domain
    json.dumps(p.params)


def test_rescale_symmetric_origin_maps_to_ackley_optimum() -> None:
    p = rescale(ackley(3), "symmetric")
    assert_array_equal(p.optimizer, np.zeros(3))
    assert p(p.optimizer) == 0.0


@pytest.mark.parametrize("domain", ["unit", "symmetric"])
def test_rescale_adapts_subspace_structure(domain: str, rng: np.random.Generator) -> None:
    inner = _structured_problem()
    p = rescale(inner, domain, name="toy-scaled")
    A, b = p.structure["subspace"], p.structure["subspace_offset"]
    Z = p.bounds.sample(30, rng)
    U = Z @ A.T + b
    assert_allclose(p(Z), -(U[:, 0] ** 2) - np.sin(U[:, 1]), rtol=1e-12, atol=1e-12)
    assert p.structure["groups"] == inner.structure["groups"]
    assert p.noise_std == 0.1 and p.name == "toy-scaled"
    assert_array_equal(inner.structure["subspace"], _structured_problem().structure["subspace"])


def test_rescale_errors() -> None:
    with pytest.raises(ValueError, match="domain must be one of 'unit', 'symmetric'"):
        rescale(branin(), "cube")
    with pytest.raises(TypeError, match="problem must be a Problem"):
        rescale("branin", "unit")
