"""Hyperparameter priors (MAP fits) and the learned constant mean."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hdbo.gp import Additive, GaussianProcess, LogNormalPrior, Projected, dimension_scaled_prior, make_kernel
from hdbo.gp.priors import LENGTHSCALE_LOC, NOISE_LOC, kernel_input_dims


def test_log_prob_and_gradient():
    prior = LogNormalPrior([0.0, 1.0, -2.0], [1.0, 2.0, np.inf])
    theta = np.array([0.5, -1.0, 7.0])
    value, grad = prior.log_prob(theta)
    assert value == pytest.approx(-0.5 * (0.25 + 1.0))
    h = 1e-6
    num = [(prior.log_prob(theta + h * e)[0] - prior.log_prob(theta - h * e)[0]) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(grad, num, atol=1e-8)
    assert grad[2] == 0.0  # flat entry


def test_prior_validation():
    with pytest.raises(ValueError, match="same length"):
        LogNormalPrior([0.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="positive"):
        LogNormalPrior([0.0], [0.0])
    with pytest.raises(ValueError, match="finite"):
        LogNormalPrior([np.nan], [1.0])
    kern = make_kernel("se", 3, ard=True)
    with pytest.raises(ValueError, match="entries"):
        GaussianProcess(kern, prior=LogNormalPrior([0.0], [1.0]))
    with pytest.raises(TypeError, match="prior"):
        GaussianProcess(kern, prior="dim-scaled")


def test_sample_stays_in_bounds_and_follows_the_prior():
    prior = LogNormalPrior([0.0, 5.0], [1.0, np.inf])
    draws = prior.sample(np.random.default_rng(0), 4000, [[-1.0, 1.0], [0.0, 2.0]])
    assert draws.shape == (4000, 2)
    assert draws[:, 0].min() >= -1.0 and draws[:, 0].max() <= 1.0
    assert abs(np.mean(np.abs(draws[:, 0]) < 1.0) - 0.683) < 0.03  # N(0, 1) inside +-1
    assert abs(draws[:, 1].mean() - 1.0) < 0.05  # flat: uniform in its bounds


def test_dimension_scaled_locations():
    for d in (2, 30, 300):
        kern = make_kernel("matern52", d, ard=True)
        prior = dimension_scaled_prior(kern, d)
        assert prior.size == d + 2
        assert prior.loc[0] == 0.0  # signal variance
        np.testing.assert_allclose(prior.loc[1:-1], LENGTHSCALE_LOC + 0.5 * math.log(d))
        assert prior.loc[-1] == NOISE_LOC
    # BoTorch's LogNormal(sqrt 2 + log(d)/2, sqrt 3) on l, optimized in l's units, has its mode at
    # exp(loc - scale^2): that is where our log-space location sits
    assert math.exp(LENGTHSCALE_LOC + 0.5 * math.log(100)) == pytest.approx(math.exp(math.sqrt(2) - 3) * 10)


def test_kernel_input_dims_of_structured_kernels():
    base = make_kernel("se", None)
    add = Additive(base, [[0, 1, 2], [3, 4]], shared=False)
    assert kernel_input_dims(add, 5) == [3, 3, 2, 2]
    proj = Projected(make_kernel("se", 4, ard=True), np.ones((50, 4)))
    assert kernel_input_dims(proj, 50) == [4] * 5


def _gp(d, *, prior=True, mean="learned"):
    kern = make_kernel("matern52", d, ard=True, lengthscale_bounds=(0.025, 1000.0))
    pr = dimension_scaled_prior(kern, d) if prior else None
    gp = GaussianProcess(kern, noise_variance=math.exp(NOISE_LOC), noise_bounds=(1e-6, 1.0), n_restarts=1,
                         prior=pr, mean=mean)
    if pr is not None:
        gp.theta = np.clip(pr.loc, gp.bounds[:, 0], gp.bounds[:, 1])
    return gp


def test_map_fit_in_200_dimensions_stays_away_from_the_bounds():
    """MAP under the dimension-scaled prior keeps 200 length-scales and the noise off their bounds."""
    rng = np.random.default_rng(0)
    d, n = 200, 40
    X = rng.random((n, d))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 - 0.5 * X[:, 2] + 0.1 * X[:, 3:10].sum(axis=1)
    gp = _gp(d).fit(X, y, rng=np.random.default_rng(1))
    log_ls = gp.kernel.theta[1:]
    lo, hi = gp.kernel.bounds[1:, 0], gp.kernel.bounds[1:, 1]
    assert np.all(log_ls > lo + 1.0) and np.all(log_ls < hi - 1.0)
    assert gp.noise_variance > 1.1e-6  # not at the floor



def test_gls_constant_and_mll_gradient_with_learned_mean():
    rng = np.random.default_rng(2)
    X = rng.random((15, 3))
    y = -np.sum((X - 0.3) ** 2, axis=1)
    gp = _gp(3).fit(X, y, optimize=False)
    # the folded constant is the GLS estimate of the standardized outputs
    L = gp.L_
    K_inv = np.linalg.inv(L @ L.T)
    z0 = (y - np.mean(y)) / np.std(y)
    c = (np.ones(15) @ K_inv @ z0) / (np.ones(15) @ K_inv @ np.ones(15))
    assert gp.y_shift_ == pytest.approx(np.mean(y) + c * np.std(y), rel=1e-9, abs=1e-12)
    # far from the data the posterior mean is the learned constant, not the sample mean
    far_mean = gp.predict(np.full((1, 3), 50.0))[0][0]
    assert far_mean == pytest.approx(gp.y_shift_, abs=1e-9)
    # the profile likelihood's gradient is the partial one (the constant is at its optimum)
    theta = gp.theta + 0.1
    _, grad = gp.log_marginal_likelihood(theta, eval_gradient=True)
    h = 1e-6
    num = [(gp.log_marginal_likelihood(theta + h * e) - gp.log_marginal_likelihood(theta - h * e)) / (2 * h)
           for e in np.eye(theta.size)]
    np.testing.assert_allclose(grad, num, rtol=1e-5, atol=1e-6)


def test_learned_mean_state_round_trip_and_update():
    rng = np.random.default_rng(3)
    X = rng.random((12, 4))
    y = np.cos(4 * X).sum(axis=1)
    gp = _gp(4).fit(X[:10], y[:10], rng=np.random.default_rng(0))
    gp.update(X[10], y[10]).update(X[11], y[11])
    other = _gp(4).load_state(gp.state_dict(), X, y)
    Q = rng.random((5, 4))
    for a, b in zip(gp.predict(Q), other.predict(Q)):
        np.testing.assert_array_equal(a, b)
    # an update keeps the constant (the transform is frozen between fits)
    shift = gp.y_shift_
    gp.update(rng.random(4), 0.3)
    assert gp.y_shift_ == shift


def test_mean_choice_is_validated():
    with pytest.raises(ValueError, match="mean"):
        GaussianProcess(make_kernel("se", 2), mean="linear")
