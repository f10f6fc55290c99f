"""Batches and pending points of the embedding (REMBO, HeSBO, SRE) and subspace (SI-BO and its
baselines) methods: spread by conditioning the GP in the low-dimensional space, per-point latent
bookkeeping, SI-BO's Phase-1 design slots, resume with points out, states of before batches."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from hdbo.exceptions import PendingError
from hdbo.methods import Method, make_method

from _runs import drive

D = 10
BOX = np.array([[-2.0, 3.0]] * 4 + [[0.0, 1.0]] * 6)  # uneven widths
A = np.linalg.qr(np.random.default_rng(3).standard_normal((D, 2)))[0].T  # a hidden plane (canonical frame)
FAST = {"n_init": 4, "acq_budget": 150}

# (name, options, sequential steps before the batch: past the initial design)
METHODS = [
    ("rembo", {"d": 3, **FAST}, 6),
    ("rembo", {"d": 3, "kernel_space": "high", **FAST}, 6),
    ("rembo", {"d": 3, "acquisition": "ei", **FAST}, 6),
    ("hesbo", {"d": 3, **FAST}, 6),
    ("hesbo", {"d": 3, "maximizer": "direct", **FAST}, 6),
    ("sre", {"d": 2, "m": 2, "budget": 30, **FAST}, 6),
    ("random-subspace-ucb", {"k": 2, "grid_points": 31}, 4),
    ("random-subspace-ucb", {"k": 4, "acq_budget": 300}, 4),
    ("exact-subspace-ucb", {"grid_points": 31, "structure": {"subspace": A.tolist()}}, 4),
    ("highdim-random-ucb", {"n_candidates": 100}, 4),
    ("si-bo", {"k": 1, "m_Phi": 4, "grid_points": 41, "noise_std": 0.0, "ds_solver": "admm"}, 12),  # n_SI = 10
]
IDS = [f"{n}-{i}" for i, (n, _, _) in enumerate(METHODS)]


def objective(x: np.ndarray) -> float:
    u = 2.0 * (np.asarray(x) - BOX[:, 0]) / (BOX[:, 1] - BOX[:, 0]) - 1.0
    z = A @ u
    return float(np.sin(2 * z[0]) + np.cos(1.5 * z[1]) - 0.05 * np.sum((u - 0.3) ** 2))


def values(X: np.ndarray) -> np.ndarray:
    return np.array([objective(x) for x in X])


def pending_warnings(record) -> list[str]:
    """Messages of the base class's safety net (a proposal that repeated a pending point)."""
    return [str(w.message) for w in record if "pending" in str(w.message)]


def build(name: str, options: dict, seed: int = 0) -> Method:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # si-bo: no budget warning here, but be safe
        return make_method(name, BOX, seed=seed, **options)


@pytest.mark.parametrize("name, options, steps", METHODS, ids=IDS)
def test_a_batch_is_spread_by_the_method_not_by_the_safety_net(name, options, steps):
    m = build(name, options)
    drive(m, steps, objective)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        X = m.ask(4)
        assert X.shape == (4, D) and m.n_pending == 4
        assert np.all(X >= BOX[:, 0]) and np.all(X <= BOX[:, 1])
        U = m.to_canonical(X)
        gaps = [np.max(np.abs(U[i] - U[j])) for i in range(4) for j in range(i)]
        assert min(gaps) > 1e-6  # distinct points
        # asynchronous: told in reverse order, one more asked in between, then a new batch
        m.tell(X[3], objective(X[3]))
        x = m.ask()
        m.tell(np.vstack([X[2::-1], x]), values(np.vstack([X[2::-1], x])))
        assert m.n_pending == 0
        X2 = m.ask(3)
        assert X2.shape == (3, D)
    assert pending_warnings(record) == []


def _first_choices(m: Method, n: int) -> list:
    """The acquisition maximizer's own choice for each point of ``ask(n)`` (before any guard)."""
    choices: list = []
    if hasattr(m, "_maximize_latent"):
        inner = m._maximize_latent

        def record(fun, fun_and_grad):
            w = inner(fun, fun_and_grad)
            choices.append(np.round(w, 9).tolist())
            return w

        m._maximize_latent = record
    else:  # the grid: the index of the largest UCB
        cache = m._grid_cache  # built by the earlier model-based queries
        inner = cache.moments

        def moments(gp, n_keep=None):
            mean, std = inner(gp, n_keep=n_keep)
            choices.append(int(np.argmax(mean + np.sqrt(m.beta_t()) * std)))
            return mean, std

        cache.moments = moments
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        m.ask(n)
    assert pending_warnings(record) == []
    return choices


@pytest.mark.parametrize("name, options", [
    ("rembo", {"d": 3, "maximizer": "direct", "polish": False, **FAST}),
    ("hesbo", {"d": 3, "maximizer": "direct", **FAST}),
    ("random-subspace-ucb", {"k": 2, "grid_points": 31}),
])
def test_the_gp_conditioned_on_the_pending_points_spreads_the_batch(name, options):
    # The maximizers here are deterministic: without conditioning on the pending points (and with
    # a fixed beta, which otherwise grows with the pending points) the acquisition's maximizer is
    # the same point every time, and only the guards against a pending point, or the base class's
    # safety net, would move it; conditioned, each choice is new.
    bare = build(name, options)
    drive(bare, 6, objective)
    bare._pending_gp_inputs = lambda: None
    bare.beta_t = lambda t=None: 4.0
    choices = _first_choices(bare, 3)
    assert choices[1] == choices[0]  # the second point's first choice repeats the first point
    if name != "random-subspace-ucb":
        assert len(choices) > 3  # the embedding's guard had to search again
    m = build(name, options)
    drive(m, 6, objective)
    m.beta_t = lambda t=None: 4.0
    choices = _first_choices(m, 3)
    assert len(choices) == 3 and len({json.dumps(c) for c in choices}) == 3  # no guard needed


@pytest.mark.parametrize("name, options", [("rembo", {"d": 3}), ("hesbo", {"d": 3}), ("sre", {"d": 2, "m": 2})])
def test_points_told_in_any_order_get_the_latent_points_they_were_proposed_for(name, options):
    m = build(name, {**options, **FAST, "budget": 40})
    drive(m, 5, objective)
    X = m.ask(4)
    W = {tuple(u): w for u, w in m._proposals}  # canonical point -> latent point of its proposal
    assert len(W) == 4
    assert_allclose(m._pending_gp_inputs(), np.array([w for _, w in m._proposals]))
    for i in (2, 0, 3, 1):
        m.tell(X[i], objective(X[i]))
        u = m.to_canonical(X[i])
        (w,) = [w for v, w in W.items() if np.max(np.abs(np.array(v) - u)) <= 1e-9]
        assert_array_equal(m._latent[-1], w)  # REMBO: also where the clip loses the latent point
        assert_allclose(m._lift(np.array(m._latent[-1])), u, atol=1e-9)
    assert m._proposals == [] and m.n_pending == 0


def test_ei_believes_the_smallest_value_and_ucb_the_posterior_mean():
    ucb = build("hesbo", {"d": 3, **FAST})
    ei = build("hesbo", {"d": 3, "acquisition": "ei", **FAST})
    for m in (ucb, ei):
        drive(m, 6, objective)
    assert ucb._pending_value() is None
    assert ei._pending_value() == pytest.approx(float(np.min(ei._gp_data()[1])))
    for m in (ucb, ei):
        m.ask(2)
        W = m._pending_gp_inputs()
        assert W.shape == (2, 3)
        mean = m.gp_.predict(W)[0]
        cond = m.gp_.hallucinate(W, m._pending_value()).predict(W)[0]
        if m is ucb:
            assert_allclose(cond, mean, atol=1e-8)  # GP-BUCB: the mean is kept
        else:  # the lie pulls the mean at the points out towards the smallest value
            assert np.all(cond < mean - 0.1 * (mean - ei._pending_value()))


def test_cancel_drops_the_latent_point_of_a_proposal():
    m = build("rembo", {"d": 3, **FAST})
    drive(m, 5, objective)
    X = m.ask(3)
    assert m.cancel(X[1]) == 1
    assert len(m._proposals) == 2 and m._pending_gp_inputs().shape == (2, 3)
    m.tell(X[0], objective(X[0]))
    assert m._latent[-1] is not None
    m.cancel()
    assert m._proposals == [] and m._pending_gp_inputs() is None


def test_a_latent_point_whose_box_point_is_pending_is_replaced():
    # REMBO's clip maps distinct latent points onto one face point; here the maximizer is forced
    # to return one latent point every time: the second proposal is conditioned on it too, and
    # then, still repeating, replaced by a uniform latent point (not by the base class's).
    m = build("rembo", {"d": 3, **FAST})
    drive(m, 5, objective)
    w0 = np.array([0.9, -0.2, 0.4])
    calls = []

    def fixed(fun, fun_and_grad):
        calls.append(1)
        return w0.copy()

    m._maximize_latent = fixed
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        X = m.ask(2)
    assert pending_warnings(record) == []
    assert len(calls) == 3  # the first proposal, then the second twice (once more conditioned)
    assert_allclose(m.to_canonical(X[0]), m._lift(w0), atol=1e-9)
    w1 = m._proposals[1][1]
    assert not np.allclose(w1, w0) and np.all(np.abs(w1) <= 1.0)
    assert_allclose(m.to_canonical(X[1]), m._lift(w1), atol=1e-9)


@pytest.mark.parametrize("name, options, steps", METHODS, ids=IDS)
def test_resume_with_points_pending(name, options, steps):
    m = build(name, options, seed=4)
    drive(m, steps - 1, objective)
    X = m.ask(3)
    state = json.loads(json.dumps(m.state_dict()))
    resumed = Method.from_state(state)
    assert_array_equal(resumed.pending, m.pending)
    assert_array_equal(resumed.ask(2), m.ask(2))  # proposed with the same three points out
    for obj in (m, resumed):  # then told out of order: the same next batch
        obj.tell(X[::-1], values(X[::-1]))
    assert_array_equal(resumed.ask(2), m.ask(2))
    # and from a state without the history
    light = Method.from_state(json.loads(json.dumps(m.state_dict(include_history=False))),
                              history=(m.X_all, m.y_all))
    assert_array_equal(light.ask(3), m.ask(3))


def test_embedding_state_of_before_batches_still_loads():
    # Such states had no pending points and kept the latent point of the last proposal in
    # internal["pending"]; telling that point still gives it its latent coordinates.
    m = build("rembo", {"d": 3, **FAST})
    drive(m, 5, objective)
    x = m.ask()
    state = json.loads(json.dumps(m.state_dict()))
    w = state["internal"].pop("pending_latent")[0]
    state["internal"]["pending"] = w
    del state["pending"]
    old = Method.from_state(state)
    assert old.n_pending == 0
    old.tell(x, objective(x))
    assert_array_equal(old._latent[-1], w)
    m.tell(x, objective(x))
    assert_array_equal(old.ask(), m.ask())


def test_sre_batch_across_a_stage_boundary():
    m = build("sre", {"d": 2, "m": 3, "budget": 16, "stage_init": 2, **FAST})  # stages of 8, 4, 4
    assert m.stage_lengths == [8, 4, 4]
    drive(m, 6, objective)
    X = m.ask(4)  # all of stage 1 (n_told = 6), two of them beyond its planned 8 evaluations
    assert m.stage_ == 0
    m.tell(X[:2], values(X[:2]))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        x = m.ask()  # opens stage 2 with two points of stage 1 still out
    assert pending_warnings(record) == []
    assert m.stage_ == 1 and len(m._proposals) == 1  # the old latent points are forgotten
    m.tell(X[2:], values(X[2:]))  # points of the old embedding: kept out of the new stage's GP
    assert m._latent[-2:] == [None, None]
    m.tell(x, objective(x))
    assert m._latent[-1] is not None
    assert len(m._stage_rows()[1]) == 1
    drive(m, 6, objective)


# ---------------------------------------------------------------------- SI-BO's Phase 1
def _si_bo(n_rep: int = 1, **options) -> Method:
    opts = {"k": 1, "m_X": 2, "m_Phi": 4, "n_rep": n_rep, "grid_points": 41, "noise_std": 0.0, "ds_solver": "admm"}
    return build("si-bo", {**opts, **options})


def test_si_bo_phase1_batches_are_the_design_in_order():
    m = _si_bo()
    _, _, points = m.design()
    assert m.phase1_evaluations == 10
    X = m.ask(4)
    assert_allclose(m.to_canonical(X), points[:4], atol=1e-12)
    m.tell(X[1], objective(X[1]))  # out of order
    X2 = m.ask(8)  # only the 6 design points left: the rest must wait for the values
    assert X2.shape == (6, D)
    assert_allclose(m.to_canonical(X2), points[4:], atol=1e-12)
    assert m.ask(3).shape == (0, D)
    with pytest.raises(PendingError, match="pending"):
        m.ask()
    rest = np.vstack([X[[0, 2, 3]], X2])[::-1]
    m.tell(rest[:-1], values(rest[:-1]))
    assert m.in_phase1 and m.ask(2).shape == (0, D)  # one evaluation is still out
    m.tell(rest[-1], objective(rest[-1]))
    assert not m.in_phase1
    assert m.ask(2).shape == (2, D)  # Phase 2: GP-UCB on the learned line


def test_si_bo_phase1_repetitions_wait_for_the_pending_point():
    m = _si_bo(n_rep=2)  # 20 slots: design point q at slots 2q, 2q + 1
    _, _, points = m.design()
    X = m.ask(3)  # one evaluation of each of the first three design points, not two of the first
    assert_allclose(m.to_canonical(X), points[:3], atol=1e-12)
    m.tell(X[0], objective(X[0]))
    x = m.ask()  # the repetition of design point 0, now that its first value is in
    assert_allclose(m.to_canonical(x), points[0], atol=1e-12)
    assert m.ask(10).shape == (7, D)  # design points 3..9 once; their repetitions wait
    assert m.ask(1).shape == (0, D)


@pytest.mark.parametrize("n_rep", [1, 2])
def test_si_bo_learns_the_same_subspace_from_a_batch_told_in_reverse(n_rep):
    seq = _si_bo(n_rep=n_rep, m_Phi=6)
    drive(seq, seq.phase1_evaluations, objective)
    seq.ask()
    bat = _si_bo(n_rep=n_rep, m_Phi=6)
    while bat.in_phase1:
        X = bat.ask(5)
        bat.tell(X[::-1], values(X[::-1]))
    bat.ask()
    assert_allclose(bat.subspace_, seq.subspace_, atol=1e-8)
    info_b, info_s = bat.diagnostics(), seq.diagnostics()
    assert info_b["fd_terms_used"] == info_s["fd_terms_used"] == info_s["fd_terms_total"]


def test_si_bo_points_it_did_not_propose_take_free_slots():
    m = _si_bo()
    _, _, points = m.design()
    X = m.ask(2)
    foreign = np.full(D, 0.5)
    m.tell(foreign, 1.0)  # takes slot 2, the first one neither told nor out
    x = m.ask()
    assert_allclose(m.to_canonical(x), points[3], atol=1e-12)
    m.tell(np.vstack([X, x]), values(np.vstack([X, x])))
    assert m._slots == [2, 0, 1, 3]
    state = json.loads(json.dumps(m.state_dict()))
    assert state["internal"]["phase1_slots"] == [2, 0, 1, 3]
    assert Method.from_state(state)._slots == [2, 0, 1, 3]


def test_si_bo_failed_repetition_is_replaced_and_keeps_its_slot():
    m = _si_bo(n_rep=2)
    _, _, points = m.design()
    x = m.ask()
    m.tell(x, None)  # design point 0 failed
    with pytest.warns(RuntimeWarning, match="already failed once"):
        X = m.ask(2)
    assert np.max(np.abs(m.to_canonical(X[0]) - points[0])) > 1e-3  # a random point for the repetition
    assert_allclose(m.to_canonical(X[1]), points[1], atol=1e-12)
    m.tell(X[::-1], values(X[::-1]))
    assert m._slots == [0, 2, 1]


def test_si_bo_state_of_before_batches_still_loads():
    m = _si_bo()
    drive(m, 3, objective)
    state = json.loads(json.dumps(m.state_dict()))
    assert state["internal"]["phase1_slots"] is None  # told one at a time: slot p for the p-th
    for key in ("phase1_slots", "phase1_pending_slots"):
        del state["internal"][key]
    del state["pending"]
    old = Method.from_state(state)
    assert old._slots == [0, 1, 2]
    assert_array_equal(old.ask(3), m.ask(3))


def test_grid_cache_keeps_only_the_told_points():
    m = build("random-subspace-ucb", {"k": 2, "grid_points": 31})
    drive(m, 5, objective)
    m.ask(4)
    cache = m._grid_cache
    assert cache.V.shape[0] == m.gp_.n_train == 5  # the pending points' rows were not stored
