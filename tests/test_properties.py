"""Property-based tests (hypothesis) of the public API and the command line's argument parsing.

Each test draws arguments the way a careless or hostile user would write them: random bounds
(valid, inverted, infinite, NaN, wrong shapes and types), budgets, seeds, method options,
objective return values (finite, NaN, inf, None, raising, wrong types, extreme magnitudes),
tampered states and command lines. Every case must end in the documented result or in a
``ValueError``/``TypeError`` (``StateError`` is a ``ValueError``) whose one-line message names
the argument, never in another exception.

The ``ci`` profile (the default) is derandomized, so CI draws the same cases on every run;
``HYPOTHESIS_PROFILE=explore python -m pytest tests/test_properties.py`` draws new ones.
The example counts add up to 2,210 cases per run (about 12 s on 2 cores).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import os
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import hdbo
from hdbo.cli import main
from hdbo.exceptions import StateError

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
settings.register_profile(
    "explore",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Cheap settings per method (a few evaluations must take milliseconds, not seconds).
CHEAP: dict[str, dict[str, Any]] = {
    "random": {},
    "direct": {},
    "gp-ucb": {"n_init": 2, "acq_budget": 40, "n_restarts": 0},
    "gp-ei": {"n_init": 2, "acq_budget": 40, "n_restarts": 0},
    "add-gp-ucb": {"n_init": 2, "acq_budget": 40, "d": 1, "explore_iters": 1},
    "hesbo": {"n_init": 2, "acq_budget": 40, "d": 1},
    "rembo": {"n_init": 2, "acq_budget": 40, "d": 1},
    "line-bo": {"n_init": 2, "acq_budget": 40},
    "dropout-ucb": {"n_init": 2, "acq_budget": 40, "d": 1},
}

ARGUMENT_NAMES = ("bounds", "budget", "seed", "method", "fun", "on_error", "progress", "direction",
                  "callback", "args", "x", "y", "state", "lower", "upper")

FINITE = st.floats(allow_nan=False, allow_infinity=False, width=64)
JUNK = st.one_of(
    st.none(), st.booleans(), st.text(max_size=5), st.floats(), st.integers(-10**30, 10**30),
    st.lists(st.integers(-3, 3), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _check_error(exc: BaseException, names: tuple[str, ...] = ARGUMENT_NAMES) -> None:
    """An allowed error type, with a one-line message that names an argument."""
    assert isinstance(exc, (ValueError, TypeError)), f"{type(exc).__name__}: {exc}"
    msg = str(exc)
    assert msg and "\n" not in msg.strip(), repr(msg)
    assert any(name in msg for name in names), f"message names no argument: {msg!r}"


# ---------------------------------------------------------------------------- strategies
@st.composite
def valid_bounds(draw: Any) -> list[tuple[float, float]]:
    dim = draw(st.integers(1, 4))
    out = []
    for _ in range(dim):
        exponent = draw(st.integers(-6, 6))
        lower = draw(st.floats(-1e6, 1e6, allow_nan=False))
        width = draw(st.floats(1.0, 9.0)) * 10.0**exponent
        out.append((lower, lower + width))
    assume(all(lo < hi and np.isfinite(hi) for lo, hi in out))
    return out


BAD_BOUNDS = st.one_of(
    JUNK,
    st.lists(st.tuples(st.floats(), st.floats()), max_size=3),
    st.lists(st.lists(st.floats(-5, 5), min_size=0, max_size=4), min_size=1, max_size=3),
    st.just([(1.0, 0.0)]), st.just([(0.0, 0.0)]), st.just([(0.0, math.inf)]), st.just([(math.nan, 1.0)]),
    st.just(np.zeros((2, 3))), st.just([]), st.just([("a", "b")]),
)

OUTCOMES = st.one_of(
    FINITE,
    st.sampled_from([math.nan, math.inf, -math.inf, None, 1e300, -1e300, 1e-300, 0.0, 1e154, -1e155]),
    st.sampled_from(["raise", "str", "list", "complex", "bool", "float32", "array1", "array2"]),
)
WRONG_TYPES = {"str", "list", "complex", "array2"}


def _objective(outcomes: list[Any]) -> Any:
    """An objective that cycles through ``outcomes`` (values or named behaviours)."""
    calls = {"n": 0}

    def fun(x: np.ndarray) -> Any:
        out = outcomes[calls["n"] % len(outcomes)]
        calls["n"] += 1
        if out == "raise":
            raise RuntimeError("simulator crashed")
        if out == "str":
            return "1.0"
        if out == "list":
            return [1.0, 2.0]
        if out == "complex":
            return 1.0 + 2.0j
        if out == "bool":
            return True
        if out == "float32":
            return np.float32(x.sum())
        if out == "array1":
            return np.array([x.sum()])
        if out == "array2":
            return np.array([1.0, 2.0])
        return out

    return fun


# ---------------------------------------------------------------------------- minimize / maximize
@settings(max_examples=500)
@given(
    bounds=valid_bounds(),
    method=st.sampled_from(sorted(CHEAP)),
    budget=st.integers(1, 6),
    seed=st.one_of(st.none(), st.integers(0, 2**63)),
    outcomes=st.lists(OUTCOMES, min_size=1, max_size=6),
    maximize=st.booleans(),
)
def test_minimize_with_any_objective_behaviour(bounds, method, budget, seed, outcomes, maximize):
    fun = _objective(outcomes)
    run = hdbo.maximize if maximize else hdbo.minimize
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            res = run(fun, bounds, method=method, budget=budget, seed=seed, **CHEAP[method])
        except TypeError as exc:
            # Only a wrong return type is a TypeError here (a programming error, not a failure).
            n_wrong = [o for o in outcomes[:budget] if isinstance(o, str) and o in WRONG_TYPES]
            assert n_wrong, f"unexpected TypeError: {exc}"
            _check_error(exc, ("fun",))
            return
    lo, hi = np.asarray(bounds).T
    X, y = res.history.X, res.history.y
    assert res.nfev == len(y) == len(X) <= budget
    if res.status == 0:
        assert res.nfev == budget
    assert np.all(X >= lo) and np.all(X <= hi)
    assert res.nfailed == int(np.sum(~np.isfinite(y)))
    assert len(res.history.errors) == res.nfailed
    ok = np.isfinite(y)
    if ok.any():
        assert res.success
        assert res.fun == (np.max(y[ok]) if maximize else np.min(y[ok]))
    else:
        assert not res.success and res.status == 1 and res.x is None


@settings(max_examples=400)
@given(
    bounds=st.one_of(valid_bounds(), BAD_BOUNDS),
    method=st.one_of(st.sampled_from(sorted(CHEAP)), JUNK, st.just("no-such-method")),
    budget=st.one_of(st.integers(-3, 3), JUNK),
    seed=st.one_of(st.none(), st.integers(-5, 2**70), JUNK),
    options=st.dictionaries(
        st.sampled_from(["n_init", "acq_budget", "kernel", "beta", "d", "no_such_option", "refit_every"]),
        JUNK, max_size=2),
    on_error=st.one_of(st.sampled_from(["record", "raise"]), JUNK),
)
def test_minimize_bad_arguments_named(bounds, method, budget, seed, options, on_error):
    name = method if isinstance(method, str) and method in CHEAP else "random"
    opts = {**CHEAP.get(name, {}), **options}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            res = hdbo.minimize(lambda x: float(np.sum(x)), bounds, method=method, budget=budget, seed=seed,
                                on_error=on_error, **opts)
        except (ValueError, TypeError) as exc:
            _check_error(exc, ARGUMENT_NAMES + tuple(opts))
            return
        except Exception as exc:  # pragma: no cover - the property under test
            pytest.fail(f"{type(exc).__name__}: {exc}")
    assert 1 <= res.nfev <= budget
    lo, hi = np.asarray(bounds, dtype=float).T
    assert np.all(res.history.X >= lo) and np.all(res.history.X <= hi)


@settings(max_examples=100)
@given(
    method=st.sampled_from(sorted(CHEAP)),
    scale=st.sampled_from([1e-300, 1e-12, 1.0, 1e12, 1e300]),
    seed=st.integers(0, 3),
)
def test_extreme_magnitudes_run_and_stay_finite(method, scale, seed):
    bounds = [(0.0, 1.0)] * 3
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow/invalid warnings from numpy
        res = hdbo.minimize(lambda x: scale * float(np.sum((x - 0.3) ** 2)), bounds, method=method, budget=6,
                            seed=seed, **CHEAP[method])
    assert res.nfailed == 0 and res.nfev == 6
    assert np.isfinite(res.fun)


# ---------------------------------------------------------------------------- ask / tell
@settings(max_examples=150)
@given(
    x=st.one_of(JUNK, st.lists(st.floats(), min_size=0, max_size=4),
                st.lists(st.floats(-2, 2), min_size=3, max_size=3)),
    y=st.one_of(JUNK, FINITE, st.sampled_from([math.nan, math.inf, None, 1e300])),
)
def test_tell_validates_point_and_value(x, y):
    opt = hdbo.Optimizer([(-1.0, 1.0)] * 3, method="random", seed=0)
    try:
        opt.tell(x, y)
    except (ValueError, TypeError) as exc:
        _check_error(exc, ("x", "y", "point", "bounds"))
        return
    X, values = opt.history
    assert X.shape == (1, 3) and np.all(np.abs(X) <= 1.0)
    yy = None if y is None else float(y)
    assert (np.isnan(values[0]) and (yy is None or not np.isfinite(yy))) or values[0] == yy


# ---------------------------------------------------------------------------- tampered states
def _paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key/index path into a JSON-like object."""
    out = [prefix] if prefix else []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(obj, list) and len(obj) <= 6:
        for i, v in enumerate(obj):
            out += _paths(v, prefix + (i,))
    return out


_STATES: dict[str, dict] = {}


def _state(method: str) -> dict:
    if method not in _STATES:
        opt = hdbo.Optimizer([(-1.0, 2.0)] * 3, method=method, seed=1, budget=12, **CHEAP[method])
        for i in range(5):
            x = opt.ask()
            opt.tell(x, None if i == 2 else float(np.sum(x ** 2)))
        _STATES[method] = json.loads(json.dumps(opt.state_dict()))
    return _STATES[method]


@settings(max_examples=600)
@given(data=st.data(), method=st.sampled_from(sorted(CHEAP)))
def test_tampered_state_raises_state_error(data, method):
    state = copy.deepcopy(_state(method))
    paths = _paths(state)
    path = data.draw(st.sampled_from(paths), label="path")
    action = data.draw(st.sampled_from(["delete", "replace"]), label="action")
    parent = state
    for key in path[:-1]:
        parent = parent[key]
    if action == "delete":
        del parent[path[-1]]
    else:
        new = data.draw(st.one_of(JUNK, st.just(-1), st.just(1e300), st.just("sideways")), label="value")
        assume(new != parent[path[-1]])
        parent[path[-1]] = new
    try:
        opt = hdbo.Optimizer.from_state(state)
    except StateError as exc:
        assert str(exc) and "\n" not in str(exc).strip()
        event("StateError")
        return
    except Exception as exc:  # pragma: no cover - the property under test
        pytest.fail(f"from_state({path}, {action}) raised {type(exc).__name__}: {exc}")
    # Accepted: it must be a working optimizer inside its bounds.
    event("accepted")
    x = opt.ask()
    lo, hi = opt.bounds.lower, opt.bounds.upper
    assert x.shape == (len(lo),) and np.all(x >= lo) and np.all(x <= hi)
    assert opt.direction in ("minimize", "maximize")


@settings(max_examples=60)
@given(state=st.one_of(JUNK, st.dictionaries(st.sampled_from(["direction", "errors", "method", "x"]), JUNK)))
def test_state_of_wrong_shape_raises_state_error(state):
    with pytest.raises(StateError):
        hdbo.Optimizer.from_state(state)


# ---------------------------------------------------------------------------- command line
FLAG_VALUES = {
    "--problem": st.one_of(st.sampled_from(["branin", "hartmann6", "ackley", "nope", "os:system", ""]),
                           st.text(max_size=6)),
    "--dim": st.one_of(st.integers(-2, 6), st.sampled_from(["1000000000", "x", "2.5", "1e3"])),
    "--method": st.one_of(st.sampled_from(["random", "direct", "gp-ucb", "bogus"]), st.text(max_size=4)),
    "--budget": st.one_of(st.integers(-2, 4), st.sampled_from(["99999999999999999999", "three", ""])),
    "--seeds": st.one_of(st.integers(-1, 2), st.just("many")),
    "--seed": st.one_of(st.integers(-2, 3), st.just("2**70")),
    "--noise-std": st.one_of(st.sampled_from(["0", "0.1", "-1", "nan", "inf", "abc"])),
    "--domain": st.sampled_from(["unit", "symmetric", "sphere"]),
    "--param": st.sampled_from(["acq_budget=20", "n_init=2", "n_init=-1", "nokey", "=1", "kernel=\"x\"",
                                "bogus_option=1", "acq_budget=1e400"]),
    "--problem-param": st.sampled_from(["seed=1", "bogus=1", "x", "dim=3"]),
    "--workers": st.one_of(st.integers(-1, 1), st.just("2x")),
    "--experiment": st.sampled_from(["run", "", "x y"]),
}


@settings(max_examples=400)
@given(data=st.data())
def test_cli_run_arguments_end_in_a_result_or_one_line(data, tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    argv = ["run", "--store", str(folder / "runs.db"), "--no-progress"]
    # Mostly valid commands with up to two perturbations (a flag dropped or given a random
    # value), sometimes an extra flag or a stray token.
    base = {"--problem": "branin", "--dim": "3", "--method": "random", "--budget": "3"}
    for flag in data.draw(st.lists(st.sampled_from(sorted(base)), max_size=2, unique=True), label="perturbed"):
        if data.draw(st.booleans(), label=f"drop {flag}"):
            del base[flag]
        else:
            base[flag] = str(data.draw(FLAG_VALUES[flag], label=flag))
    for flag, value in base.items():
        argv += [flag, value]
    for flag in data.draw(st.lists(st.sampled_from(sorted(FLAG_VALUES)), max_size=1), label="extra"):
        argv += [flag, str(data.draw(FLAG_VALUES[flag], label=flag))]
    if data.draw(st.integers(0, 9), label="junk token") == 0:
        argv.append(data.draw(st.sampled_from(["--bogus", "extra", "--budget"])))
    if "--method" in argv and argv[argv.index("--method") + 1] == "gp-ucb":
        argv += ["--param", "acq_budget=20", "--param", "n_init=2"]
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except Exception as exc:  # pragma: no cover - the property under test
            pytest.fail(f"main({argv}) raised {type(exc).__name__}: {exc}")
    event(f"exit code {code}")
    lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
    assert code in (0, 1, 2), (argv, code, err.getvalue())
    if code == 2:
        assert len(lines) == 1 and lines[0].startswith("hdbo: error:"), (argv, err.getvalue())
    assert "Traceback" not in err.getvalue()
