from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from hdbo.acquisition import MAXIMIZERS, MaximizeResult, maximize, maximize_grid, maximize_lbfgsb
from hdbo.space import Box

BOUNDS = np.array([[-1.0, 2.0], [0.0, 1.0]])
C = np.array([0.7, 0.35])
NAMES = sorted(MAXIMIZERS)
TOL = {"direct": 0.05, "lbfgsb": 0.05, "local": 0.05, "grid": 0.05, "random": 0.15}


class Counted:
    """-||x - c||^2 that records every point it is called on."""

    def __init__(self, c=C, fail=None):
        self.c, self.fail, self.points = c, fail, 0

    def __call__(self, X):
        assert X.ndim == 2 and X.shape[1] == self.c.size
        self.points += X.shape[0]
        v = -np.sum((X - self.c) ** 2, axis=1)
        if self.fail is not None:
            v[self.fail(X)] = np.nan
        return v

    def value_and_grad(self, X):
        return self(X), -2.0 * (X - self.c)


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.mark.parametrize("name", NAMES)
def test_contract(name):
    fun = Counted()
    res = maximize(name, fun, BOUNDS, budget=500, rng=np.random.default_rng(1))
    assert isinstance(res, MaximizeResult) and res.method == name
    assert res.x.shape == (2,) and np.all(res.x >= BOUNDS[:, 0]) and np.all(res.x <= BOUNDS[:, 1])
    assert res.nfev == fun.points <= 500
    assert res.value == pytest.approx(-np.sum((res.x - C) ** 2))
    assert np.linalg.norm(res.x - C) < TOL[name]
    box = Box(BOUNDS[:, 0], BOUNDS[:, 1])
    again = maximize(name, Counted(), box, budget=500, rng=np.random.default_rng(1))
    assert_array_equal(again.x, res.x)
    assert again.nfev == res.nfev


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("budget", [8, 9, 37, 101])
def test_budget_never_exceeded(name, budget, rng):
    fun = Counted(c=np.array([2.0, 1.0]))  # optimum at a corner
    res = maximize(name, fun, BOUNDS, budget=budget, rng=rng)
    assert res.nfev == fun.points <= budget
    assert np.all(res.x >= BOUNDS[:, 0]) and np.all(res.x <= BOUNDS[:, 1])


@pytest.mark.parametrize("name", NAMES)
def test_non_finite_values_do_not_crash(name, rng):
    fun = Counted(fail=lambda X: X[:, 0] > 0.5)  # NaN on the right part of the box (optimum inside it)
    res = maximize(name, fun, BOUNDS, budget=300, rng=rng)
    assert np.isfinite(res.value) and res.x[0] <= 0.5 and res.nfev <= 300
    everywhere = maximize(name, lambda X: np.full(len(X), np.inf), BOUNDS, budget=50, rng=rng)
    assert everywhere.value == -np.inf and everywhere.nfev <= 50
    assert np.all(everywhere.x >= BOUNDS[:, 0]) and np.all(everywhere.x <= BOUNDS[:, 1])


@pytest.mark.parametrize("name", NAMES)
def test_x0_candidates_are_used(name, rng):
    fun = Counted()
    res = maximize(name, fun, BOUNDS, budget=20, rng=rng, x0_candidates=np.array([[0.0, 0.0], C]))
    assert_allclose(res.x, C)
    assert res.value == 0.0 and res.nfev == fun.points <= 20


@pytest.mark.parametrize("name", NAMES)
def test_argument_errors(name, rng):
    fun = Counted()
    with pytest.raises(TypeError, match="budget must be an int >= 1, got float"):
        maximize(name, fun, BOUNDS, budget=10.0, rng=rng)
    with pytest.raises(ValueError, match="budget must be an int >= 1, got 0"):
        maximize(name, fun, BOUNDS, budget=0, rng=rng)
    with pytest.raises(ValueError, match=r"bounds must have shape \(dim, 2\)"):
        maximize(name, fun, BOUNDS.T[:, :1], budget=10, rng=rng)
    with pytest.raises(ValueError, match="bounds: lower must be < upper.*dimension 1"):
        maximize(name, fun, [[0, 1], [1, 1]], budget=10, rng=rng)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator, got int"):
        maximize(name, fun, BOUNDS, budget=10, rng=0)
    with pytest.raises(ValueError, match=r"fun must return an array of shape \(\d+,\)"):
        maximize(name, lambda X: np.zeros((len(X), 1)), BOUNDS, budget=10, rng=rng)
    with pytest.raises(ValueError, match=r"x0_candidates must have shape \(m, 2\)"):
        maximize(name, fun, BOUNDS, budget=10, rng=rng, x0_candidates=np.zeros((1, 3)))


def test_unknown_name(rng):
    with pytest.raises(ValueError, match=r"unknown maximizer 'cmaes'; valid names are \['direct', 'grid'"):
        maximize("cmaes", Counted(), BOUNDS, budget=10, rng=rng)


@pytest.mark.parametrize("analytic", [True, False])
def test_lbfgsb_gradient_modes(analytic, rng):
    d = 6
    c = np.linspace(0.1, 0.9, d)
    fun = Counted(c=c)
    res = maximize_lbfgsb(
        fun, np.tile([0.0, 1.0], (d, 1)), budget=600, rng=rng, n_starts=3,
        fun_and_grad=fun.value_and_grad if analytic else None,
    )
    assert res.n_starts == 3 and res.nfev == fun.points <= 600
    assert_allclose(res.x, c, atol=1e-4)


def test_lbfgsb_batched_runs_the_starts_together(rng):
    """Batched starts: the same maximum of a multimodal function, far fewer calls, the budget kept."""
    d = 3

    def fun(X):
        return np.sum(np.cos(6 * np.pi * X) - 4 * (X - 0.6) ** 2, axis=1)

    calls = {"seq": 0, "bat": 0}

    def counted(key):
        def fg(X):
            calls[key] += 1
            return fun(X), -6 * np.pi * np.sin(6 * np.pi * X) - 8 * (X - 0.6)
        return fg

    box = np.tile([0.0, 1.0], (d, 1))
    seq = maximize_lbfgsb(fun, box, budget=2000, rng=np.random.default_rng(3), n_starts=20,
                          fun_and_grad=counted("seq"))
    bat = maximize_lbfgsb(fun, box, budget=2000, rng=np.random.default_rng(3), n_starts=20,
                          fun_and_grad=counted("bat"), batched=True)
    grid = np.linspace(0, 1, 200001)[:, None]
    g = fun(grid)  # separable: the maximum is the 1-D maximizer in every coordinate
    best, x_best = d * g.max(), grid[np.argmax(g), 0]
    assert bat.nfev <= 2000 and seq.nfev <= 2000
    assert bat.n_starts == 21 and "batched" in bat.message  # 20 together, then one from the best point
    assert bat.value == pytest.approx(best, abs=1e-3) and seq.value == pytest.approx(best, abs=1e-3)
    assert_allclose(bat.x, x_best, atol=1e-3)
    assert calls["bat"] * 5 < calls["seq"]
    # without gradients the option changes nothing (forward differences run one start at a time)
    a = maximize_lbfgsb(fun, box, budget=300, rng=np.random.default_rng(1), n_starts=3)
    b = maximize_lbfgsb(fun, box, budget=300, rng=np.random.default_rng(1), n_starts=3, batched=True)
    assert_array_equal(a.x, b.x) and a.nfev == b.nfev
    with pytest.raises(TypeError, match="batched must be a bool, got int"):
        maximize_lbfgsb(fun, box, budget=300, rng=rng, fun_and_grad=counted("bat"), batched=1)


@pytest.mark.parametrize("budget, n_starts", [(40, 1), (60, 2), (90, 3), (130, 20), (400, 20)])
def test_lbfgsb_batched_edge_cases(budget, n_starts):
    """One start: exactly the unbatched search. Few starts or a budget running out inside the
    batched run: the budget holds and the best point is kept; NaN values do not crash."""
    fun = Counted(c=C, fail=lambda X: X[:, 0] > 1.5)

    def fg(X):
        v, g = fun.value_and_grad(X)
        return v, np.where(np.isfinite(v)[:, None], g, np.nan)

    runs = [maximize_lbfgsb(fun, BOUNDS, budget=budget, rng=np.random.default_rng(5), n_starts=n_starts,
                            n_raw=budget // 4, fun_and_grad=fg, batched=b) for b in (False, True)]
    for res in runs:
        assert res.nfev <= budget and np.isfinite(res.value) and 1 <= res.n_starts <= n_starts + 1
        assert res.value >= -np.sum((BOUNDS[:, 1] - BOUNDS[:, 0]) ** 2)
    if n_starts == 1:
        assert_array_equal(runs[0].x, runs[1].x)
        assert runs[0].nfev == runs[1].nfev and runs[0].message == runs[1].message
    if budget == 400:
        assert "batched" in runs[1].message and runs[1].value == pytest.approx(0.0, abs=1e-6)


def test_lbfgsb_option_errors(rng):
    with pytest.raises(ValueError, match="n_raw must be >= 1 when no x0_candidates"):
        maximize_lbfgsb(Counted(), BOUNDS, budget=10, rng=rng, n_raw=0)
    with pytest.raises(ValueError, match="n_starts must be an int >= 1, got 0"):
        maximize_lbfgsb(Counted(), BOUNDS, budget=10, rng=rng, n_starts=0)
    with pytest.raises(ValueError, match=r"fun_and_grad grads must return an array of shape \(1, 2\)"):
        bad_grad = lambda X: (np.zeros(len(X)), np.zeros(2))  # noqa: E731
        maximize_lbfgsb(Counted(), BOUNDS, budget=10, rng=rng, fun_and_grad=bad_grad)


def test_grid_layout_and_limits(rng):
    fun = Counted(c=np.array([0.5]))
    res = maximize_grid(fun, [[0.0, 1.0]], budget=5, rng=rng)
    assert res.nfev == 5
    assert_allclose(res.x, [0.5])
    assert maximize_grid(Counted(), BOUNDS, budget=1000, rng=rng).nfev == 31**2
    assert maximize_grid(Counted(np.zeros(3)), np.tile([0, 1.0], (3, 1)), budget=1000, rng=rng).nfev == 1000
    with pytest.raises(ValueError, match="grid search supports 1 <= d <= 3 dimensions, got d=4"):
        maximize_grid(Counted(np.zeros(4)), np.tile([0, 1.0], (4, 1)), budget=10**4, rng=rng)
    with pytest.raises(ValueError, match=r"budget must leave at least 2\*\*d = 4 points"):
        maximize_grid(Counted(), BOUNDS, budget=3, rng=rng)


def test_local_search_finds_a_high_dimensional_maximum_near_the_centres(rng):
    """In 300 dimensions the local search climbs from the centres; DIRECT's budget cannot."""
    from hdbo.acquisition import maximize_local

    d = 300
    c = np.full(d, 0.3)
    f = Counted(c)
    centres = np.vstack([np.full(d, 0.35), rng.random((3, d))])
    res = maximize_local(f, [(0.0, 1.0)] * d, budget=3000, rng=rng, fun_and_grad=f.value_and_grad,
                         x0_candidates=centres)
    assert res.nfev == f.points <= 3000 and res.method == "local"
    assert res.value > -1e-6
    direct = maximize("direct", Counted(c), [(0.0, 1.0)] * d, budget=3000, rng=np.random.default_rng(0),
                      x0_candidates=centres)
    assert direct.value < -0.1  # the reason for the local default: DIRECT stays near its centres
    # without analytic gradients the search still works (forward differences, one run per start)
    fd = maximize_local(Counted(C), BOUNDS, budget=300, rng=np.random.default_rng(1), x0_candidates=[[0.0, 0.0]])
    assert np.linalg.norm(fd.x - C) < 1e-3


def test_perturbed_subsets_change_few_coordinates(rng):
    from hdbo.acquisition import perturb_subsets

    box = Box.unit(200)
    centres = np.vstack([np.full(200, 0.5), np.full(200, 0.25)])
    P = perturb_subsets(centres, 1000, box, rng, n_perturbed=20)
    assert P.shape == (1000, 200) and np.all((P >= 0) & (P <= 1))
    changed = np.minimum(np.sum(P != 0.5, axis=1), np.sum(P != 0.25, axis=1))
    assert np.all(changed >= 1) and 12 < np.mean(changed) < 28
    from_best = np.sum(np.sum(P != 0.5, axis=1) < 100)
    assert 450 <= from_best <= 550  # half the points come from centre 0


def test_local_option_errors(rng):
    from hdbo.acquisition import maximize_local

    f = Counted()
    with pytest.raises(ValueError, match="screen_fraction"):
        maximize_local(f, BOUNDS, budget=50, rng=rng, screen_fraction=0.0)
    with pytest.raises(ValueError, match="n_starts"):
        maximize_local(f, BOUNDS, budget=50, rng=rng, n_starts=0)
    with pytest.raises(ValueError, match="near_fraction"):
        maximize_local(f, BOUNDS, budget=50, rng=rng, near_fraction=1.5)
    # near_fraction sets how much of the screen is spent around the centres
    for near, expected in ((0.0, 0), (0.5, 15), (1.0, 30)):
        res = maximize_local(f, BOUNDS, budget=50, rng=np.random.default_rng(0), x0_candidates=[[0.0, 0.0]],
                             near_fraction=near)
        assert f"({expected} near the centres)" in res.message
    with pytest.raises(TypeError, match="fun_and_grad"):
        maximize_local(f, BOUNDS, budget=50, rng=rng, fun_and_grad=3)
