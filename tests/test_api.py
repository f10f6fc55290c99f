"""Public API: minimize / maximize / Optimizer, argument validation and the failure policy."""

from __future__ import annotations

import functools
import io
import json
import sys
import types

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import hdbo
from hdbo import Optimizer, maximize, minimize
from hdbo._progress import Progress

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


@functools.lru_cache(maxsize=1)
def _optimizer_state_text() -> str:
    opt = Optimizer(BOUNDS, method="gp-ucb", seed=5, n_init=2, acq_budget=50)
    for i in range(4):
        x = opt.ask()
        opt.tell(x, None if i == 1 else sphere(x), error="lab instrument offline" if i == 1 else None)
    return json.dumps(opt.state_dict())


def _optimizer_state() -> dict:
    """A saved Optimizer (gp-ucb, 4 evaluations, the second failed), fresh for each use."""
    return json.loads(_optimizer_state_text())


def _with(state: dict, path: tuple, value=None, *, delete: bool = False) -> dict:
    import copy

    out = copy.deepcopy(state)
    node = out
    for key in path[:-1]:
        node = node[key]
    if delete:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


def test_optimizer_state_round_trip_and_legacy_format():
    state = _optimizer_state()
    assert state["format"] == "hdbo.optimizer/1" and state["errors"] == [[1, "lab instrument offline"]]
    resumed = Optimizer.from_state(state)
    assert resumed.direction == "minimize" and resumed.state_dict() == state
    legacy = _with(state, ("format",), delete=True)  # written before the field existed
    assert Optimizer.from_state(legacy).state_dict() == state


@pytest.mark.parametrize(
    ("path", "value", "match"),
    [
        ((), "hello", r"state must be a dict .*got str"),
        ((), None, r"state must be a dict"),
        (("direction",), "sideways", r"state\['direction'\] must be 'minimize' or 'maximize', got 'sideways'"),
        (("direction",), 1, r"state\['direction'\]"),
        (("format",), "hdbo.optimizer/9", r"state\['format'\]"),
        (("errors",), 5, r"state\['errors'\] must be a list"),
        (("errors",), [[0, "x"]], r"state\['errors'\]\[0\] must name a failed evaluation"),
        (("errors",), [[7, "x"]], r"state\['errors'\]\[0\] must name a failed evaluation"),
        (("errors",), [["1", "x"]], r"state\['errors'\]\[0\] must be an \[index, message\] pair"),
        (("errors",), [[1, 2]], r"state\['errors'\]\[0\]"),
        (("errors",), [[1]], r"state\['errors'\]\[0\]"),
        (("extra",), 1, r"unknown field\(s\) 'extra'"),
        (("method",), "x", r"state\['method'\] must be a dict"),
        (("method", "internal"), "x", r"state\['method'\]\['internal'\] must be a dict"),
        (("method", "internal"), {}, r"state\['method'\]\['internal'\] lacks the entry 'n_at_refit' \(method 'gp-ucb'\)"),
        (("method", "history", "X", 0, 0), 5.0, r"state\['method'\]\['history'\]\['X'\] has points outside"),
        (("method", "history", "y", 0), "a", r"state\['method'\]\['history'\]\['y'\]\[0\] must be a number"),
        (("method", "rng", "bit_generator"), "seed", r"state\['method'\]\['rng'\]\['bit_generator'\]"),
        (("method", "rng", "state"), {"state": "x", "inc": 1}, r"state\['method'\]\['rng'\] is not a valid"),
        (("method", "method"), "nope", r"state\['method'\]\['method'\] names no registered method"),
        (("method", "n_told"), 2, r"state\['method'\]\['n_told'\] is 2"),
        (("method", "params", "n_init"), -1, r"state\['method'\]\['params'\].*n_init"),
    ],
)
def test_malformed_optimizer_state_raises_state_error_naming_the_field(path, value, match):
    from hdbo.exceptions import StateError

    state = value if path == () else _with(_optimizer_state(), path, value)
    with pytest.raises(StateError, match=match):
        Optimizer.from_state(state)


@pytest.mark.parametrize("field", ["direction", "errors", "method"])
def test_optimizer_state_without_a_field(field):
    from hdbo.exceptions import StateError

    with pytest.raises(StateError, match=f"lacks the field.*'{field}'"):
        Optimizer.from_state(_with(_optimizer_state(), (field,), delete=True))


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


def test_ask_twice_without_tell_accounts_for_the_pending_point():
    """The first point is pending when asking again: a deterministic search moves elsewhere."""
    opt = Optimizer(BOUNDS, method="gp-ucb", seed=0, n_init=2, acq_budget=50, maximizer="direct")
    for _ in range(3):
        x = opt.ask()
        opt.tell(x, sphere(x))
    first, second = opt.ask(), opt.ask()
    assert np.max(np.abs(first - second)) > 1e-3
    assert_array_equal(opt.pending, np.vstack([first, second]))


# ---------------------------------------------------------------------------- progress display
# hdbo._progress.Progress serves minimize(progress=True) and the experiment runner.
def test_progress_log_mode_writes_a_line_per_tenth(no_tqdm):
    log = io.StringIO()
    with Progress(20, desc="job", unit="eval", stream=log) as bar:
        assert bar.mode == "log"
        for i in range(20):
            bar.update(postfix=f"best={i}")
    lines = log.getvalue().splitlines()
    assert [line.split()[1] for line in lines] == [f"{n}/20" for n in range(2, 21, 2)]
    assert lines[0].startswith("job: 2/20 eval (10%) ") and ", eta " in lines[0] and lines[0].endswith("best=1")
    assert lines[-1].startswith("job: 20/20 eval (100%) ") and lines[-1].endswith("best=19")
    assert "eta" not in lines[-1]


def test_progress_log_mode_with_a_shrinking_total(no_tqdm):
    log = io.StringIO()
    bar = Progress(100, stream=log, log_every=0.25)
    bar.update(30)
    bar.set_total(40)  # 30/40 = 75%
    bar.update(10)
    bar.close()
    bar.close()  # idempotent
    assert [line.split()[0] for line in log.getvalue().splitlines()] == ["30/100", "30/40", "40/40"]


def test_progress_line_mode_redraws_in_place(no_tqdm, monkeypatch, fake_tty):
    tty = fake_tty()
    bar = Progress(3, desc="d", stream=tty, min_interval=0.0)
    assert bar.mode == "line"
    for _ in range(3):
        bar.update()
    bar.close()
    text = tty.getvalue()
    assert text.count("\r") == 4 and text.endswith("\n") and text.count("\n") == 1
    assert text.rsplit("\r", 1)[-1].startswith("d: 3/3 it (100%)")


def test_progress_off():
    log = io.StringIO()
    for bar in (Progress(5, enabled=False, stream=log), Progress(0, stream=log)):
        bar.update(postfix="x")
        bar.close()
        assert bar.mode == "off"
    assert log.getvalue() == ""
    with pytest.raises(ValueError, match="total must be an int >= 0"):
        Progress(-1)


def test_progress_uses_tqdm_on_a_terminal_when_installed(monkeypatch, fake_tty):
    calls = []

    class FakeTqdm:
        def __init__(self, **kwargs):
            calls.append(("init", kwargs["total"], kwargs["unit"]))
            self.total = kwargs["total"]

        def update(self, n):
            calls.append(("update", n))

        def set_postfix_str(self, text, refresh=True):
            calls.append(("postfix", text))

        def refresh(self):
            calls.append(("refresh", self.total))

        def close(self):
            calls.append(("close",))

    module = types.ModuleType("tqdm.auto")
    module.tqdm = FakeTqdm
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", module)
    bar = Progress(4, unit="eval", stream=fake_tty())
    assert bar.mode == "tqdm"
    bar.update(2, postfix="best=1")
    bar.set_total(3)
    bar.close()
    assert calls == [("init", 4, "eval"), ("postfix", "best=1"), ("update", 2), ("refresh", 3), ("close",)]
    assert Progress(4, stream=io.StringIO()).mode == "log"  # never a tqdm bar in a log


def test_minimize_progress_shows_the_best_value(capsys, no_tqdm):
    res = minimize(sphere, BOUNDS, method="random", budget=20, seed=0, progress=True)
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 10 and "\r" not in err  # stderr is captured, not a TTY
    assert lines[-1].startswith("hdbo random: 20/20 eval (100%)")
    assert lines[-1].endswith(f"best={res.fun:.6g}")
    minimize(sphere, BOUNDS, method="random", budget=5, seed=0)
    assert capsys.readouterr().err == ""  # progress=False by default


def test_minimize_stops_when_the_method_is_done(monkeypatch):
    from hdbo.methods import get_method_class, registry

    class StopsEarly(get_method_class("random")):
        name = "test-stops-early"

        @property
        def done(self) -> bool:
            return self.n_told >= 4

    monkeypatch.setitem(registry._REGISTRY, StopsEarly.name, StopsEarly)
    res = hdbo.minimize(lambda x: float(np.sum(x**2)), [(-1, 1)] * 2, method=StopsEarly.name, budget=10, seed=0)
    assert res.nfev == 4 and res.status == 3 and "finished after 4" in res.message
    assert res.success


@pytest.mark.parametrize("method", ["line-bo", "gp-ucb"])
def test_direction_as_an_option_names_minimize_and_the_fix(method):
    with pytest.raises(TypeError, match=r"minimize\(\) got an unexpected keyword argument 'direction'") as info:
        hdbo.minimize(lambda x: 1.0, [(0, 1)] * 2, method=method, direction="coordinate", budget=2)
    assert ("line_direction" in str(info.value)) == (method == "line-bo")
    with pytest.raises(TypeError, match=r"maximize\(\) got an unexpected keyword argument 'direction'"):
        hdbo.maximize(lambda x: 1.0, [(0, 1)] * 2, method=method, direction="maximize", budget=2)


def test_real_numbers_of_any_type_are_values():
    import decimal
    import fractions

    res = hdbo.minimize(lambda x: fractions.Fraction(1, 2), [(0, 1)] * 2, method="random", budget=2, seed=0)
    assert res.fun == 0.5 and res.nfailed == 0
    res = hdbo.minimize(lambda x: decimal.Decimal("0.25"), [(0, 1)] * 2, method="random", budget=2, seed=0)
    assert res.fun == 0.25
    with pytest.warns(RuntimeWarning, match="recorded as failed"):
        res = hdbo.minimize(lambda x: decimal.Decimal("NaN"), [(0, 1)] * 2, method="random", budget=2, seed=0)
    assert res.nfailed == 2
    with pytest.raises(TypeError, match="fun must return a real scalar"):
        hdbo.minimize(lambda x: "0.5", [(0, 1)] * 2, method="random", budget=2, seed=0)


def test_blas_threads_option():
    """The method's proposals run with at most ``blas_threads`` BLAS threads; the objective does not."""
    import os

    seen = []

    def f(x):
        seen.append(os.environ.get("OPENBLAS_NUM_THREADS"))
        return sphere(x)

    before = os.environ.get("OPENBLAS_NUM_THREADS")
    hdbo.minimize(f, BOUNDS, method="random", budget=3, seed=0, blas_threads=1)
    assert seen == [before] * 3 and os.environ.get("OPENBLAS_NUM_THREADS") == before
    a = hdbo.minimize(sphere, BOUNDS, method="gp-ucb", budget=6, seed=0, n_init=3, acq_budget=100)
    b = hdbo.minimize(sphere, BOUNDS, method="gp-ucb", budget=6, seed=0, n_init=3, acq_budget=100, blas_threads=None)
    assert_array_equal(a.history.X, b.history.X)
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="blas_threads"):
            hdbo.minimize(sphere, BOUNDS, budget=2, blas_threads=bad)


def test_subpackages_are_reachable_from_a_bare_import_hdbo():
    # A fresh interpreter, so no earlier test has imported hdbo.problems already.
    import subprocess

    code = (
        "import sys, hdbo\n"
        "assert 'hdbo.problems' not in sys.modules\n"
        "p = hdbo.problems.get('galaxy-likelihood', dim=20)\n"
        "assert p.dim == 20\n"
        "assert 'problems' in dir(hdbo)\n"
        "try:\n"
        "    hdbo.no_such_thing\n"
        "except AttributeError as e:\n"
        "    assert 'no_such_thing' in str(e)\n"
        "else:\n"
        "    raise SystemExit('no AttributeError')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
