"""HDS + GP-UCB (Chen, Castro, Krause 2012): selection through ask/tell, then GP-UCB on the selection."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import hdbo
from hdbo.methods import Method, make_method
from hdbo.methods.hds import chen2012_beta
from hdbo.problems import get, gp_sample


def run_noisy(m: Method, problem, noise_variance: float, seed: int, budget: int | None = None) -> int:
    """Ask/tell until the method is done (or ``budget`` evaluations); return the evaluations made."""
    rng = np.random.default_rng(seed)
    n = 0
    while not m.done and (budget is None or n < budget):
        x = m.ask()
        m.tell(x, problem(x) + math.sqrt(noise_variance) * rng.standard_normal())
        n += 1
    return n


@pytest.mark.parametrize("test", ["fdt", "gpt"])
def test_selection_only_run_finds_the_active_set_and_stops(test):
    problem = gp_sample(32, d=2, seed=11, n_features=2048)
    m = make_method("hds", problem.bounds, seed=3, test=test, optimize=False, budget=2000,
                    structure=problem.structure, noise_variance=0.1)
    n = run_noisy(m, problem, 0.1, seed=4)
    assert m.done and n < 1000
    info = m.diagnostics()
    assert info["selected"] == problem.structure["active_dims"] == m.selected_
    assert info["recovered"] is True and info["false_positives"] == 0 and info["false_negatives"] == 0
    assert info["selection_finished"] and info["undetermined_nodes"] == 0
    assert info["selection_evaluations"] == n == m.n_told
    assert info["selection_iterations"] == (n // 2 if test == "fdt" else n)
    json.dumps(info)  # stored with the run
    # the selected set is part of the (JSON) state
    state = json.loads(json.dumps(m.state_dict()))
    assert state["internal"]["selected"] == m.selected_


def test_two_phases_share_the_budget_and_gp_ucb_moves_only_selected_coordinates():
    problem = get("chen-branin", dim=10, seed=0)
    budget = 60
    m = make_method("hds", problem.bounds, seed=0, budget=budget, structure=problem.structure,
                    noise_variance=1e-4, acq_budget=300)
    best = -np.inf
    n_sel = None
    for t in range(budget):
        x = m.ask()
        if n_sel is None and not m.selecting:
            n_sel = t
        m.tell(x, problem(x))
        best = max(best, problem(x))
    assert n_sel is not None and n_sel <= budget // 2  # default: half of the budget for the selection
    sel = m.selected_
    assert sel == sorted(problem.structure["active_dims"])
    U = m.to_canonical(m.X_all[n_sel:])
    bg = m.selector_.background
    others = [i for i in range(problem.dim) if i not in sel]
    np.testing.assert_allclose(U[:, others], np.broadcast_to(bg[others], (budget - n_sel, len(others))), atol=1e-12)
    assert np.ptp(U[:, sel], axis=0).min() > 0.5  # it does search the selected coordinates
    # 30 GP-UCB queries in 2-D find Branin's optimum (values rescaled to [-1, 1], max 1)
    assert problem.optimum_value - best < 0.05
    assert m.diagnostics()["n_selected"] == 2


def test_selection_budget_option_and_done_through_the_api():
    problem = gp_sample(16, d=2, seed=2, n_features=1024)
    res = hdbo.maximize(problem, problem.bounds, method="hds", budget=500, seed=1, test="gpt", optimize=False,
                        noise_variance=0.01)
    assert res.nfev < 500 and res.method.done and res.status == 3
    assert res.method.selected_ == problem.structure["active_dims"]
    m = make_method("hds", problem.bounds, seed=1, budget=100, selection_budget=10, acq_budget=100)
    with pytest.warns(RuntimeWarning, match="no variable was selected"):  # 10 evaluations reach no leaf
        run_noisy(m, problem, 0.1, seed=0, budget=20)
    info = m.diagnostics()
    assert info["selection_evaluations"] == 10 and info["undetermined_nodes"] > 0 and m.n_told == 20


def test_nothing_selected_warns_and_searches_every_coordinate():
    m = make_method("hds", [(-1, 1)] * 6, seed=0, budget=200, acq_budget=100)
    rng = np.random.default_rng(0)
    with pytest.warns(RuntimeWarning, match="no variable was selected"):
        while m.selecting:
            m.tell(m.ask(), 0.5 + 0.3 * rng.standard_normal())  # a constant function
    assert m.selected_ == [] and m.search_dims == list(range(6))
    x = m.ask()
    assert x.shape == (6,)


def test_chen2012_beta_is_theorem_4_1():
    t, d, b, sv, delta = 7, 2, 0.1, 1.0, 0.1
    expected = 2 * math.log(2 * math.pi**2 * t**2 / (3 * delta)) + 2 * d * math.log(
        2 * t**2 * d * math.sqrt(sv) / b * math.sqrt(math.log(4 * d / delta)))
    assert chen2012_beta(t, d=d, bandwidth=b, signal_variance=sv, delta=delta) == pytest.approx(expected)
    m = make_method("hds", [(-1, 1)] * 4, seed=0, beta="kandasamy2015")
    m.selected_ = [1, 2]
    assert m.beta_t(5) == pytest.approx(0.2 * 2 * math.log(10))
    m = make_method("hds", [(-1, 1)] * 4, seed=0, beta_params={"delta": 0.05})
    m.selected_ = [0]
    assert m.beta_t(3) == pytest.approx(chen2012_beta(3, d=1, bandwidth=0.1, signal_variance=1.0, delta=0.05))


def test_bad_options():
    with pytest.raises(ValueError, match="beta_params"):
        make_method("hds", [(-1, 1)] * 4, beta_params={"a": 1})
    with pytest.raises(ValueError, match="test"):
        make_method("hds", [(-1, 1)] * 4, test="cws")
    with pytest.raises(ValueError, match="theta0"):
        make_method("hds", [(-1, 1)] * 4, theta0=5.0)
    with pytest.raises(ValueError, match="bandwidth"):
        make_method("hds", [(-1, 1)] * 4, bandwidth=-1.0)


@pytest.mark.parametrize("budget", [1, 2, 3])
def test_budget_too_small_for_one_selection_step_skips_the_selection(budget):
    # FDT spends a pair of evaluations per step; half of a budget <= 3 cannot pay for one.
    with pytest.warns(RuntimeWarning, match="selection is skipped"):
        res = hdbo.minimize(lambda x: float(x @ x), [(-1, 1)] * 5, method="hds", budget=budget, seed=0,
                            acq_budget=100)
    assert res.nfev == budget and res.method.selected_ == [] and res.method.search_dims == list(range(5))
    # selection-only run (all of the budget for the selection): one evaluation cannot pay for a
    # pair, so nothing is selected and the run ends after its first evaluation
    if budget == 1:
        res = hdbo.minimize(lambda x: float(x @ x), [(-1, 1)] * 5, method="hds", budget=1, seed=0, optimize=False)
        assert res.nfev == 1 and res.status == 3 and res.method.selected_ == []


@pytest.mark.parametrize("value", [1e308, 99, -1])
def test_tampered_selector_coordinates_raise_state_error(value):
    """A node coordinate outside [0, D) is refused by from_state, not an IndexError at ask()."""
    import json

    import hdbo
    from hdbo.exceptions import StateError

    opt = hdbo.Optimizer([(0.0, 1.0)] * 6, method="hds", seed=0, budget=30)
    for _ in range(6):
        x = opt.ask()
        opt.tell(x, float(np.sum(x)))
    state = json.loads(json.dumps(opt.state_dict()))
    hdbo.Optimizer.from_state(json.loads(json.dumps(state))).ask()  # the untouched state loads
    state["method"]["internal"]["selector"]["nodes"][-1]["dims"][0] = value
    with pytest.raises(StateError, match=r"HDS node \d+ has coordinates outside \[0, 6\)"):
        hdbo.Optimizer.from_state(state)


def test_fdt_delta_sets_the_pair_distance_and_is_kept_in_the_state():
    from hdbo.methods.registry import option_names

    assert "fdt_delta" in option_names(type(make_method("hds", [(-1, 1)] * 4)))
    default = make_method("hds", [(-1, 1)] * 8, seed=0, bandwidth=0.05)
    assert default.fdt_delta is None and default.selector_.delta == pytest.approx(0.15)  # 3 b
    capped = make_method("hds", [(-1, 1)] * 8, seed=0, bandwidth=1.0)
    assert capped.selector_.delta == 2.0
    m = make_method("hds", [(-1, 1)] * 8, seed=0, bandwidth=0.001, fdt_delta=0.3, optimize=False)
    assert m.fdt_delta == 0.3 and m.selector_.delta == 0.3 and m.get_params()["fdt_delta"] == 0.3
    x1, x2 = m.ask(2)
    assert np.allclose(x2 - x1, np.where(np.abs(x2 - x1) > 0, 0.3, 0.0))  # the root's pair, 0.3 apart
    m.tell(np.stack([x1, x2]), [0.0, 1.0])
    state = json.loads(json.dumps(m.state_dict()))
    back = Method.from_state(state)
    assert back.fdt_delta == 0.3 and back.selector_.delta == 0.3
    np.testing.assert_array_equal(back.ask(), m.ask())


@pytest.mark.parametrize("test", ["fdt", "gpt"])
def test_fdt_with_a_fixed_delta_does_not_depend_on_the_bandwidth(test):
    # Chen et al. Fig. 3: with the pair distance fixed at 3 b = 0.3 of the problem, FDT told a
    # wrong b runs exactly as with the right one; with delta = 3 b_hat it misses the active set.
    problem = gp_sample(32, d=2, seed=11, n_features=2048)

    def run(**options):
        m = make_method("hds", problem.bounds, seed=3, test=test, optimize=False, budget=2000,
                        structure=problem.structure, noise_variance=0.1, **options)
        run_noisy(m, problem, 0.1, seed=4)
        return m

    right = run()
    fixed = run(bandwidth=0.001, fdt_delta=0.3)
    if test == "fdt":
        assert right.diagnostics()["recovered"] is True
        # the same run: the same points (0.3 vs 3 * 0.1 differ in the last bit), count and selection
        assert fixed.n_told == right.n_told and fixed.selected_ == right.selected_
        np.testing.assert_allclose(fixed.X_all, right.X_all, rtol=0, atol=1e-12)
        assert run(bandwidth=0.001).diagnostics()["recovered"] is False
    else:  # GPT ignores fdt_delta: the same run as without it
        np.testing.assert_array_equal(fixed.X_all, run(bandwidth=0.001).X_all)


@pytest.mark.parametrize("value, error", [(0.0, ValueError), (-0.3, ValueError), (float("nan"), ValueError),
                                          (float("inf"), ValueError), ("0.3", TypeError), (True, TypeError)])
def test_fdt_delta_is_validated(value, error):
    with pytest.raises(error, match="fdt_delta"):
        make_method("hds", [(-1, 1)] * 4, fdt_delta=value)
