"""LineBO (Kirschner et al. 2019): segments, proposals on the line through the best guess, budget."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose

import hdbo
from hdbo.methods import Method, make_method
from hdbo.methods.line_bo import line_segment

from _runs import random_regrets, regrets

BOX = np.array([[-3.0, 5.0], [0.0, 1.0], [10.0, 20.0], [-1.0, 1.0], [0.0, 2.0], [-5.0, -4.0]])
FAST = dict(n_init=4, acq_budget=200, n_restarts=0, refit_every=5)


def objective(x: np.ndarray) -> float:
    u = (x - BOX[:, 0]) / (BOX[:, 1] - BOX[:, 0])
    return float(-np.sum((u - 0.3) ** 2) + 0.1 * np.sin(7 * u[0]))


def test_line_segment_reaches_the_faces(rng):
    for _ in range(20):
        x = rng.uniform(-1, 1, 5)
        v = rng.standard_normal(5)
        lo, hi = line_segment(x, v)
        assert lo <= 0 <= hi
        for s in (lo, hi):
            end = x + s * v
            assert np.all(np.abs(end) <= 1 + 1e-12)
            assert np.max(np.abs(end)) == pytest.approx(1.0)
    lo, hi = line_segment(np.array([0.5, -0.2]), np.array([0.0, 2.0]))  # a zero component is ignored
    assert (lo, hi) == pytest.approx((-0.4, 0.6))


@pytest.mark.parametrize("direction", ["random", "coordinate"])
def test_proposals_lie_on_the_line_through_the_best_guess(direction):
    m = make_method("line-bo", BOX, seed=1, line_direction=direction, **FAST)
    for i in range(10):
        x = m.ask()
        assert np.all(x >= BOX[:, 0]) and np.all(x <= BOX[:, 1])
        if i >= FAST["n_init"]:
            u = m.to_canonical(x)
            a, v = m.anchor_, m.direction_
            assert np.linalg.norm(v) == pytest.approx(1.0)
            s = float((u - a) @ v)
            assert_allclose(u, a + s * v, atol=1e-9)  # on the line
            X = m.X_obs
            assert_allclose(a, X[np.argmax(m.gp_.predict(X)[0])])  # anchor: largest posterior mean
            if direction == "coordinate":
                assert np.count_nonzero(v) == 1
            diag = m.diagnostics()
            assert 1 <= diag["acq_nfev"] <= FAST["acq_budget"]
        m.tell(x, objective(x))


def test_line_maximizer_matches_a_dense_scan():
    """The grid + L-BFGS-B search finds the UCB maximum along the segment."""
    m = make_method("line-bo", [(-1, 1)] * 4, seed=3, n_init=5, acq_budget=100, n_restarts=0, beta=1.0)
    f = lambda x: float(-np.sum((x - 0.2) ** 2))  # noqa: E731
    for _ in range(5):
        x = m.ask()
        m.tell(x, f(x))
    x = m.ask()
    from hdbo.acquisition import UCB

    acq = UCB(m.gp_, 1.0)
    lo, hi = line_segment(m.anchor_, m.direction_)
    s = np.linspace(lo, hi, 20001)
    dense = acq(m.anchor_[None, :] + s[:, None] * m.direction_[None, :]).max()
    assert acq(m.to_canonical(x)[None, :])[0] >= dense - 1e-6


@pytest.mark.parametrize(
    ("options", "exc", "match"),
    [
        ({"line_direction": "diagonal"}, ValueError, "line_direction"),
        ({"grid_fraction": 0.0}, ValueError, "grid_fraction"),
        ({"maximizer": "direct"}, ValueError, "maximizer"),
        ({"polish": True}, ValueError, "polish"),
        ({"acq_budget": 0}, ValueError, "acq_budget"),
    ],
)
def test_invalid_options(options, exc, match):
    with pytest.raises(exc, match=match):
        make_method("line-bo", BOX, seed=0, **options)


def test_line_direction_through_the_api_and_its_old_name():
    """The option was called ``direction``, the name of the API's "minimize"/"maximize" argument."""
    f = lambda x: float(np.sum(x ** 2))  # noqa: E731
    res = hdbo.minimize(f, BOX, method="line-bo", line_direction="coordinate", budget=4, seed=0, n_init=2,
                        acq_budget=50, n_restarts=0)
    assert res.nfev == 4 and res.method.line_direction == "coordinate"
    assert np.count_nonzero(res.method.direction_) == 1
    with pytest.raises(ValueError, match="direction must be 'minimize' or 'maximize'.*'line_direction'"):
        hdbo.Optimizer(BOX, method="line-bo", direction="coordinate")
    # the old name still builds the method (with a warning) ...
    with pytest.warns(FutureWarning, match="'direction' was renamed 'line_direction'"):
        m = make_method("line-bo", BOX, seed=0, direction="coordinate")
    assert m.line_direction == "coordinate" and m.get_params()["line_direction"] == "coordinate"
    with pytest.raises(TypeError, match="twice"):
        make_method("line-bo", BOX, direction="random", line_direction="coordinate")
    # ... and a state saved with it loads silently, with the same next point
    ref = make_method("line-bo", BOX, seed=2, line_direction="coordinate", n_init=2, acq_budget=50, n_restarts=0)
    for _ in range(3):
        x = ref.ask()
        ref.tell(x, f(x))
    state = json.loads(json.dumps(ref.state_dict()))
    state["params"]["direction"] = state["params"].pop("line_direction")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        resumed = Method.from_state(state)
    assert resumed.line_direction == "coordinate"
    assert_allclose(resumed.ask(), ref.ask())


def test_beats_random_search_on_embedded_branin():
    """Branin hidden in D = 50, 40 evaluations, random directions, problem seeds 0-7
    (tests/methods/_runs.py). Measured: simple regret median 0.10, mean 0.41; random search
    (5 runs per seed) median 1.15, mean 1.29."""
    ours = regrets("line-bo", range(8), 40, n_init=10, acq_budget=600, n_restarts=0, refit_every=3)
    rand = random_regrets(range(8), 40)
    assert np.median(ours) < 0.3 * np.median(rand), (ours, rand)
    assert np.mean(ours) < 0.5 * np.mean(rand), (ours, rand)
