"""The batched DIRECT backend (hdbo.acquisition._direct) against the algorithm and SciPy."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from hdbo.acquisition import maximize_direct, maximize_direct_many
from hdbo.acquisition import _direct
from hdbo.acquisition._direct import _half_diagonals, direct_minimize, direct_minimize_many, potentially_optimal


def branin(U):
    x, y = 15 * U[:, 0] - 5, 15 * U[:, 1]
    return (y - 5.1 / (4 * np.pi**2) * x**2 + 5 / np.pi * x - 6) ** 2 + 10 * (1 - 1 / (8 * np.pi)) * np.cos(x) + 10


def hartmann6(U):
    A = np.array([[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14], [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]])
    P = 1e-4 * np.array(
        [[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
         [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]]
    )
    return -(np.array([1.0, 1.2, 3.0, 3.2]) * np.exp(-((U[:, None, :] - P) ** 2 * A).sum(-1))).sum(-1)


class Recorder:
    def __init__(self, f):
        self.f, self.batches = f, []

    def __call__(self, U):
        self.batches.append(U.copy())
        return self.f(U)

    @property
    def points(self):
        return np.vstack(self.batches)


def test_potentially_optimal_on_a_hand_worked_case():
    # sizes 1, 2, 3 with values 0.5, 0.4, 1.0: the smallest is beaten by a larger, better one;
    # the middle one is on the hull with K in [-0.1, 0.6]; the largest always qualifies.
    po = potentially_optimal(np.array([0.5, 0.4, 1.0]), np.array([1.0, 2.0, 3.0]), 0.4, 1e-4)
    assert_array_equal(po, [False, True, True])
    # Jones' epsilon test: a rectangle whose best hoped-for value is not eps|fmin| below fmin
    # is dropped (size 1, value 0 beside size 2, value 1e-9 and fmin = 0 -> K <= 1e-9).
    po = potentially_optimal(np.array([0.0, 1e-9]), np.array([1.0, 2.0]), 0.0, 1e-4)
    assert_array_equal(po, [True, True])
    po = potentially_optimal(np.array([1.0, 1.0 + 1e-9]), np.array([1.0, 2.0]), 1.0, 1e-4)
    assert_array_equal(po, [False, True])


def test_first_iteration_trisects_the_cube_in_one_call():
    rec = Recorder(lambda U: U[:, 0] + 2 * U[:, 1])
    direct_minimize(rec, 2, 5)
    assert [b.shape[0] for b in rec.batches] == [1, 4]
    assert_array_equal(rec.batches[0], [[0.5, 0.5]])
    expected = {(0.5 + 1 / 3, 0.5), (0.5 - 1 / 3, 0.5), (0.5, 0.5 + 1 / 3), (0.5, 0.5 - 1 / 3)}
    assert {tuple(np.round(p, 12)) for p in rec.batches[1]} == {tuple(np.round(p, 12)) for p in expected}


@pytest.mark.parametrize("dim,budget", [(1, 7), (2, 100), (5, 333), (20, 1000)])
def test_budget_is_used_exactly_and_points_stay_in_the_cube(dim, budget):
    rec = Recorder(lambda U: np.sum((U - 0.3) ** 2, axis=1))
    nfev, message = direct_minimize(rec, dim, budget)
    P = rec.points
    assert nfev == budget == P.shape[0], message
    assert np.all((P >= 0) & (P <= 1))
    # batched: one call per iteration, each with >= 2 points after the centre
    assert len(rec.batches) <= 1 + (budget - 1) // 2
    if dim >= 5:
        assert len(rec.batches) < budget / 10
    # no point is sampled twice
    assert np.unique(np.round(P, 12), axis=0).shape[0] == budget


def test_finds_the_branin_minimum():
    rec = Recorder(branin)
    direct_minimize(rec, 2, 500)
    assert branin(rec.points).min() < 0.397887 + 1e-3


def test_matches_scipy_direct_on_hartmann6():
    box = np.array([[0.0, 1.0]] * 6)
    rng = np.random.default_rng(0)
    ours = maximize_direct(lambda U: -hartmann6(U), box, budget=500, rng=rng)
    theirs = maximize_direct(lambda U: -hartmann6(U), box, budget=500, rng=rng, backend="scipy")
    assert ours.nfev == theirs.nfev == 500
    # optimum 3.32237; SciPy reaches 3.3143 with this budget
    assert ours.value > theirs.value - 0.01
    assert ours.value > 3.30


@pytest.mark.parametrize("name", ["branin", "hartmann6", "weighted-quadratic"])
def test_samples_the_points_scipy_direct_samples(name):
    """Same algorithm as SciPy's original DIRECT: its first 150 points are all among ours.

    The two implementations break ties differently, so the sequences drift apart later (after
    roughly 170-220 points here); dividing along the dimensions in the wrong order (largest w
    first) breaks the match after 13-68 points.
    """
    from scipy.optimize import Bounds, direct

    dim, f = {"branin": (2, branin), "hartmann6": (6, hartmann6),
              "weighted-quadratic": (5, lambda U: np.sum((U - 0.3) ** 2 * np.arange(1, 6), axis=1))}[name]
    theirs = []

    def one(x):
        theirs.append(np.array(x))
        return float(f(np.array(x)[None])[0])

    direct(one, Bounds([0.0] * dim, [1.0] * dim), eps=1e-4, maxfun=400, maxiter=10**5, locally_biased=False,
           vol_tol=0.0, len_tol=1e-6)
    rec = Recorder(f)
    direct_minimize(rec, dim, len(theirs))
    ours = {tuple(p) for p in np.round(rec.points, 10)}
    assert {tuple(p) for p in np.round(np.array(theirs[:150]), 10)} <= ours


def test_tolerance_stop_on_a_point_optimum():
    # On a 1-D function DIRECT keeps dividing the rectangle at the optimum; it stops once its
    # half-diagonal is below len_tol rather than spending the whole budget.
    rec = Recorder(lambda U: np.abs(U[:, 0] - 0.5))
    nfev, message = direct_minimize(rec, 1, 100000)
    assert nfev < 100000
    assert "len_tol" in message or "resolution" in message


def test_non_finite_values_are_walls(rng=np.random.default_rng(1)):
    box = np.array([[-1.0, 1.0], [-1.0, 1.0]])

    def f(X):
        v = -np.sum((X - 0.6) ** 2, axis=1)
        v[X[:, 0] < 0] = np.nan
        return v

    res = maximize_direct(f, box, budget=300, rng=rng)
    assert res.nfev == 300
    assert np.all(np.abs(res.x - 0.6) < 0.05)


def test_deterministic_and_backend_is_validated():
    box = np.array([[0.0, 1.0]] * 3)
    f = lambda U: -np.sum((U - 0.2) ** 2, axis=1)  # noqa: E731
    a = maximize_direct(f, box, budget=200, rng=np.random.default_rng(0))
    b = maximize_direct(f, box, budget=200, rng=np.random.default_rng(5))
    assert_array_equal(a.x, b.x)
    with pytest.raises(ValueError, match="backend"):
        maximize_direct(f, box, budget=200, rng=np.random.default_rng(0), backend="fortran")


# ---------------------------------------------------------------------- searches in lockstep
def reference_direct(f, dim, budget, *, eps=1e-4, len_tol=1e-6, maxiter=None, max_level=30):
    """Plain DIRECT written from the algorithm, one rectangle and one point at a time, with the
    tie rules documented in hdbo.acquisition._direct (the oldest rectangle wins a tie).

    Returns the evaluated points in order, the number of iterations that evaluated points,
    nfev and the stop message. Sizes and steps are computed with the module's numpy formulas so
    that the floating-point values (and hence the hull test) are the same.
    """
    rects = []  # [centre, levels, value], in creation order
    points = []

    def evaluate(x):
        points.append(x)
        return float(f(x[None, :])[0])

    def size(levels, as_float):
        k = levels.min()
        p = int((levels == k).sum())
        if as_float:  # as the module computes the sizes of the hull test
            return float(_half_diagonals(np.array([float(k)]), np.array([float(p)]), dim)[0])
        return float(_half_diagonals(np.array([k]), np.array([p]), dim)[0])

    rects.append([np.full(dim, 0.5), np.zeros(dim, dtype=np.int64), evaluate(np.full(dim, 0.5))])
    iterations = 0
    while True:
        if len(points) >= budget:
            return np.array(points), iterations, len(points), f"budget of {budget} evaluations used up"
        if maxiter is not None and iterations >= maxiter:
            return np.array(points), iterations, len(points), f"maxiter {maxiter} reached"
        best = min(range(len(rects)), key=lambda r: (rects[r][2], r))
        fmin = rects[best][2]
        if size(rects[best][1], False) < len_tol:
            return np.array(points), iterations, len(points), "half-diagonal of the best rectangle below len_tol"
        classes = {}
        for r, (_, levels, value) in enumerate(rects):
            key = (int(levels.min()), int((levels == levels.min()).sum()))
            if key not in classes or value < rects[classes[key]][2]:
                classes[key] = r
        reps = [r for key, r in classes.items() if key[0] < max_level]
        if not reps:
            return np.array(points), iterations, len(points), "every rectangle divided to the resolution limit"
        d = {r: size(rects[r][1], True) for r in reps}
        chosen = []
        for j in reps:
            fj = rects[j][2]
            k_high = min([(rects[h][2] - fj) / (d[h] - d[j]) for h in reps if d[h] > d[j]], default=np.inf)
            k_low = max([(rects[h][2] - fj) / (d[h] - d[j]) for h in reps if d[h] < d[j]], default=-np.inf)
            ok = k_high > 0 and k_low <= k_high
            if np.isfinite(k_high):
                ok = ok and fj - k_high * d[j] <= fmin - eps * abs(fmin) + 1e-15 * max(1.0, abs(fmin))
            if ok:
                chosen.append(j)
        chosen.sort(key=lambda r: -d[r])
        iterations += 1
        for r in chosen:
            centre, levels, _ = rects[r]
            k = levels.min()
            long_dims = [i for i in range(dim) if levels[i] == k]
            delta = 3.0 ** (-(k + 1))
            values = {}
            for sign in (1.0, -1.0):
                for i in long_dims:
                    if len(points) == budget:  # a cut iteration: the search stops after it
                        return np.array(points), iterations, len(points), f"budget of {budget} evaluations used up"
                    x = centre.copy()
                    x[i] += sign * delta
                    values[sign, i] = evaluate(x)
            # trisect in increasing order of w = min(f(c + delta e_i), f(c - delta e_i))
            order = sorted(range(len(long_dims)), key=lambda q: (min(values[1.0, long_dims[q]], values[-1.0, long_dims[q]]), q))
            child_levels = levels.copy()
            for q in order:
                i = long_dims[q]
                child_levels[i] += 1
                for sign in (1.0, -1.0):
                    x = centre.copy()
                    x[i] += sign * delta
                    rects.append([x, child_levels.copy(), values[sign, i]])
            rects[r][1] = child_levels


def _test_functions():
    """Eight searches: dimensions 1-7, exact ties, point optima (len_tol stops), budgets that
    cut an iteration short or end at the centre."""
    c = np.array([0.2, 0.7, 0.4, 0.9, 0.1, 0.5, 0.3])
    return [
        (lambda U: np.abs(U[:, 0] - 0.5), 1, 5000),  # stops on len_tol long before its budget
        (lambda U: np.sum((U - c[:3]) ** 2, axis=1), 3, 257),
        (lambda U: np.round(4 * np.sum((U - c[:5]) ** 2, axis=1)) / 4, 5, 400),  # many ties
        (lambda U: -np.exp(-30 * np.sum((U - c) ** 2, axis=1)) + 0.3 * np.cos(9 * U).sum(1), 7, 1000),
        (branin, 2, 1),
        (hartmann6, 6, 2),
        (lambda U: np.zeros(U.shape[0]), 2, 300),  # all values tie: the oldest rectangle is the best
        (lambda U: np.abs(U - 3.0**-3).sum(axis=1), 2, 1100),  # sizes down to 3**-24 (see below)
    ]


# len_tol exactly at the size 3**-24 * sqrt(2) / 2 of the last search's best rectangles, computed
# with Python ints: 1 ulp away from the module's numpy value, so rounding decides the stop.
@pytest.mark.parametrize("options", [{}, {"maxiter": 6}, {"len_tol": 0.05}, {"max_level": 3},
                                     {"len_tol": float(0.5 * np.sqrt(2 * 9.0**-24))}],
                         ids=["default", "maxiter", "large-len_tol", "resolution-limit", "len_tol-at-a-size"])
def test_one_search_and_searches_in_lockstep_sample_what_plain_direct_samples(options, monkeypatch):
    """Against the plain reference: the same points in the same order, one batch per iteration,
    the same nfev and stop message; alone (direct_minimize) and all six searches together
    (direct_minimize_many), where they stop at different iterations for different reasons."""
    options = dict(options)
    max_level = options.pop("max_level", 30)
    monkeypatch.setattr(_direct, "_MAX_LEVEL", max_level)
    cases = _test_functions()
    if max_level < 30:  # DIRECT keeps dividing at a point optimum until the level limit
        cases.append((lambda U: np.abs(U[:, 0] - 3.0**-4), 1, 5000))
    refs = [reference_direct(f, dim, budget, max_level=max_level, **options) for f, dim, budget in cases]
    recs = [Recorder(f) for f, _, _ in cases]
    together = direct_minimize_many(recs, [dim for _, dim, _ in cases], [b for _, _, b in cases], **options)
    for (f, dim, budget), (points, iterations, nfev, message), rec, got in zip(cases, refs, recs, together):
        alone = Recorder(f)
        for outcome, r in ((direct_minimize(alone, dim, budget, **options), alone), (got, rec)):
            assert outcome == (nfev, message)
            assert_array_equal(r.points, points)
            assert len(r.batches) == 1 + iterations
    messages = [m for _, m in together]
    if max_level < 30:
        assert "every rectangle divided to the resolution limit" in messages
    if "len_tol" in options:
        assert sum("len_tol" in m for m in messages) >= 2


def test_potentially_optimal_keeps_searches_apart():
    f1, s1 = np.array([0.5, 0.4, 1.0]), np.array([1.0, 2.0, 3.0])
    f2, s2 = np.array([0.0, 0.3]), np.array([2.0, 2.5])  # sizes shared with search 1 are allowed
    together = potentially_optimal(np.concatenate([f1, f2]), np.concatenate([s1, s2]),
                                   np.array([0.4] * 3 + [0.0] * 2), 1e-4, np.array([0, 0, 0, 1, 1]))
    assert_array_equal(together, np.concatenate([potentially_optimal(f1, s1, 0.4, 1e-4),
                                                 potentially_optimal(f2, s2, 0.0, 1e-4)]))


def test_maximize_direct_many_equals_one_search_per_function():
    rng = np.random.default_rng(0)

    def with_holes(X):
        v = -np.sum((X - 0.6) ** 2, axis=1)
        v[X[:, 0] < 0] = np.nan  # non-finite values are walls in both
        return v

    funs = [lambda X: -branin((X + 5) / 15), with_holes, lambda X: -hartmann6(X)]
    boxes = [np.array([[-5.0, 10.0], [-5.0, 10.0]]), np.array([[-1.0, 1.0]] * 2), np.array([[0.0, 1.0]] * 6)]
    budgets = [150, 300, 500]
    many = maximize_direct_many(funs, boxes, budgets=budgets, rng=rng)
    for f, box, budget, got in zip(funs, boxes, budgets, many):
        one = maximize_direct(f, box, budget=budget, rng=rng)
        assert_array_equal(got.x, one.x)
        assert (got.value, got.nfev, got.message) == (one.value, one.nfev, one.message)
    assert many[2].value > 3.30  # Hartmann-6's optimum is 3.32237


def test_maximize_direct_many_validates_its_arguments():
    rng = np.random.default_rng(0)
    f = lambda U: -np.sum(U**2, axis=1)  # noqa: E731
    box = np.array([[0.0, 1.0]] * 2)
    with pytest.raises(ValueError, match="same length"):
        maximize_direct_many([f, f], [box], budgets=[10, 10], rng=rng)
    with pytest.raises(ValueError, match="same length"):
        maximize_direct_many([], [], budgets=[], rng=rng)
    with pytest.raises(ValueError, match="budget"):
        maximize_direct_many([f], [box], budgets=[0], rng=rng)
    with pytest.raises(TypeError, match="fun"):
        maximize_direct_many([None], [box], budgets=[10], rng=rng)
