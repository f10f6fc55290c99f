"""Kernel contract: PSD, diag, hyperparameter and input gradients equal finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from hdbo.gp import Additive, Matern, Projected, SquaredExponential, make_kernel

D = 4


def _kernels():
    return {
        "se-iso": SquaredExponential(lengthscale=0.7, variance=1.3),
        "se-ard": SquaredExponential(D, ard=True, lengthscale=[0.3, 0.6, 0.9, 1.2]),
        "m12-iso": Matern(nu=0.5, lengthscale=0.8),
        "m32-ard": Matern(D, nu=1.5, ard=True, lengthscale=[0.5, 0.7, 0.4, 1.1], variance=0.7),
        "m52-iso": Matern(nu=2.5, lengthscale=0.6, variance=2.0),
        "m52-ard": Matern(D, nu=2.5, ard=True, lengthscale=[0.5, 0.7, 0.4, 1.1]),
        "additive-shared": Additive(SquaredExponential(lengthscale=0.5), [[0, 2], [1], [3]]),
        "additive-separate": Additive(Matern(nu=2.5, lengthscale=0.4), [[0, 1], [2, 3]], shared=False),
        "projected": Projected(SquaredExponential(2, ard=True, lengthscale=[0.5, 0.8]),
                               np.array([[1.0, 0.2], [0.3, -0.5], [0.0, 0.7], [-0.4, 0.1]])),
    }


KERNELS = list(_kernels())


@pytest.fixture(params=KERNELS)
def kernel(request):
    k = _kernels()[request.param]
    if request.param == "additive-separate":  # make the groups differ
        k.theta = k.theta + np.array([0.1, -0.2, -0.3, 0.25])
    return k


def test_psd_symmetric_and_diag(kernel, rng):
    X = rng.random((25, D))
    K = kernel(X)
    assert K.shape == (25, 25)
    assert_allclose(K, K.T, atol=1e-14)
    assert np.linalg.eigvalsh(K).min() > -1e-10
    assert_allclose(kernel.diag(X), np.diag(K), rtol=1e-12)
    # cross-covariance agrees with the joint matrix
    assert_allclose(kernel(X[:5], X[5:]), K[:5, 5:], rtol=1e-10, atol=1e-14)
    # and so does the prepared k(., X) of the acquisition loops, for one and several points
    cross = kernel.cross_fn(X[5:])
    assert_allclose(cross(X[:1]), K[:1, 5:], rtol=1e-10, atol=1e-14)
    assert_allclose(cross(X[:5]), K[:5, 5:], rtol=1e-10, atol=1e-14)


def test_hyperparameter_gradient_matches_finite_differences(kernel, rng):
    X = rng.random((7, D))
    G = kernel.gradient(X)
    theta = kernel.theta
    assert G.shape == (7, 7, theta.size)
    h = 1e-6
    for p in range(theta.size):
        e = np.zeros_like(theta)
        e[p] = h
        kernel.theta = theta + e
        Kp = kernel(X)
        kernel.theta = theta - e
        Km = kernel(X)
        kernel.theta = theta
        assert_allclose(G[:, :, p], (Kp - Km) / (2 * h), atol=1e-8, err_msg=kernel.hyperparameter_names[p])


def test_gradient_contract_equals_dense_tensor(kernel, rng):
    X = rng.random((9, D))
    A = rng.standard_normal((9, 9))
    dense = np.einsum("ij,ijp->p", A, kernel.gradient(X))
    assert_allclose(kernel.gradient_contract(X, A), dense, rtol=1e-10, atol=1e-12)


def test_input_gradient_matches_finite_differences(kernel, rng):
    Xq, X = rng.random((3, D)), rng.random((8, D))
    W = rng.standard_normal((3, 8))
    G = kernel.grad_x(Xq, X, W)
    h = 1e-6
    fd = np.zeros_like(Xq)
    for i in range(D):
        e = np.zeros(D)
        e[i] = h
        fd[:, i] = (np.sum(W * kernel(Xq + e, X), 1) - np.sum(W * kernel(Xq - e, X), 1)) / (2 * h)
    assert_allclose(G, fd, atol=1e-7)


def test_matern_closed_forms():
    r = np.array([[0.0, 0.5, 1.3]])
    X = np.zeros((1, 1))
    Y = r.T
    assert_allclose(Matern(nu=0.5)(X, Y)[0], np.exp(-r[0]))
    assert_allclose(Matern(nu=1.5)(X, Y)[0], (1 + np.sqrt(3) * r[0]) * np.exp(-np.sqrt(3) * r[0]))
    a = np.sqrt(5) * r[0]
    assert_allclose(Matern(nu=2.5)(X, Y)[0], (1 + a + a**2 / 3) * np.exp(-a))
    assert_allclose(SquaredExponential(lengthscale=2.0, variance=3.0)(X, Y)[0], 3 * np.exp(-r[0] ** 2 / 8))


def test_additive_group_kernels_sum_to_total(rng):
    k = Additive(SquaredExponential(lengthscale=0.5), [[0, 2], [1, 3]])
    X = rng.random((6, D))
    assert_allclose(k.group_call(0, X) + k.group_call(1, X), k(X))
    assert k.theta.size == 2  # shared scale and bandwidth


@pytest.mark.parametrize("base", [SquaredExponential(lengthscale=0.7, variance=1.3), Matern(nu=1.5, lengthscale=0.4),
                                  Matern(nu=2.5, lengthscale=0.6, variance=2.0)], ids=["se", "m32", "m52"])
@pytest.mark.parametrize("batch_bytes", [None, 1], ids=["one-chunk", "group-by-group"])
def test_additive_batched_equals_group_loop(base, batch_bytes, rng, monkeypatch):
    # Shared isotropic additive kernels evaluate equal-size groups as stacks (in chunks of
    # _BATCH_BYTES); values and gradients must equal the per-group loop, groups of mixed sizes,
    # in any order, some coordinates in no group.
    from hdbo.gp import kernels

    if batch_bytes is not None:
        monkeypatch.setattr(kernels, "_BATCH_BYTES", batch_bytes)
    groups = [[0, 5, 2], [1], [3, 4, 6], [7, 9], [8, 11, 10]]
    k = Additive(base, groups)
    X, Y = rng.random((12, 13)), rng.random((5, 13))
    A, W = rng.standard_normal((12, 12)), rng.standard_normal((5, 12))
    loop_gx, loop_gxx = np.zeros_like(Y), np.zeros_like(X)
    for g in groups:
        loop_gx[:, g] = base.grad_x(Y[:, g], X[:, g], W)
        loop_gxx[:, g] = base.grad_x(X[:, g], X[:, g], A)
    loop_K = sum(base(X[:, g]) for g in groups)
    loop_gc = sum(base.gradient_contract(X[:, g], A) for g in groups)
    K = k(X)
    assert_allclose(K, loop_K, rtol=1e-13, atol=1e-14)
    assert np.array_equal(K, K.T)
    assert_allclose(np.diag(K), k.diag(X), rtol=1e-15)
    assert_allclose(k(Y, X), sum(base(Y[:, g], X[:, g]) for g in groups), rtol=1e-13, atol=1e-14)
    assert_allclose(k.gradient_contract(X, A), loop_gc, rtol=1e-12, atol=1e-12)
    assert_allclose(k.grad_x(Y, X, W), loop_gx, rtol=1e-12, atol=1e-12)
    assert np.all(k.grad_x(Y, X, W)[:, 12] == 0.0)  # coordinate 12 is in no group
    for keep in (True, False):  # the fused path, with the profile derivatives kept or recomputed
        Kf, theta_grad, input_grad = k._value_and_grad_fn(X, keep=keep)
        assert_allclose(Kf, loop_K, rtol=1e-13, atol=1e-14)
        assert_allclose(theta_grad(A), loop_gc, rtol=1e-12, atol=1e-12)
        assert_allclose(input_grad(A), loop_gxx, rtol=1e-12, atol=1e-12)


def test_value_and_grad_fn_default_matches_methods(rng):
    # Kernels without a fused path (here one of separate groups, looped) use the three methods.
    k = _kernels()["additive-separate"]
    X, A = rng.random((7, D)), rng.standard_normal((7, 7))
    K, theta_grad, input_grad = k._value_and_grad_fn(X)
    assert_allclose(K, k(X))
    assert_allclose(theta_grad(A), k.gradient_contract(X, A))
    assert_allclose(input_grad(A), k.grad_x(X, X, A))


def test_fix_and_errors():
    k = SquaredExponential(3, ard=True).fix(lengthscale=1e-5)
    assert np.all(k.bounds[1:, 0] == k.bounds[1:, 1])
    with pytest.raises(ValueError, match="dim is required"):
        SquaredExponential(ard=True)
    with pytest.raises(ValueError, match="nu must be"):
        Matern(nu=1.0)
    with pytest.raises(ValueError, match="lengthscale"):
        SquaredExponential(3, ard=True, lengthscale=[1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match="kernel must be one of"):
        make_kernel("rbf")
    with pytest.raises(ValueError, match="disjoint"):
        Additive(SquaredExponential(), [[0, 1], [1, 2]])
    with pytest.raises(ValueError, match="columns"):
        SquaredExponential(3, ard=True)(np.zeros((2, 4)))
