"""Projection learning against a known W, alpha scoring, and what the delta-ratio allows on li2016."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from hdbo.gp import Additive, GaussianProcess, SquaredExponential
from hdbo.structure import (
    choose_alpha,
    delta_ratio,
    feasible_alpha,
    learn_projection,
    projected_log_marginal_likelihood,
    restrict_projection,
)

D = 4
W_TRUE = np.eye(D) + np.random.default_rng(7).uniform(-0.5, 0.5, (D, D))


def _f(X: np.ndarray) -> np.ndarray:
    """Sum of four different non-quadratic ridge functions: W_TRUE is identifiable up to the
    order, sign and scale of its columns (one direction per group, d = 1)."""
    Z = X @ W_TRUE
    return (np.sin(3 * Z[:, 0]) + np.cos(2.5 * Z[:, 1]) + np.exp(-4 * (Z[:, 2] - 0.4) ** 2)
            + 0.5 * np.sin(4 * Z[:, 3] + 1))


def _mean_angle(W: np.ndarray) -> float:
    """Mean over the true directions of the angle (degrees, sign-free) to the closest column of W."""
    Wn = W / np.linalg.norm(W, axis=0)
    Tn = W_TRUE / np.linalg.norm(W_TRUE, axis=0)
    return float(np.degrees(np.arccos(np.clip(np.abs(Tn.T @ Wn).max(1), 0.0, 1.0))).mean())


def _fitted(seed: int, n: int) -> tuple[np.ndarray, np.ndarray, GaussianProcess]:
    rng = np.random.default_rng(seed)
    X = rng.random((n, D))
    y = _f(X)
    k = Additive(SquaredExponential(lengthscale=0.5, variance=1.0, lengthscale_bounds=(0.05, 20)),
                 [[c] for c in range(D)])
    gp = GaussianProcess(k, noise_variance=1e-4, noise_bounds=(1e-6, 1e-1), n_restarts=1).fit(X, y, rng=rng)
    return X, (y - gp.y_shift_) / gp.y_scale_, gp


@pytest.mark.parametrize("seed", [0, 1])
def test_learned_and_restricted_projection_are_closer_to_the_truth_than_the_identity(seed):
    """From W = I (24 degrees off the true directions), 120 points bring W within a few degrees,
    and the restricted W^ of eq. (7)-(8) (delta large enough for the truth) beats I too."""
    X, z, gp = _fitted(seed, 120)
    start = _mean_angle(np.eye(D))
    assert start > 20.0
    fit = learn_projection(X, z, gp.kernel, gp.noise_variance, max_iter=200)
    assert fit.lml > fit.lml_start + 50.0
    assert _mean_angle(fit.W) < 8.0
    k = gp.kernel.clone()
    k.theta = fit.theta
    alpha, W_hat, _, _ = choose_alpha(fit.W, X, z, [gp.kernel, k], gp.noise_variance,
                                      delta=delta_ratio(W_TRUE) - 1.0, n_grid=21)
    assert alpha < 0.5
    assert _mean_angle(W_hat) < start - 10.0


def test_alpha_is_scored_with_the_best_candidate_kernel():
    X, z, gp = _fitted(0, 60)
    W = np.eye(D) + 0.1 * np.random.default_rng(1).uniform(-1, 1, (D, D))
    bad = gp.kernel.clone()
    bad.theta = gp.kernel.theta + np.log(30.0)  # scale and bandwidth far from the fit
    _, _, alphas, s_bad = choose_alpha(W, X, z, bad, gp.noise_variance, delta=0.5, n_grid=6)
    _, _, alphas2, s_good = choose_alpha(W, X, z, gp.kernel, gp.noise_variance, delta=0.5, n_grid=6)
    alpha, W_hat, alphas3, s_both = choose_alpha(W, X, z, [bad, gp.kernel], gp.noise_variance, delta=0.5,
                                                 n_grid=6)
    assert_allclose(alphas, alphas3)
    assert_allclose(s_both, np.maximum(s_bad, s_good))
    assert np.all(s_good[np.isfinite(s_good)] > s_bad[np.isfinite(s_bad)] + 5.0)  # the bad one is bad
    assert s_both.max() == pytest.approx(projected_log_marginal_likelihood(W_hat, X, z, gp.kernel,
                                                                           gp.noise_variance))
    with pytest.raises(ValueError, match="kernel"):
        choose_alpha(W, X, z, [], gp.noise_variance, delta=0.5)


def test_li2016_problem_leaves_restricted_projections_next_to_the_identity():
    """The documented reason RPP-d is close to ADD-d on li2016's D = 50 problem: eq. (8) with
    delta = 0.1 admits only W^ = I + e (W - I) with tiny e even for the *true* A = I + S,
    S ~ U(-1/4, 1/4): its delta-ratio is ~1e42, alpha_min ~ 0.9997, ||W^ - I||_F ~ 0.002."""
    from hdbo.problems import get

    A = np.array(get("projected-trimodal", dim=50, seed=0).structure["projection"])
    assert delta_ratio(A) > 1e30
    a_min = feasible_alpha(A, 0.1)
    assert 0.999 < a_min < 1.0
    W_hat = restrict_projection(A, a_min)
    assert delta_ratio(W_hat) == pytest.approx(1.1, rel=1e-6)
    assert np.linalg.norm(W_hat - np.eye(50)) < 0.01
    # every coordinate of z = W^T x moves by less than 0.01 over the box
    assert np.abs(W_hat - np.eye(50)).sum(0).max() < 0.01
