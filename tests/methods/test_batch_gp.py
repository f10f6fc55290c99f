"""Batches and pending points of the GP-UCB family: gp-ucb, gp-ei, auto, add-gp-ucb, rpp/pp-gp-ucb.

GP-UCB and GP-EI condition their GP on the pending points at the posterior mean (GP-BUCB and
the Kriging believer); Add-GP-UCB and RPP condition each group's component on the pending
points' group coordinates. Sequential runs are covered by the methods' own tests and
``test_method_contract.py``.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from hdbo.methods import Method, make_method

from _fast_options import FAST_OPTIONS

D = 5
METHODS = ["gp-ucb", "gp-ei", "auto", "add-gp-ucb", "rpp-gp-ucb", "pp-gp-ucb"]


def f(X):
    X = np.atleast_2d(X)
    return -np.sum((X - 0.3) ** 2, axis=1) + 0.2 * np.sin(6 * X[:, 0])


def _warm(name, seed=0, n=12, **extra):
    m = make_method(name, [(0, 1)] * D, seed=seed, budget=40, **{**FAST_OPTIONS[name], **extra})
    for _ in range(n):
        x = m.ask()
        m.tell(x, float(f(x)[0]))
    return m


def _min_gap(U):
    gaps = np.max(np.abs(U[:, None, :] - U[None, :, :]), axis=2)
    return float(gaps[np.triu_indices(len(U), 1)].min())


@pytest.mark.parametrize("name", METHODS)
def test_ask_4_gives_4_distinct_points_by_the_model_not_the_safety_net(name):
    m = _warm(name)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*pending")
        X = m.ask(4)
    assert X.shape == (4, D) and m.n_pending == 4
    assert np.all((X >= 0) & (X <= 1))
    assert _min_gap(X) > 1e-3


@pytest.mark.parametrize("name, gap", [("gp-ucb", 0.1), ("add-gp-ucb", 0.02)])
def test_a_batch_spreads_out_where_the_sequential_proposal_would_repeat(name, gap):
    """With a deterministic acquisition search the same state proposes the same point; pending
    points move the next proposals away (by ``gap`` of the box in some coordinate: GP-UCB's
    batch spreads over the box; Add-GP-UCB's, here near its optimum, moves each group to the
    next cells of DIRECT's grid, 1/27 apart, where the conditioned variance is back)."""
    opts = {"maximizer": "direct", "polish": False}
    a, b = _warm(name, **opts), _warm(name, **opts)
    x1 = a.ask()
    a.cancel()
    assert_array_equal(a.ask(), x1)  # nothing pending: the same proposal again
    a.cancel()
    X = b.ask(4)
    assert_array_equal(X[0], x1)  # the batch starts with the sequential proposal
    assert _min_gap(X) > gap


def test_hallucination_leaves_the_fitted_gp_unchanged():
    m = _warm("gp-ucb")
    m.ask()  # syncs the GP
    gp = m.gp_
    L, n = gp.L_.copy(), gp.n_train
    m.ask(3)
    assert m.gp_ is gp and gp.n_train == n
    assert_array_equal(gp.L_, L)


@pytest.mark.parametrize("name", METHODS)
def test_resume_with_points_pending_asks_the_same_next_point(name):
    m = _warm(name, seed=3)
    X = m.ask(2)
    state = json.loads(json.dumps(m.state_dict()))
    again = Method.from_state(state)
    assert_array_equal(again.pending, X)
    assert_array_equal(again.ask(), m.ask())
    # and the pending points are told back in another order, by both
    for opt in (m, again):
        P = opt.pending
        opt.tell(P[::-1], f(P[::-1]))
        assert opt.n_pending == 0
    assert_array_equal(again.ask(), m.ask())


@pytest.mark.parametrize("name", METHODS)
def test_asynchronous_use_tell_one_ask_one(name):
    """Three points out; each time one comes back, ask one more (in reverse completion order)."""
    m = _warm(name, seed=1)
    m.ask(3)
    for _ in range(4):
        x = m.pending[-1]
        m.tell(x, float(f(x)[0]))
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message=".*pending")
            m.ask()
        assert m.n_pending == 3
        assert _min_gap(m.pending) > 1e-3


def test_auto_attributes_each_outcome_to_its_own_arm():
    m = _warm("auto", seed=2, strategy="bandit", bandit_arms=("global", "uniform"))
    n0 = len(m._outcomes)
    X = m.ask(4)
    arms = [arm for _, arm in m._arms_out]
    assert len(arms) == 4
    m.tell(X[::-1], f(X[::-1]))
    assert [a for a, _ in m._outcomes[n0:]] == arms[::-1]
    assert m._arms_out == []
    X = m.ask(2)
    m.cancel(X[0])
    assert len(m._arms_out) == 1 and np.allclose(m._arms_out[0][0], X[1])
    m.cancel()
    assert m._arms_out == [] and m.n_pending == 0


def test_auto_loads_a_state_of_before_batches_with_one_arm_in_flight():
    m = _warm("auto", seed=2)
    x = m.ask()
    state = m.state_dict()
    arm = state["internal"]["arms_out"][0][1]
    del state["internal"]["arms_out"], state["pending"]
    state["internal"]["pending_arm"] = arm
    again = Method.from_state(state)
    assert again.n_pending == 0 and again._arms_out == []
    n0 = len(again._outcomes)
    again.tell(x, float(f(x)[0]))
    assert again._outcomes[n0][0] == arm


def test_initial_design_batch_is_random_and_distinct():
    m = make_method("gp-ucb", [(0, 1)] * D, seed=0, n_init=6)
    X = m.ask(8)  # nothing told: the initial design (and beyond it) is uniform random
    assert X.shape == (8, D) and _min_gap(X) > 1e-3
