from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.stats import norm

from hdbo.acquisition import EI, PI, UCB, Acquisition, acquisition_from_name


class FakeModel:
    """Analytic posterior: mean = -||x - c||^2, std = s0 + amp (1 - exp(-||x||^2))."""

    def __init__(self, c, s0=0.1, amp=0.5):
        self.c, self.s0, self.amp = np.asarray(c, float), s0, amp

    def predict(self, X, return_grad=False):
        X = np.atleast_2d(X)
        r2 = np.sum(X**2, axis=1)
        mean = -np.sum((X - self.c) ** 2, axis=1)
        std = self.s0 + self.amp * (1.0 - np.exp(-r2))
        if not return_grad:
            return mean, std
        return mean, std, -2.0 * (X - self.c), 2.0 * self.amp * np.exp(-r2)[:, None] * X


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def model():
    return FakeModel([0.3, -0.2, 0.5])


def central_diff(f, X, h=1e-6):
    G = np.empty_like(X)
    for j in range(X.shape[1]):
        e = np.zeros(X.shape[1])
        e[j] = h
        G[:, j] = (f(X + e) - f(X - e)) / (2 * h)
    return G


def all_acquisitions(model):
    return [UCB(model, 2.5), EI(model, best=-0.4), EI(model, best=-0.4, xi=0.05), PI(model, -0.4, xi=0.01)]


def closed_form(acq, X):
    mean, std = acq.model.predict(X)
    if isinstance(acq, UCB):
        return mean + np.sqrt(acq.beta) * std
    z = (mean - acq.best - acq.xi) / std
    if isinstance(acq, EI):
        return (mean - acq.best - acq.xi) * norm.cdf(z) + std * norm.pdf(z)
    return norm.cdf(z)


@pytest.mark.parametrize("k", range(4))
def test_values_equal_closed_form(model, rng, k):
    acq = all_acquisitions(model)[k]
    X = rng.uniform(-1, 1, size=(50, 3))
    assert_allclose(acq(X), closed_form(acq, X), rtol=1e-12, atol=1e-15)
    assert_allclose(acq.value_and_grad(X)[0], acq(X))


@pytest.mark.parametrize("k", range(4))
def test_gradients_equal_finite_differences(model, rng, k):
    acq = all_acquisitions(model)[k]
    X = rng.uniform(-1, 1, size=(20, 3))
    values, grads = acq.value_and_grad(X)
    assert values.shape == (20,) and grads.shape == (20, 3)
    assert_allclose(grads, central_diff(acq, X), rtol=1e-5, atol=1e-8)


def test_single_point_gives_shape_one(model):
    for acq in all_acquisitions(model):
        v, g = acq.value_and_grad(np.zeros(3))
        assert acq(np.zeros(3)).shape == (1,) and v.shape == (1,) and g.shape == (1, 3)


def test_ei_pi_finite_and_exact_at_zero_std():
    # s0 = 0: std vanishes at the origin (exactly) and everywhere with amp = 0
    flat = FakeModel([0.0, 0.0], s0=0.0, amp=0.0)
    X = np.array([[0.0, 0.0], [0.5, 0.0], [0.1, 0.1]])  # mean 0, -0.25, -0.02
    for best in (-0.1, 0.0, 0.3):
        for acq in (EI(flat, best=best), PI(flat, best=best)):
            v, g = acq.value_and_grad(X)
            assert np.all(np.isfinite(v)) and np.all(np.isfinite(g))
        mean = flat.predict(X)[0]
        assert_allclose(EI(flat, best=best)(X), np.maximum(mean - best, 0.0))
    assert_allclose(PI(flat, best=-0.1)(X), [1.0, 0.0, 1.0])
    assert_allclose(EI(flat, best=-0.1).value_and_grad(X)[1], [[0, 0], [0, 0], [-0.2, -0.2]])

    vanishing = FakeModel([0.0, 0.0], s0=0.0, amp=0.5)
    for acq in (EI(vanishing, best=-1e-3), PI(vanishing, best=1e-3), EI(vanishing, best=0.0)):
        v, g = acq.value_and_grad(np.zeros((1, 2)))
        assert np.all(np.isfinite(v)) and np.all(np.isfinite(g))


def test_ei_deep_tail_is_tiny_positive_not_nan():
    model = FakeModel([0.0], s0=1e-3, amp=0.0)
    v, g = EI(model, best=1.0).value_and_grad(np.array([[0.0], [0.5], [3.0]]))
    assert np.all(np.isfinite(v)) and np.all(v >= 0) and np.all(np.isfinite(g))
    assert v[2] == 0.0  # z = -1e4: the true value underflows
    z = -30.0  # moderate tail: compare with the mpmath-free asymptotic phi(z)/z^2 (1 - 3/z^2)
    std = 0.01
    m = FakeModel([0.0], s0=std, amp=0.0)
    ei = EI(m, best=-z * std)(np.zeros((1, 1)))[0]
    assert_allclose(ei, std * norm.pdf(z) / z**2 * (1 - 3 / z**2 + 15 / z**4), rtol=1e-4)


def test_factory_and_errors(model):
    assert isinstance(acquisition_from_name("UCB", model, beta=1.0), UCB)
    assert isinstance(acquisition_from_name("ei", model, best=0.0), EI)
    pi = acquisition_from_name("pi", model, best=0.0, xi=0.1)
    assert isinstance(pi, PI) and isinstance(pi, Acquisition) and pi.xi == 0.1
    with pytest.raises(ValueError, match=r"unknown acquisition name 'lcb'.*\['ei', 'logei', 'pi', 'ucb'\]"):
        acquisition_from_name("lcb", model)
    with pytest.raises(ValueError, match="beta is required"):
        acquisition_from_name("ucb", model)
    with pytest.raises(ValueError, match="best is required"):
        acquisition_from_name("ei", model)
    with pytest.raises(ValueError, match="beta must be >= 0"):
        UCB(model, beta=-1.0)
    with pytest.raises(TypeError, match="beta must be a real number, got str"):
        UCB(model, beta="2")
    with pytest.raises(ValueError, match="best must be finite"):
        EI(model, best=np.nan)
    with pytest.raises(TypeError, match="model must have a predict"):
        UCB(object(), beta=1.0)
    with pytest.raises(ValueError, match=r"X must have shape \(n, d\)"):
        UCB(model, beta=1.0)(np.zeros((2, 2, 3)))


def test_log_ei_is_the_log_of_ei_where_ei_is_representable(model, rng):
    from hdbo.acquisition import LogEI

    X = rng.uniform(-1, 1, size=(50, 3))
    for best, xi in ((-0.4, 0.0), (-0.1, 0.05), (0.5, 0.0)):
        ei, log_ei = EI(model, best, xi), LogEI(model, best, xi)
        assert_allclose(log_ei(X), np.log(ei(X)), rtol=1e-9)
        values, grads = log_ei.value_and_grad(X)
        assert_allclose(grads, central_diff(log_ei, X), rtol=1e-5, atol=1e-8)


def test_log_ei_deep_tail_is_finite_with_an_informative_gradient():
    """Where EI underflows to 0 (z far below -40), LogEI and its gradient stay finite and point home."""
    from hdbo.acquisition import LogEI
    from hdbo.acquisition.functions import log_h

    m = FakeModel([0.0, 0.0, 0.0], s0=1e-3, amp=0.0)
    acq = LogEI(m, best=5.0)  # improvement -5 - ||x||^2 with std 1e-3: z ~ -5000
    X = np.array([[1.0, 1.0, 1.0], [0.5, 0.0, 0.0]])
    values, grads = acq.value_and_grad(X)
    assert np.all(np.isfinite(values)) and np.all(np.isfinite(grads))
    assert EI(m, best=5.0)(X)[0] == 0.0
    assert np.all(np.sum(grads * X, axis=1) < 0)  # uphill is towards the mean's maximum at 0
    # log h against the expansion phi(z)/z^2 (1 - 3/z^2) at z = -1e3 and the asymptotic branch
    for z in (-1e3, -1e6):
        expected = -0.5 * z * z - 0.5 * np.log(2 * np.pi) - 2 * np.log(-z) + np.log1p(-3 / z**2)
        assert log_h(np.array([z]))[0] == pytest.approx(expected, rel=1e-12)
    # zero std: the log of the improvement, -inf without one
    zero = FakeModel([0.0, 0.0, 0.0], s0=0.0, amp=0.0)
    assert LogEI(zero, best=-1.0)(np.zeros((1, 3)))[0] == pytest.approx(0.0)
    assert LogEI(zero, best=1.0)(np.zeros((1, 3)))[0] == -np.inf
