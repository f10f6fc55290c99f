"""Dantzig selector, lambda rule and subspace angles (Djolonga et al. 2013, eq. 2, Definition 2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from hdbo.structure.subspace import (
    adjoint_operator,
    apply_operator,
    cvxpy_available,
    dantzig_selector,
    estimate_fd_noise,
    finite_difference_measurements,
    noise_calibrated_lambda,
    principal_cosines,
    recover_subspace,
    sin_theta,
)


def planted(rng, d=30, m_X=3, k=2, m_Phi=None):
    """A rank-k gradient matrix X = A^T G and sign measurement matrices."""
    m_Phi = m_Phi or math.ceil(1.5 * k * (d + m_X))
    A = np.linalg.qr(rng.standard_normal((d, k)))[0].T
    X = A.T @ rng.standard_normal((k, m_X))
    Phi = rng.choice([-1.0, 1.0], size=(m_Phi, d, m_X)) / math.sqrt(m_Phi)
    return A, X, Phi


def test_operator_and_adjoint_are_adjoint(rng):
    _, X, Phi = planted(rng, d=7, m_X=2, m_Phi=5)
    v = rng.standard_normal(5)
    assert_allclose(apply_operator(Phi, X) @ v, np.sum(X * adjoint_operator(Phi, v)), rtol=1e-12)


def test_finite_differences_match_eq1():
    fc = np.array([1.0, 2.0])
    fs = np.array([[1.5, 2.0], [0.0, 3.0]])
    assert_allclose(finite_difference_measurements(fc, fs, 0.5), [1.0, 0.0])
    assert_allclose(finite_difference_measurements(fc, fs, 0.5, mask=[[True, False], [False, True]]), [1.0, 2.0])


def test_lambda_rule_matches_spec():
    # SPEC P1.A.4-4: 0.36 sqrt(2 m_X) (sigma / eps) (sqrt(d) + sqrt(m_X))
    expected = 0.36 * math.sqrt(6) * (0.01 / 0.3) * (10 + math.sqrt(3))
    assert noise_calibrated_lambda(0.01, 0.3, 100, 3) == pytest.approx(expected)
    with pytest.raises(ValueError, match="epsilon"):
        noise_calibrated_lambda(0.01, 0.0, 100, 3)


@pytest.mark.parametrize("solver", ["admm", pytest.param("cvxpy", marks=pytest.mark.skipif(
    not cvxpy_available(), reason="cvxpy (optional extra hdbo[subspace]) is not installed"))])
def test_noise_free_recovery_of_planted_rank2_matrix(rng, solver):
    # 200 measurements of a 30 x 3 rank-2 matrix (90 unknowns, 2 (30 + 3 - 2) = 62 degrees of freedom)
    A, X, Phi = planted(rng, m_Phi=200)
    y = apply_operator(Phi, X)
    est = recover_subspace(Phi, y, 2, 1e-6 * np.linalg.norm(adjoint_operator(Phi, y), 2), solver=solver)
    assert sin_theta(A, est.A_hat) < 1e-3
    assert np.linalg.norm(est.X_hat - X) < 1e-2 * np.linalg.norm(X)
    assert est.A_hat.shape == (2, 30)
    assert_allclose(est.A_hat @ est.A_hat.T, np.eye(2), atol=1e-10)


@pytest.mark.skipif(not cvxpy_available(), reason="cvxpy (optional extra hdbo[subspace]) is not installed")
def test_admm_agrees_with_cvxpy_reference_formulation(rng):
    # Noisy, under-determined-ish instance: the constraint is active, so the problem is non-trivial.
    A, X, Phi = planted(rng, d=20, m_X=3, m_Phi=40)
    y = apply_operator(Phi, X) + 0.05 * rng.standard_normal(40)
    lam = 0.3 * float(np.linalg.norm(adjoint_operator(Phi, y), 2))
    ref = dantzig_selector(Phi, y, lam, solver="cvxpy", cvxpy_solver="CLARABEL")
    ours = dantzig_selector(Phi, y, lam, solver="admm")
    assert ours.status == "optimal"
    nuc = lambda M: float(np.linalg.norm(M, "nuc"))  # noqa: E731
    assert nuc(ours.M) == pytest.approx(nuc(ref.M), rel=1e-4)
    assert np.linalg.norm(ours.M - ref.M) < 1e-3 * np.linalg.norm(ref.M)
    assert ours.constraint_violation < 1e-6 * lam
    # lambda really binds: the least-squares fit has a larger nuclear norm
    ls = np.linalg.lstsq(Phi.reshape(40, -1), y, rcond=None)[0].reshape(20, 3)
    assert nuc(ref.M) < 0.9 * nuc(ls)


def test_lambda_halving_when_rank_is_too_low(rng):
    A, X, Phi = planted(rng)
    y = apply_operator(Phi, X)
    big = 10 * float(np.linalg.norm(adjoint_operator(Phi, y), 2))  # feasible at M = 0
    est = recover_subspace(Phi, y, 2, big, solver="admm")
    assert est.n_halvings >= 1
    assert est.lam == pytest.approx(big / 2**est.n_halvings)
    assert sum(h["rank"] >= 2 for h in est.history) == 1
    assert est.history[0]["rank"] == 0


def test_rank_deficiency_completed_with_a_warning(rng):
    _, _, Phi = planted(rng, d=10, m_X=2, m_Phi=30)
    with pytest.warns(RuntimeWarning, match="rank 0 < k"):
        est = recover_subspace(Phi, np.zeros(30), 2, 1.0, solver="admm", max_halvings=2,
                               rng=np.random.default_rng(0))
    assert_allclose(est.A_hat @ est.A_hat.T, np.eye(2), atol=1e-12)


def test_adjoint_fallback_and_bad_arguments(rng):
    A, X, Phi = planted(rng)
    y = apply_operator(Phi, X)
    res = dantzig_selector(Phi, y, 0.0, solver="adjoint")
    assert_allclose(res.M, adjoint_operator(Phi, y))
    with pytest.raises(ValueError, match="solver"):
        dantzig_selector(Phi, y, 0.1, solver="magic")
    with pytest.raises(ValueError, match="y must have"):
        dantzig_selector(Phi, y[:-1], 0.1)
    with pytest.raises(ValueError, match="lam"):
        dantzig_selector(Phi, y, -1.0)
    with pytest.raises(ValueError, match="Phi must have shape"):
        dantzig_selector(Phi[0], y, 0.1)


def test_noise_estimate_is_the_right_order(rng):
    d, m_X, k, eps, sigma = 30, 3, 2, 0.3, 0.01
    A, X, Phi = planted(rng, d=d, m_X=m_X, k=k, m_Phi=300)
    fc = sigma * rng.standard_normal(m_X)
    fs = eps * np.einsum("iab,ab->ib", Phi, X) + sigma * rng.standard_normal((300, m_X))
    y = finite_difference_measurements(fc, fs, eps)
    assert 0.7 * sigma < estimate_fd_noise(Phi, y, eps, k) < 1.4 * sigma


def test_angles():
    e = np.eye(4)
    assert sin_theta(e[:2], e[:2]) == 0.0
    assert sin_theta(e[:2], e[2:]) == pytest.approx(math.sqrt(2))
    assert sin_theta(e[:2], [[1, 0, 0, 0], [0, 1, 1, 0]]) == pytest.approx(math.sqrt(0.5))
    # any basis of the same subspace; different dimensions give min(k1, k2) angles
    assert sin_theta(e[:2], [[2, 2, 0, 0], [1, -1, 0, 0]]) == pytest.approx(0.0, abs=1e-7)
    assert_allclose(principal_cosines(e[:3], e[:1]), [1.0])
    with pytest.raises(ValueError, match="same number of columns"):
        sin_theta(e[:2], np.eye(3)[:2])


@pytest.mark.parametrize("m_Phi", [60, 600])
def test_noise_of_adjoint_is_sqrt_2mX_sigma_over_eps_whatever_m_Phi(rng, m_Phi):
    # Eq. (1) with pure noise: y_i = (1/eps) sum_j (n_ij - n_j), the centre noise n_j shared by
    # every i (variance 2 m_X sigma^2 / eps^2, SPEC.md P1.A.4-2). With the paper's +-1/sqrt(m_Phi)
    # entries, calA*(y) has entries of std sqrt(2 m_X) sigma / eps for any m_Phi: more
    # directions do not average the noise away (only eps or resampling do).
    d, m_X, sigma, eps = 40, 3, 0.01, 0.3
    Phi = rng.choice([-1.0, 1.0], size=(m_Phi, d, m_X)) / math.sqrt(m_Phi)
    stds = []
    for _ in range(20):
        f_centres = sigma * rng.standard_normal(m_X)
        f_steps = sigma * rng.standard_normal((m_Phi, m_X))
        stds.append(np.std(adjoint_operator(Phi, finite_difference_measurements(f_centres, f_steps, eps))))
    expected = math.sqrt(2 * m_X) * sigma / eps
    assert np.mean(stds) == pytest.approx(expected, rel=0.15)
