"""SRE (Qian et al. 2016): the embedding's scale of the authors' code and no repeated evaluations."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from hdbo import problems
from hdbo.methods import Method, make_method

from _runs import drive

BOX = np.array([[-5.0, 10.0], [0.0, 15.0]] + [[-1.0, 4.0]] * 10)  # D = 12
FAST = {"n_init": 4, "acq_budget": 120, "n_restarts": 1}
# experiments/tranthe2020/fig1_d50.toml's SRE (quick-scale acquisition budget)
SPEC = {"d": 5, "m": 5, "n_init": 20, "acq_budget": 500, "maximizer": "lbfgsb", "kernel": "matern52", "ard": False,
        "refit_every": 1, "beta": "tranthe2020", "gp_prior": "none"}


def objective(x: np.ndarray) -> float:
    u = (x - BOX[:, 0]) / (BOX[:, 1] - BOX[:, 0])
    return float(-np.sum((u[:3] - 0.7) ** 2) - 0.1 * np.sum(u[3:] ** 2))


def _repeats(X: np.ndarray) -> int:
    """Points equal (max-norm 1e-9) to an earlier one."""
    return sum(int(np.min(np.max(np.abs(X[:i] - X[i]), axis=1)) <= 1e-9) for i in range(1, len(X)))


@pytest.mark.parametrize("d", [2, 5])
def test_default_scale_is_the_authors_n01d_matrix_on_the_unit_box(d):
    # Qian et al.'s code: A with N(0, 1/d) entries, y in [-1, 1]^d. Here A ~ N(0, 1) on
    # [-1/sqrt(d), 1/sqrt(d)]^d: the same points. The old default (y in [-1, 1]^d with N(0, 1))
    # clipped 44% of the coordinates at d = 5 (31% at d = 2).
    m = make_method("sre", [(-1.0, 1.0)] * 200, seed=0, d=d, budget=50)
    emb = m.embedding_
    assert m.half_width == pytest.approx(1 / math.sqrt(d)) and m.get_params()["half_width"] == m.half_width
    assert np.allclose(emb.low_box.upper[1:], 1 / math.sqrt(d)) and emb.low_box.upper[0] == 1.0  # alpha in [-1, 1]
    Y = emb.low_box.sample(400, np.random.default_rng(1))
    Z = Y[:, 1:] @ emb.A.T  # stage 1: anchor 0, so x = clip(A y)
    # per-coordinate standard deviation of A y / sqrt(d) for y uniform on [-1, 1]^d: sqrt(1/3) = 0.58
    assert np.std(Z) == pytest.approx(math.sqrt(1 / 3), rel=0.1)
    assert emb.clipped_fraction(Y) < 0.12
    # half_width is still an option (1.0 gives SPEC P3.B.4's proposal)
    assert make_method("sre", BOX, seed=0, half_width=1.0).embedding_.low_box.upper[1] == 1.0
    with pytest.raises(ValueError, match="half_width"):
        make_method("sre", BOX, seed=0, half_width=0.0)


def test_a_proposal_that_repeats_a_told_point_is_replaced():
    # Force the acquisition maximizer onto the best told point: every GP-UCB proposal would then
    # repeat it (the anchor from stage 2 on); SRE must propose an unseen latent point instead.
    m = make_method("sre", BOX, seed=3, budget=16, m=2, d=2, stage_init=2, **FAST)  # stages 10, 6

    def best_told_latent(fun, fun_and_grad):
        W, y = m._latent_rows()
        return W[int(np.argmax(y))].copy()

    m._maximize_latent = best_told_latent
    X = drive(m, 16, objective)
    n_model = 16 - 4 - 2  # initial design of stage 1, 2 random points opening stage 2
    assert _repeats(X) == 0
    info = m.diagnostics()
    assert info["n_repeats_avoided"] == n_model
    # the replacements lie on the stage's embedding (and so in the model), and in the box
    assert all(w is not None for w in m._latent)
    assert np.all(X >= BOX[:, 0]) and np.all(X <= BOX[:, 1])
    # the counter survives a JSON state round trip
    resumed = Method.from_state(json.loads(json.dumps(m.state_dict())))
    assert resumed.diagnostics()["n_repeats_avoided"] == n_model


def test_no_repeated_evaluations_on_hidden_branin_with_the_spec_options():
    # Before the guard, seed 2 re-evaluated its best initial point at t = 20 and the anchor at
    # t = 40 (2 of 60 evaluations), seed 4 one point; at the new scale without the guard, seeds
    # 1, 2, 4 and 5 of 0-9 repeat one point each.
    for seed in (2, 4):
        p = problems.get("branin", dim=50, domain="symmetric", seed=seed)
        m = make_method("sre", p.bounds, seed=seed, budget=60, **SPEC)
        X = drive(m, 60, p)
        assert _repeats(X) == 0
        assert np.all(np.abs(X) <= 1.0)
