"""``method="auto"``, hdbo's default: choice recorded and restored, determinism, a fixed-seed check."""

from __future__ import annotations

import json

import numpy as np
import pytest
from numpy.testing import assert_allclose

import hdbo
from hdbo.methods import Method, make_method


def _sphere(x):
    return float(np.sum((np.asarray(x) - 0.3) ** 2))


def test_minimize_defaults_to_auto():
    res = hdbo.minimize(_sphere, [(0.0, 1.0)] * 3, budget=12, seed=0, n_init=4, acq_budget=200)
    assert res.method.name == "auto"
    opt = hdbo.Optimizer([(0.0, 1.0)] * 3, seed=0)
    assert opt.method.name == "auto"


def test_choice_is_recorded_and_restored_with_the_state():
    m = make_method("auto", [(0.0, 1.0)] * 4, seed=3, n_init=4, acq_budget=200)
    for _ in range(7):
        x = m.ask()
        m.tell(x, -_sphere(x))
    diag = m.diagnostics()
    assert diag["choice"] in ("global", "trust-region", "ucb") and "LogEI" in diag["reason"]
    assert sum(diag["proposals"].values()) == 3  # 7 evaluations, 4 of them the initial design
    assert len(diag["hyperparameters"]["lengthscale"]) == 4  # one list, not 4 keys
    state = json.loads(json.dumps(m.state_dict()))
    again = Method.from_state(state)
    assert again.diagnostics() == diag
    np.testing.assert_array_equal(again.ask(), m.ask())


def test_same_seed_same_run():
    def run(seed):
        res = hdbo.minimize(_sphere, [(0.0, 1.0)] * 6, method="auto", budget=14, seed=seed, n_init=5,
                            acq_budget=300)
        return res.history.X

    np.testing.assert_array_equal(run(4), run(4))


@pytest.mark.parametrize("seed", [0, 1])
def test_beats_random_search_on_a_shifted_sphere_in_ten_dimensions(seed):
    """Fixed seeds, with a margin: 40 evaluations reach a tenth of random search's best
    (measured on seeds 0-3: 0.008, 0.005, 0.027, 0.026 against about 0.5)."""
    res = hdbo.minimize(_sphere, [(0.0, 1.0)] * 10, method="auto", budget=40, seed=seed)
    rnd = hdbo.minimize(_sphere, [(0.0, 1.0)] * 10, method="random", budget=40, seed=seed)
    assert res.fun < 0.1 * rnd.fun


def test_gp_methods_default_to_the_prior_and_the_local_search():
    m = make_method("gp-ucb", [(0.0, 1.0)] * 50, seed=0)
    assert m.gp_prior == "dim-scaled" and m.maximizer == "local" and m.n_restarts == 1
    assert m.lengthscale_bounds == (0.025, 1000.0)
    paper = make_method("gp-ucb", [(0.0, 1.0)] * 50, seed=0, gp_prior="none", maximizer="direct")
    assert paper.n_restarts == 3 and paper.lengthscale_bounds == (0.05, 20.0) and paper.noise_variance == 1e-6
    with pytest.raises(ValueError, match="gp_prior"):
        make_method("gp-ucb", [(0.0, 1.0)] * 5, gp_prior="flat")


def test_trust_region_strategy_follows_turbo_rule_and_resumes():
    """strategy="trust-region": the search box around the incumbent halves after 5 failures,
    doubles after 3 successes (capped at 1.6), and its state goes through state_dict exactly."""
    m = make_method("auto", [(0.0, 1.0)] * 6, seed=2, n_init=4, acq_budget=200, strategy="trust-region",
                    noise_probe=None)
    for x, y in zip(np.random.default_rng(0).random((4, 6)), [1.0, 2.0, 3.0, 4.0]):
        m.tell(x, y)  # improving: 3 successes after the first value
    assert m._tr["length"] == pytest.approx(1.6) and m._tr["succ"] == 0
    for _ in range(5):
        m.tell(np.full(6, 0.5), 0.0)  # no improvement
    assert m._tr["length"] == pytest.approx(0.8) and m._tr["fail"] == 0
    x = m.ask()
    box = m._trust_region_bounds(m.gp_)
    centre = m.X_obs[int(np.argmax(m.y_obs))]
    assert np.all(box[:, 0] <= centre) and np.all(centre <= box[:, 1])
    assert np.all(m.to_canonical(x) >= box[:, 0] - 1e-12) and np.all(m.to_canonical(x) <= box[:, 1] + 1e-12)
    state = json.loads(json.dumps(m.state_dict()))
    again = Method.from_state(state)
    assert again._tr == m._tr
    np.testing.assert_array_equal(again.ask(), m.ask())
    bad = json.loads(json.dumps(state))
    bad["internal"]["trust_region"]["length"] = -1.0
    from hdbo.exceptions import StateError
    with pytest.raises(StateError, match="length"):
        Method.from_state(bad)
    assert m.diagnostics()["choice"] == "trust-region"


def test_bandit_records_outcomes_chooses_by_them_and_resumes():
    """strategy="bandit": each model-based proposal's outcome (improved the best or not) is
    recorded under the search that made it; the counts drive the choice and survive a resume."""
    m = make_method("auto", [(0.0, 1.0)] * 5, seed=0, n_init=3, acq_budget=200, strategy="bandit",
                    bandit_window=4, bandit_arms=["global", "trust-region"], noise_probe=None)
    for x in np.random.default_rng(1).random((3, 5)):
        m.tell(x, -_sphere(x))
    assert m._outcomes == [] and m.diagnostics()["choice"] == "initial-design"
    for _ in range(8):
        x = m.ask()
        m.tell(x, -_sphere(x))
    assert len(m._outcomes) == 8
    diag = m.diagnostics()
    assert diag["choice"] in ("global", "trust-region", "ucb") and sum(diag["proposals"].values()) == 8
    counts = m._arm_counts()  # the window holds the last 4 outcomes only
    assert sum(sum(c) for c in counts.values()) == 4
    assert set(counts) == {"global", "trust-region"}
    assert f"global {counts['global'][0]} of {sum(counts['global'])}" in diag["reason"]
    # an arm that never improved against one that always did: the latter is drawn nearly always
    m._outcomes = [[0, 0], [0, 0], [1, 1], [1, 1]]
    picks = [m._choose_arm() for _ in range(200)]
    assert 0.7 < np.mean(picks) < 1.0
    x = m.ask()  # a proposal in flight is part of the state
    state = json.loads(json.dumps(m.state_dict()))
    again = Method.from_state(state)
    assert again._outcomes == m._outcomes
    assert [(v.tolist(), a) for v, a in again._arms_out] == [(v.tolist(), a) for v, a in m._arms_out]
    assert again.diagnostics() == m.diagnostics()
    m.tell(x, -_sphere(x))
    again.tell(x, -_sphere(x))
    assert again._outcomes == m._outcomes and len(m._outcomes) == 5
    np.testing.assert_array_equal(again.ask(), m.ask())
    bad = json.loads(json.dumps(state))
    bad["internal"]["outcomes"] = [[0, 2]]
    from hdbo.exceptions import StateError
    with pytest.raises(StateError, match="outcomes"):
        Method.from_state(bad)


def test_uniform_arm_draws_without_the_model_and_wins_when_it_improves(monkeypatch):
    """The bandit's optional third arm, a uniform draw: it never runs the acquisition search,
    is recorded like the others, and is drawn mostly when it alone has been improving."""
    assert make_method("auto", [(0.0, 1.0)] * 2).bandit_arms == ("global", "trust-region")
    m = make_method("auto", [(-2.0, 3.0)] * 4, seed=3, n_init=3, acq_budget=100,
                    bandit_arms=("global", "trust-region", "uniform"), noise_probe=None)
    for x in np.random.default_rng(1).uniform(-2.0, 3.0, (3, 4)):
        m.tell(x, -_sphere(x))
    m._outcomes = [[0, 0]] * 6 + [[1, 0]] * 6 + [[2, 1]] * 6
    picks = [m._choose_arm() for _ in range(300)]
    assert np.mean(np.equal(picks, 2)) > 0.9
    monkeypatch.setattr(m, "_choose_arm", lambda: 2)
    monkeypatch.setattr(m, "_maximize", lambda *a, **k: pytest.fail("the uniform arm must not search the model"))
    x = m.ask()
    assert x.shape == (4,) and np.all((x >= -2.0) & (x <= 3.0))
    diag = m.diagnostics()
    assert diag["choice"] == "uniform" and diag["proposals"]["uniform"] == 7
    assert "uniform 6 of 6" in diag["reason"]
    m.tell(x, 10.0)  # better than every value so far: an improvement of the uniform arm
    assert m._outcomes[-1] == [2, 1]


def test_ucb_arm_maximizes_gp_ucb_acquisition_and_survives_a_restore(monkeypatch):
    """The optional "ucb" arm: the global search with GP-UCB's acquisition and its beta_t."""
    from hdbo.acquisition import UCB
    from hdbo.methods.gp_ucb import resolve_beta

    m = make_method("auto", [(0.0, 1.0)] * 5, seed=2, n_init=4, acq_budget=100,
                    bandit_arms=("global", "trust-region", "ucb"), ucb_beta="kandasamy2015", noise_probe=None)
    for x in np.random.default_rng(0).random((4, 5)):
        m.tell(x, -_sphere(x))
    seen = []
    orig = m._maximize

    def spy(acq, *a, **k):
        seen.append((type(acq).__name__, getattr(acq, "beta", None), k.get("bounds")))
        return orig(acq, *a, **k)

    monkeypatch.setattr(m, "_choose_arm", lambda: 3)
    monkeypatch.setattr(m, "_maximize", spy)
    t = m.iteration  # after the ask the point is pending and counts (GP-BUCB's index)
    x = m.ask()
    assert m.iteration == t + 1
    assert seen[0][0] == UCB.__name__ and seen[0][2] is None  # over the whole box
    assert seen[0][1] == pytest.approx(float(resolve_beta("kandasamy2015", None, 5)(t)))
    assert make_method("auto", [(0.0, 1.0)] * 5).ucb_beta == 4.0
    assert m.diagnostics()["choice"] == "ucb"
    m.tell(x, 5.0)
    assert m._outcomes[-1] == [3, 1]
    again = Method.from_state(json.loads(json.dumps(m.state_dict())))
    assert again._outcomes == m._outcomes and again.bandit_arms == ("global", "trust-region", "ucb")


@pytest.mark.parametrize("option, value, error", [
    ("bandit_arms", ["global"], ValueError), ("bandit_arms", ["global", "global"], ValueError),
    ("bandit_arms", ["global", "lucky"], ValueError), ("bandit_arms", "global", TypeError),
    ("strategy", "turbo", ValueError), ("incumbent", "best", ValueError),
    ("bandit_window", 0, ValueError), ("bandit_window", 2.5, TypeError), ("xi", -1.0, ValueError),
    ("ucb_beta", -1.0, ValueError), ("ucb_beta", "nope", ValueError),
    ("global_search", "direct", ValueError), ("global_search", 1, ValueError),
    ("noisy_fraction", 1.5, ValueError), ("noisy_fraction", "high", TypeError),
    ("noisy_beta", "nope", ValueError), ("bandit_arms", ["global", "noisy-ucb"], ValueError),
    ("n_perturbed", 0, ValueError), ("n_perturbed", 2.5, TypeError),
    ("kernel_selection", "aic", ValueError), ("kernel_selection", True, ValueError),
    ("noise_probe", -0.1, ValueError), ("noise_probe", "on", TypeError),
])
def test_invalid_options_name_the_argument(option, value, error):
    with pytest.raises(error, match=option):
        make_method("auto", [(0.0, 1.0)] * 2, **{option: value})


def test_observed_incumbent_is_the_best_value():
    """incumbent="observed": LogEI's threshold is the largest observed value (noise-free data)."""
    from hdbo.acquisition import LogEI
    seen = []
    orig = LogEI.__init__

    def spy(self, model, best, **kw):
        seen.append(best)
        orig(self, model, best, **kw)

    m = make_method("auto", [(0.0, 1.0)] * 3, seed=0, n_init=4, acq_budget=100, incumbent="observed",
                    strategy="global", noise_probe=None)
    for x in np.random.default_rng(2).random((4, 3)):
        m.tell(x, -_sphere(x))
    LogEI.__init__ = spy
    try:
        m.ask()
    finally:
        LogEI.__init__ = orig
    assert seen == [pytest.approx(float(np.max(m.y_obs)))]


def _global_search_calls(global_search, maximizer="local", strategy="global", **options):
    """The maximizers (by name) and their options that one proposal of ``strategy`` calls."""
    from hdbo.methods import gp_based

    calls = []
    real = gp_based.maximize

    def spy(name, fun, bounds, **kw):
        calls.append((name, kw, np.asarray(bounds.bounds if hasattr(bounds, "bounds") else bounds)))
        return real(name, fun, bounds, **kw)

    m = make_method("auto", [(0.0, 1.0)] * 4, seed=0, n_init=5, acq_budget=400, strategy=strategy,
                    global_search=global_search, maximizer=maximizer, noise_probe=None, **options)
    for x in np.random.default_rng(1).random((5, 4)):
        m.tell(x, -_sphere(x))
    gp_based.maximize = spy
    try:
        x = m.ask()
    finally:
        gp_based.maximize = real
    return m, x, calls


def test_raw_samples_global_search_screens_the_box_then_polishes():
    """global_search="raw-samples": uniform points of the whole box and the best observed
    points screened, L-BFGS-B from the best 10, all within the acquisition budget."""
    m, x, calls = _global_search_calls("raw-samples")
    assert m.global_search == "raw-samples"
    [(name, kw, bounds)] = calls
    assert name == "lbfgsb" and kw["n_starts"] == 10 and kw["budget"] == 400
    assert kw["n_raw"] == 200  # at most half the budget (512 with the default budget in D >= 6)
    assert_allclose(bounds, [[0.0, 1.0]] * 4)
    best5 = m.X_obs[np.argsort(-m.y_obs)[:5]]
    assert_allclose(kw["x0_candidates"], best5)
    assert 0 < m.last_acq_nfev_ <= 400 and np.all((x >= 0) & (x <= 1))


def test_local_global_search_runs_the_maximizer():
    """global_search="local" (default): the global arm runs the method's maximizer, as it does
    with any maximizer other than "local" whatever the option says."""
    from hdbo.methods import auto as auto_module

    [(name, kw, bounds)] = _global_search_calls("local")[2]
    assert name == "local" and "n_raw" not in kw and kw["budget"] == 400
    assert_allclose(bounds, [[0.0, 1.0]] * 4)
    names = [c[0] for c in _global_search_calls("raw-samples", maximizer="direct")[2]]
    assert names[0] == "direct" and "n_raw" not in _global_search_calls("raw-samples", maximizer="direct")[2][0][1]
    assert auto_module._GLOBAL_SEARCHES == ("local", "raw-samples")
    assert make_method("auto", [(0.0, 1.0)] * 2).global_search == "local"


@pytest.mark.parametrize("strategy", ["global", "trust-region"])
def test_n_perturbed_reaches_the_local_search_of_both_arms(strategy):
    """n_perturbed (default 20, RAASP's value) is what maximize_local receives, in either arm."""
    for options, expected in (({}, 20), ({"n_perturbed": 60}, 60)):
        [(name, kw, _)] = _global_search_calls("local", strategy=strategy, **options)[2]
        assert name == "local" and kw["n_perturbed"] == expected
    # other maximizers do not take the option
    [(name, kw, _)] = _global_search_calls("local", maximizer="direct", n_perturbed=60)[2][:1]
    assert name == "direct" and "n_perturbed" not in kw
    m = make_method("auto", [(0.0, 1.0)] * 3, seed=0, n_perturbed=7)
    assert Method.from_state(json.loads(json.dumps(m.state_dict()))).n_perturbed == 7


def test_global_search_is_kept_in_the_state():
    m = make_method("auto", [(0.0, 1.0)] * 3, seed=0, global_search="raw-samples")
    again = Method.from_state(json.loads(json.dumps(m.state_dict())))
    assert again.global_search == "raw-samples"


def _noisy_sphere_run(noisy_fraction, budget=45, seed=0):
    """auto on a 6-D sphere whose values carry noise of sd 1 (the sphere's range is about 1)."""
    rng = np.random.default_rng(seed)
    opt = hdbo.Optimizer([(0.0, 1.0)] * 6, method="auto", seed=seed, budget=budget, noisy_fraction=noisy_fraction,
                         noise_probe=None)
    for _ in range(budget):
        x = opt.ask()
        opt.tell(x, _sphere(x) + rng.normal())
    return opt.method


def test_noisy_regime_switches_to_gp_ucb_when_the_gp_sees_mostly_noise(monkeypatch):
    """The GP of a noisy sphere puts most of the variance in its noise (measured: 0.44-0.50 of it
    after the refit at 35 points); from then on the proposals are GP-UCB's, and the reason says why."""
    from hdbo.acquisition import UCB
    from hdbo.methods.gp_ucb import resolve_beta

    m = _noisy_sphere_run(0.05)
    frac = m._noise_fraction(m.gp_)
    assert frac > 0.2
    diag = m.diagnostics()
    assert diag["choice"] == "noisy-ucb" and diag["proposals"]["noisy-ucb"] >= 5
    assert "noise" in diag["reason"] and "noisy_beta='kandasamy2015'" in diag["reason"]
    seen = []
    orig = m._maximize
    monkeypatch.setattr(m, "_maximize", lambda acq, *a, **k: seen.append((acq, k.get("bounds"))) or orig(acq, *a, **k))
    t = m.iteration
    m.ask()
    acq, bounds = seen[0]
    assert isinstance(acq, UCB) and bounds is None  # over the whole box
    assert acq.beta == pytest.approx(float(resolve_beta("kandasamy2015", None, 6)(t)))
    # the outcomes of noisy-regime proposals are kept apart from the bandit's counts, and restored
    again = Method.from_state(json.loads(json.dumps(m.state_dict())))
    assert again.diagnostics() == m.diagnostics()
    assert set(m._arm_counts()) == {"global", "trust-region"}
    # the same run with the switch off (the default) never leaves the bandit's two searches
    assert make_method("auto", [(0.0, 1.0)] * 2).noisy_fraction is None
    off = _noisy_sphere_run(None).diagnostics()
    assert set(off["proposals"]) == {"global", "trust-region"} and "noise" not in off["reason"]


def test_noisy_regime_stays_off_on_a_noise_free_objective():
    m = make_method("auto", [(0.0, 1.0)] * 6, seed=1, budget=40, noisy_fraction=0.05)
    for _ in range(40):
        x = m.ask()
        m.tell(x, -_sphere(x))
    assert m._noise_fraction(m.gp_) < 0.05
    assert m.diagnostics()["proposals"].get("noisy-ucb", 0) == 0


def _run_auto(f, dim, n, seed=0, **options):
    m = make_method("auto", [(0.0, 1.0)] * dim, seed=seed, budget=n, **options)
    for _ in range(n):
        x = m.ask()
        m.tell(x, f(x))
    return m


def test_kernel_selection_keeps_the_ard_kernel_on_an_axis_aligned_function():
    """Two of ten coordinates matter: the ARD kernel predicts the held-out points far better
    (measured on seeds 0-3 at 30 points: 39-58 against -13 to -7)."""
    m = _run_auto(lambda x: float(np.sin(6 * x[0]) + 0.5 * np.cos(5 * x[1])), 10, 30)
    diag = m.diagnostics()
    assert diag["kernel"] == "ard" and len(diag["hyperparameters"]["lengthscale"]) == 10
    assert diag["kernel_loo"]["ard"] > diag["kernel_loo"]["isotropic"] + 20
    assert "ARD kernel (leave-one-out log predictive density" in diag["reason"]
    # the other model is refitted at each refit (and not updated in between)
    assert np.size(m._other_gp.kernel.lengthscale) == 1 and m._other_gp.n_train == m._n_at_refit


def test_kernel_selection_switches_to_the_kernel_with_the_better_loo_score(monkeypatch):
    """The choice follows the scores at every refit, both models are refitted with warm starts,
    and the choice, both models and the scores are restored with the state."""
    from hdbo.gp import GaussianProcess

    favour = {"kind": "isotropic"}
    real = GaussianProcess.loo_log_density

    def fake(gp):
        iso = np.size(gp.kernel.lengthscale) == 1
        return real(gp) + (1e6 if iso == (favour["kind"] == "isotropic") else 0.0)

    monkeypatch.setattr(GaussianProcess, "loo_log_density", fake)
    m = make_method("auto", [(0.0, 1.0)] * 5, seed=1, n_init=4, acq_budget=200, refit_every=1, noise_probe=None)
    for _ in range(8):
        x = m.ask()
        m.tell(x, -_sphere(x))
    m.ask()  # refit at 8 points
    diag = m.diagnostics()
    assert diag["kernel"] == "isotropic" and len(np.atleast_1d(diag["hyperparameters"]["lengthscale"])) == 1
    assert diag["kernel_loo"]["isotropic"] > diag["kernel_loo"]["ard"]
    ard_gp = m._other_gp
    assert np.size(ard_gp.kernel.lengthscale) == 5 and ard_gp.n_train == 8
    state = json.loads(json.dumps(m.state_dict()))
    again = Method.from_state(state)
    assert again.diagnostics() == m.diagnostics()
    assert_allclose(again._other_gp.theta, ard_gp.theta)
    x = m.ask()
    np.testing.assert_array_equal(again.ask(), x)
    # scores that favour the ARD kernel switch back at the next refit, which warm-starts it
    favour["kind"] = "ard"
    m.tell(x, -_sphere(x))
    m.ask()
    assert m.diagnostics()["kernel"] == "ard" and m.gp_ is ard_gp and m.gp_.n_train == 9
    assert np.size(m._other_gp.kernel.lengthscale) == 1


def test_kernel_selection_none_fits_the_ard_kernel_only():
    m = _run_auto(lambda x: -_sphere(x), 4, 14, kernel_selection="none")
    diag = m.diagnostics()
    assert diag["kernel"] == "ard" and "kernel_loo" not in diag and m._other_gp is None
    assert "ARD kernel, LogEI" in diag["reason"]
    again = Method.from_state(json.loads(json.dumps(m.state_dict())))
    assert again.kernel_selection == "none" and again.diagnostics() == diag
    # without ARD there is nothing to choose from
    iso = _run_auto(lambda x: -_sphere(x), 4, 14, ard=False)
    assert iso.diagnostics()["kernel"] == "isotropic" and iso._other_gp is None


def _heavy_tailed(x):
    """A Rosenbrock-like range of values: a few points orders of magnitude worse than the rest."""
    x = np.asarray(x)
    return -float(np.exp(8.0 * np.sum((x - 0.3) ** 2)))


def test_output_warping_fits_the_warp_at_refits_and_restores_it():
    from scipy import stats

    m = make_method("auto", [(0.0, 1.0)] * 4, seed=2, n_init=8, acq_budget=200, refit_every=4,
                    refit_growth=None, output_warping="yeo-johnson", noise_probe=None)
    for _ in range(8):
        x = m.ask()
        m.tell(x, _heavy_tailed(x))
    m.ask()  # first fit, on 8 points
    shift, scale, lam = m._warp
    y8 = m.y_obs.copy()
    assert shift == pytest.approx(np.mean(y8)) and scale == pytest.approx(np.std(y8))
    assert lam > 1.2  # the long tail of bad (very negative) values is compressed
    assert_allclose(m.gp_.y_, stats.yeojohnson((y8 - shift) / scale, lam))
    assert np.all(np.argsort(m.gp_.y_) == np.argsort(y8))  # the warp keeps the order
    diag = m.diagnostics()
    assert diag["output_warping_lambda"] == lam and "Yeo-Johnson" in diag["reason"]
    # between refits the new outputs are warped with the same parameters
    for _ in range(2):
        x = m.ask()
        m.tell(x, _heavy_tailed(x))
    m.ask()
    assert m._warp == (shift, scale, lam) and m.gp_.n_train == 10
    assert_allclose(m.gp_.y_, stats.yeojohnson((m.y_obs - shift) / scale, lam))
    # the state rebuilds the warp of the last refit (fitted on its 8 outputs), not one of all 10
    again = Method.from_state(json.loads(json.dumps(m.state_dict())))
    assert again.diagnostics() == m.diagnostics()
    x = m.ask()
    np.testing.assert_array_equal(again.ask(), x)
    # the next refit (at 12 outputs) fits the warp anew
    for _ in range(2):
        m.tell(x, _heavy_tailed(x))
        x = m.ask()
    assert m.gp_.n_train == 12 and m._warp[0] == pytest.approx(np.mean(m.y_obs))


def test_output_warping_none_leaves_the_outputs_alone():
    m = _run_auto(_heavy_tailed, 4, 12)
    assert m._warp is None and "output_warping_lambda" not in m.diagnostics()
    assert_allclose(m.gp_.y_, m.y_obs[: m.gp_.n_train])  # the last tell is not in the GP until the next ask
    with pytest.raises(ValueError, match="output_warping"):
        make_method("auto", [(0.0, 1.0)] * 2, output_warping="box-cox")


def _probe_run(f, n, dim=6, seed=0, **options):
    """auto told ``f`` (to be maximized; None records a failure) for ``n`` evaluations."""
    m = make_method("auto", [(0.0, 1.0)] * dim, seed=seed, budget=max(n, 1), n_init=5, acq_budget=300, **options)
    for _ in range(n):
        x = m.ask()
        m.tell(x, f(x))
    return m


def test_noise_probe_is_the_best_point_moved_by_a_millionth_of_the_box():
    m = _probe_run(lambda x: -_sphere(x), 5)
    best = m.X_obs[int(np.argmax(m.y_obs))]
    u = m.to_canonical(m.ask())
    assert_allclose(u - best, np.where(best + 1e-6 <= 1.0, 1e-6, -1e-6), rtol=0, atol=1e-12)
    assert m.diagnostics()["choice"] == "probe" and "noise probe" in m.diagnostics()["reason"]


def test_noise_probe_leaves_a_smooth_objective_to_the_bandit():
    m = _probe_run(lambda x: -_sphere(x), 14)
    diag = m.diagnostics()
    assert diag["noise_probe_ratio"] < 1e-4  # a smooth function barely moves at 1e-6 of the box
    assert diag["proposals"]["probe"] == 1 and diag["proposals"].get("noisy-ucb", 0) == 0
    assert set(m._arm_counts()) == {"global", "trust-region"}  # the probe is not one of the bandit's arms


@pytest.mark.parametrize("kind", ["noisy", "chaotic"])
def test_noise_probe_switches_to_gp_ucb_on_a_noisy_or_chaotic_objective(kind, monkeypatch):
    """Measurement noise (sd 0.3 on a sphere of range about 1) and a deterministic objective that
    jumps at every scale (a sphere plus sin(1e9 x_1)) both change at the probe by far more than
    0.01 of the values' spread; from then on the proposals are GP-UCB's over the whole box."""
    from hdbo.acquisition import UCB

    rng = np.random.default_rng(0)
    if kind == "noisy":
        f = lambda x: -_sphere(x) + 0.3 * rng.normal()  # noqa: E731
    else:
        f = lambda x: -_sphere(x) + 0.3 * np.sin(1e9 * x[0])  # noqa: E731
    m = _probe_run(f, 12)
    diag = m.diagnostics()
    assert diag["noise_probe_ratio"] > 0.05
    assert diag["choice"] == "noisy-ucb" and diag["proposals"]["noisy-ucb"] == 6
    assert "noise probe" in diag["reason"] and "noisy_beta='kandasamy2015'" in diag["reason"]
    seen = []
    orig = m._maximize
    monkeypatch.setattr(m, "_maximize", lambda acq, *a, **k: seen.append((acq, k.get("bounds"))) or orig(acq, *a, **k))
    m.ask()
    assert isinstance(seen[0][0], UCB) and seen[0][1] is None
    again = Method.from_state(json.loads(json.dumps(m.state_dict())))
    assert again.diagnostics() == m.diagnostics() and again._probe == m._probe
    # the same objective without the probe stays with the bandit's searches
    off = _probe_run(f, 12, noise_probe=None).diagnostics()
    assert set(off["proposals"]) == {"global", "trust-region"} and "noise_probe_ratio" not in off


def test_noise_probe_failure_counts_as_no_change_and_is_not_repeated():
    calls = []

    def f(x):
        calls.append(x)
        return None if len(calls) == 6 else -_sphere(x)  # the 6th evaluation is the probe

    m = _probe_run(f, 12)
    diag = m.diagnostics()
    assert m._probe["failed"] and "noise_probe_ratio" not in diag
    assert diag["proposals"]["probe"] == 1 and diag["proposals"].get("noisy-ucb", 0) == 0


def test_cancelled_noise_probe_is_proposed_again_and_a_batch_holds_one_probe():
    m = _probe_run(lambda x: -_sphere(x), 5)
    probe = m.ask()
    m.cancel(probe)
    np.testing.assert_array_equal(m.ask(), probe)  # proposed again after the cancel
    batch = m.ask(3)  # with the probe pending: two model-based points, no second probe
    assert len(batch) == 3 and sum(m._arms_out[i][1] == 5 for i in range(len(m._arms_out))) == 1
    state = json.loads(json.dumps(m.state_dict()))
    again = Method.from_state(state)
    assert again._probe == m._probe and again._probe["ratio"] is None
    again.tell(probe, -_sphere(probe))
    assert again.diagnostics()["noise_probe_ratio"] < 1e-4


def test_rebuilt_optimizer_keeps_the_trust_region_and_sees_a_probe_in_flight():
    """Rebuilt from the told points, the trust region is the live one's (the probe is no step of
    it); rebuilt with the probe pending, the next proposal is no second probe."""
    import warnings

    m = _probe_run(lambda x: -_sphere(x), 12, strategy="trust-region")
    rebuilt = make_method("auto", [(0.0, 1.0)] * 6, seed=0, n_init=5, acq_budget=300, strategy="trust-region")
    rebuilt.tell(m.X_all, m.y_all)
    assert rebuilt._tr == m._tr and rebuilt._probe == m._probe
    live = _probe_run(lambda x: -_sphere(x), 5)
    probe = live.ask()
    state = make_method("auto", [(0.0, 1.0)] * 6, seed=0, n_init=5, acq_budget=300).state_dict()
    rebuilt = Method.from_state(state)
    rebuilt.tell(live.X_all, live.y_all)
    state = rebuilt.state_dict()
    state["pending"] = [probe.tolist()]
    rebuilt = Method.from_state(json.loads(json.dumps(state)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "proposing a random point instead"
        x = rebuilt.ask()
    assert np.max(np.abs(x - probe)) > 1e-3 and rebuilt._probe["index"] is None
    rebuilt.tell(probe, -_sphere(probe))
    assert rebuilt._hidden_probe() == 5


def test_state_written_before_the_probe_existed_resumes_without_a_probe():
    m = make_method("auto", [(0.0, 1.0)] * 4, seed=1, n_init=5, acq_budget=100, noise_probe=None)
    for _ in range(12):
        x = m.ask()
        m.tell(x, -_sphere(x))
    state = json.loads(json.dumps(m.state_dict()))
    del state["params"]["noise_probe"]
    del state["internal"]["noise_probe"]
    again = Method.from_state(state)
    np.testing.assert_array_equal(again.ask(), m.ask())
    assert again.noise_probe == 0.01 and again._probe_disabled
    assert Method.from_state(json.loads(json.dumps(again.state_dict())))._probe_disabled
    bad = json.loads(json.dumps(_probe_run(lambda x: -_sphere(x), 7).state_dict()))
    bad["internal"]["noise_probe"]["ratio"] = None  # told (an index) but no ratio
    from hdbo.exceptions import StateError
    with pytest.raises(StateError, match="noise_probe"):
        Method.from_state(bad)


def test_noise_probe_is_found_among_the_told_points_of_a_rebuilt_optimizer():
    """hdbo's Optuna sampler rebuilds the optimizer from the told points at every trial: the
    rebuilt one finds the earlier probe among them and does not probe again."""
    rng = np.random.default_rng(0)
    f = lambda x: -_sphere(x) + 0.3 * rng.normal()  # noqa: E731
    m = _probe_run(f, 9)
    X, y = m.X_all, m.y_all
    rebuilt = make_method("auto", [(0.0, 1.0)] * 6, seed=5, budget=9, n_init=5, acq_budget=300)
    rebuilt.tell(X, y)
    assert not rebuilt._probe_due()
    assert rebuilt._probe["ratio"] == pytest.approx(m._probe["ratio"]) and rebuilt._probe_says_noisy()
    rebuilt.ask()
    assert rebuilt.diagnostics()["choice"] == "noisy-ucb"
    # without a near-replicate among them, the rebuilt optimizer probes
    fresh = make_method("auto", [(0.0, 1.0)] * 6, seed=5, n_init=5, acq_budget=300)
    fresh.tell(X[:5], y[:5])
    fresh.ask()
    assert fresh.diagnostics()["choice"] == "probe"


@pytest.mark.parametrize("options", [{}, {"bandit_arms": ("global", "trust-region", "ucb"),
                                           "ucb_beta": "kandasamy2015"}])
def test_smooth_objective_run_is_the_run_without_the_probe_one_evaluation_later(options):
    """A probe that finds the objective smooth is kept in the history but not shown to the model,
    is no outcome of the bandit, no step of the trust region and no step of beta_t's schedule:
    the rest of the run is the run without the probe, point for point."""
    with_probe = _probe_run(lambda x: -_sphere(x), 16, **options)
    without = _probe_run(lambda x: -_sphere(x), 15, noise_probe=None, **options)
    X, Y = with_probe.X_all, without.X_all
    assert with_probe._hidden_probe() == 5
    np.testing.assert_array_equal(np.delete(X, 5, axis=0), Y)
    assert with_probe.y_obs.size == 15 and with_probe.X_obs.shape == (15, 6)
    assert with_probe._outcomes == without._outcomes and with_probe._tr == without._tr
    again = Method.from_state(json.loads(json.dumps(with_probe.state_dict())))
    assert again._hidden_probe() == 5 and again.diagnostics() == with_probe.diagnostics()
    np.testing.assert_array_equal(again.ask(), with_probe.ask())
