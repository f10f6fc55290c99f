"""The SI-BO benchmark problems: GP sample, Gabor neuron and Branin in a random subspace."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from hdbo import problems
from hdbo.problems.subspace import gabor_filter
from hdbo.space import Box


def test_gp_subspace_instance(rng):
    p = problems.get("gp-subspace", dim=100, seed=0, noise_std=0.01)
    A = np.array(p.structure["subspace"])
    assert p.dim == 100 and A.shape == (2, 100)
    assert_allclose(A @ A.T, np.eye(2), atol=1e-12)
    assert p.bounds == Box.symmetric(100)
    # the documented optimum: value at the optimizer, attained on the disk of radius 1.1
    assert p(p.optimizer) == pytest.approx(p.optimum_value, abs=1e-12)
    assert np.linalg.norm(A @ p.optimizer) <= 1.1 + 1e-9
    assert p.optimum_value == pytest.approx(1.67738083, abs=1e-6)  # seed 0 (computed, documented here)
    # not rescaled: a raw GP sample with unit variance has values of order 1
    X = rng.uniform(-1, 1, (2000, 100)) * 0.2
    f = p(X)
    assert np.all(f <= p.optimum_value + 1e-9) and 0.05 < np.std(f) < 3
    # f depends on x only through A x, and is deterministic from the seed
    x = rng.uniform(-0.1, 0.1, 100)
    v = rng.standard_normal(100)
    v -= A.T @ (A @ v)
    v *= 0.5 / np.max(np.abs(v))  # |x + v| <= 0.6: stays in the box
    assert p(x) == pytest.approx(p(x + v), abs=1e-9)
    assert p(x) == problems.get("gp-subspace", dim=100, seed=0)(x)
    assert p(x) != problems.get("gp-subspace", dim=100, seed=1)(x)


def test_gp_subspace_optimum_is_the_max_over_the_disk():
    # an independent check of the computed f*: a finer grid, offset from the construction's
    # 201 x 201 one, over the disk of radius 1.1 never beats it, and comes within 1e-3 of it
    p = problems.gp_subspace(dim=10, seed=3, n_grid=15)
    A = np.array(p.structure["subspace"])
    ax = np.linspace(-1.1, 1.1, 263)
    U = np.stack(np.meshgrid(ax, ax, indexing="ij"), axis=-1).reshape(-1, 2)
    U = U[np.sum(U**2, axis=1) <= 1.1**2]
    vals = p(U @ A)
    assert vals.max() <= p.optimum_value + 1e-9
    assert vals.max() > p.optimum_value - 1e-3


def test_gp_subspace_is_clamped_to_the_disk():
    p = problems.gp_subspace(dim=60, seed=2, n_grid=12)
    A = np.array(p.structure["subspace"])
    u = np.array([0.6, -0.8])  # a unit vector
    x_far, x_edge = 2.0 * A.T @ u, 1.1 * A.T @ u  # A x = 2 u (outside the disk) and 1.1 u (its edge)
    assert np.max(np.abs(x_far)) <= 1
    assert p(x_far) == pytest.approx(p(x_edge), abs=1e-12)
    assert p(x_far) != pytest.approx(p(0.5 * x_far), abs=1e-6)


def test_gabor_neuron():
    p = problems.get("gabor-neuron")
    theta = gabor_filter()
    assert p.dim == 289 and p.bounds == Box.unit(289)
    assert np.linalg.norm(theta) == pytest.approx(3.0) and abs(theta.sum()) < 1e-12
    assert p(p.optimizer) == pytest.approx(1.0) and p.optimum_value == 1.0
    assert p(np.full(289, 0.5)) == pytest.approx(math.exp(-1))
    assert np.all((p.optimizer >= 0) & (p.optimizer <= 1))
    A = np.array(p.structure["subspace"])
    assert_allclose(A[0], theta / 3.0)
    # symmetric filter: orientation pi/4 -> theta(u, v) = theta(v, u)
    T = theta.reshape(17, 17)
    assert_allclose(T, T.T, atol=1e-12)


def test_branin_subspace(rng):
    p = problems.get("branin-subspace", dim=100, seed=4)
    assert p(p.optimizer) == pytest.approx(-5 / (4 * math.pi), abs=1e-9)
    assert p.optimum_value == pytest.approx(-5 / (4 * math.pi))
    X = rng.uniform(-1, 1, (500, 100))
    assert np.all(p(X) <= p.optimum_value + 1e-12)
    assert np.all(np.abs(p.optimizer) <= 1)


def test_rescale_keeps_the_subspace_consistent():
    p = problems.get("branin-subspace", dim=20, seed=1, domain="unit")
    A = np.array(p.structure["subspace"])
    off = np.array(p.structure["subspace_offset"])
    assert p.bounds == Box.unit(20)
    assert p(p.optimizer) == pytest.approx(p.optimum_value, abs=1e-9)
    assert A.shape == (2, 20) and off.shape == (2,)
