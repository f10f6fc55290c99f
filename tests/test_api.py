"""Public API: minimize / maximize / Optimizer, argument validation and the failure policy."""

from __future__ import annotations

import json

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import hdbo
from hdbo import Optimizer, maximize, minimize

BOUNDS = [(-1.0, 2.0), (0.0, 1.0)]


def sphere(x):
    return float(np.sum((x - 0.5) ** 2))


def test_minimize_returns_scipy_style_result():
    res = minimize(sphere, BOUNDS, method="random", budget=40, seed=0)
    assert res.success and res.status == 0 and res.nfev == res.nit == 40
    assert res.fun == pytest.approx(np.min(res.history.y))
    assert_array_equal(res.x, res.history.X[np.argmin(res.history.y)])
    assert res.history.seconds.shape == (40,) and np.all(res.history.seconds >= 0)
    assert "budget of 40 evaluations" in res.message


def test_maximize_negates_consistently():
    res = maximize(lambda x: -sphere(x), BOUNDS, method="random", budget=40, seed=0)
    ref = minimize(sphere, BOUNDS, method="random", budget=40, seed=0)
    assert res.fun == pytest.approx(-ref.fun)
    assert_array_equal(res.x, ref.x)


def test_same_seed_same_run():
    a = minimize(sphere, BOUNDS, method="gp-ucb", budget=15, seed=2, n_init=4, acq_budget=100)
    b = minimize(sphere, BOUNDS, method="gp-ucb", budget=15, seed=2, n_init=4, acq_budget=100)
    assert_array_equal(a.history.X, b.history.X)


def test_failure_policy_nan_and_raising_objective():
    calls = {"n": 0}

    def flaky(x):
        calls["n"] += 1
        if calls["n"] % 4 == 0:
            raise RuntimeError("simulator crashed")
        if calls["n"] % 5 == 0:
            return float("nan")
        return sphere(x)

    with pytest.warns(RuntimeWarning):
        res = minimize(flaky, BOUNDS, method="gp-ucb", budget=20, seed=0, n_init=4, acq_budget=100)
    assert res.nfev == 20 and calls["n"] == 20  # failures count against the budget
    n_failed = len([i for i in range(1, 21) if i % 4 == 0 or i % 5 == 0])
    assert res.nfailed == n_failed == int(np.sum(np.isnan(res.history.y)))
    messages = dict(res.history.errors)
    assert messages[3].startswith("RuntimeError: simulator crashed")
    assert np.isfinite(res.fun) and res.success
    assert res.method.y_obs.size == 20 - n_failed  # kept out of the GP


def test_on_error_raise_passes_exception_through():
    def bad(x):
        raise KeyError("boom")

    with pytest.raises(KeyError):
        minimize(bad, BOUNDS, method="random", budget=3, on_error="raise")


def test_all_failed_is_reported():
    with pytest.warns(RuntimeWarning):
        res = minimize(lambda x: float("inf"), BOUNDS, method="random", budget=5, seed=0)
    assert not res.success and res.status == 1 and res.x is None and np.isnan(res.fun)


def test_callback_stops_the_run():
    res = minimize(sphere, BOUNDS, method="random", budget=50, seed=0, callback=lambda x, f: f < 0.5)
    assert res.status == 2 and res.nfev < 50


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        ({"bounds": [(1.0, 0.0)]}, ValueError, "bounds: lower must be < upper.*dimension 0"),
        ({"bounds": [1.0, 2.0]}, ValueError, "bounds must have shape"),
        ({"budget": 0}, ValueError, "budget must be > 0"),
        ({"budget": 2.5}, TypeError, "budget must be an int"),
        ({"method": "bogus"}, ValueError, "unknown method 'bogus'"),
        ({"on_error": "ignore"}, ValueError, "on_error"),
        ({"n_init": 0, "method": "gp-ucb"}, ValueError, "n_init"),
        ({"acq_budgett": 10, "method": "gp-ucb"}, TypeError, "acq_budgett"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs, exc, match):
    args = {"bounds": BOUNDS, "budget": 5, "method": "random"} | kwargs
    with pytest.raises(exc, match=match):
        minimize(sphere, args.pop("bounds"), **args)


def test_fun_must_be_callable():
    with pytest.raises(TypeError, match="fun must be callable"):
        minimize("sphere", BOUNDS, budget=3)


def test_optimizer_ask_tell_and_resume():
    opt = Optimizer(BOUNDS, method="gp-ucb", seed=5, n_init=3, acq_budget=100)
    ref = Optimizer(BOUNDS, method="gp-ucb", seed=5, n_init=3, acq_budget=100)
    for _ in range(6):
        for o in (opt, ref):
            x = o.ask()
            o.tell(x, sphere(x))
    opt.tell(opt.ask(), None, error="lab instrument offline")
    ref.tell(ref.ask(), None, error="lab instrument offline")
    state = json.loads(json.dumps(opt.state_dict()))
    resumed = Optimizer.from_state(state)
    assert_array_equal(resumed.ask(), ref.ask())
    assert resumed.best[1] == pytest.approx(min(v for v in ref.history[1] if np.isfinite(v)))
    with pytest.raises(ValueError, match="x must have shape"):
        resumed.tell([0.1, 0.2, 0.3], 1.0)
    with pytest.raises(ValueError, match="direction"):
        Optimizer(BOUNDS, direction="up")


def test_public_names():
    assert set(hdbo.__all__) >= {"minimize", "maximize", "Optimizer", "OptimizeResult", "Box"}
    assert "gp-ucb" in hdbo.available_methods() and "random" in hdbo.available_methods()


@pytest.mark.parametrize("bad", [np.array([1.0, 2.0]), "0.5", 1 + 2j])
def test_non_scalar_return_is_a_programming_error(bad):
    with pytest.raises(TypeError, match="fun must return a real scalar"):
        minimize(lambda x: bad, BOUNDS, method="random", budget=3)


def test_overflowing_bounds_are_rejected():
    with pytest.raises(ValueError, match="overflows"):
        minimize(sphere, [(-1e308, 1e308)], method="random", budget=3)
