"""Contract suite run over every registered method.

In bounds, deterministic under a seed, JSON state round trip that resumes exactly, the
failure policy, and argument validation. Methods needing options to run fast in a test go
in FAST_OPTIONS; methods needing problem structure get it from STRUCTURE.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from _fast_options import FAST_OPTIONS

from hdbo.methods import Method, available_methods, get_method_class, make_method

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


@pytest.fixture(params=available_methods())
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
