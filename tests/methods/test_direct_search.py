"""DIRECT as an ask/tell method: same points as scipy's direct, resume by replay, threads."""

from __future__ import annotations

import gc
import json
import threading
import time
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import direct

from hdbo.exceptions import PendingError, StateError
from hdbo.methods import Method, make_method
from hdbo.methods.direct_search import DirectSearch
from hdbo.space import Box

BOX3 = np.array([[-5.0, 5.0], [0.0, 2.0], [1.0, 4.0]])
BOX2 = np.array([[-1.0, 2.0], [0.0, 3.0]])
X_STAR2 = np.array([0.37, 1.61])


def f3(x: np.ndarray) -> float:
    """A smooth, asymmetric 3-D function (maximized), so DIRECT meets no ties."""
    u = Box(BOX3[:, 0], BOX3[:, 1]).to_unit(x)
    return float(-np.sum(np.array([1.0, 2.0, 0.5]) * (u - [0.31, 0.72, 0.13]) ** 2) + 0.2 * np.sin(3 * u[0] + u[1]))


def f2(x: np.ndarray) -> float:
    """A smooth 2-D function with its maximum 0 at X_STAR2 (not on DIRECT's ternary grid)."""
    d = np.asarray(x) - X_STAR2
    return -float(d[0] ** 2 + 2.0 * d[1] ** 2 + 0.3 * d[0] * d[1])


def scipy_points(func, box: np.ndarray, *, maxfun: int, locally_biased: bool = False, fails=None):
    """The points scipy's direct evaluates on the unit cube with ``func`` composed with the box map.

    ``fails(x)`` True marks a failure, given to DIRECT as documented: the worst successful
    value so far, 1e10 before any.
    """
    b = Box(box[:, 0], box[:, 1])
    points, worst = [], [None]

    def objective(u):
        u = np.asarray(u, dtype=float)
        points.append(u.copy())
        x = b.clip(b.from_unit(u))
        if fails is not None and fails(x):
            return worst[0] if worst[0] is not None else 1e10
        v = -func(x)
        worst[0] = v if worst[0] is None else max(worst[0], v)
        return v

    direct(objective, [(0.0, 1.0)] * b.dim, maxfun=maxfun, maxiter=1000, locally_biased=locally_biased,
           vol_tol=0.0, len_tol=0.0)
    return np.array([b.clip(b.from_unit(u)) for u in points])


def run(m: Method, func, steps: int, fails=None) -> np.ndarray:
    xs = []
    for _ in range(steps):
        x = m.ask()
        xs.append(x)
        m.tell(x, None if fails is not None and fails(x) else func(x))
    return np.array(xs)


def direct_threads() -> int:
    """Number of live DIRECT worker threads in this process."""
    return sum(t.name == "hdbo-direct" for t in threading.enumerate())


def wait_for_threads(limit: int, timeout: float = 10.0) -> int:
    """Collect garbage until at most ``limit`` DIRECT workers live (or time runs out)."""
    deadline = time.monotonic() + timeout
    while direct_threads() > limit and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.02)
    return direct_threads()


# ---------------------------------------------------------------------- same points as scipy
@pytest.mark.parametrize("locally_biased", [False, True])
def test_asked_points_are_the_points_scipy_direct_evaluates(locally_biased):
    ref = scipy_points(f3, BOX3, maxfun=50, locally_biased=locally_biased)
    assert ref.shape[0] >= 50  # scipy finishes the iteration in which it passes maxfun
    m = make_method("direct", BOX3, seed=0, budget=50, locally_biased=locally_biased)
    xs = run(m, f3, ref.shape[0])
    assert_array_equal(xs, ref)
    assert m.diagnostics()["direct_queries"] == ref.shape[0]
    # DIRECT has stopped: the next points are uniformly random, from the seed
    x_next = m.ask()
    assert m.diagnostics()["direct_finished"] and m.diagnostics()["direct_nfev"] == ref.shape[0]
    assert np.all(x_next >= BOX3[:, 0]) and np.all(x_next <= BOX3[:, 1])
    assert not np.any(np.all(np.isclose(ref, x_next), axis=1))
    m.close()


def test_asked_points_match_scipy_run_on_the_user_box():
    # scipy maps [0, 1] to the box its own way; the points agree to rounding
    points = []

    def objective(x):
        points.append(np.array(x, dtype=float))
        return -f3(np.asarray(x))

    direct(objective, [tuple(r) for r in BOX3], maxfun=50, maxiter=1000, locally_biased=False, vol_tol=0.0, len_tol=0.0)
    m = make_method("direct", BOX3, budget=50)
    assert_allclose(run(m, f3, len(points)), np.array(points), rtol=0, atol=1e-12)
    m.close()


def test_finds_the_optimum_of_a_smooth_2d_function():
    m = make_method("direct", BOX2, seed=0, budget=150)
    run(m, f2, 150)
    x_best, y_best = m.best
    assert np.max(np.abs(x_best - X_STAR2)) < 5e-3
    assert y_best > -1e-4
    m.close()


def test_maxfun_overrides_budget_and_random_points_follow():
    ref = scipy_points(f2, BOX2, maxfun=20)
    m = make_method("direct", BOX2, seed=5, budget=100, maxfun=20)
    xs = run(m, f2, 40)
    assert_array_equal(xs[: len(ref)], ref)
    tail = xs[len(ref):]
    other = make_method("direct", BOX2, seed=6, budget=100, maxfun=20)
    assert not np.array_equal(run(other, f2, 40)[len(ref):], tail)  # the seed matters only here
    m.close(), other.close()


# ---------------------------------------------------------------------- failures
def test_failed_evaluations_get_the_documented_value():
    # the first point (the centre) fails, before any success; later a whole region fails
    def fails(x):
        return bool(np.all(np.isclose(x, BOX3.mean(axis=1)))) or x[0] > 3.0

    ref = scipy_points(f3, BOX3, maxfun=60, fails=fails)
    m = make_method("direct", BOX3, seed=0, budget=60)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no failed point is ever proposed again
        xs = run(m, f3, ref.shape[0], fails=fails)
    assert_array_equal(xs, ref)
    assert np.isnan(m.y_all[0]) and m.n_failed == sum(fails(x) for x in xs) > 1
    assert np.all(np.isfinite(m.y_obs))
    m.close()


def test_all_failures_do_not_stall_it():
    m = make_method("direct", BOX2, seed=0, budget=30)
    xs = run(m, f2, 30, fails=lambda x: True)
    assert m.n_failed == 30 and m.best is None
    assert np.unique(xs, axis=0).shape[0] == 30
    m.close()


# ---------------------------------------------------------------------- state and resume
@pytest.mark.parametrize("split", [1, 7, 23, 35, 40])
def test_resume_through_json_state_is_exact(split):
    # with budget 30, DIRECT makes 35 queries in 2-D; from then on the points are random
    n = 50
    ref = run(make_method("direct", BOX2, seed=3, budget=30), f2, n)
    m = make_method("direct", BOX2, seed=3, budget=30)
    run(m, f2, split)
    if split == 40:
        assert m.diagnostics()["direct_finished"]
    resumed = Method.from_state(json.loads(json.dumps(m.state_dict())))
    assert isinstance(resumed, DirectSearch)
    assert resumed.diagnostics() == m.diagnostics()
    assert_array_equal(run(resumed, f2, n - split), ref[split:])
    # the same from a state saved without history
    light = json.loads(json.dumps(m.state_dict(include_history=False)))
    resumed2 = Method.from_state(light, history=(m.X_all, m.y_all))
    assert_array_equal(run(resumed2, f2, n - split), ref[split:])
    for obj in (m, resumed, resumed2):
        obj.close()


def test_resume_with_a_pending_point_and_failures():
    def fails(x):
        return x[1] < 0.5

    ref = run(make_method("direct", BOX2, seed=0, budget=50), f2, 50, fails=fails)
    m = make_method("direct", BOX2, seed=0, budget=50)
    run(m, f2, 20, fails=fails)
    pending = m.ask()  # asked, not told, when the state is saved
    resumed = Method.from_state(json.loads(json.dumps(m.state_dict())))
    assert_array_equal(resumed.pending, pending[None, :])  # the resumed method knows it is out
    with pytest.raises(PendingError, match="pending"):
        resumed.ask()  # DIRECT waits for its value
    assert resumed.ask(2).shape == (0, 2)
    assert_array_equal(ref[20], pending)
    resumed.tell(pending, None if fails(pending) else f2(pending))  # answers DIRECT: it goes on exactly
    assert resumed.n_pending == 0
    assert_array_equal(run(resumed, f2, 29, fails=fails), ref[21:])
    m.close(), resumed.close()


def test_replay_checks_that_direct_asks_the_recorded_points():
    m = make_method("direct", BOX2, seed=0, budget=40)
    run(m, f2, 12)
    state = json.loads(json.dumps(m.state_dict()))
    m.close()
    baseline = direct_threads()
    swapped = json.loads(json.dumps(state))
    answers = swapped["internal"]["direct_answers"]
    answers[3], answers[4] = answers[4], answers[3]
    with pytest.raises(StateError, match="replaying DIRECT: query 3"):
        Method.from_state(swapped)
    moved = json.loads(json.dumps(state))
    moved["history"]["X"][5] = [0.0, 0.0]
    with pytest.raises(StateError, match="replaying DIRECT: query 5"):
        Method.from_state(moved)
    bad = json.loads(json.dumps(state))
    bad["internal"]["direct_answers"].append(99)
    with pytest.raises(StateError, match="history indices"):
        Method.from_state(bad)
    assert wait_for_threads(baseline) <= baseline  # failed loads leave no thread behind


# ---------------------------------------------------------------------- foreign tells
def test_tells_at_other_points_are_recorded_but_not_given_to_direct():
    ref = run(make_method("direct", BOX2, budget=30), f2, 30)
    m = make_method("direct", BOX2, budget=30)
    rng = np.random.default_rng(0)
    xs = []
    for t in range(30):
        x = m.ask()
        with pytest.raises(PendingError):
            m.ask()  # DIRECT's query is out: nothing else to propose
        assert m.ask(3).shape == (0, 2)
        assert_array_equal(m.pending, x[None, :])
        if t % 5 == 2:  # a foreign point with a value that would mislead DIRECT
            m.tell(rng.uniform(BOX2[:, 0], BOX2[:, 1]), 1e6)
        xs.append(x)
        m.tell(x, f2(x))
    assert_array_equal(np.array(xs), ref)
    assert m.n_told == 36 and m.best[1] == 1e6
    resumed = Method.from_state(json.loads(json.dumps(m.state_dict())))
    assert_array_equal(resumed.ask(), m.ask())
    with pytest.raises(PendingError):
        resumed.ask()
    m.close(), resumed.close()


def test_a_point_told_before_direct_asks_it_is_not_queried_again():
    ref = run(make_method("direct", BOX2, budget=30), f2, 30)
    m = make_method("direct", BOX2, budget=30)
    m.tell(ref[0], f2(ref[0]))  # the centre, told up front
    assert_array_equal(run(m, f2, 29), ref[1:])
    assert m.diagnostics()["direct_queries"] == 30
    m.close()


# ---------------------------------------------------------------------- threads
def test_many_instances_do_not_leak_threads():
    baseline = wait_for_threads(0)  # workers of earlier tests' methods end once collected
    total = threading.active_count()
    methods = [make_method("direct", BOX3, seed=i, budget=50) for i in range(40)]
    for m in methods:
        run(m, f3, 3)
    assert direct_threads() == baseline + 40  # one worker each, blocked on its queue
    for m in methods[:20]:
        m.close()
    assert direct_threads() == baseline + 20  # close() joins
    del methods, m
    assert wait_for_threads(baseline) == baseline  # garbage collection stops the rest
    assert threading.active_count() <= total


def test_close_is_idempotent_and_the_method_stays_usable():
    ref = run(make_method("direct", BOX2, seed=1, budget=40), f2, 40)
    baseline = wait_for_threads(0)
    m = make_method("direct", BOX2, seed=1, budget=40)
    assert direct_threads() == baseline  # nothing starts before the first ask
    xs = list(run(m, f2, 10))
    x = m.ask()  # closed with its query out
    m.close()
    m.close()
    assert wait_for_threads(baseline) <= baseline
    assert m.ask(2).shape == (0, 2)  # restarts the worker and replays: the query is still out
    m.tell(x, f2(x))
    xs += [x] + list(run(m, f2, 29))
    assert_array_equal(np.array(xs), ref)
    m.close()


# ---------------------------------------------------------------------- arguments
@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"locally_biased": "no"}, TypeError, "locally_biased must be a bool"),
        ({"maxfun": 0}, ValueError, "maxfun must be >= 1"),
        ({"maxiter": 2.5}, TypeError, "maxiter must be an int"),
        ({"vol_tol": 2.0}, ValueError, r"vol_tol must be in \[0, 1.0\]"),
        ({"len_tol": -1.0}, ValueError, "len_tol must be in"),
        ({"eps": "big"}, TypeError, "eps must be a real number"),
    ],
)
def test_bad_options(options, error, match):
    with pytest.raises(error, match=match):
        make_method("direct", BOX2, **options)
