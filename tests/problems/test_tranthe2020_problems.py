"""The benchmark problems of Tran-The et al. (AAAI 2020), as its experiments use them: scaled to
[-1, 1]^D; Ackley, Levy and the rotated Hyper-Ellipsoid in every coordinate, six-hump Camelback
with two effective coordinates among D (SPEC.md P3.C)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from hdbo import problems

CAMEL_FSTAR = 1.0316284534898774  # max of -F, F* = -1.0316 (SPEC P3.C)


@pytest.mark.parametrize("D", [20, 50, 100])
@pytest.mark.parametrize(("name", "x_star"), [("ackley", 0.0), ("levy", 0.1), ("hyper-ellipsoid", 0.0)])
def test_full_dimensional_functions_on_the_symmetric_box(name, x_star, D, rng):
    p = problems.get(name, dim=D, domain="symmetric")
    assert p.dim == D
    assert_allclose(p.bounds.lower, -1.0)
    assert_allclose(p.bounds.upper, 1.0)
    # Levy's optimizer (1, ..., 1) on [-10, 10] is 0.1 on [-1, 1]; the others sit at the centre
    assert_allclose(np.asarray(p.optimizer).reshape(-1, D)[0], x_star, atol=1e-12)
    assert p.optimum_value == 0.0
    assert p(np.full(D, x_star)) == pytest.approx(0.0, abs=1e-12)
    X = rng.uniform(-1, 1, (50, D))
    assert max(p(x) for x in X) < 0.0


def test_known_values_in_original_units():
    # F at a corner of the scaled box equals F at the corner of the original box
    D = 3
    ell = problems.get("hyper-ellipsoid", dim=D, domain="symmetric")
    assert ell(np.ones(D)) == pytest.approx(-(3 + 2 + 1) * 65.536**2)
    ack = problems.get("ackley", dim=D, domain="symmetric")
    r = 32.768
    expected = -20 * np.exp(-0.2 * r) - np.exp(np.mean(np.cos(2 * np.pi * np.full(D, r)))) + 20 + np.e
    assert ack(np.ones(D)) == pytest.approx(-expected)


@pytest.mark.parametrize("D", [20, 50, 100])
@pytest.mark.parametrize("seed", [0, 7])
def test_camelback_embedded_with_two_effective_coordinates(D, seed, rng):
    p = problems.get("camelback", dim=D, domain="symmetric", seed=seed)
    assert p.dim == D
    assert_allclose(p.bounds.lower, -1.0)
    assert_allclose(p.bounds.upper, 1.0)
    active = p.structure["active_dims"]
    assert len(active) == 2 and len(set(active)) == 2
    assert p.optimum_value == pytest.approx(CAMEL_FSTAR)
    for x in np.asarray(p.optimizer).reshape(-1, D):  # both global optimizers
        assert p(x) == pytest.approx(CAMEL_FSTAR, abs=1e-9)
        # the D - 2 other coordinates have no effect
        z = rng.uniform(-1, 1, D)
        z[active] = x[active]
        assert p(z) == pytest.approx(CAMEL_FSTAR, abs=1e-9)
    # (u1, u2) = (0.0898, -0.7126) on [-3, 3] x [-2, 2] is (0.0299, -0.3563) on [-1, 1]^2
    x = np.zeros(D)
    x[active] = [0.08984201368301331 / 3, -0.7126564032704135 / 2]
    assert p(x) == pytest.approx(CAMEL_FSTAR, abs=1e-9)
    X = rng.uniform(-1, 1, (100, D))
    assert max(p(x) for x in X) < CAMEL_FSTAR


def test_camelback_active_coordinates_depend_on_the_seed():
    draws = {tuple(problems.get("camelback", dim=100, domain="symmetric", seed=s).structure["active_dims"])
             for s in range(6)}
    assert len(draws) >= 5
