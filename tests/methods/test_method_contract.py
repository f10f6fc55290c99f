"""Contract suite run over every registered method.

In bounds, deterministic under a seed, JSON state round trip that resumes exactly, the
failure policy, and argument validation. Methods needing options to run fast in a test go
in FAST_OPTIONS; methods needing problem structure get it from STRUCTURE.
"""

from __future__ import annotations

import copy
import json
import warnings

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from _fast_options import FAST_OPTIONS, method_params

from hdbo.methods import Method, get_method_class, make_method

BOUNDS = np.array([[-2.0, 3.0], [0.0, 1.0], [10.0, 20.0], [-1.0, 1.0], [0.0, 5.0]])
N_STEPS = 12


def objective(x: np.ndarray) -> float:
    u = (x - BOUNDS[:, 0]) / (BOUNDS[:, 1] - BOUNDS[:, 0])
    return float(-np.sum((u - 0.3) ** 2) + 0.1 * np.sin(7 * u[0]))


def build(name: str, seed: int = 0) -> Method:
    return make_method(name, BOUNDS, seed=seed, budget=N_STEPS, **FAST_OPTIONS.get(name, {}))


def run(m: Method, steps: int) -> list[np.ndarray]:
    xs = []
    for _ in range(steps):
        x = m.ask()
        xs.append(x)
        m.tell(x, objective(x))
    return xs


@pytest.fixture(params=method_params())
def name(request) -> str:
    return request.param


def test_ask_tell_in_bounds(name):
    m = build(name)
    xs = np.array(run(m, N_STEPS))
    assert xs.shape == (N_STEPS, BOUNDS.shape[0])
    assert np.all(xs >= BOUNDS[:, 0]) and np.all(xs <= BOUNDS[:, 1])
    assert m.n_told == N_STEPS
    x_best, y_best = m.best
    assert y_best == pytest.approx(max(objective(x) for x in xs))


def test_deterministic_under_seed(name):
    a, b = run(build(name, seed=3), N_STEPS), run(build(name, seed=3), N_STEPS)
    assert_array_equal(np.array(a), np.array(b))
    c = run(build(name, seed=4), N_STEPS)
    if get_method_class(name).uses_seed:
        assert not np.array_equal(np.array(a), np.array(c))


def run_with_failures(m: Method, steps: int, start: int = 0) -> list[np.ndarray]:
    """Like run(), but evaluations 2 and 7 (0-based, counted from the run's start) fail."""
    xs = []
    for i in range(start, start + steps):
        x = m.ask()
        xs.append(x)
        m.tell(x, None if i in (2, 7) else objective(x))
    return xs


@pytest.mark.parametrize("split", [3, 6, 9])
def test_json_state_roundtrip_resumes_exactly(name, split):
    # Split points before, at and after the end of the initial design and model refits, with
    # failed evaluations on both sides, so incremental GP updates are replayed too.
    ref_xs = run_with_failures(build(name, seed=7), N_STEPS)
    m = build(name, seed=7)
    run_with_failures(m, split)
    state = json.loads(json.dumps(m.state_dict()))
    resumed = Method.from_state(state)
    assert type(resumed) is type(m)
    assert resumed.get_params() == m.get_params()
    rest = run_with_failures(resumed, N_STEPS - split, start=split)
    assert_array_equal(np.array(rest), np.array(ref_xs[split:]))
    # the same through a state saved without history (how the run store keeps it)
    m2 = build(name, seed=7)
    run_with_failures(m2, split)
    light = json.loads(json.dumps(m2.state_dict(include_history=False)))
    resumed2 = Method.from_state(light, history=(m2.X_all, m2.y_all))
    assert_array_equal(resumed2.ask(), ref_xs[split])


def _saved(name: str, steps: int = 6) -> tuple[Method, dict]:
    m = build(name, seed=7)
    run_with_failures(m, steps)
    return m, json.loads(json.dumps(m.state_dict()))


def _top_level_tampering(state: dict, name: str) -> list[tuple[str, dict]]:
    """Malformed versions of a real state: each must raise StateError."""
    cases = []
    for key in state:
        if key == "pending":  # optional: states written before batches have none
            continue
        s = copy.deepcopy(state)
        del s[key]
        cases.append((f"no {key}", s))
    lower = state["bounds"]["lower"]
    other = "random" if name != "random" else "gp-ucb"
    X, y = state["history"]["X"], state["history"]["y"]
    outside = copy.deepcopy(X)
    outside[1][0] = state["bounds"]["upper"][0] + 1.0
    bad = {
        "format": [5, "hdbo.method/0", None],
        "method": [5, None, "nope", other],
        "params": ["x", [], None, {**state["params"], "not_an_option": 1}, {**state["params"], "budget": -3}],
        "bounds": ["x", None, {"lower": lower[:1], "upper": [v + 1 for v in lower[:1]]},
                   {"lower": lower, "upper": lower}, {"lower": ["a"] * len(lower), "upper": lower}],
        "seed": ["x", -1, 1.5, True],
        "structure": ["x", 5, []],
        "rng": ["x", None, {}, {"bit_generator": "seed"}, {**state["rng"], "state": "x"},
                {**state["rng"], "state": {"state": -1, "inc": 1}}],
        "n_told": ["x", -1, None, True, state["n_told"] + 1],
        "internal": ["x", 5, None, []],
        "history": ["x", None, {"X": X}, {"X": X, "y": y, "z": 1}, {"X": "x", "y": y}, {"X": outside, "y": y},
                    {"X": [row[:-1] for row in X], "y": y}, {"X": X, "y": y[:-1]}, {"X": X, "y": ["a"] * len(y)},
                    {"X": [[float("nan")] * len(lower)] + X[1:], "y": y}, {"X": X[:-1], "y": y[:-1]}],
        "pending": ["x", 5, {}, [["a"] * len(lower)], [[0.0]], [[float("nan")] * len(lower)], [outside[1]]],
    }
    for key, values in bad.items():
        for v in values:
            s = copy.deepcopy(state)
            s[key] = v
            cases.append((f"{key}={v!r:.40}", s))
    cases += [("not a dict", "hello"), ("None", None), ("a list", [state]), ("extra field", {**state, "extra": 1})]
    if state["internal"]:
        cases.append(("internal={}", {**copy.deepcopy(state), "internal": {}}))
    return cases


def test_tampered_state_raises_state_error(name):
    from hdbo.exceptions import StateError

    m, state = _saved(name)
    assert Method.from_state(copy.deepcopy(state)).n_told == m.n_told  # the real state loads
    for what, bad in _top_level_tampering(state, name):
        try:
            Method.from_state(bad)
        except StateError:
            continue
        except Exception as exc:  # noqa: BLE001
            pytest.fail(f"{name}: tampered state ({what}) raised {type(exc).__name__}: {exc}")
        pytest.fail(f"{name}: tampered state ({what}) was accepted")
    light = m.state_dict(include_history=False)
    for hist in ["x", (m.X_all,), (m.X_all[:-1], m.y_all), (m.X_all, m.y_all[:-1]), (m.X_all + 100.0, m.y_all)]:
        with pytest.raises(StateError):
            Method.from_state(light, history=hist)


def _internal_tampering(internal: dict) -> list[tuple[str, dict]]:
    cases = []
    for key in internal:
        without = copy.deepcopy(internal)
        del without[key]
        cases.append((f"no {key}", without))
        for v in ("x", None, -1, 10**6, 0.5, [], [-1], {}, [[1e300]]):
            changed = copy.deepcopy(internal)
            changed[key] = v
            cases.append((f"{key}={v!r}", changed))
    return cases


def test_tampered_internal_state_raises_state_error_or_still_runs(name):
    """Each entry of state['internal'] removed or replaced: StateError, or a method that works."""
    from hdbo.exceptions import StateError

    _, state = _saved(name)
    for what, internal in _internal_tampering(state["internal"]):
        bad = {**copy.deepcopy(state), "internal": internal}
        try:
            resumed = Method.from_state(bad)
        except StateError:
            continue
        except Exception as exc:  # noqa: BLE001
            pytest.fail(f"{name}: internal state ({what}) raised {type(exc).__name__}: {exc}")
        try:  # loaded: it must go on working
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for _ in range(2):
                    x = resumed.ask()
                    assert np.all(x >= BOUNDS[:, 0]) and np.all(x <= BOUNDS[:, 1])
                    resumed.tell(x, objective(x))
        except Exception as exc:  # noqa: BLE001
            pytest.fail(f"{name}: internal state ({what}) loaded, then {type(exc).__name__}: {exc}")


def test_failed_evaluations_are_kept_out_of_the_model(name):
    m = build(name, seed=1)
    for i in range(N_STEPS):
        x = m.ask()
        m.tell(x, float("nan") if i % 3 == 0 else objective(x))
    assert m.n_told == N_STEPS
    assert m.n_failed == len(range(0, N_STEPS, 3))
    assert np.all(np.isfinite(m.y_obs)) and m.y_obs.size == N_STEPS - m.n_failed
    assert np.isnan(m.y_all[0])


def test_bad_arguments(name):
    m = build(name)
    with pytest.raises(ValueError, match="x must have shape"):
        m.tell(np.zeros(3), 1.0)
    with pytest.raises(ValueError, match="outside the bounds"):
        m.tell(BOUNDS[:, 1] + 1.0, 1.0)
    with pytest.raises(TypeError, match="y must be a real number"):
        m.tell(BOUNDS[:, 0], "high")
    with pytest.raises(ValueError, match="budget must be > 0"):
        make_method(name, BOUNDS, budget=0)


def test_unknown_method_and_option():
    with pytest.raises(ValueError, match="unknown method 'nope'.*gp-ucb"):
        make_method("nope", BOUNDS)
    with pytest.raises(TypeError, match="takes:"):
        make_method("gp-ucb", BOUNDS, not_an_option=1)


class _Stubborn(Method):
    """Always proposes the box centre: the worst case for a deterministic failure."""

    name = "stubborn-test-only"

    def _ask(self):
        return np.full(self.dim, 0.5)


def test_repeated_failure_point_is_replaced():
    m = _Stubborn(BOUNDS, seed=0)
    x = m.ask()
    m.tell(x, None)  # fails; the method would propose it forever
    with pytest.warns(RuntimeWarning, match="already failed"):
        x2 = m.ask()
    assert not np.allclose(x, x2)
    assert np.all(x2 >= BOUNDS[:, 0]) and np.all(x2 <= BOUNDS[:, 1])
    m.tell(x2, 1.0)
    assert m.best[1] == 1.0 and m.n_failed == 1


# ---------------------------------------------------------------------------- batches (issue 21)
#: Methods whose algorithm cannot always propose more points before results arrive; ask(n)
#: then returns fewer (their docstrings say when).
MAY_RETURN_FEWER = {"direct", "hds", "cws", "si-bo", "peer:cma"}


def _gaps(P: np.ndarray) -> np.ndarray:
    width = BOUNDS[:, 1] - BOUNDS[:, 0]
    U = P / width
    g = np.max(np.abs(U[:, None, :] - U[None, :, :]), axis=2)
    return g[np.triu_indices(len(P), 1)]


@pytest.mark.parametrize("warm", [0, 6, N_STEPS])
def test_batches_are_distinct_pending_points_told_in_any_order(name, warm):
    """ask(4) at the start, mid-design and after the model is in use: distinct points in the
    box, by the method's own rule (no 'pending' safety-net warning), fewer only for the
    methods that must wait; told back in reverse order, the run goes on."""
    m = build(name)
    run(m, warm)
    for _ in range(3):
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message=".*pending")
            X = m.ask(4)
        assert X.ndim == 2 and X.shape[1] == BOUNDS.shape[0] and len(X) <= 4
        if name not in MAY_RETURN_FEWER:
            assert len(X) == 4
        assert len(X) >= 1  # nothing was pending
        assert np.all(X >= BOUNDS[:, 0]) and np.all(X <= BOUNDS[:, 1])
        if len(X) > 1:
            assert _gaps(X).min() > 1e-9
        assert_array_equal(m.pending, X)
        m.tell(X[::-1], [objective(x) for x in X[::-1]])
        assert m.n_pending == 0


def test_resume_with_pending_points(name):
    m = build(name, seed=1)
    run(m, 6)
    X = m.ask(3)
    again = Method.from_state(json.loads(json.dumps(m.state_dict())))
    assert_array_equal(again.pending, m.pending)
    for opt in (m, again):
        opt.tell(X[::-1], [objective(x) for x in X[::-1]])
    assert_array_equal(np.array(run(again, 3)), np.array(run(m, 3)))
