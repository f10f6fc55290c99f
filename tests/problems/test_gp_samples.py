"""Problems of Chen, Castro, Krause (2012), Section 5: GP samples, Quad, QuadMix, hidden Branin and Beale."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hdbo.problems import chen_beale, chen_branin, get, gp_sample, quad, quadmix


def uniform(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    return rng.uniform(-1.0, 1.0, size=(n, dim))


def test_gp_sample_depends_only_on_its_active_coordinates(rng):
    p = gp_sample(30, d=2, seed=4, n_features=512)
    act = p.structure["active_dims"]
    assert len(act) == 2 and act == sorted(act) and all(0 <= i < 30 for i in act)
    X = uniform(rng, 50, 30)
    Y = uniform(rng, 50, 30)
    Y[:, act] = X[:, act]
    np.testing.assert_allclose(p(X), p(Y), atol=1e-12)
    Y[:, act[0]] += 0.05
    assert np.max(np.abs(p(X) - p(Y))) > 1e-3
    assert p.bounds.lower.tolist() == [-1.0] * 30 and p.bounds.upper.tolist() == [1.0] * 30


def test_gp_sample_covariance_is_the_papers_kernel(rng):
    # f(x) = sigma_s sqrt(2/F) sum_j cos(w_j^T x_A + c_j) has covariance E[cos(w^T (x - x'))] sigma_s^2,
    # which must be the paper's exp(-|x_A - x'_A|^2 / b^2) (b = 0.1, sigma_s^2 = 1): check the
    # features' kernel at a few offsets, and the scale through the sample's variance over the box.
    p = gp_sample(6, d=2, seed=9, signal_variance=2.0)
    fun = p._fun
    assert fun.W.shape == (4096, 2) and fun.scale == pytest.approx(math.sqrt(2.0) * math.sqrt(2 / 4096))
    for r in ([0.05, 0.0], [0.03, 0.04], [0.1, 0.0], [0.0, 0.2]):
        r = np.array(r)
        assert np.mean(np.cos(fun.W @ r)) == pytest.approx(math.exp(-(r @ r) / 0.01), abs=0.04)
    v = p(uniform(rng, 20000, 6))
    assert v.var() == pytest.approx(2.0, rel=0.35)  # one sample: ~ (2 / 0.07)^2 independent regions


def test_gp_sample_documented_optimum(rng):
    p = gp_sample(12, d=2, seed=7)
    assert p(p.optimizer) == pytest.approx(p.optimum_value, abs=1e-9)
    assert p.optimum_value >= p(uniform(rng, 20000, 12)).max() - 1e-9
    assert np.all(np.abs(p.optimizer) <= 1)


def test_gp_sample_registered_with_noise():
    p = get("gp-sample", dim=8, seed=1, noise_std=0.3)
    assert p.noise_std == 0.3 and p.dim == 8 and p.structure["active_dims"] == gp_sample(8, seed=1).structure["active_dims"]
    with pytest.raises(ValueError, match="d"):
        gp_sample(3, d=4)


@pytest.mark.parametrize("factory", [quad, quadmix])
def test_quad_optimum_and_weights(factory, rng):
    p = factory(50, d=4, seed=3)
    act = p.structure["active_dims"]
    assert len(act) == 4
    assert p(p.optimizer) == pytest.approx(0.0, abs=1e-12) and p.optimum_value == 0.0
    X = uniform(rng, 2000, 50)
    assert np.all(p(X) < 0)
    # moving an active coordinate by 0.1 costs (0.1 / b)^2 = 1; an inactive one (0.1 / 100)^2
    inactive = next(i for i in range(50) if i not in act)
    for i, cost in ((act[0], 1.0), (inactive, 1e-6)):
        x = p.optimizer.copy()
        x[i] += 0.1 if x[i] < 0.9 else -0.1
        expected = cost if factory is quad else None
        if expected is not None:
            assert -p(x) == pytest.approx(expected, rel=1e-9)
        else:  # QuadMix: M = (1 - 1/D) I + (1/D) 11^T applied to P (x - x*)
            v = np.zeros(50)
            v[i] = math.sqrt(cost)
            mv = (1 - 1 / 50) * v + v.sum() / 50
            assert -p(x) == pytest.approx(float(mv @ mv), rel=1e-9)


@pytest.mark.parametrize("factory", [chen_branin, chen_beale])
def test_hidden_functions_rescaled_to_minus_one_one(factory, rng):
    p = factory(40, seed=2)
    act = p.structure["active_dims"]
    assert len(act) == 2 and p.optimum_value == 1.0
    np.testing.assert_allclose(p(np.atleast_2d(p.optimizer)), 1.0, atol=1e-6)
    X = uniform(rng, 100000, 40)
    v = p(X)
    assert v.max() <= 1.0 + 1e-9 and v.min() >= -1.0 - 1e-9
    assert v.min() < -0.9 and v.max() > 0.99  # the range is [-1, 1], not a sub-interval
    Y = uniform(rng, 100000, 40)
    Y[:, act] = X[:, act]
    np.testing.assert_allclose(p(Y), v)  # only the active coordinates matter


def test_branin_matches_the_standard_function_and_beale_is_mostly_flat(rng):
    raw = chen_branin(4, seed=0, rescale_values=False)
    assert raw.optimum_value == pytest.approx(-0.397887, abs=1e-5)  # -min of Branin
    beale = chen_beale(4, seed=0)
    assert np.mean(beale(uniform(rng, 20000, 4)) > 0.9) > 0.7  # the paper: ~90% nearly flat
