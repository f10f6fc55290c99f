"""The runner: seeding, failure policy, exact resume, skipping finished runs, parallel workers."""

from __future__ import annotations

import sys

import _hdbo_test_problems as toy
import numpy as np
import pytest
from _hdbo_test_problems import FLAKY, QUAD, make_config
from numpy.testing import assert_array_equal

from hdbo.experiments.runner import method_seed, noise_generator, run_many, run_one
from hdbo.experiments.store import RunStore
from hdbo.methods import available_methods, make_method


def _trace(store: RunStore, config):
    run = store.find_run(config)
    assert run is not None
    return store.load_evaluations(run.id)


def test_run_matches_the_documented_manual_loop(store):
    """run_one == make_method(seed=method_seed(s)) + problem seed s + noise stream, step by step."""
    cfg = make_config(seed=4, budget=10, problem_params={"dim": 3, "noise_std": 0.1})
    result = run_one(store, cfg)
    assert result.status == "finished" and result.n_evaluations == 10 and not result.skipped

    problem = toy.quadratic(dim=3, noise_std=0.1, seed=4)
    method = make_method("random", problem.bounds, seed=method_seed(4), budget=10)
    rng = noise_generator(4)
    xs, ys = [], []
    for _ in range(10):
        x = method.ask()
        y, _f = problem.evaluate(x, rng)
        method.tell(x, y)
        xs.append(x)
        ys.append(y)
    ev = _trace(store, cfg)
    assert_array_equal(ev.X, np.array(xs))
    assert_array_equal(ev.y, np.array(ys))
    assert_array_equal(ev.regret, -ev.f)
    assert not np.array_equal(ev.y, ev.f)  # noise was added
    assert_array_equal(ev.t, np.arange(10))
    rec = store.get_run(result.run_id)
    assert rec.status == "finished" and rec.finished_at is not None and rec.wall_seconds > 0
    assert rec.diagnostics == {} and rec.method_state["n_told"] == 10
    assert result.simple_regret == pytest.approx(np.min(ev.regret))
    assert result.best_f == pytest.approx(np.max(ev.f))


def test_problem_seed_in_params_fixes_the_instance(store):
    a = make_config(seed=0, problem_params={"dim": 3, "seed": 11}, budget=3)
    b = make_config(seed=1, problem_params={"dim": 3, "seed": 11}, budget=3)
    run_one(store, a)
    run_one(store, b)
    center = toy.quadratic(dim=3, seed=11).optimizer
    for cfg in (a, b):
        ev = _trace(store, cfg)
        assert_array_equal(ev.f, -np.sum((ev.X - center) ** 2, axis=1))


@pytest.mark.parametrize("k", [1, 5, 11])
@pytest.mark.parametrize("noise_std", [0.0, 0.05])
def test_resume_after_interrupt_equals_uninterrupted(tmp_path, k, noise_std):
    cfg = make_config(seed=3, budget=12, problem_params={"dim": 4, "noise_std": noise_std})
    with RunStore(tmp_path / "straight.db") as s:
        run_one(s, cfg)
        ref = _trace(s, cfg)

    with RunStore(tmp_path / "resumed.db") as s:
        toy.TRIGGER["countdown"] = k  # the k-th objective call raises KeyboardInterrupt
        with pytest.raises(KeyboardInterrupt):
            run_one(s, cfg)
        rec = s.find_run(cfg)
        assert rec.status == "failed" and "KeyboardInterrupt" in rec.error
        assert rec.n_evaluations == k - 1
        result = run_one(s, cfg)
        assert result.resumed_from == k - 1 and result.status == "finished"
        got = _trace(s, cfg)
    assert_array_equal(got.X, ref.X)
    assert_array_equal(got.y, ref.y)
    assert_array_equal(got.f, ref.f)
    assert_array_equal(got.t, np.arange(12))


@pytest.mark.parametrize("method", available_methods())
def test_every_method_resumes_exactly(tmp_path, method):
    """The runner contract for each registered method: interrupted + resumed == uninterrupted."""
    cfg = make_config(method=method, seed=1, budget=12, problem_params={"dim": 2, "noise_std": 0.01})
    with RunStore(tmp_path / "a.db") as s:
        run_one(s, cfg)
        ref = _trace(s, cfg)
    with RunStore(tmp_path / "b.db") as s:
        toy.TRIGGER["countdown"] = 8
        with pytest.raises(KeyboardInterrupt):
            run_one(s, cfg)
        run_one(s, cfg)
        got = _trace(s, cfg)
        assert s.find_run(cfg).status == "finished"
    assert_array_equal(got.X, ref.X)
    assert_array_equal(got.y, ref.y)


def test_resume_twice_with_failures(tmp_path):
    """Interrupt twice on a problem with failed evaluations; the trace is still exact."""
    cfg = make_config(problem=FLAKY, seed=2, budget=15)
    with RunStore(tmp_path / "a.db") as s:
        run_one(s, cfg)
        ref = _trace(s, cfg)
    assert ref.failed.any()
    with RunStore(tmp_path / "b.db") as s:
        for k in (4, 6):
            toy.TRIGGER["countdown"] = k
            with pytest.raises(KeyboardInterrupt):
                run_one(s, cfg)
        run_one(s, cfg)
        got = _trace(s, cfg)
    assert_array_equal(got.X, ref.X)
    assert_array_equal(got.failed, ref.failed)
    assert got.errors == ref.errors


def test_failed_evaluations_are_recorded_and_counted(store):
    cfg = make_config(problem=FLAKY, seed=0, budget=30)
    result = run_one(store, cfg)
    ev = _trace(store, cfg)
    assert result.status == "finished" and len(ev) == 30  # failures count against the budget
    raised = ev.X[:, 0] > 0.7
    nan = ~raised & (ev.X[:, 1] < 0.2)
    assert raised.any() and nan.any()
    assert_array_equal(ev.failed, raised | nan)
    assert all(ev.errors[i] == "ValueError: simulator diverged" for i in np.flatnonzero(raised))
    assert all(ev.errors[i].startswith("non-finite value") for i in np.flatnonzero(nan))
    assert np.all(np.isnan(ev.y[ev.failed])) and np.all(np.isnan(ev.f[ev.failed]))
    assert np.all(np.isfinite(ev.y[~ev.failed])) and all(e is None for e in np.array(ev.errors)[~ev.failed])
    assert result.n_failed_evaluations == int(ev.failed.sum())
    assert result.simple_regret == pytest.approx(np.nanmin(ev.regret))
    # the method saw the failures as failures
    state = store.get_run(result.run_id).method_state
    assert state["n_told"] == 30


def test_unknown_optimum_stores_no_regret(store):
    cfg = make_config(problem_params={"dim": 3, "known_optimum": False}, budget=4)
    result = run_one(store, cfg)
    ev = _trace(store, cfg)
    assert np.all(np.isnan(ev.regret)) and np.all(np.isfinite(ev.f))
    assert result.simple_regret is None and result.best_f == pytest.approx(np.max(ev.f))


def test_finished_run_is_skipped(store):
    cfg = make_config(budget=5)
    first = run_one(store, cfg)
    before = store.get_run(first.run_id)
    again = run_one(store, cfg)
    assert again.skipped and again.run_id == first.run_id and again.n_evaluations == 5
    after = store.get_run(first.run_id)
    assert after.finished_at == before.finished_at and after.wall_seconds == before.wall_seconds

    configs = [make_config(budget=5, seed=s) for s in range(3)]
    summary = run_many(store, configs, progress=False)
    assert summary.n_skipped == 1 and summary.n_finished == 2 and summary.n_failed == 0
    summary = run_many(store, configs + configs, progress=False)  # duplicates run once
    assert summary.n_skipped == 3 and summary.n_finished == 0 and len(summary.results) == 3
    assert sorted(summary.run_ids) == sorted(r.id for r in store.list_runs())


def test_bad_run_is_marked_failed_and_others_continue(store):
    bad = make_config(method_params={"no_such_option": 1})
    with pytest.raises(TypeError, match="no_such_option"):
        run_one(store, bad)
    assert store.find_run(bad).status == "failed"
    summary = run_many(store, [bad, make_config(seed=1, budget=3)], progress=False)
    assert summary.n_failed == 1 and summary.n_finished == 1
    assert summary.errors[0][0] == bad and "no_such_option" in summary.errors[0][1]


def test_problem_lookup_errors(store):
    with pytest.raises(ValueError, match="cannot be imported"):
        run_one(store, make_config(problem="_hdbo_test_problems:missing"))
    with pytest.raises(TypeError, match="not a hdbo Problem"):
        run_one(store, make_config(problem="_hdbo_test_problems:not_a_problem"))


def test_two_workers_equal_one_worker(tmp_path):
    configs = [make_config(seed=s, budget=6, problem=p) for s in range(3) for p in (QUAD, FLAKY)]
    serial = run_many(tmp_path / "serial.db", configs, workers=1, progress=False)
    parallel = run_many(tmp_path / "parallel.db", configs, workers=2, progress=False)
    assert serial.n_finished == parallel.n_finished == len(configs)
    assert parallel.n_failed == 0
    with RunStore(tmp_path / "serial.db") as a, RunStore(tmp_path / "parallel.db") as b:
        for cfg in configs:
            ea, eb = _trace(a, cfg), _trace(b, cfg)
            assert_array_equal(ea.X, eb.X)
            assert_array_equal(ea.y, eb.y)
            assert_array_equal(ea.failed, eb.failed)
            assert b.find_run(cfg).status == "finished"


def test_run_many_argument_checks(tmp_path):
    with pytest.raises(ValueError, match="workers must be an int >= 1"):
        run_many(tmp_path / "x.db", [], workers=0)
    with pytest.raises(ValueError, match="in-memory store"):
        run_many(":memory:", [make_config(seed=0), make_config(seed=1)], workers=2, progress=False)
    with pytest.raises(TypeError, match="RunConfig"):
        run_many(tmp_path / "x.db", [{"seed": 0}])


def test_progress_counter_on_a_tty(tmp_path, monkeypatch, capsys):
    """Without tqdm the progress is a one-line counter on stderr, shown only on a TTY."""
    import io

    from hdbo.experiments import runner

    class FakeTTY(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    fake = FakeTTY()
    monkeypatch.setattr(runner.sys, "stderr", fake)
    run_many(tmp_path / "p.db", [make_config(seed=s, budget=2) for s in range(2)], progress=True)
    assert "[1/2]" in fake.getvalue() and "[2/2]" in fake.getvalue()
    fake2 = FakeTTY()
    monkeypatch.setattr(runner.sys, "stderr", fake2)
    run_many(tmp_path / "q.db", [make_config(seed=0, budget=2)], progress=False)
    assert fake2.getvalue() == ""


def test_killed_after_last_evaluation_finishes_without_new_evaluations(store):
    """A process killed between the last evaluation and marking the run finished."""
    cfg = make_config(budget=4)
    first = run_one(store, cfg)
    x_before = store.load_evaluations(first.run_id).X
    store.fail_run(first.run_id, "killed")
    again = run_one(store, cfg)
    assert again.status == "finished" and again.resumed_from == 4 and not again.skipped
    assert_array_equal(store.load_evaluations(first.run_id).X, x_before)
