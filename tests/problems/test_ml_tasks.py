"""The MS-UCB paper's machine-learning tasks (issue 22): ``nn-weights`` and ``ramp-loss``."""

from __future__ import annotations

import functools
import math
import pickle
import sys

import numpy as np
import pytest
from numpy.testing import assert_allclose

pytest.importorskip("sklearn", reason="the ML tasks' data come from scikit-learn (the suite extra)")

import hdbo  # noqa: E402
from hdbo.problems import available_problems, get  # noqa: E402
from hdbo.problems import ml_tasks  # noqa: E402
from hdbo.space import Box  # noqa: E402


def test_registered() -> None:
    names = available_problems()
    assert "nn-weights" in names and "ramp-loss" in names


# =========================================================================== nn-weights
def test_digits_split() -> None:
    X, y, Xv, yv = ml_tasks.digits_split()
    assert X.shape == (1200, 64) and Xv.shape == (597, 64) and y.shape == (1200,) and yv.shape == (597,)
    assert X.min() >= 0.0 and X.max() <= 1.0 and Xv.max() == 1.0  # pixels 0-16 divided by 16
    # stratified: each class's validation share is 597/1797 of it, within one image
    total = np.bincount(y, minlength=10) + np.bincount(yv, minlength=10)
    assert np.all(np.abs(np.bincount(yv, minlength=10) - 597 * total / 1797) < 1.0)
    # the two parts are a partition of the 1797 images (with their labels)
    from sklearn.datasets import load_digits

    all_X, all_y = load_digits(return_X_y=True)
    key = lambda A, b: sorted(row.tobytes() + bytes([c]) for row, c in zip(A, b))  # noqa: E731
    assert key(np.vstack([X, Xv]), np.concatenate([y, yv])) == key(all_X / 16.0, all_y)
    assert ml_tasks.digits_split()[0] is X  # cached
    with pytest.raises(ValueError):
        X[0, 0] = 1.0  # read-only


def test_gradients_match_finite_differences(rng: np.random.Generator) -> None:
    h, n = 4, 30
    X = rng.random((n, 64))
    y = rng.integers(0, 10, n)
    params = [rng.normal(size=(64, h)) * 0.3, rng.normal(size=h) * 0.1,
              rng.normal(size=(h, 10)), rng.normal(size=10) * 0.1]
    _, grads = ml_tasks._loss_and_gradients(*params, X, y)
    eps = 1e-6
    for k, (p, g) in enumerate(zip(params, grads)):
        assert g.shape == p.shape
        flat = p.reshape(-1)
        for j in rng.choice(flat.size, size=min(5, flat.size), replace=False):
            old = flat[j]
            flat[j] = old + eps
            up, _ = ml_tasks._loss_and_gradients(*params, X, y)
            flat[j] = old - eps
            down, _ = ml_tasks._loss_and_gradients(*params, X, y)
            flat[j] = old
            assert_allclose(g.reshape(-1)[j], (up - down) / (2 * eps), rtol=1e-5, atol=1e-8,
                            err_msg=f"parameter {k}, entry {j}")


def test_adam_first_step_and_frozen_weights() -> None:
    X, y, _, _ = ml_tasks.digits_split()
    params = list(ml_tasks._initial_weights(5, seed=3))
    before = [p.copy() for p in params]
    loss0, grads = ml_tasks._loss_and_gradients(*params, X, y)
    ml_tasks._adam(params, (0, 1, 3), X, y, steps=1, learning_rate=0.01)
    # Adam's bias-corrected first step moves each weight by lr * g / (|g| + eps) ~ lr * sign(g)
    for i in (0, 1, 3):
        nonzero = np.abs(grads[i]) > 1e-5
        assert_allclose((before[i] - params[i])[nonzero], 0.01 * np.sign(grads[i][nonzero]), rtol=1e-2)
    assert np.array_equal(params[2], before[2])  # W2 frozen
    ml_tasks._adam(params, (0, 1, 3), X, y, steps=50, learning_rate=0.01)
    assert ml_tasks._loss_and_gradients(*params, X, y)[0] < loss0 - 0.3


def test_nn_weights_reference_values() -> None:
    p = get("nn-weights", dim=100)
    assert p.dim == 100 and p.optimum_value is None and p.optimizer is None
    assert p.bounds == Box.symmetric(100) and p.structure["hidden"] == 10
    ref, point = p.structure["reference_value"], np.array(p.structure["reference_point"])
    assert np.array_equal(point, np.zeros(100))
    assert p(point) == ref
    # W2 = 0: the output ignores the hidden layer; only b2 learns the (nearly uniform) class prior
    assert abs(ref + math.log(10.0)) < 0.01
    adam = p.structure["adam_value"]
    assert -0.4 < adam < -0.05  # a trained 64-10-10 network: validation loss well below log(10)
    f = p(np.random.default_rng(0).uniform(-1.0, 1.0, (3, 100)))
    assert np.all((f > ref + 0.5) & (f < adam))  # Adam adapts W1 to any W2, but W2 matters


def test_nn_weights_once_uses_the_trained_features() -> None:
    p = get("nn-weights", dim=100, adam="once")
    (_, _, W2, _), loss = ml_tasks._fully_trained(10, 0, 100, 0.01)
    assert np.max(np.abs(W2)) < 2.0  # Adam's own W2 lies inside the box ([-2, 2] weights)
    assert_allclose(p(W2.reshape(-1) / 2.0), -loss, rtol=1e-12)
    assert p.structure["adam_value"] == -loss
    assert abs(p.structure["reference_value"] + math.log(10.0)) < 0.1
    # with fixed features, random output weights are far off
    assert np.all(p(np.random.default_rng(0).uniform(-1.0, 1.0, (3, 100))) < -5.0)


def test_nn_weights_500_dims() -> None:
    p = get("nn-weights", dim=500, seed=1)
    assert p.dim == 500 and p.structure["hidden"] == 50
    assert abs(p.structure["reference_value"] + math.log(10.0)) < 0.01
    assert p.structure["adam_value"] > -0.3


def test_nn_weights_deterministic_and_seeded() -> None:
    X = np.random.default_rng(1).uniform(-1.0, 1.0, (2, 100))
    p, again, other = get("nn-weights", dim=100, seed=4), get("nn-weights", dim=100, seed=4), get("nn-weights", dim=100, seed=5)
    f = p(X)
    assert np.array_equal(f, again(X))
    assert np.array_equal(f, [p(X[0]), p(X[1])])  # a row's value does not depend on its batch
    assert np.all(np.abs(f - other(X)) > 1e-6)  # the seed draws the initial weights
    assert np.array_equal(get(**p.params)(X), f)
    assert np.array_equal(pickle.loads(pickle.dumps(p))(X), f)


def test_nn_weights_parameters() -> None:
    p = get("nn-weights", dim=20, steps=5, learning_rate=0.05, weight_scale=1.0)
    assert p.params["steps"] == 5 and p.params["weight_scale"] == 1.0 and p.structure["hidden"] == 2
    x = np.random.default_rng(0).uniform(-1.0, 1.0, 20)
    assert p(x) != get("nn-weights", dim=20, steps=5, learning_rate=0.05, weight_scale=2.0)(x)


# =========================================================================== ramp-loss
@pytest.fixture
def forget_ramp_data():
    """Drop the cached data sets after the test (the full one holds 240 MB)."""
    yield
    ml_tasks._ramp_data.cache_clear()


def test_ramp_data_character(forget_ramp_data) -> None:
    V, y = ml_tasks.ramp_data(500, 600)
    assert V.shape == (600, 500) and set(np.unique(y)) == {-1.0, 1.0}
    assert_allclose(np.linalg.norm(V, axis=1), 1.0, rtol=1e-12)
    assert 0.4 < np.mean(y > 0) < 0.6
    # 10 informative + 40 redundant features of 500 carry the signal, shuffled among noise
    corr = np.abs([np.corrcoef(V[:, j], y)[0, 1] for j in range(500)])
    strong = np.flatnonzero(corr > 0.2)
    assert 5 <= strong.size <= 50
    assert strong.max() - strong.min() > 250  # not in a block of leading columns
    # linearly learnable: a least-squares fit classifies most training examples
    w = np.linalg.lstsq(V, y, rcond=None)[0]
    assert np.mean(np.sign(V @ w) == y) > 0.9
    assert ml_tasks.ramp_data(500, 600)[0] is V  # cached
    with pytest.raises(ValueError, match="n_samples"):
        ml_tasks.ramp_data(500, 5)


@pytest.mark.parametrize("s", [0.0, -1.0, 0.5])
def test_ramp_loss_formula(s: float, forget_ramp_data) -> None:
    p = get("ramp-loss", dim=30, C=2.0, s=s, n_samples=80)
    V, y = ml_tasks.ramp_data(30, 80)
    W = np.random.default_rng(2).uniform(-1.0, 1.0, (4, 30)) * 3.0
    margins = (W @ V.T) * y
    # R_s(u) = H_1(u) - H_s(u) is the ramp clip(1 - u, 0, 1 - s) for s <= 0, and
    # clip(1 - u, 0, 1) - clip(s - u, 0, inf) in general
    if s <= 0:
        ramp = np.clip(1.0 - margins, 0.0, 1.0 - s)
    else:
        ramp = np.clip(1.0 - margins, 0.0, None) - np.clip(s - margins, 0.0, None)
    expected = -(0.5 * np.sum(W * W, axis=1) + 2.0 * ramp.sum(axis=1))
    assert_allclose(p(W), expected, rtol=1e-12)
    assert p(np.zeros(30)) == p.structure["reference_value"] == -2.0 * 80 * (1.0 - max(0.0, s))


def test_ramp_loss_scales_with_C(forget_ramp_data) -> None:
    W = np.random.default_rng(3).uniform(-1.0, 1.0, (3, 40))
    half_norm = 0.5 * np.sum(W * W, axis=1)
    loss1 = -get("ramp-loss", dim=40, C=1.0, n_samples=100)(W) - half_norm
    loss5 = -get("ramp-loss", dim=40, C=5.0, n_samples=100)(W) - half_norm
    assert_allclose(loss5, 5.0 * loss1, rtol=1e-12)
    assert np.all((loss1 > 0.0) & (loss1 < 100.0))  # 100 ramps, each in [0, 1]


def test_ramp_loss_paper_size(forget_ramp_data) -> None:
    p = get("ramp-loss", dim=5000, C=1.0)
    assert p.dim == 5000 and p.bounds == Box.symmetric(5000) and p.optimum_value is None
    assert p.structure["reference_value"] == -6000.0  # F(0) = C L: every margin is 0
    V, y = ml_tasks.ramp_data()
    assert V.shape == (6000, 5000)
    # margins of order 1 on the box: random points lose about half of the 6000 ramps, plus |w|^2 / 2
    f = p(np.random.default_rng(0).uniform(-1.0, 1.0, (2, 5000)))
    assert np.all((f > -5900.0) & (f < -5000.0))


def test_ramp_loss_deterministic_and_data_fixed(forget_ramp_data) -> None:
    X = np.random.default_rng(4).uniform(-1.0, 1.0, (3, 25))
    p = get("ramp-loss", dim=25, n_samples=60, seed=0)
    f = p(X)
    assert np.array_equal(f, get("ramp-loss", dim=25, n_samples=60, seed=7)(X))  # the data are the task's
    assert np.array_equal(f, [p(x) for x in X])
    assert not np.array_equal(f, get("ramp-loss", dim=25, n_samples=60, data_seed=1)(X))
    assert np.array_equal(get(**p.params)(X), f)
    assert np.array_equal(pickle.loads(pickle.dumps(p))(X), f)


# =========================================================================== both
# The factories' argument checks: each call must raise the error named.
_INVALID_CALLS = [
    (functools.partial(get, "nn-weights", dim=105), ValueError, "dim must be a multiple of 10"),
    (functools.partial(get, "nn-weights", dim=5), ValueError, "dim must be >= 10"),
    (functools.partial(get, "nn-weights", dim=100, adam="twice"), ValueError, "adam must be one of"),
    (functools.partial(get, "nn-weights", dim=100, steps=0), ValueError, "steps must be an int >= 1"),
    (functools.partial(get, "nn-weights", dim=100, steps=1.5), TypeError, "steps"),
    (functools.partial(get, "nn-weights", dim=100, learning_rate=0.0), ValueError, "learning_rate"),
    (functools.partial(ml_tasks.nn_weights, 100, weight_scale=-1.0), ValueError, "weight_scale"),
    (functools.partial(ml_tasks.nn_weights, 100, seed=-1), ValueError, "seed"),
    (functools.partial(get, "ramp-loss", dim=10, C=0.0), ValueError, "C must be"),
    (functools.partial(get, "ramp-loss", dim=10, C="1"), TypeError, "C must be"),
    (functools.partial(get, "ramp-loss", dim=10, s=1.0), ValueError, "s must be"),
    (functools.partial(get, "ramp-loss", dim=10, n_samples=3), ValueError, "n_samples"),
    (functools.partial(ml_tasks.ramp_loss, 10, data_seed=-1), ValueError, "data_seed"),
    (functools.partial(get, "ramp-loss", dim=1), ValueError, "dim must be >= 2"),
]


@pytest.mark.parametrize(("call", "error", "match"), _INVALID_CALLS)
def test_invalid_parameters_raise(call: functools.partial, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        call()


def test_missing_scikit_learn_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(ModuleNotFoundError, match=r"scikit-learn.*hdbo\[suite\]"):
        get("nn-weights", dim=100)
    with pytest.raises(ModuleNotFoundError, match=r"scikit-learn.*hdbo\[suite\]"):
        get("ramp-loss", dim=10)


@pytest.mark.parametrize(
    "name, dim, params",
    [("nn-weights", 100, {}), ("nn-weights", 100, {"adam": "once"}), ("ramp-loss", 50, {"n_samples": 300})],
)
def test_plain_objective_runs(name: str, dim: int, params: dict, forget_ramp_data) -> None:
    p = get(name, dim=dim, **params)
    result = hdbo.maximize(p, p.bounds, method="random", budget=5, seed=0)
    assert result.nfev == 5 and result.success
    assert np.all(p.bounds.contains(result.history.X))
    assert result.fun == max(result.history.y) == p(result.x)
    unit = get(name, dim=dim, domain="unit", **params)
    x = np.full(dim, 0.5)
    assert unit(x) == p.structure["reference_value"]  # the centre of the unit cube is w = 0
