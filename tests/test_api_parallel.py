"""Batches, pending points and evaluations in flight through the public API (issue 21)."""

from __future__ import annotations

import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import hdbo
from hdbo import Optimizer, minimize
from hdbo.exceptions import PendingError

BOUNDS = [(-1.0, 2.0), (0.0, 1.0), (-3.0, 3.0)]
FAST = {"n_init": 3, "acq_budget": 200}


def sphere(x):
    return float(np.sum((np.asarray(x) - 0.3) ** 2))


def _warm(opt, n=4):
    for _ in range(n):
        x = opt.ask()
        opt.tell(x, sphere(x))


# ---------------------------------------------------------------------------- Optimizer batches
def test_ask_n_returns_distinct_pending_points_and_ask_keeps_its_shape():
    opt = Optimizer(BOUNDS, method="gp-ucb", seed=1, **FAST)
    _warm(opt)
    assert opt.ask().shape == (3,)
    X = opt.ask(4)
    assert X.shape == (4, 3)
    assert opt.n_pending == 5
    P = opt.pending
    gaps = np.max(np.abs(P[:, None, :] - P[None, :, :]), axis=2)[np.triu_indices(5, 1)]
    assert gaps.min() > 1e-3
    lo, hi = opt.bounds.lower, opt.bounds.upper
    assert np.all((X >= lo) & (X <= hi))


def test_tell_batch_in_any_order_and_failures_in_a_batch():
    opt = Optimizer(BOUNDS, method="gp-ei", seed=2, **FAST)
    _warm(opt)
    X = opt.ask(3)
    values = [sphere(X[2]), None, sphere(X[0])]
    opt.tell(X[[2, 1, 0]], values, error="lost")
    assert opt.n_pending == 0 and opt.n_told == 7
    Xh, yh = opt.history
    assert_array_equal(Xh[-3:], X[[2, 1, 0]])
    assert np.isnan(yh[-2]) and yh[-1] == pytest.approx(sphere(X[0]))
    assert opt.state_dict()["errors"] == [[5, "lost"]]


def test_tell_batch_is_checked_before_anything_is_recorded():
    opt = Optimizer(BOUNDS, method="random", seed=0)
    X = opt.ask(2)
    with pytest.raises(ValueError, match="2 points .* 3 value"):
        opt.tell(X, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="single value"):
        opt.tell(X, 1.0)
    with pytest.raises(TypeError, match=r"y\[1\] must be a real number"):
        opt.tell(X, [1.0, "a"])
    with pytest.raises(ValueError, match=r"x\[1\]"):
        opt.tell(np.vstack([X[0], X[1] + 100.0]), [1.0, 2.0])
    assert opt.n_told == 0 and opt.n_pending == 2


@pytest.mark.parametrize("bad, exc", [(0, ValueError), (-2, ValueError), (2.0, TypeError), ("3", TypeError)])
def test_ask_n_is_checked(bad, exc):
    with pytest.raises(exc, match="n"):
        Optimizer(BOUNDS, method="random", seed=0).ask(bad)


def test_cancel_drops_pending_points_without_recording():
    opt = Optimizer(BOUNDS, method="gp-ucb", seed=3, **FAST)
    _warm(opt)
    X = opt.ask(3)
    assert opt.cancel(X[1]) == 1
    assert opt.cancel(X[1]) == 0
    assert_array_equal(opt.pending, X[[0, 2]])
    assert opt.cancel() == 2 and opt.n_pending == 0 and opt.n_told == 4
    with pytest.raises(ValueError, match="shape"):
        opt.cancel(np.zeros(5))


def test_pending_points_survive_a_state_round_trip():
    import json

    opt = Optimizer(BOUNDS, method="gp-ucb", seed=4, **FAST)
    _warm(opt)
    X = opt.ask(2)
    state = json.loads(json.dumps(opt.state_dict()))
    again = Optimizer.from_state(state)
    assert_array_equal(again.pending, X)
    assert_array_equal(again.ask(), opt.ask())


def test_state_without_pending_field_loads_with_none_pending():
    opt = Optimizer(BOUNDS, method="random", seed=0)
    _warm(opt, 2)
    state = opt.state_dict()
    del state["method"]["pending"]  # states written before batches
    assert Optimizer.from_state(state).n_pending == 0


def test_bad_pending_in_a_state_is_a_state_error():
    from hdbo.exceptions import StateError

    opt = Optimizer(BOUNDS, method="random", seed=0)
    state = opt.state_dict()
    state["method"]["pending"] = [[0.0, 0.0]]
    with pytest.raises(StateError, match="pending"):
        Optimizer.from_state(state)
    state["method"]["pending"] = [[100.0, 0.5, 0.0]]
    with pytest.raises(StateError, match="pending"):
        Optimizer.from_state(state)


def test_sequential_runs_are_unchanged_by_the_pending_bookkeeping():
    """ask/tell one at a time: identical to minimize's loop and to another seeded run."""
    a = minimize(sphere, BOUNDS, method="gp-ucb", seed=5, budget=8, **FAST)
    opt = Optimizer(BOUNDS, method="gp-ucb", seed=5, budget=8, **FAST)
    for _ in range(8):
        x = opt.ask()
        opt.tell(x, sphere(x))
    assert_array_equal(a.history.X, opt.history[0])
    assert_array_equal(a.history.ask_order, np.arange(8))


def test_pending_error_when_the_method_must_wait():
    opt = Optimizer(BOUNDS, method="direct", seed=0, budget=20)
    opt.ask()
    with pytest.raises(PendingError, match="pending"):
        opt.ask()
    assert opt.ask(3).shape == (0, 3)


# ---------------------------------------------------------------------------- minimize in flight
def _slow_sphere(x):
    time.sleep(0.3)
    return sphere(x)


def test_n_workers_4_takes_at_most_half_the_wall_time_of_one():
    """24 evaluations of 0.3 s: 7.2 s in sequence, ~1.8 s with 4 in flight (generous margin)."""
    t0 = time.perf_counter()
    one = minimize(_slow_sphere, BOUNDS, method="random", seed=0, budget=24)
    t1 = time.perf_counter()
    four = minimize(_slow_sphere, BOUNDS, method="random", seed=0, budget=24, n_workers=4)
    t2 = time.perf_counter()
    assert one.nfev == four.nfev == 24
    assert (t2 - t1) <= 0.5 * (t1 - t0)


def test_in_flight_run_records_completion_order_and_counts_the_budget():
    lock = threading.Lock()
    started = []

    def f(x):
        with lock:
            started.append(len(started))
            k = started[-1]
        time.sleep(0.05 if k % 2 else 0.2)  # odd evaluations finish first
        return sphere(x)

    res = minimize(f, BOUNDS, method="gp-ucb", seed=0, budget=12, n_workers=3, **FAST)
    assert res.nfev == 12 and len(started) == 12
    order = res.history.ask_order
    assert sorted(order.tolist()) == list(range(12))
    assert not np.array_equal(order, np.arange(12))  # completion order differs from asking order
    assert res.history.eval_seconds.min() >= 0.04
    assert res.method.n_pending == 0


def test_in_flight_failure_policy_is_unchanged():
    def f(x):
        if x[0] > 1.0:
            raise RuntimeError("simulator crashed")
        return None if x[1] > 0.8 else sphere(x)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = minimize(f, BOUNDS, method="random", seed=0, budget=20, n_workers=4)
    failed = res.history.failed
    assert res.nfev == 20 and res.nfailed == int(failed.sum()) > 0
    messages = dict(res.history.errors)
    assert any("simulator crashed" in m for m in messages.values())
    assert set(messages) == set(np.flatnonzero(failed).tolist())
    with pytest.raises(RuntimeError, match="simulator crashed"):
        minimize(lambda x: f(np.array([1.5, 0.0, 0.0])), BOUNDS, method="random", seed=0, budget=5, n_workers=2,
                 on_error="raise")


def test_callback_stop_waits_for_the_evaluations_in_flight():
    res = minimize(sphere, BOUNDS, method="random", seed=0, budget=50, n_workers=4,
                   callback=lambda x, v: True)
    assert res.status == 2
    assert 1 <= res.nfev <= 4  # the ones already in flight are recorded, no new ones asked


def test_a_given_executor_is_used_and_not_shut_down():
    names = set()

    def f(x):
        names.add(threading.current_thread().name)
        return sphere(x)

    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="mine") as ex:
        res = minimize(f, BOUNDS, method="random", seed=0, budget=6, executor=ex, n_workers=2)
        assert ex.submit(lambda: 1).result() == 1  # still usable
    assert res.nfev == 6 and all(n.startswith("mine") for n in names)


def test_process_pool_executor_runs_a_module_level_objective():
    from concurrent.futures import ProcessPoolExecutor
    import multiprocessing

    with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("spawn")) as ex:
        res = minimize(sphere, BOUNDS, method="gp-ucb", seed=0, budget=8, executor=ex, n_workers=2, **FAST)
    assert res.nfev == 8 and np.isfinite(res.fun)


@pytest.mark.parametrize("kw, exc, match", [
    ({"n_workers": 0}, ValueError, "n_workers"),
    ({"n_workers": 2.0}, TypeError, "n_workers"),
    ({"n_workers": True}, TypeError, "n_workers"),
    ({"executor": object()}, TypeError, "executor"),
])
def test_bad_parallel_arguments(kw, exc, match):
    with pytest.raises(exc, match=match):
        minimize(sphere, BOUNDS, method="random", budget=3, **kw)


def test_dask_local_cluster_as_executor():
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        res = hdbo.minimize(sphere, BOUNDS, method="gp-ucb", seed=0, budget=8, n_workers=2, executor=client, **FAST)
    assert res.nfev == 8 and res.method.n_pending == 0
    assert sorted(res.history.ask_order.tolist()) == list(range(8))
