"""REMBO, HeSBO, SRE: proposals on the embedding and in the box, SRE's stages, state, regret."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from hdbo import problems
from hdbo.methods import Method, make_method
from hdbo.structure.embeddings import embedding_from_dict

from _runs import drive

BOX = np.array([[-5.0, 10.0], [0.0, 15.0], [2.0, 3.0]] + [[-1.0, 4.0]] * 9)  # D = 12, uneven widths
FAST = {"n_init": 4, "acq_budget": 120, "n_restarts": 1}


def objective(x: np.ndarray) -> float:
    u = (x - BOX[:, 0]) / (BOX[:, 1] - BOX[:, 0])
    return float(-np.sum((u[:4] - 0.7) ** 2) - 0.1 * np.sum(u[4:] ** 2))


@pytest.mark.parametrize("name, options", [
    ("rembo", {"d": 3}),
    ("rembo", {"d": 3, "kernel_space": "high"}),
    ("hesbo", {"d": 3}),
    ("sre", {"d": 2, "m": 3}),
])
def test_every_proposal_is_in_the_box_and_on_the_embedding(name, options):
    m = make_method(name, BOX, seed=0, budget=13, **FAST, **options)
    on_embedding = []
    for _ in range(13):
        x = m.ask()
        assert np.all(x >= BOX[:, 0]) and np.all(x <= BOX[:, 1])
        m.tell(x, objective(x))
        w = m._latent[-1]  # the latent point it was proposed for (REMBO: before clipping)
        on_embedding.append(w is not None and np.max(np.abs(m._lift(np.array(w)) - m.to_canonical(x))) < 1e-9)
    assert all(on_embedding)
    assert m.last_acq_nfev_ <= 120
    info = json.loads(json.dumps(m.diagnostics()))
    assert info["low_dim"] == m.embedding_.low_dim
    assert 0.0 <= info["clipped_fraction"] <= 1.0


def test_rembo_latent_box_kernel_space_and_defaults():
    m = make_method("rembo", BOX, seed=1, **FAST)
    assert m.d == 5 and m.embedding_.A.shape == (12, 5)
    assert_allclose(m.embedding_.low_box.upper, math.sqrt(5))
    assert make_method("rembo", BOX[:3], seed=1).d == 3  # d <= D
    drive(m, 6, objective)
    assert m.gp_.X_.shape[1] == 5  # k_Y: the GP sees latent points
    high = make_method("rembo", BOX, seed=1, kernel_space="high", **FAST)
    drive(high, 6, objective)
    assert high.gp_.X_.shape[1] == 12 and not high.ard  # k_X: the clipped points, isotropic
    assert m.ard
    # HeSBO never clips; REMBO with its sqrt(d) box mostly does
    assert m.diagnostics()["clipped_fraction"] > 0.2
    hs = make_method("hesbo", BOX, seed=1, **FAST)
    drive(hs, 5, objective)
    assert hs.diagnostics()["clipped_fraction"] == 0.0


def test_rembo_high_kernel_gradient_matches_finite_differences():
    m = make_method("rembo", BOX, seed=2, d=3, kernel_space="high", **FAST)
    drive(m, 7, objective)
    from hdbo.acquisition import UCB

    fun, fun_and_grad = m._latent_acquisition(UCB(m.gp_, 2.0))
    W = np.random.default_rng(0).uniform(-0.3, 0.3, (4, 3))
    v, g = fun_and_grad(W)
    assert_allclose(v, fun(W))
    h = 1e-6
    fd = np.stack([(fun(W + h * e) - fun(W - h * e)) / (2 * h) for e in np.eye(3)], axis=1)
    assert_allclose(g, fd, rtol=1e-4, atol=1e-6)


def test_points_off_the_embedding_stay_out_of_the_latent_model():
    m = make_method("hesbo", BOX, seed=0, d=3, **FAST)
    drive(m, 4, objective)
    x = BOX[:, 0] + 0.37 * (BOX[:, 1] - BOX[:, 0]) + 0.01 * np.arange(12)  # not on the sketch
    m.tell(x, 5.0)  # better than anything seen
    assert m._latent[-1] is None
    assert m.best[1] == 5.0
    assert m._gp_data()[1].size == 4
    # a point of the sketch told by the user is used, at its latent coordinates
    y = np.array([0.2, -0.4, 0.9])
    m.tell(m.from_canonical(m.embedding_.lift(y)), 1.0)
    assert_allclose(m._latent[-1], y, atol=1e-12)
    assert m._gp_data()[1].size == 5


def test_hesbo_reports_collisions_of_the_active_coordinates():
    p = problems.get("branin", dim=30, seed=4)
    m = make_method("hesbo", p.bounds, seed=0, d=5, structure=p.structure, **FAST)
    info = m.diagnostics()
    a, b = p.structure["active_dims"]
    expected = int(m.embedding_.buckets[a] == m.embedding_.buckets[b])
    assert info["active_collisions"] == expected
    assert info["active_separated"] == (expected == 0)
    assert len(info["buckets"]) == 30 and set(info["signs"]) <= {-1, 1}


def test_sre_budget_split_into_stages():
    m = make_method("sre", BOX, seed=0, budget=60, n_init=10, m=5)
    assert m.stage_lengths == [20, 10, 10, 10, 10]
    m = make_method("sre", BOX, seed=0, budget=63, n_init=10, m=5)
    assert m.stage_lengths == [21, 11, 11, 10, 10] and sum(m.stage_lengths) == 63
    starts = [0, 21, 32, 43, 53, 63, 74]  # beyond the budget: stages of ceil(53 / 5) = 11
    assert [m.stage_of(s) for s in starts] == [0, 1, 2, 3, 4, 5, 6]
    assert [m.stage_of(s - 1) for s in starts[1:]] == [0, 1, 2, 3, 4, 5]
    assert make_method("sre", BOX, seed=0, n_init=4, stage_length=7).stage_lengths == [11, 7, 7, 7, 7]
    assert make_method("sre", BOX, seed=0, n_init=4).stage_lengths == [34, 30, 30, 30, 30]  # no budget
    tiny = make_method("sre", BOX, seed=0, budget=6, n_init=4, m=5)  # 2 evaluations for 5 stages
    assert tiny.stage_lengths == [5, 1, 0, 0, 0]
    assert [tiny.stage_of(n) for n in range(7)] == [0, 0, 0, 0, 0, 1, 5]


def test_sre_stages_restart_around_the_best_point():
    m = make_method("sre", BOX, seed=3, budget=16, m=3, d=2, stage_init=2, **FAST)  # stages 8, 4, 4
    assert m.stage_lengths == [8, 4, 4]
    seen = []
    for n in range(16):
        x = m.ask()
        if n in (0, 8, 12):  # a stage opens
            seen.append(m.stage_)
            anchor = m.embedding_.anchor
            if n == 0:
                assert_array_equal(anchor, np.zeros(12))  # x_0 = 0
            else:
                assert_allclose(anchor, m.to_canonical(m.best[0]), atol=1e-12)
                W, y = m._latent_rows()
                assert y[0] == m.best[1]  # the anchor's value enters the stage's GP ...
                assert_allclose(m._lift(W[0]), anchor, atol=1e-12)  # ... at its latent point (1, 0)
                assert m.gp_ is None or m.gp_.n_train <= 1 + 2
        m.tell(x, objective(x))
    assert seen == [0, 1, 2]
    info = m.diagnostics()
    assert info["stage"] == 3 and len(info["stage_best"]) == 3
    assert max(info["stage_best"]) == m.best[1]


@pytest.mark.parametrize("name, options", [("rembo", {"d": 3}), ("hesbo", {"d": 3}), ("sre", {"d": 2, "m": 3})])
def test_same_seed_same_embedding_and_points(name, options):
    runs = [make_method(name, BOX, seed=s, budget=9, **FAST, **options) for s in (7, 7, 8)]
    xs = [drive(m, 9, objective) for m in runs]
    assert_array_equal(xs[0], xs[1])
    assert_array_equal(runs[0].embedding_.matrix, runs[1].embedding_.matrix)
    assert not np.array_equal(runs[0].embedding_.matrix, runs[2].embedding_.matrix)
    assert not np.allclose(xs[0], xs[2])


@pytest.mark.parametrize("name, options", [
    ("rembo", {"d": 3}),
    ("rembo", {"d": 3, "kernel_space": "high", "acquisition": "ei"}),
    ("hesbo", {"d": 3, "maximizer": "lbfgsb"}),
    ("sre", {"d": 2, "m": 3, "mode": "offset"}),
])
def test_json_state_round_trip_resumes_exactly(name, options):
    ref = make_method(name, BOX, seed=5, budget=14, **FAST, **options)
    ref_xs = drive(ref, 14, objective)
    m = make_method(name, BOX, seed=5, budget=14, **FAST, **options)
    drive(m, 9, objective)  # SRE: inside its second stage
    state = json.loads(json.dumps(m.state_dict()))
    resumed = Method.from_state(state)
    assert_array_equal(resumed.embedding_.matrix, m.embedding_.matrix)
    assert resumed._latent == m._latent
    assert_array_equal(drive(resumed, 5, objective), ref_xs[9:])
    assert embedding_from_dict(state["internal"]["embedding"]).to_dict() == m.embedding_.to_dict()


def test_acquisition_budget_is_honoured():
    for maximizer in ("direct", "lbfgsb", "random"):
        m = make_method("hesbo", BOX, seed=0, d=3, n_init=3, acq_budget=57, maximizer=maximizer, n_restarts=0)
        drive(m, 5, objective)
        assert 0 < m.last_acq_nfev_ <= 57


def test_bad_arguments():
    with pytest.raises(ValueError, match="d must be <= the problem dimension 12"):
        make_method("rembo", BOX, d=13)
    with pytest.raises(ValueError, match="kernel_space"):
        make_method("rembo", BOX, kernel_space="middle")
    with pytest.raises(ValueError, match="m must be"):
        make_method("sre", BOX, m=0)
    with pytest.raises(ValueError, match="mode"):
        make_method("sre", BOX, mode="sideways")
    with pytest.raises(ValueError, match="acquisition"):
        make_method("hesbo", BOX, acquisition="pi")
    with pytest.raises(TypeError, match="d must be an int"):
        make_method("hesbo", BOX, d=2.5)
    with pytest.raises(ValueError, match="d must be <= the problem dimension 12, got 13"):
        make_method("sre", BOX, d=13)
    with pytest.raises(ValueError, match="d must be an int >= 1"):
        make_method("hesbo", BOX, d=0)
