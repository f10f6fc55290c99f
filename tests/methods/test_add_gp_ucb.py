"""Add-GP-UCB: group-wise maximization, schedules, oracle decomposition, comparison with GP-UCB."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from numpy.testing import assert_allclose

from hdbo import problems
from hdbo.gp import Additive, GaussianProcess, SquaredExponential
from hdbo.methods import make_method
from hdbo.methods.gp_based import PAPER_SETTINGS
from _runs import drive


def test_groupwise_maximization_equals_joint_maximization_on_a_grid():
    rng = np.random.default_rng(0)
    groups = [[0, 2], [1, 3]]
    X = rng.random((25, 4))
    y = np.sin(6 * X[:, 0]) * X[:, 2] + np.cos(4 * X[:, 1] + X[:, 3])
    gp = GaussianProcess(Additive(SquaredExponential(lengthscale=0.3), groups)).fit(X, y, optimize=False)
    beta = 2.0
    axis = np.linspace(0, 1, 11)
    pairs = np.array(list(itertools.product(axis, axis)))  # the 2-D grid of one group
    # joint: the additive acquisition on the full 11^4 product grid
    full = np.array(list(itertools.product(axis, repeat=4)))
    mus, sds = gp.predict_groups(full)
    joint_vals = np.sum(mus + np.sqrt(beta) * sds, axis=1)
    joint = full[np.argmax(joint_vals)]
    # group-wise: each group's acquisition on its own 11^2 grid, concatenated
    x = np.empty(4)
    for j, g in enumerate(groups):
        mu, sd = gp.predict_group(j, pairs)
        x[g] = pairs[np.argmax(mu + np.sqrt(beta) * sd)]
    assert_allclose(x, joint)
    # and the method's own group-wise maximizer (grid, 121 points per group) agrees
    m = make_method("add-gp-ucb", [(0, 1)] * 4, seed=0, decomposition=groups, maximizer="grid",
                    acq_budget=242, acq_fraction=1.0, explore_iters=0, beta=beta)
    m.gp_ = gp
    assert_allclose(m._acquire(gp), joint)


def test_schedule_exploration_then_decomposition_learning():
    problem = problems.get("additive-trimodal", dim=12, d=3, M=4, seed=0)
    m = make_method("add-gp-ucb", problem.bounds, seed=0, d=3, M=4, n_init=5, refit_every=6, explore_iters=6,
                    acq_budget=200, n_decompositions=5)
    refits = []
    for _ in range(22):
        x = m.ask()
        m.tell(x, problem(x))
        if m.gp_ is not None and m.gp_.n_full_ == m.gp_.n_train and (not refits or refits[-1][0] != m.gp_.n_train):
            refits.append((m.gp_.n_train, m.iteration - 1, float(m.gp_.kernel.group_kernel(0).lengthscale[0])))
    # re-learning at t = 1, 7, 13, 19 (n = 5, 11, 17 observations): the first one with the
    # exploration bandwidth fixed at 1e-5, the later ones with it learned
    assert [r[0] for r in refits] == [5, 11, 17]
    assert refits[0][2] == pytest.approx(1e-5)
    assert all(r[2] > 1e-3 for r in refits[1:])
    assert m.decomposition_scores_.size == 6  # current + 5 random candidates
    info = m.diagnostics()
    assert sorted(i for g in info["groups"] for i in g) == list(range(12))


def test_oracle_uses_true_groups_plus_unused_coordinates():
    problem = problems.get("additive-trimodal", dim=10, d=3, M=3, seed=4)
    m = make_method("add-gp-ucb", problem.bounds, decomposition="oracle", structure=problem.structure)
    assert m.groups_[:3] == [sorted(g) for g in problem.structure["groups"]]
    assert len(m.groups_) == 4 and len(m.groups_[3]) == 1
    with pytest.raises(ValueError, match="needs a problem whose structure has 'groups'"):
        make_method("add-gp-ucb", problem.bounds, decomposition="oracle")
    with pytest.raises(ValueError, match="must cover all 10"):
        make_method("add-gp-ucb", problem.bounds, d=2, M=3)
    with pytest.raises(ValueError, match="disjoint"):
        make_method("add-gp-ucb", problem.bounds, decomposition=[[0, 1], [1, 2]])


def test_add_star_beats_gp_ucb_on_24_6_4(run):
    add, ucb = [], []
    for seed in range(4):
        problem = problems.get("additive-trimodal", dim=24, d=6, M=4, seed=seed)
        # the paper's claim, at the papers' settings (bare ML-II, DIRECT)
        add.append(run("add-gp-ucb", problem, 70, seed, decomposition="oracle", acq_budget=800, **PAPER_SETTINGS)[0])
        ucb.append(run("gp-ucb", problem, 70, seed, acq_budget=800, kernel="se", ard=False, **PAPER_SETTINGS)[0])
    # Add-* exploits the correct additive model. Regrets are large in absolute terms (the
    # trimodal log-density floors at -700 per group); measured at 70 evaluations, seeds 0-3:
    # Add-* 60.6 / 34.3 / 32.6 / 45.9 against GP-UCB 53.8 / 77.9 / 70.3 / 69.4 (means 43.4 vs
    # 67.9; GP-UCB was 66.3 / 81.4 / 64.4 / 127.3 before its acquisition was maximized in the
    # GP's standardized units, issue 17). Required: lower on 3 of 4 seeds and a mean at least
    # 30% lower.
    assert sum(a < u for a, u in zip(add, ucb)) >= 3, (add, ucb)
    assert np.mean(add) < 0.7 * np.mean(ucb), (add, ucb)


def test_repeated_queries_are_counted_and_can_be_resampled():
    """Add-* on (10,3,3) re-queries earlier points after its exploration phase (the paper's rule,
    counted in ``repeat_queries``); with ``repeats="resample"`` no query repeats an earlier one."""
    from hdbo.problems import get

    p = get("additive-trimodal", dim=10, d=3, M=3, seed=0)
    out = {}
    for repeats in ("explore", "resample"):
        m = make_method("add-gp-ucb", p.bounds, seed=0, decomposition="oracle", structure=p.structure,
                        repeats=repeats, **PAPER_SETTINGS)  # DIRECT's repeats, as in the paper
        X = drive(m, 90, p)
        U = m.to_canonical(X)
        later = [i for i in range(45, 90) if np.min(np.max(np.abs(U[:i] - U[i]), axis=1)) <= 1e-6]
        out[repeats] = (len(later), m.diagnostics()["repeat_queries"])
    assert out["explore"][0] >= 5 and out["explore"][1] >= out["explore"][0]  # measured: 13 of 45
    assert out["resample"][0] == 0 and out["resample"][1] >= 1  # the maximizer still asked for repeats


def test_repeats_perturb_steps_locally_as_the_authors_code():
    """With ``repeats="perturb"`` (the authors' addGPBO.m) a repeated maximizer is moved by a
    Gaussian step of 0.1 h in every coordinate: no query repeats an earlier one, and the
    replacement of a repeated interior point has per-coordinate spread 0.1 h around it."""
    from hdbo.problems import get

    p = get("additive-trimodal", dim=10, d=3, M=3, seed=0)
    m = make_method("add-gp-ucb", p.bounds, seed=0, decomposition="oracle", structure=p.structure,
                    repeats="perturb", **PAPER_SETTINGS)
    X = drive(m, 90, p)
    U = m.to_canonical(X)
    later = [np.min(np.max(np.abs(U[:i] - U[i]), axis=1)) for i in range(m.n_init + m.explore_iters, 90)]
    assert m.diagnostics()["repeat_queries"] >= 5  # the maximizer asked for repeats (13 of 45 without the rule)
    assert min(later) > 1e-6
    # the step itself, from an observed point inside the box
    gp = m.gp_
    h = float(gp.kernel.group_kernel(0).lengthscale[0])
    seen = U.copy()
    u = np.full(10, 0.5)
    seen[0] = u

    def repeat(v):
        return bool(np.min(np.max(np.abs(seen - v), axis=1)) <= 1e-6)

    steps = np.array([m._perturb(u, gp, repeat) for _ in range(400)]) - u
    assert np.all(np.abs(steps) > 0)
    assert np.std(steps, axis=0) == pytest.approx(np.full(10, 0.1 * h), rel=0.2)
    assert np.abs(np.mean(steps)) < 0.1 * h / 10
    with pytest.raises(ValueError, match="repeats"):
        make_method("add-gp-ucb", p.bounds, seed=0, repeats="jitter")


def test_group_searches_run_in_lockstep_with_the_same_queries(monkeypatch):
    """The groups' DIRECT searches share their bookkeeping (maximize_direct_many) and propose
    exactly what one maximize_direct per group proposes."""
    import hdbo.methods.add_gp_ucb as add_module
    from hdbo.acquisition import maximize_direct

    p = problems.get("additive-trimodal", dim=24, d=6, M=4, seed=1)
    options = dict(seed=1, d=4, refit_every=10, explore_iters=10, acq_budget=600, **PAPER_SETTINGS)
    lockstep = make_method("add-gp-ucb", p.bounds, **options)
    X_lockstep = drive(lockstep, 40, p)
    calls = []

    def one_by_one(funs, bounds, *, budgets, rng):
        results = [maximize_direct(f, b, budget=n, rng=rng) for f, b, n in zip(funs, bounds, budgets)]
        calls.append((len(funs), [len(b) for b in bounds], list(budgets), sum(r.nfev for r in results)))
        return results

    monkeypatch.setattr(add_module, "maximize_direct_many", one_by_one)
    sequential = make_method("add-gp-ucb", p.bounds, **options)
    X_sequential = drive(sequential, 40, p)
    assert len(calls) == 30  # every model-based query: 6 groups of 4 coordinates, 0.9 * 600 / 6 points each
    assert all(c[:3] == (6, [4] * 6, [90] * 6) for c in calls)
    assert np.array_equal(X_lockstep, X_sequential)
    assert lockstep.last_acq_nfev_ == sequential.last_acq_nfev_ == calls[-1][3]
