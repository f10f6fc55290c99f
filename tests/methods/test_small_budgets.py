"""Every registered method runs any budget >= 1 (or refuses it when built, naming the budget)."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

from _fast_options import REQUIRED_OPTIONS, method_params

import hdbo
from hdbo.methods import get_method_class

BOUNDS = [(-1.0, 2.0)] * 5


def sphere(x: np.ndarray) -> float:
    return float(np.sum((x - 0.3) ** 2))


def _takes(name: str, option: str) -> bool:
    return any(option in inspect.signature(c.__init__).parameters
               for c in get_method_class(name).__mro__ if "__init__" in vars(c))


@pytest.mark.parametrize("budget", [1, 2, 3, 5])
@pytest.mark.parametrize("name", method_params())
def test_every_budget_runs_or_is_refused_when_built(name, budget):
    # only the options a method cannot run without, plus a small acquisition budget for speed
    options = dict(REQUIRED_OPTIONS.get(name, {}))
    if _takes(name, "acq_budget"):
        options["acq_budget"] = 100
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # e.g. HDS: "selection is skipped"
            res = hdbo.minimize(sphere, BOUNDS, method=name, budget=budget, seed=0, **options)
    except ValueError as exc:  # a refusal must come when the method is built and name the budget
        assert "budget" in str(exc)
        with pytest.raises(ValueError, match="budget"):
            hdbo.Optimizer(BOUNDS, method=name, budget=budget, seed=0, **options)
        return
    assert 1 <= res.nfev <= budget
    assert res.history.X.shape == (res.nfev, 5)
    assert np.all(res.history.X >= -1.0) and np.all(res.history.X <= 2.0)
    assert res.success
