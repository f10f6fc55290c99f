"""Batches and pending points for DIRECT, HDS and CWS, and the peers (BoTorch, Optuna, CMA-ES).

What each must do (``hdbo/methods/base.py``, "Batches and pending points"): ``ask(n)`` returns
distinct points by the method's own rule (never the base class's random replacement, so no
"proposed point is pending" warning), fewer when the algorithm waits for values (DIRECT, a
selection test, the end of a CMA-ES population), values told in any order, and a state saved
with points pending resumes to the same next proposals.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from _fast_options import method_params

from hdbo.exceptions import PendingError, StateError
from hdbo.methods import Method, make_method

BOX2 = np.array([[-1.0, 2.0], [0.0, 3.0]])


def f2(x: np.ndarray) -> float:
    """A smooth 2-D function (maximized) with its maximum at (0.37, 1.61)."""
    d = np.asarray(x) - [0.37, 1.61]
    return -float(d[0] ** 2 + 2.0 * d[1] ** 2 + 0.3 * d[0] * d[1])


def sin_coord2(x: np.ndarray) -> float:
    """Depends on coordinate 2 only (for the variable selections)."""
    return float(np.sin(5.0 * np.asarray(x)[2]))


def values(func, X: np.ndarray) -> list[float]:
    return [func(x) for x in X]


def resume(m: Method) -> Method:
    return Method.from_state(json.loads(json.dumps(m.state_dict())))


def sequential(name: str, bounds, func, n: int, **options) -> tuple[np.ndarray, Method]:
    m = make_method(name, bounds, **options)
    xs = []
    for _ in range(n):
        x = m.ask()
        xs.append(x)
        m.tell(x, func(x))
    return np.array(xs), m


@pytest.fixture(autouse=True)
def _no_random_replacement():
    """Every test here fails on the base class's safety net ("proposed point is pending")."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*proposed point .*", category=RuntimeWarning)
        yield


# =========================================================================== DIRECT
def test_direct_returns_one_point_while_it_runs_then_batches_of_random_points():
    m = make_method("direct", BOX2, seed=4, maxfun=12)
    X = m.ask(4)
    assert X.shape == (1, 2)
    assert_allclose(X[0], BOX2.mean(axis=1))  # DIRECT starts at the centre
    assert m.ask(4).shape == (0, 2) and m.n_pending == 1
    with pytest.raises(PendingError, match="direct: cannot propose"):
        m.ask()
    sizes = []
    while not m.diagnostics()["direct_finished"] or not sizes or sizes[-1] == 1:
        m.tell(X[::-1], values(f2, X[::-1]))
        X = m.ask(4)
        sizes.append(len(X))
    assert set(sizes[:-1]) == {1} and sizes[-1] == 4  # DIRECT one at a time, then random points
    assert len({tuple(x) for x in X}) == 4
    assert np.all((X >= BOX2[:, 0]) & (X <= BOX2[:, 1]))


def test_direct_batched_run_asks_what_a_sequential_run_asks():
    ref, _ = sequential("direct", BOX2, f2, 30, seed=2, maxfun=20)  # DIRECT stops after ~21 points
    m = make_method("direct", BOX2, seed=2, maxfun=20)
    xs: list[np.ndarray] = []
    while len(xs) < 30:
        X = m.ask(min(3, 30 - len(xs)))
        xs += list(X)
        m.tell(X[::-1], values(f2, X[::-1]))
    assert_array_equal(np.array(xs), ref)


def test_direct_cancelled_query_is_asked_again_and_a_state_with_random_points_out_resumes():
    m = make_method("direct", BOX2, seed=1, maxfun=6)
    x = m.ask()
    assert m.cancel() == 1 and m.n_pending == 0
    assert_array_equal(m.ask(), x)  # DIRECT still waits for that point
    m.tell(x, f2(x))
    while not m.diagnostics()["direct_finished"]:
        x = m.ask()
        m.tell(x, f2(x))
    out = m.ask(3)  # random points, pending when the state is saved
    other = resume(m)
    assert_array_equal(other.pending, out)
    assert_array_equal(other.ask(2), m.ask(2))
    m.tell(out[::-1], values(f2, out[::-1]))
    m.close(), other.close()


# =========================================================================== HDS
def hds(test: str = "fdt", **options) -> Method:
    kw = dict(seed=3, test=test, budget=120, noise_variance=0.01, acq_budget=100)
    kw.update(options)
    return make_method("hds", [(-1.0, 1.0)] * 6, **kw)


def test_hds_fdt_batch_is_the_pair_in_progress():
    m = hds()
    X = m.ask(4)
    assert X.shape == (2, 6)
    node = m.selector_.nodes[0].dims  # the root: every coordinate
    assert node == list(range(6))
    assert_allclose(X[1] - X[0], m.selector_.delta)  # z and z + delta on the node's diagonal
    assert m.ask(4).shape == (0, 6)
    with pytest.raises(PendingError, match="hds: cannot propose"):
        m.ask()
    m.tell(X[1], sin_coord2(X[1]))  # the second value first: it waits for the first one
    assert m.selector_.n_evaluations == 0 and m.ask(3).shape == (0, 6)
    m.tell(X[0], sin_coord2(X[0]))
    assert m.selector_.n_evaluations == 2 and m.selector_.n_iterations == 1
    assert m.ask(4).shape == (2, 6)  # the next pair


def test_hds_gpt_batch_is_one_point():
    m = hds("gpt")
    X = m.ask(3)
    assert X.shape == (1, 6)
    assert m.ask(3).shape == (0, 6)
    m.tell(X, values(sin_coord2, X))
    assert m.ask(3).shape == (1, 6)


@pytest.mark.parametrize("test", ["fdt", "gpt"])
def test_hds_batched_selection_asks_what_a_sequential_one_asks(test):
    ref, seq = sequential("hds", [(-1.0, 1.0)] * 6, sin_coord2, 80, seed=3, test=test, budget=120,
                          noise_variance=0.01, acq_budget=100)
    n_sel = seq.diagnostics()["selection_evaluations"]
    assert seq.selected_ == [2] and n_sel < 80  # the selection ends within the sequential run
    m = hds(test)
    xs: list[np.ndarray] = []
    batches = []
    while len(xs) < n_sel:
        X = m.ask(4)
        batches.append(len(X))
        xs += list(X)
        m.tell(X[::-1], values(sin_coord2, X[::-1]))  # told in reverse order
    assert set(batches) == ({2} if test == "fdt" else {1})
    assert_array_equal(np.array(xs), ref[:n_sel])
    assert m.selected_ == [2] and m.selector_.decided == seq.selector_.decided
    # phase 2: four distinct GP-UCB points that move only the selected coordinate
    X = m.ask(4)
    assert X.shape == (4, 6) and len({tuple(x) for x in X}) == 4
    U = m.to_canonical(X)
    others = [i for i in range(6) if i != 2]
    assert_allclose(U[:, others], np.broadcast_to(m.selector_.background[others], (4, 5)), atol=1e-12)
    assert np.ptp(U[:, 2]) > 0.05  # spread by the hallucinated variance, not stacked


def test_hds_phase2_hallucinates_pending_points_on_the_selected_coordinates():
    m = hds("gpt")
    while m.selecting:
        x = m.ask()
        m.tell(x, sin_coord2(x))
    x1 = m.ask()
    P = m._pending_gp_inputs()
    assert P.shape == (1, 1) and P[0, 0] == pytest.approx(m.to_canonical(x1)[2])
    x2 = m.ask()
    assert abs(m.to_canonical(x2)[2] - m.to_canonical(x1)[2]) > 1e-3
    # a state with two points out resumes to the same next proposals
    other = resume(m)
    assert_array_equal(other.pending, m.pending)
    assert_array_equal(other.ask(2), m.ask(2))


def test_hds_first_point_of_a_pair_fails_while_the_second_is_out():
    m = hds(selection_budget=9, optimize=False)
    X = m.ask(2)
    m.tell(X[0], None)  # the pair is dropped; its second point is still out
    assert m.selector_.pending is None and m.selector_.n_evaluations == 1
    Y = m.ask(4)  # the selection goes on with a new pair while the old point is out
    assert Y.shape == (2, 6) and m.n_pending == 3
    m.tell(X[1], sin_coord2(X[1]))  # counted against the budget, not used by the test
    assert m.selector_.n_evaluations == 2 and m.selector_.n_iterations == 0
    m.tell(Y, values(sin_coord2, Y))
    assert m.selector_.n_evaluations == 4 and m.selector_.n_iterations == 1
    Z = m.ask(2)
    m.tell(Z[1], None)  # the second fails first (it waits), then the first arrives
    m.tell(Z[0], 0.0)
    assert m.selector_.n_evaluations == 6 and m.selector_.n_failed == 2
    W = m.ask(2)
    m.tell(W[0], None)  # dropped with W[1] out: 7 of 9 used, and W[1] will take one more
    assert not m.selector_.done and m.ask(2).shape == (0, 6)  # no room for another pair
    m.tell(W[1], 0.0)
    assert m.done and m.selector_.n_evaluations == 8 == m.n_told


def test_hds_state_with_a_pair_out_resumes_and_old_states_load():
    m = hds()
    for _ in range(3):
        X = m.ask(2)
        m.tell(X, values(sin_coord2, X))
    X = m.ask(2)
    m.tell(X[1], sin_coord2(X[1]))  # early second value, the first still out
    state = json.loads(json.dumps(m.state_dict()))
    assert state["internal"]["early"]["x"] == pytest.approx(m.to_canonical(X[1]).tolist())
    other = Method.from_state(state)
    assert_array_equal(other.pending, X[:1])
    for obj in (m, other):
        obj.tell(X[0], sin_coord2(X[0]))
    assert other.selector_.state_dict() == m.selector_.state_dict()
    assert_array_equal(other.ask(2), m.ask(2))
    # a state written before batches (no 'early', no 'orphans') loads as before
    seq = hds()
    x = seq.ask()
    seq.tell(x, sin_coord2(x))
    old = json.loads(json.dumps(seq.state_dict()))
    del old["internal"]["early"], old["internal"]["orphans"], old["pending"]
    assert_array_equal(Method.from_state(old).ask(), seq.ask())
    bad = json.loads(json.dumps(state))
    bad["internal"]["orphans"] = [[0.0] * 5]
    with pytest.raises(StateError, match="orphans"):
        Method.from_state(bad)


# =========================================================================== CWS
def cws(**options) -> Method:
    kw = dict(seed=0, n_select=1, rounds=2, budget=60, acq_budget=100)
    kw.update(options)
    return make_method("cws", [(-1.0, 1.0)] * 4, **kw)


def test_cws_batch_is_the_rest_of_the_round_and_asks_what_a_sequential_run_asks():
    ref, seq = sequential("cws", [(-1.0, 1.0)] * 4, sin_coord2, 16, seed=0, n_select=1, rounds=2, budget=60,
                          acq_budget=100)
    m = cws()
    X = m.ask(5)
    Y = m.ask(5)
    assert X.shape == (5, 4) and Y.shape == (3, 4)  # a round is 4 pairs
    assert m.ask(5).shape == (0, 4)
    with pytest.raises(PendingError, match="cws: cannot propose"):
        m.ask()
    first = np.vstack([X, Y])
    assert_array_equal(first, ref[:8])
    m.tell(first[::-1], values(sin_coord2, first[::-1]))
    assert m.rounds_done_ == 1
    second = m.ask(20)
    assert_array_equal(second, ref[8:16])
    order = [3, 0, 6, 1, 7, 2, 5, 4]  # any order
    m.tell(second[order], values(sin_coord2, second[order]))
    assert m.selected_ == seq.selected_ == [2]
    assert_allclose(m.sum_sq_, seq.sum_sq_)
    P = m.ask(4)  # GP-UCB on the selection
    assert P.shape == (4, 4) and len({tuple(p) for p in P}) == 4


def test_cws_failure_while_the_round_is_out_and_the_budget():
    m = cws(selection_budget=9, optimize=False, rounds=1)
    X = m.ask(10)
    assert X.shape == (8, 4)  # one round; the 9th evaluation would start another pair
    m.tell(X[0], None)  # coordinate 0's pair is dropped, its second point still out
    Y = m.ask(10)  # coordinate 0 again: one point fits the budget (7 out + 1 told + 1)
    assert Y.shape == (1, 4) and Y[0, 0] != X[0, 0]
    m.tell(X[1:], values(sin_coord2, X[1:]))  # X[1], of the dropped pair, counts without a value
    info = m.diagnostics()
    assert info["selection_iterations"] == 3 and info["selection_evaluations"] == 8
    assert not m.done and m.ask(2).shape == (0, 4)  # the last evaluation of the budget is out
    m.tell(Y, values(sin_coord2, Y))
    assert m.done and m.diagnostics()["selection_evaluations"] == 9 == m.n_told
    assert m.selected_ == [2]  # the budget ran out inside the round: the best of those sampled


def test_cws_cancel_and_states_with_points_out():
    m = cws()
    X = m.ask(3)
    assert m.cancel(X[1]) == 1
    assert_array_equal(m.ask(1), X[1:2])  # the cancelled point is asked again
    m.tell(X[0], sin_coord2(X[0]))
    other = resume(m)
    assert_array_equal(other.pending, m.pending)
    assert_array_equal(other.ask(8), m.ask(8))
    assert other.ask(1).shape == (0, 4)
    B = m.pending
    for obj in (m, other):
        obj.tell(B[::-1], values(sin_coord2, B[::-1]))
    assert_allclose(other.sum_sq_, m.sum_sq_) and other.rounds_done_ == m.rounds_done_ == 1
    assert_array_equal(other.ask(3), m.ask(3))


def test_cws_states_written_before_batches_load():
    ref, _ = sequential("cws", [(-1.0, 1.0)] * 4, sin_coord2, 12, seed=0, n_select=1, rounds=2, budget=60,
                        acq_budget=100)
    for split in (3, 4):  # inside a pair (its first value told), and between pairs
        m = cws()
        for x in ref[:split]:
            m.ask()
            m.tell(x, sin_coord2(x))
        state = json.loads(json.dumps(m.state_dict()))
        internal = state["internal"]
        pairs = internal.pop("pairs")
        queue = internal.pop("queue")
        del internal["orphans"], state["pending"]
        if pairs:
            (pair,) = pairs
            internal["coord"], internal["pending"] = pair["coord"], {"z": pair["z"], "stage": 1, "y": pair["y"][0]}
        else:
            internal["coord"], internal["pending"] = queue[0], None
        old = Method.from_state(state)
        xs = []
        for _ in range(12 - split):
            x = old.ask()
            xs.append(x)
            old.tell(x, sin_coord2(x))
        assert_array_equal(np.array(xs), ref[split:])


# =========================================================================== peers
PEER_OPTIONS = {
    "peer:botorch": {"n_init": 4, "num_restarts": 2, "raw_samples": 32},
    "peer:tpe": {"n_startup_trials": 4},
    "peer:optuna-gp": {"n_startup_trials": 4},
    "peer:cma": {"popsize": 6},
}
BOX3 = [(-2.0, 3.0), (0.0, 1.0), (10.0, 20.0)]


def sphere3(x: np.ndarray) -> float:
    u = (np.asarray(x) - np.array(BOX3)[:, 0]) / np.ptp(np.array(BOX3), axis=1)
    return -float(np.sum((u - 0.3) ** 2))


@pytest.mark.parametrize("name", method_params(list(PEER_OPTIONS)))
def test_peer_batches_are_distinct_and_resume(name):
    def run():
        m = make_method(name, BOX3, seed=7, **PEER_OPTIONS[name])
        X = m.ask(4)  # the initial design (CMA-ES: the first population)
        assert X.shape == (4, 3)
        m.tell(X[::-1], values(sphere3, X[::-1]))
        X = m.ask(2)  # model-based (CMA-ES: the population's last two)
        assert X.shape == (2, 3)
        Y = m.ask(2)  # asked with two points out
        return m, np.vstack([X, Y])

    m, B = run()
    n = 2 if name == "peer:cma" else 4
    assert B.shape == (n, 3) and len({tuple(b) for b in B}) == n
    lo, hi = np.array(BOX3).T
    assert np.all((B >= lo) & (B <= hi))
    other = resume(m)  # deterministic: the resumed copy proposes what the original does
    assert_array_equal(other.pending, B)
    m.tell(B[1], sphere3(B[1]))
    other.tell(B[1], sphere3(B[1]))
    assert_array_equal(other.ask(2), m.ask(2))


def test_botorch_design_is_handed_out_in_order_then_x_pending_spreads_the_batch():
    opts = PEER_OPTIONS["peer:botorch"]
    ref, _ = sequential("peer:botorch", BOX3, sphere3, 4, seed=1, **opts)
    m = make_method("peer:botorch", BOX3, seed=1, **opts)
    X = np.vstack([m.ask(3), m.ask(1)])
    assert_array_equal(X, ref)  # the design's points, in order
    m.tell(X[::-1], values(sphere3, X[::-1]))
    state = json.loads(json.dumps(m.state_dict()))
    x1 = m.to_canonical(m.ask())
    x2 = m.to_canonical(m.ask())  # with x1 pending: qLogEI with X_pending
    # the same second proposal without x1 pending (cancelled): LogEI goes back to x1
    alone = Method.from_state(state)
    assert_array_equal(alone.to_canonical(alone.ask()), x1)
    alone.cancel()
    x2_alone = alone.to_canonical(alone.ask())
    assert np.max(np.abs(x2_alone - x1)) < 0.3 * np.max(np.abs(x2 - x1))


@pytest.mark.parametrize("name", method_params(["peer:tpe", "peer:optuna-gp"]))
def test_optuna_sees_pending_points_as_running_trials(name, monkeypatch):
    import optuna
    from optuna.trial import TrialState

    studies = []
    create = optuna.create_study

    def capture(*args, **kwargs):
        study = create(*args, **kwargs)
        studies.append(study)
        return study

    monkeypatch.setattr(optuna, "create_study", capture)
    m = make_method(name, BOX3, seed=0, **PEER_OPTIONS[name])
    X = m.ask(5)
    assert X.shape == (5, 3) and len({tuple(x) for x in X}) == 5
    states = [t.state for t in studies[-1].trials]
    # the last proposal's study: the four points out as RUNNING trials, then the new one
    assert states == [TrialState.RUNNING] * 5
    assert_allclose([list(t.params.values()) for t in studies[-1].trials[:4]], m.to_canonical(X[:4]), atol=1e-12)
    m.tell(X[:4], values(sphere3, X[:4]))
    m.ask()
    assert [t.state for t in studies[-1].trials] == [TrialState.COMPLETE] * 4 + [TrialState.RUNNING] * 2
    if name == "peer:tpe":
        assert studies[-1].sampler._constant_liar


def test_cma_batch_draws_the_population_and_values_in_any_order():
    opts = {"popsize": 5}
    ref, seq = sequential("peer:cma", BOX3, sphere3, 12, seed=2, **opts)
    m = make_method("peer:cma", BOX3, seed=2, **opts)
    X = m.ask(8)
    assert X.shape == (5, 3)  # one population
    assert_array_equal(X, ref[:5])
    assert m.ask(2).shape == (0, 3)
    with pytest.raises(PendingError, match="peer:cma"):
        m.ask()
    order = [4, 1, 3, 0, 2]
    m.tell(X[order], values(sphere3, X[order]))  # told to cma in the population's order
    Y = m.ask(3)
    assert_array_equal(Y, ref[5:8])  # the same next population as the sequential run
    # a point that is no candidate, told while the population's rest is out: not given to cma
    Z = m.ask(5)
    assert Z.shape == (2, 3)
    m.tell([0.0, 0.5, 15.0], 1.0)
    assert m.state_dict()["internal"]["slots"][-1] is None
    other = resume(m)
    P = m.pending
    for obj in (m, other):
        obj.tell(P[::-1], values(sphere3, P[::-1]))
    assert_array_equal(other.ask(2), m.ask(2))
    assert m.diagnostics() == other.diagnostics()


def test_cma_states_written_before_batches_load():
    opts = {"popsize": 4}
    ref, _ = sequential("peer:cma", BOX3, sphere3, 14, seed=5, **opts)
    m = make_method("peer:cma", BOX3, seed=5, **opts)
    for x in ref[:6]:
        m.ask()
        m.tell(x, sphere3(x))
    state = json.loads(json.dumps(m.state_dict()))
    assert state["internal"]["slots"] == [0, 1, 2, 3, 0, 1]
    del state["internal"]["slots"], state["pending"]
    old = Method.from_state(state)
    xs = []
    for _ in range(8):
        x = old.ask()
        xs.append(x)
        old.tell(x, sphere3(x))
    assert_array_equal(np.array(xs), ref[6:])
    bad = json.loads(json.dumps(m.state_dict()))
    bad["internal"]["slots"][5] = 0
    with pytest.raises(StateError, match="slot 0"):
        Method.from_state(bad)
