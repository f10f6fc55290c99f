"""The runner: seeding, failure policy, exact resume, skipping finished runs, parallel workers."""

from __future__ import annotations

import io
import re
import sys
import time
from multiprocessing import get_context

import _hdbo_test_problems as toy
import numpy as np
import pytest
from _fast_options import RUNNER_OPTIONS, method_params
from _hdbo_test_problems import FLAKY, MALLOC_PROBE, QUAD, SLOW, make_config
from numpy.testing import assert_array_equal

from hdbo.experiments.runner import method_seed, noise_generator, run_many, run_one
from hdbo.experiments.store import RunOwner, RunStore
from hdbo.methods import get_method_class, make_method
from hdbo.methods.gp_based import GPMethod


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


def _runner_options(method: str) -> dict:
    """Options for the 2-D flaky problem: GP methods leave the initial design early and refit often."""
    params = {"n_init": 4, "refit_every": 2} if issubclass(get_method_class(method), GPMethod) else {}
    params.update(RUNNER_OPTIONS.get(method, {}))
    return params


@pytest.mark.filterwarnings("ignore:.*proposed point already failed once:RuntimeWarning")
@pytest.mark.parametrize("method", method_params())
def test_every_method_resumes_exactly(tmp_path, method):
    """The runner contract for each registered method: interrupted + resumed == uninterrupted.

    The interrupt comes after 8 evaluations, with a failed evaluation before it; for GP methods
    whose model is refitted within those 8 evaluations, the stored state holds a refitted model,
    so hyperparameters, the refit schedule and the failure all go through the store.
    """
    params = _runner_options(method)
    for seed in range(1, 11):  # the first seed (from 1) whose run fails before the interrupt
        cfg = make_config(method=method, problem=FLAKY, seed=seed, budget=12,
                          problem_params={"dim": 2, "noise_std": 0.01}, method_params=params)
        with RunStore(tmp_path / "a.db") as s:
            run_one(s, cfg)
            ref = _trace(s, cfg)
        if ref.failed[:8].any():
            break
    assert ref.failed[:8].any(), "the test needs a failed evaluation before the interrupt"
    with RunStore(tmp_path / "b.db") as s:
        toy.TRIGGER["countdown"] = 9  # the 9th objective call raises: 8 evaluations stored
        with pytest.raises(KeyboardInterrupt):
            run_one(s, cfg)
        rec = s.find_run(cfg)
        assert rec.status == "failed" and rec.n_evaluations == 8
        internal = rec.method_state["internal"]
        if {"n_init", "refit_every"} <= set(params) and params["n_init"] + params["refit_every"] < 8 and "gp" in internal:
            assert internal["gp"] is not None  # a fitted model goes through the store
            # (with the default refit schedule, whether it was refitted after the initial design
            # within these 8 evaluations depends on where the failures fall)
        result = run_one(s, cfg)
        assert result.resumed_from == 8 and result.status == "finished"
        got = _trace(s, cfg)
    assert_array_equal(got.X, ref.X)
    assert_array_equal(got.y, ref.y)
    assert_array_equal(got.failed, ref.failed)
    assert got.errors == ref.errors


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
    with pytest.raises(ValueError, match="unknown problem 'toy-missing'; available problems: .*register_problem"):
        run_one(store, make_config(problem="toy-missing"))
    with pytest.raises(ValueError, match="looks like 'module:attr'.*--plugin MODULE"):
        run_one(store, make_config(problem="_hdbo_test_problems:quadratic"))
    with pytest.raises(TypeError, match="returned str, not a Problem"):
        run_one(store, make_config(problem="toy-not-a-problem"))


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
    for bad in (-1.0, float("nan"), "5", True):
        with pytest.raises(ValueError, match="dask_chunk_seconds must be a number >= 0"):
            run_many(tmp_path / "x.db", [], dask_chunk_seconds=bad)
    with pytest.raises(TypeError, match="RunConfig"):
        run_many(tmp_path / "x.db", [{"seed": 0}])


def test_workers_send_evaluations_to_an_in_memory_store(tmp_path):
    """Only the driver writes: worker processes run into a store they could not even open."""
    configs = [make_config(seed=s, budget=5, problem=FLAKY) for s in range(3)]
    with RunStore(":memory:") as memory:
        summary = run_many(memory, configs, workers=2, progress=False)
        assert summary.n_finished == 3 and summary.n_failed == 0
        run_many(tmp_path / "serial.db", configs, progress=False)
        with RunStore(tmp_path / "serial.db") as serial:
            for cfg in configs:
                rec = memory.find_run(cfg)
                assert rec.status == "finished" and rec.owner is None and rec.wall_seconds > 0
                assert rec.method_state == serial.find_run(cfg).method_state
                a, b = _trace(memory, cfg), _trace(serial, cfg)
                assert_array_equal(a.X, b.X)
                assert_array_equal(a.y, b.y)
                assert_array_equal(a.failed, b.failed)
                assert a.errors == b.errors


def test_progress_counts_evaluations_in_ci_logs(tmp_path, monkeypatch, no_tqdm):
    """Not a TTY: a line per 10% of the evaluations, the run's best regret, nothing redrawn."""
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    run_many(tmp_path / "p.db", [make_config(seed=s, budget=5) for s in range(2)], progress=True)
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue()
    assert [line.split()[1] for line in lines] == [f"{n}/10" for n in range(1, 11)] + ["10/10"]
    assert lines[-2].startswith("hdbo: 10/10 eval (100%)")
    assert "[1/2 runs]" in lines[-2] and "seed 1: regret" in lines[-2]
    assert lines[-1].startswith("hdbo: 10/10 eval (100%)") and lines[-1].endswith("[2/2 runs]")


def test_progress_total_is_the_remaining_budget(tmp_path, monkeypatch, no_tqdm):
    """A resumed run counts only its missing evaluations; a failing run leaves the total."""
    path = tmp_path / "p.db"
    half = make_config(seed=0, budget=6)
    toy.TRIGGER["countdown"] = 5
    with RunStore(path) as s, pytest.raises(KeyboardInterrupt):
        run_one(s, half)
    bad = make_config(seed=1, method_params={"no_such_option": 1})
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    summary = run_many(path, [half, bad, make_config(seed=2, budget=3)], progress=True)
    assert summary.n_failed == 1
    lines = log.getvalue().splitlines()
    assert lines[0].startswith("hdbo: 2/13 eval")  # 2 + 8 + 3 missing evaluations at first,
    assert lines[-1].startswith("hdbo: 5/5 eval (100%)")  # then the failed run's 8 leave the total


def test_progress_on_a_terminal_without_tqdm(tmp_path, monkeypatch, no_tqdm, fake_tty):
    tty = fake_tty()
    monkeypatch.setattr(sys, "stderr", tty)
    run_many(tmp_path / "p.db", [make_config(seed=s, budget=3) for s in range(2)], progress=True)
    text = tty.getvalue()
    assert text.startswith("\r") and text.endswith("\n") and text.count("\n") == 1
    assert "hdbo: 6/6 eval (100%)" in text.rsplit("\r", 1)[-1]
    quiet = fake_tty()
    monkeypatch.setattr(sys, "stderr", quiet)
    run_many(tmp_path / "q.db", [make_config(seed=0, budget=2)], progress=False)
    assert quiet.getvalue() == ""


def test_progress_with_two_workers(tmp_path, monkeypatch, no_tqdm):
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    configs = [make_config(seed=s, budget=4, problem=SLOW, problem_params={"dim": 2, "delay": 0.02})
               for s in range(3)]
    summary = run_many(tmp_path / "w.db", configs, workers=2, progress=True)
    assert summary.n_finished == 3
    lines = log.getvalue().splitlines()
    assert lines[-1].startswith("hdbo: 12/12 eval (100%)") and "[3/3 runs]" in lines[-1]
    counts = [int(line.split()[1].split("/")[0]) for line in lines]
    assert counts == sorted(counts)


# ---------------------------------------------------------------------------- claims
def _set_owner(store: RunStore, run_id: int, host: str, pid: int, heartbeat: float) -> None:
    """Make the run look claimed by another process (as a second `hdbo run` would leave it)."""
    store._conn.execute(
        "UPDATE runs SET status = 'pending', owner_host = NULL, owner_pid = NULL WHERE id = ?", (run_id,)
    )
    assert store.claim_run(run_id, owner=RunOwner(host, pid)).acquired
    store._conn.execute("UPDATE runs SET heartbeat_at = ? WHERE id = ?", (heartbeat, run_id))


def _half_done(store: RunStore, cfg, k: int = 3):
    """A run interrupted after ``k`` evaluations."""
    toy.TRIGGER["countdown"] = k + 1
    with pytest.raises(KeyboardInterrupt):
        run_one(store, cfg)
    return store.find_run(cfg)


def test_live_claim_on_another_host_is_left_alone(store):
    cfg = make_config(budget=6)
    rec = _half_done(store, cfg)
    _set_owner(store, rec.id, "other-host", 4242, time.time() - 60)
    result = run_one(store, cfg)
    assert result.running_elsewhere and not result.skipped and result.status == "running"
    assert (result.owner.host, result.owner.pid) == ("other-host", 4242)
    after = store.get_run(rec.id)
    assert after.status == "running" and after.n_evaluations == 3 and after.error is None
    assert after.owner == result.owner
    summary = run_many(store, [cfg], progress=False)
    assert summary.n_running_elsewhere == 1 and summary.n_failed == 0 and summary.n_finished == 0
    assert "1 running elsewhere" in str(summary)


def test_stale_claim_is_taken_over_and_resumed_exactly(tmp_path):
    cfg = make_config(budget=6, problem_params={"dim": 3, "noise_std": 0.1})
    with RunStore(tmp_path / "ref.db") as s:
        run_one(s, cfg)
        ref = _trace(s, cfg)
    with RunStore(tmp_path / "x.db") as s:
        rec = _half_done(s, cfg)
        _set_owner(s, rec.id, "other-host", 4242, time.time() - 60)
        result = run_one(s, cfg, stale_after=30.0)  # heartbeat 60 s old: that host is gone
        assert result.status == "finished" and result.resumed_from == 3 and not result.running_elsewhere
        assert s.get_run(rec.id).owner is None  # released when finished
        assert_array_equal(_trace(s, cfg).X, ref.X)
        assert_array_equal(_trace(s, cfg).y, ref.y)


def test_claims_on_this_host_follow_the_process_id(store):
    import socket
    import subprocess

    cfg = make_config(budget=5)
    rec = _half_done(store, cfg)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        _set_owner(store, rec.id, socket.gethostname(), other.pid, 0.0)  # alive, however old the heartbeat
        assert run_one(store, cfg).running_elsewhere
    finally:
        other.kill()
        other.wait()
    _set_owner(store, rec.id, socket.gethostname(), other.pid, time.time())  # process gone, fresh heartbeat
    result = run_one(store, cfg)
    assert result.status == "finished" and result.resumed_from == 3


def test_claim_taken_over_mid_run_stops_without_failing_the_run(store):
    """A process judged dead that is in fact alive notices at its next evaluation and backs off."""
    cfg = make_config(budget=8)
    run = store.get_or_create_run(cfg)

    def taken_over_after_three(ev):
        if ev.t == 2:
            _set_owner(store, run.id, "other-host", 4242, time.time())

    result = run_one(store, cfg, callback=taken_over_after_three)
    assert result.running_elsewhere and result.owner.host == "other-host"
    rec = store.get_run(run.id)
    assert rec.status == "running" and rec.n_evaluations == 3 and rec.error is None
    assert rec.owner.host == "other-host"


def test_a_second_process_leaves_a_running_run_alone(tmp_path):
    """Two processes on one store: the second skips the run instead of failing it."""
    path = tmp_path / "two.db"
    cfg = make_config(problem=SLOW, budget=30, problem_params={"dim": 2, "delay": 0.1})
    RunStore(path).close()
    proc = get_context("spawn").Process(target=run_many, args=(str(path), [cfg]),
                                           kwargs={"progress": False, "plugins": ["_hdbo_test_problems"]})
    proc.start()
    try:
        with RunStore(path) as s:
            deadline = time.monotonic() + 120
            rec = s.find_run(cfg)
            while rec is None or rec.n_evaluations == 0:
                assert proc.is_alive() and time.monotonic() < deadline
                time.sleep(0.05)
                rec = s.find_run(cfg)
            assert rec.status == "running" and rec.owner.pid == proc.pid
            result = run_one(s, cfg)
            assert result.running_elsewhere and result.owner.pid == proc.pid
            summary = run_many(s, [cfg], progress=False)
            assert summary.n_running_elsewhere == 1 and summary.n_failed == 0
            assert s.find_run(cfg).status == "running"
        proc.join(120)
        assert proc.exitcode == 0
        with RunStore(path) as s:
            rec = s.find_run(cfg)
            assert rec.status == "finished" and rec.error is None and rec.owner is None
            assert_array_equal(s.load_evaluations(rec.id).t, np.arange(30))
    finally:
        if proc.is_alive():
            proc.terminate()
            proc.join()


def test_killed_after_last_evaluation_finishes_without_new_evaluations(store):
    """A process killed between the last evaluation and marking the run finished."""
    cfg = make_config(budget=4)
    first = run_one(store, cfg)
    x_before = store.load_evaluations(first.run_id).X
    store.fail_run(first.run_id, "killed")
    again = run_one(store, cfg)
    assert again.status == "finished" and again.resumed_from == 4 and not again.skipped
    assert_array_equal(store.load_evaluations(first.run_id).X, x_before)


class _StopsEarly(get_method_class("random")):
    """Random search that is done after ``n_stop`` evaluations (Method.done)."""

    name = "test-stops-early"

    def __init__(self, bounds, *, n_stop: int = 3, **kwargs):
        super().__init__(bounds, **kwargs)
        self.n_stop = n_stop

    @property
    def done(self) -> bool:
        return self.n_told >= self.n_stop


@pytest.fixture
def stops_early(monkeypatch):
    from hdbo.methods import registry

    monkeypatch.setitem(registry._REGISTRY, _StopsEarly.name, _StopsEarly)
    return _StopsEarly.name


def test_method_done_ends_the_run_early(store, stops_early):
    from hdbo.experiments.report import aggregate

    cfg = make_config(method=stops_early, method_params={"n_stop": 3}, budget=8)
    result = run_one(store, cfg)
    assert result.status == "finished" and result.n_evaluations == 3
    assert run_one(store, cfg).skipped  # finished: a rerun does not extend it
    (group,) = aggregate(store)
    assert group.curves["simple_regret"].shape == (1, 8)
    # the curve keeps the last value after the method stopped
    assert np.all(group.curves["simple_regret"][0, 3:] == group.curves["simple_regret"][0, 2])
    # the report's T column gives the evaluations used next to the budget
    assert group.evaluations_used == [3] and group.t_column == "3 of 8"


# ---------------------------------------------------------------------------- names and plugins (issue 17)
PLUGIN_SOURCE = '''
import numpy as np
from hdbo.problems import Problem, register_problem
from hdbo.space import Box


def wave(*, dim, seed=0, freq=3.0):
    """A rippled bowl on [0, 1]^dim, centred at 0.5 (maximum 0 there)."""
    def fun(X):
        return -np.sum((X - 0.5) ** 2, axis=1) + 0.1 * np.cos(freq * (X[:, 0] - 0.5)) - 0.1

    return Problem(fun, Box.unit(dim), name="wave", optimum_value=0.0)


register_problem("{name}", wave)
'''


@pytest.fixture
def plugin_module(write_plugin):
    """A plugin module in tmp_path registering the problem ``<module>-wave``; registries restored after."""
    return write_plugin("hdbo_test_plugin", PLUGIN_SOURCE.replace('"{name}"', '"{name}-wave"'))


def test_run_refuses_module_attr_problems_without_importing(tmp_path, monkeypatch, store):
    marker = tmp_path / "imported"
    (tmp_path / "hdbo_probe_runner_mod.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('x')\ndef factory(**kw):\n    raise SystemExit\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("hdbo_probe_runner_mod:factory", "os:system"):
        cfg = make_config(problem=name, problem_params={"command": f"touch {tmp_path / 'pwned'}"})
        with pytest.raises(ValueError, match="looks like 'module:attr'"):
            run_one(store, cfg)
    summary = run_many(store, [make_config(problem="os:system", seed=s) for s in range(2)], workers=2,
                       progress=False)
    assert summary.n_failed == 2 and all("looks like 'module:attr'" in e for _, e in summary.errors)
    assert not marker.exists() and not (tmp_path / "pwned").exists()
    assert "hdbo_probe_runner_mod" not in sys.modules


def test_plugin_problems_run_serially_and_in_two_workers(tmp_path, plugin_module):
    from hdbo.experiments.plugins import load_plugins, loaded_plugins

    problem = f"{plugin_module}-wave"
    configs = [make_config(problem=problem, problem_params={"dim": 2}, seed=s, budget=5) for s in range(3)]
    with pytest.raises(ValueError, match=f"unknown problem '{problem}'.*--plugin MODULE"):
        run_one(RunStore(":memory:"), configs[0])
    load_plugins([plugin_module])
    assert plugin_module in loaded_plugins()
    serial = run_many(tmp_path / "serial.db", configs, workers=1, progress=False)
    # spawned workers do not have the registration: run_many has them import the loaded plugins
    parallel = run_many(tmp_path / "parallel.db", configs, workers=2, progress=False)
    assert serial.n_finished == parallel.n_finished == 3 and parallel.n_failed == 0, parallel.errors
    with RunStore(tmp_path / "serial.db") as a, RunStore(tmp_path / "parallel.db") as b:
        for cfg in configs:
            assert_array_equal(_trace(a, cfg).y, _trace(b, cfg).y)
    # without the plugin the workers do not know the problem: every run fails with the name
    lost = run_many(tmp_path / "lost.db", configs, workers=2, progress=False, plugins=[])
    assert lost.n_failed == 3 and all(f"unknown problem '{problem}'" in e for _, e in lost.errors)


def test_load_plugins_argument_errors():
    from hdbo.experiments.plugins import load_plugins

    with pytest.raises(ValueError, match="cannot be imported.*PYTHONPATH"):
        load_plugins(["hdbo_no_such_plugin_module"])
    for bad in ("os:system", "./my_problems.py", ".relative", ""):
        with pytest.raises(ValueError, match="plugin must be an absolute module name"):
            load_plugins([bad])
    with pytest.raises(TypeError, match="plugin must be a module name"):
        load_plugins([3])
    with pytest.raises(ValueError, match="must not contain ':'"):
        from hdbo.problems import register_problem

        register_problem("mod:attr", toy.quadratic)


# ---------------------------------------------------------------------------- worker processes that die (issue 17)
KILLER_SOURCE = '''
import multiprocessing
import os
import signal

import numpy as np
from hdbo.problems import Problem, register_problem
from hdbo.space import Box


def killer(*, dim=2, seed=0, at=1, sig="SIGKILL"):
    """-||x - 0.5||^2 on [0, 1]^dim; in a worker process (never in the test's own process),
    the ``at``-th evaluation of this instance sends ``sig`` to the process evaluating it."""
    calls = [0]

    def fun(X):
        calls[0] += 1
        if calls[0] >= at and multiprocessing.parent_process() is not None:
            if sig == "SIGINT":  # a shell's background job starts with SIGINT ignored: restore Python's handler
                signal.signal(signal.SIGINT, signal.default_int_handler)
            os.kill(os.getpid(), getattr(signal, sig))
        return -np.sum((X - 0.5) ** 2, axis=1)

    return Problem(fun, Box.unit(dim), name="killer", optimum_value=0.0, optimizer=np.full(dim, 0.5))


register_problem("{name}", killer)
'''


@pytest.fixture
def killer_problem(write_plugin):
    """A loaded plugin registering ``<module>-killer``; registries and loaded plugins restored after."""
    from hdbo.experiments import plugins

    name = write_plugin("hdbo_killer_plugin", KILLER_SOURCE.replace('"{name}"', '"{name}-killer"'))
    plugins.load_plugins([name])
    return f"{name}-killer"


@pytest.mark.parametrize(
    "sig, how",
    [("SIGKILL", r"was killed by signal 9 \(SIGKILL\)"), ("SIGINT", r"was interrupted \(KeyboardInterrupt\)")],
)
def test_a_dead_worker_takes_only_its_own_run_down(tmp_path, killer_problem, sig, how):
    """Its run is recorded as interrupted (evaluations kept), the others finish in a new
    worker and the old one; the next call resumes the run to the uninterrupted trace."""
    doomed = make_config(problem=killer_problem, problem_params={"dim": 2, "at": 3, "sig": sig}, budget=6)
    configs = [make_config(seed=0, budget=6), doomed, *(make_config(seed=s, budget=6) for s in (1, 2, 3))]
    path = tmp_path / "w.db"
    summary = run_many(path, configs, workers=2, progress=False)
    assert summary.n_finished == 4 and summary.n_failed == 0 and summary.n_interrupted == 1
    (config, text), = summary.interrupted
    assert config == doomed
    assert re.fullmatch(rf"interrupted: worker process \d+ {how} \(after 2 of 6 evaluations\)", text)
    assert str(summary).startswith("5 runs: 4 finished now, 0 already finished, 0 failed, 1 interrupted")
    with RunStore(path) as s:
        rec = s.find_run(doomed)
        assert rec.status == "failed" and rec.error.startswith("interrupted") and rec.n_evaluations == 2
        assert rec.owner is None
        assert all(s.find_run(c).status == "finished" for c in configs if c is not doomed)
    again = run_many(path, configs, workers=2, progress=False)  # one run left: executed here, unarmed
    assert again.n_finished == 1 and again.n_skipped == 4 and again.n_interrupted == 0
    assert [r.resumed_from for r in again.results if not r.skipped] == [2]
    run_many(tmp_path / "clean.db", [doomed], progress=False)
    with RunStore(path) as a, RunStore(tmp_path / "clean.db") as b:
        assert_array_equal(_trace(a, doomed).X, _trace(b, doomed).X)
        assert_array_equal(_trace(a, doomed).y, _trace(b, doomed).y)


def test_runs_that_kill_every_worker_are_not_retried(tmp_path, killer_problem):
    """Two runs killing their worker at the first evaluation: each is recorded once, the
    call ends, and the healthy runs finish."""
    doomed = [make_config(problem=killer_problem, problem_params={"dim": 2, "at": 1}, seed=s, budget=6) for s in (0, 1)]
    configs = [doomed[0], make_config(seed=0, budget=4), doomed[1], make_config(seed=1, budget=4)]
    summary = run_many(tmp_path / "w.db", configs, workers=2, progress=False)
    # the two doomed runs die in whichever order the workers reach them
    assert sorted((c for c, _ in summary.interrupted), key=lambda c: c.seed) == doomed
    assert summary.n_finished == 2
    assert all(t.endswith("(after 0 of 6 evaluations)") for _, t in summary.interrupted)
    with RunStore(tmp_path / "w.db") as s:
        assert [s.find_run(c).status for c in configs] == ["failed", "finished", "failed", "finished"]


def test_record_interrupted_respects_a_live_owner(store):
    from hdbo.experiments.runner import _record_interrupted

    cfg = make_config(budget=6)
    rec = _half_done(store, cfg)  # 3 evaluations, then KeyboardInterrupt
    live = RunOwner("other-host", 4242)
    _set_owner(store, rec.id, live.host, live.pid, time.time())  # another host, fresh heartbeat: alive
    text = _record_interrupted(store, rec.id, cfg, "worker process 1 was killed by signal 9 (SIGKILL)")
    assert text == "interrupted: worker process 1 was killed by signal 9 (SIGKILL) (after 3 of 6 evaluations)"
    assert store.get_run(rec.id).status == "running"  # not the caller's to change
    _record_interrupted(store, rec.id, cfg, "lost", owner=RunOwner("vm-x", 1))  # not the owner either
    assert store.get_run(rec.id).status == "running"
    _record_interrupted(store, rec.id, cfg, "lost", owner=live)
    after = store.get_run(rec.id)
    assert after.status == "failed" and after.error == "interrupted: lost (after 3 of 6 evaluations)"
    assert store.n_evaluations(rec.id) == 3 and run_one(store, cfg).resumed_from == 3


def test_malloc_is_tuned_where_runs_are_computed(tmp_path, monkeypatch):
    """``hdbo._malloc.tune_malloc``: in this process for serial runs (only when it runs
    something), in the worker processes for parallel ones, never in their driver."""
    import platform

    from hdbo import _malloc
    from hdbo.experiments import runner

    glibc_64 = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc" and sys.maxsize > 2**32
    calls = []
    monkeypatch.setattr(runner, "tune_malloc", lambda: calls.append(1) or True)
    # Spawned workers inherit this environment: no malloc settings of a user (or of an earlier
    # test's Dask nanny, which sets MALLOC_TRIM_THRESHOLD_) may stop them from tuning.
    for v in ("HDBO_MALLOC_TUNING", "GLIBC_TUNABLES", *_malloc._USER_VARIABLES):
        monkeypatch.delenv(v, raising=False)
    config = make_config(problem=MALLOC_PROBE, problem_params={"dim": 2}, budget=3)
    assert run_many(tmp_path / "s.db", [config], progress=False).n_finished == 1
    assert calls == [1]
    run_many(tmp_path / "s.db", [config], progress=False)  # already finished: nothing to run
    assert calls == [1]
    configs = [make_config(problem=MALLOC_PROBE, problem_params={"dim": 2}, budget=3, seed=s) for s in (1, 2)]
    assert run_many(tmp_path / "p.db", configs, workers=2, progress=False).n_finished == 2
    assert calls == [1]  # not the driver
    with RunStore(tmp_path / "p.db") as store:
        for cfg in configs:
            ys = _trace(store, cfg).y
            assert ys.tolist() == [float(glibc_64)] * 3  # the worker process tuned itself

