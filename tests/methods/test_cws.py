"""CWS, the coordinate-wise sampling baseline of Chen, Castro, Krause (2012), Section 5 / SPEC.md P2.B."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hdbo.methods import make_method
from hdbo.problems import gp_sample


def select(problem, seed: int, noise_variance: float = 0.01, **options):
    m = make_method("cws", problem.bounds, seed=seed, optimize=False, budget=2000, structure=problem.structure,
                    noise_variance=noise_variance, **options)
    rng = np.random.default_rng(seed + 50)
    while not m.done:
        x = m.ask()
        m.tell(x, problem(x) + math.sqrt(noise_variance) * rng.standard_normal())
    return m


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_stated_sample_count_finds_the_set_on_an_easy_case(seed):
    # D = 10, d = 2, low noise: 20 finite differences per coordinate are plenty
    problem = gp_sample(10, d=2, seed=seed, n_features=1024)
    m = select(problem, seed, rounds=20)
    info = m.diagnostics()
    assert m.selected_ == problem.structure["active_dims"] and info["recovered"] is True
    assert m.n_told == info["selection_evaluations"] == 2 * 10 * 20
    assert info["selection_rounds"] == 20 and info["selection_iterations"] == 200


def test_queries_are_coordinate_pairs_at_distance_3b():
    m = make_method("cws", [(-1, 1)] * 4, seed=0, n_select=1, rounds=1, optimize=False)
    X = []
    while not m.done:
        x = m.ask()
        X.append(x)
        m.tell(x, float(np.sin(5 * x[2])))
    X = np.array(X)
    assert X.shape == (8, 4)
    for i in range(4):
        a, b = X[2 * i], X[2 * i + 1]
        moved = np.flatnonzero(a != m.background_)
        assert list(moved) in ([i], [])  # coordinate i (or nothing, if z hit x0_i exactly)
        assert b[i] - a[i] == pytest.approx(0.3) and -1 <= a[i] <= 0.7
        assert np.array_equal(np.delete(b, i), np.delete(m.background_, i))
    assert m.selected_ == [2]


def test_clairvoyant_stopping_is_the_first_round_that_recovers_the_set():
    problem = gp_sample(10, d=2, seed=2, n_features=1024)
    m = select(problem, seed=2, noise_variance=0.1)  # rounds=None: oracle stopping
    r = m.diagnostics()["selection_rounds"]
    assert m.diagnostics()["recovered"] is True and m.n_told == 2 * 10 * r
    assert r > 1  # this seed needs more than one round, so the next check means something
    before = select(problem, seed=2, noise_variance=0.1, rounds=r - 1)
    assert before.selected_ != problem.structure["active_dims"]
    again = select(problem, seed=2, noise_variance=0.1, rounds=r)
    assert again.selected_ == m.selected_ and again.n_told == m.n_told


def test_budget_runs_out_before_recovery_is_a_failure():
    problem = gp_sample(40, d=2, seed=5, n_features=1024)
    m = select(problem, seed=0, noise_variance=1.0, selection_budget=80)  # one round of 40 pairs
    info = m.diagnostics()
    assert info["selection_evaluations"] == 80 and info["selection_rounds"] == 1
    assert info["recovered"] == (m.selected_ == problem.structure["active_dims"])
    assert info["recovered"] is False  # with noise variance 1, one sample per coordinate does not do


def test_budget_smaller_than_a_round_and_failed_evaluations():
    m = make_method("cws", [(-1, 1)] * 5, seed=0, n_select=2, rounds=3, selection_budget=7, optimize=False)
    values = iter([1.0, 0.0, float("nan"), 0.0, 0.1, 2.0, 0.0])
    while not m.done:
        m.tell(m.ask(), next(values))
    info = m.diagnostics()
    # pairs: coordinate 0 (dy = 1); a failure drops coordinate 1's pair; coordinate 1 (dy = -0.1);
    # coordinate 2 (dy = 2); the budget of 7 ends the selection inside round 1: the top 2 of the
    # three coordinates sampled
    assert info["selection_evaluations"] == 7 and info["selection_rounds"] == 0
    assert info["selection_iterations"] == 3 and m.selected_ == [0, 2]


def test_plain_objective_defaults():
    """No structure: ceil(sqrt(D)) coordinates, rounds while half the budget pays for one."""
    m = make_method("cws", [(-1, 1)] * 9, seed=0, budget=80)
    assert m.k == 3 and m.n_select is None and m.rounds is None
    f = lambda x: float(-(x[4] - 0.2) ** 2 - 3 * (x[7] + 0.1) ** 2 + 0.01 * x[0])  # noqa: E731
    while m.selecting:
        x = m.ask()
        m.tell(x, f(x))
    info = m.diagnostics()
    # selection budget 40 = 2 rounds of 2 D = 18 evaluations; a third does not fit
    assert info["selection_rounds"] == 2 and info["selection_evaluations"] == 36
    assert {4, 7} <= set(m.selected_) and len(m.selected_) == 3
    m2 = make_method("cws", [(-1, 1)] * 30, seed=0, budget=40)  # less than one round (60)
    while m2.selecting:
        x = m2.ask()
        m2.tell(x, float(x[3]))
    assert m2.diagnostics()["selection_evaluations"] == 20 and len(m2.selected_) == 6


def test_arguments():
    with pytest.raises(ValueError, match="n_select"):
        make_method("cws", [(-1, 1)] * 4, n_select=5, rounds=1)
    with pytest.raises(TypeError, match="rounds"):
        make_method("cws", [(-1, 1)] * 4, n_select=1, rounds=1.5)
    m = make_method("cws", [(-1, 1)] * 4, structure={"active_dims": [1, 3]})
    assert m.k == 2 and m.rounds is None
