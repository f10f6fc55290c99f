"""Tests of projection-pursuit learning of W and of the restricted projection (Li et al. 2016)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.linalg import subspace_angles

from hdbo.gp import Additive, GaussianProcess, SquaredExponential
from hdbo.structure import (
    choose_alpha,
    delta_ratio,
    feasible_alpha,
    learn_projection,
    outer_box,
    projected_log_marginal_likelihood,
    restrict_projection,
)

GROUPS = [[0, 1, 2], [3, 4, 5]]


def _kernel(lengthscale: float = 0.6) -> Additive:
    return Additive(SquaredExponential(lengthscale=lengthscale, variance=1.3, lengthscale_bounds=(0.05, 20)), GROUPS)


def _rotation(theta: float) -> np.ndarray:
    """Rotate the coordinate pairs (0, 3), (1, 4), (2, 5) by theta: mixes the two groups."""
    R = np.eye(6)
    for a, b in [(0, 3), (1, 4), (2, 5)]:
        G = np.eye(6)
        G[a, a] = G[b, b] = np.cos(theta)
        G[a, b], G[b, a] = -np.sin(theta), np.sin(theta)
        R = R @ G
    return R


def _data(rng: np.random.Generator, n: int, R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    X = rng.random((n, 6))
    Z = X @ R
    y = 3.0 * np.exp(-2.0 * np.sum((Z[:, :3] - 0.5) ** 2, axis=1)) + 1.5 * np.sin(2 * Z[:, 3] + Z[:, 4] - Z[:, 5])
    return X, y


def test_lml_equals_the_gp_on_projected_inputs(rng):
    X, y = _data(rng, 25, _rotation(0.3))
    W = np.eye(6) + 0.3 * rng.normal(size=(6, 6))
    gp = GaussianProcess(_kernel(), noise_variance=1e-3, noise_bounds=(1e-3, 1e-3)).fit(X @ W, y, optimize=False)
    z = (y - gp.y_shift_) / gp.y_scale_
    lml = projected_log_marginal_likelihood(W, X, z, gp.kernel, 1e-3)
    assert lml == pytest.approx(gp.log_marginal_likelihood(), rel=1e-12)


def test_analytic_gradients_equal_finite_differences(rng):
    X, y = _data(rng, 20, _rotation(0.3))
    z = (y - y.mean()) / y.std()
    W = np.eye(6) + 0.3 * rng.normal(size=(6, 6))
    k = _kernel()
    lml, gW, gth = projected_log_marginal_likelihood(W, X, z, k, 1e-3, eval_gradient=True)
    eps = 1e-6
    num = np.zeros_like(W)
    for i in range(6):
        for j in range(6):
            E = np.zeros_like(W)
            E[i, j] = eps
            num[i, j] = (projected_log_marginal_likelihood(W + E, X, z, k, 1e-3)
                         - projected_log_marginal_likelihood(W - E, X, z, k, 1e-3)) / (2 * eps)
    assert_allclose(gW, num, rtol=1e-5, atol=1e-5 * np.abs(num).max())
    th = k.theta
    num_th = []
    for p in range(th.size):
        e = np.zeros_like(th)
        e[p] = eps
        k.theta = th + e
        up = projected_log_marginal_likelihood(W, X, z, k, 1e-3)
        k.theta = th - e
        down = projected_log_marginal_likelihood(W, X, z, k, 1e-3)
        num_th.append((up - down) / (2 * eps))
    k.theta = th
    assert_allclose(gth, num_th, rtol=1e-5)


def test_delta_ratio_values(rng):
    assert delta_ratio(np.eye(5)) == pytest.approx(1.0)
    assert delta_ratio(np.diag([2.0, -0.5, 3.0])) == pytest.approx(1.0)  # column scaling is free
    a = 0.7
    assert delta_ratio(np.array([[1.0, a], [0.0, 1.0]])) == pytest.approx(1.0 + a)  # columns (1,0), (a,1)
    assert delta_ratio(np.array([[1.0, 1.0], [1.0, 1.0]])) == np.inf
    for _ in range(20):
        assert delta_ratio(rng.normal(size=(6, 6))) >= 1.0 - 1e-12


def test_outer_box_is_the_smallest_box_of_the_image(rng):
    W = rng.normal(size=(4, 4))
    box = outer_box(W)
    corners = np.array(np.meshgrid(*[[0.0, 1.0]] * 4)).reshape(4, -1).T  # 16 corners
    Zc = corners @ W
    assert_allclose(Zc.min(0), box[:, 0])
    assert_allclose(Zc.max(0), box[:, 1])
    Z = rng.random((500, 4)) @ W
    assert np.all(Z >= box[:, 0] - 1e-12) and np.all(Z <= box[:, 1] + 1e-12)
    assert_allclose(outer_box(np.eye(3)), [[0, 1]] * 3)


@pytest.mark.parametrize("delta", [0.0, 0.05, 0.1, 1.0])
def test_restricted_projection_always_meets_the_delta_ratio_constraint(delta, rng):
    X, y = _data(rng, 20, _rotation(0.3))
    z = (y - y.mean()) / y.std()
    for scale in (0.01, 0.1, 1.0):
        W = np.eye(6) + scale * rng.normal(size=(6, 6))
        alpha, W_hat, alphas, scores = choose_alpha(W, X, z, _kernel(), 1e-3, delta=delta, n_grid=11)
        assert 0.0 <= alpha <= 1.0
        assert_allclose(W_hat, restrict_projection(W, alpha))
        assert delta_ratio(W_hat) <= 1.0 + delta + 1e-9
        assert scores[-1] > -np.inf and alphas[-1] == 1.0  # alpha = 1 always feasible and scored
        assert scores.max() == pytest.approx(projected_log_marginal_likelihood(W_hat, X, z, _kernel(), 1e-3))
        lo = feasible_alpha(W, delta)
        if lo > 0:
            assert delta_ratio(restrict_projection(W, lo - 1e-6)) > 1.0 + delta


def test_delta_zero_gives_the_identity_and_feasible_w_gives_alpha_zero(rng):
    X, y = _data(rng, 20, _rotation(0.3))
    z = (y - y.mean()) / y.std()
    W = np.eye(6) + 0.2 * rng.normal(size=(6, 6))
    alpha, W_hat, _, _ = choose_alpha(W, X, z, _kernel(), 1e-3, delta=0.0)
    assert alpha == 1.0 and np.array_equal(W_hat, np.eye(6))
    assert feasible_alpha(W, delta_ratio(W) + 1.0) == 0.0


def test_restrict_projection_endpoints_and_errors(rng):
    W = rng.normal(size=(3, 3))
    assert np.array_equal(restrict_projection(W, 0.0), W)
    assert np.array_equal(restrict_projection(W, 1.0), np.eye(3))
    assert_allclose(restrict_projection(W, 0.25), 0.75 * W + 0.25 * np.eye(3))
    with pytest.raises(ValueError, match="alpha"):
        restrict_projection(W, 1.5)
    with pytest.raises(ValueError, match="square"):
        delta_ratio(np.ones((2, 3)))
    with pytest.raises(ValueError, match="delta"):
        choose_alpha(W, np.ones((2, 3)), np.ones(2), _kernel(), 1e-3, delta=-1.0)


@pytest.mark.parametrize("seed", [0, 1])
def test_learning_raises_the_likelihood_and_recovers_a_rotation(seed):
    """A 2-group additive function of z = R^T x, R mixing the groups by 23 degrees (D = 6).

    Group 1 is an isotropic bump in its 3 directions, so its subspace span(R[:, :3]) is
    identifiable; from W = I (23 degrees off) the learned span is within 2 degrees.
    """
    rng = np.random.default_rng(seed)
    R = _rotation(0.4)
    X, y = _data(rng, 100, R)
    gp = GaussianProcess(_kernel(0.5), noise_variance=1e-4, noise_bounds=(1e-4, 1e-4), n_restarts=1).fit(X, y, rng=rng)
    z = (y - gp.y_shift_) / gp.y_scale_
    fit = learn_projection(X, z, gp.kernel, gp.noise_variance, max_iter=200)
    assert fit.lml > fit.lml_start + 100.0
    start = np.degrees(subspace_angles(R[:, :3], np.eye(6)[:, :3])).max()
    learned = np.degrees(subspace_angles(R[:, :3], fit.W[:, :3])).max()
    assert start > 20.0
    assert learned < 2.0
    # the GP's own likelihood agrees at the learned W and hyperparameters
    k = gp.kernel.clone()
    k.theta = fit.theta
    gp2 = GaussianProcess(k, noise_variance=1e-4, noise_bounds=(1e-4, 1e-4)).fit(X @ fit.W, y, optimize=False)
    assert gp2.log_marginal_likelihood() == pytest.approx(fit.lml, rel=1e-9)


def test_warm_start_and_no_iterations(rng):
    X, y = _data(rng, 30, _rotation(0.4))
    z = (y - y.mean()) / y.std()
    W0 = np.eye(6) + 0.1 * rng.normal(size=(6, 6))
    fit = learn_projection(X, z, _kernel(), 1e-3, W0=W0, max_iter=0)
    assert np.array_equal(fit.W, W0) and fit.lml == fit.lml_start
    with pytest.raises(ValueError, match="W0"):
        learn_projection(X, z, _kernel(), 1e-3, W0=np.eye(5))
