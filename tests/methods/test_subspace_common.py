"""The pieces shared by MS-UCB, DropoutUCB and LineBO (hdbo/methods/_subspace_common.py)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from hdbo.acquisition.schedules import tranthe2020
from hdbo.methods import make_method
from hdbo.gp import GaussianProcess, make_kernel
from hdbo.methods._subspace_common import resolve_tranthe_beta, stacked_lbfgsb, start_lengthscale


def _quadratics(centres: np.ndarray):
    calls = []

    def value_and_grad(Y: np.ndarray):
        calls.append(Y.shape[0])
        return -np.sum((Y - centres) ** 2, axis=1), -2.0 * (Y - centres)

    return value_and_grad, calls


def test_stacked_lbfgsb_finds_each_rows_maximizer_within_budget(rng):
    centres = rng.uniform(-0.8, 0.8, (6, 3))
    centres[0] = [1.5, -2.0, 0.2]  # outside the box: the maximizer is on the boundary
    f, calls = _quadratics(centres)
    Y0 = rng.uniform(-1, 1, (6, 3))
    Y, v, used = stacked_lbfgsb(f, Y0, f(Y0)[0], budget=300)
    assert used == sum(calls[1:]) <= 300 and used % 6 == 0
    assert_allclose(Y, np.clip(centres, -1, 1), atol=1e-4)
    assert_allclose(v, -np.sum((np.clip(centres, -1, 1) - centres) ** 2, axis=1), atol=1e-6)


def test_stacked_lbfgsb_small_budget_and_bad_values():
    centres = np.zeros((4, 2))
    f, _ = _quadratics(centres)
    Y0 = np.full((4, 2), 0.5)
    Y, v, used = stacked_lbfgsb(f, Y0, f(Y0)[0], budget=7)  # fewer than 2 evaluations per start
    assert used == 0 and np.array_equal(Y, Y0)

    def nan_everywhere(Y):
        return np.full(Y.shape[0], np.nan), np.zeros_like(Y)

    Y, v, used = stacked_lbfgsb(nan_everywhere, Y0, np.array([1.0, np.nan, 2.0, 3.0]), budget=40)
    assert 0 < used <= 40
    assert np.array_equal(Y, Y0) and v[0] == 1.0 and v[1] == -np.inf  # starts kept, NaN start ranks last


def test_resolve_tranthe_beta():
    assert resolve_tranthe_beta("tranthe2020", None, 50, 5)(7) == pytest.approx(
        tranthe2020(7, dim=50, subspace_dim=5))
    assert resolve_tranthe_beta(3.5, None, 50, 5)(7) == 3.5
    t, D = 3, 10  # d = D: the same formula with d -> D
    expected = 2 * np.log(np.pi**2 * t**2 / 0.1) + 2 * D * np.log(2 * D * np.sqrt(np.log(6 * D / 0.1)) * t**2)
    assert resolve_tranthe_beta("tranthe2020", None, D, D)(t) == pytest.approx(expected)
    with pytest.raises(ValueError, match="delta"):
        resolve_tranthe_beta("tranthe2020", {"delta": 2.0}, D, D)


@pytest.mark.parametrize(("name", "default"), [("ms-ucb", 300 * 8), ("dropout-ucb", 300 * 8), ("line-bo", 1000)])
def test_shared_options(name, default):
    m = make_method(name, [(-1, 1)] * 8, seed=0, d=2) if name != "line-bo" else \
        make_method(name, [(-1, 1)] * 8, seed=0)
    assert m.acquisition_budget == default
    assert make_method(name, [(-1, 1)] * 8, seed=0, acq_budget=77).acquisition_budget == 77
    with pytest.raises(ValueError, match=f"{name}.*maximizer"):
        make_method(name, [(-1, 1)] * 8, seed=0, maximizer="direct")
    with pytest.raises(ValueError, match=f"{name}.*polish"):
        make_method(name, [(-1, 1)] * 8, seed=0, polish=True)
    assert "acq_nfev" not in m.diagnostics()  # nothing acquired yet


def test_start_lengthscale_scales_with_the_gp_inputs():
    assert start_lengthscale(5, (0.05, 20.0)) == 0.5
    assert start_lengthscale(100, (0.05, 20.0)) == pytest.approx(2.0)
    assert start_lengthscale(100, (0.05, 1.0)) == 1.0
    assert make_method("ms-ucb", [(-1, 1)] * 100, seed=0)._make_kernel().lengthscale[0] == pytest.approx(2.0)
    assert make_method("dropout-ucb", [(-1, 1)] * 100, seed=0)._make_kernel().lengthscale[0] == 0.5  # d = 5 inputs
    high = make_method("rembo", [(-1, 1)] * 50, seed=0, d=2, kernel_space="high")  # k_X: 50 inputs
    assert high._make_kernel().lengthscale[0] == pytest.approx(0.2 * np.sqrt(50))
    # 120 uniform points of a smooth function of 100 coordinates: from 0.5 the covariances
    # vanish and ML-II does not move; from start_lengthscale(100) it fits (measured 6.5)
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (120, 100))
    y = -np.sum((X - 0.3) ** 2, axis=1)
    fitted = []
    for start in (0.5, start_lengthscale(100, (0.05, 20.0))):
        kern = make_kernel("matern52", 100, ard=False, lengthscale_bounds=(0.05, 20.0), lengthscale=start)
        gp = GaussianProcess(kern, noise_variance=1e-6, noise_bounds=(1e-8, 1.0), n_restarts=0)
        fitted.append(gp.fit(X, y, optimize=True, rng=rng).kernel.lengthscale[0])
    assert fitted[0] == pytest.approx(0.5)
    assert fitted[1] > 3.0
