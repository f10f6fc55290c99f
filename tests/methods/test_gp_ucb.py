"""GP-UCB / GP-EI behaviour: regret on embedded Branin, refit schedule, incremental updates."""

from __future__ import annotations

import numpy as np
import pytest

import hdbo
from hdbo import problems
from hdbo.methods import make_method


def test_gp_ucb_finds_embedded_branin_d20_within_60_evaluations(run):
    # Branin hidden among 20 coordinates, rescaled to the unit cube (maximization: -branin).
    # f* = -0.398 and Branin ranges over ~[0.4, 308] on its box.
    regrets, random_regrets = [], []
    for seed in (0, 1, 2):
        problem = problems.get("branin", dim=20, domain="unit", seed=seed)
        regrets.append(run("gp-ucb", problem, 60, seed)[0])
        random_regrets.append(run("random", problem, 60, seed + 100)[0])
    assert max(regrets) < 0.5, regrets
    assert np.mean(regrets) < 0.25 * np.mean(random_regrets), (regrets, random_regrets)


def test_gp_ucb_refits_on_schedule_and_updates_in_between():
    problem = problems.get("branin", dim=5, domain="unit", seed=0)
    for growth, expected in ((None, [5, 9, 13]), (0.25, [5, 7, 9, 12])):
        m = make_method("gp-ucb", problem.bounds, seed=0, n_init=5, refit_every=4, refit_growth=growth,
                        acq_budget=200)
        fits = []
        for _ in range(14):
            x = m.ask()
            if m.gp_ is not None:
                fits.append((m.gp_.n_full_, m.gp_.n_train))
            m.tell(x, problem(x))
        # N_cyc = 4: refits at 5, 9, 13 observations; with growth 0.25 also when the data grew
        # by a quarter. In between, the factor is extended, not recomputed.
        assert [f for f, n in fits if f == n] == expected
        assert (5, 6) in fits


@pytest.mark.parametrize(("prior", "schedule", "expected"),
                         [("none", None, [5, 6, 7, 8, 9, 10, 11, 12]),  # the papers' ML-II: at every refit
                          ("none", "doubling", [5, 10]),
                          ("dim-scaled", None, [5, 10]),
                          ("dim-scaled", "every", [5, 6, 7, 8, 9, 10, 11, 12])])
def test_restart_schedule(monkeypatch, prior, schedule, expected):
    """Refits after every observation make their random restarts at every refit, or only at the
    first fit and whenever the data have doubled (the warm start alone in between)."""
    from hdbo.gp import GaussianProcess

    seen = []
    fit = GaussianProcess.fit

    def spy(self, X, y, **kwargs):
        if self.n_restarts > 0:
            seen.append(len(y))
        return fit(self, X, y, **kwargs)

    monkeypatch.setattr(GaussianProcess, "fit", spy)
    problem = problems.get("branin", dim=3, domain="unit", seed=0)
    m = make_method("gp-ucb", problem.bounds, seed=0, n_init=5, refit_every=1, acq_budget=100, gp_prior=prior,
                    restart_schedule=schedule)
    assert m.restart_schedule == (schedule or {"none": "every", "dim-scaled": "doubling"}[prior])
    for _ in range(13):
        x = m.ask()
        m.tell(x, problem(x))
    assert seen == expected
    # the schedule is a constructor option, so a rebuilt method keeps it
    assert type(m).from_state(m.state_dict()).restart_schedule == m.restart_schedule


def test_dropout_ucb_follows_the_restart_schedule(monkeypatch):
    """DropoutUCB refits by its own loop (new coordinates every iteration) and honours the option too."""
    from hdbo.gp import GaussianProcess

    seen = []
    fit = GaussianProcess.fit

    def spy(self, X, y, **kwargs):
        if kwargs.get("optimize") and self.n_restarts > 0:
            seen.append(len(y))
        return fit(self, X, y, **kwargs)

    monkeypatch.setattr(GaussianProcess, "fit", spy)
    m = make_method("dropout-ucb", [(-1, 1)] * 6, seed=0, d=2, n_init=4, refit_every=1, acq_budget=60,
                    restart_schedule="doubling")
    for _ in range(10):
        x = m.ask()
        m.tell(x, float(-np.sum(x**2)))
    assert seen == [4, 8]


@pytest.mark.parametrize("name", ["add-gp-ucb", "rpp-gp-ucb", "si-bo", "random-subspace-ucb", "highdim-random-ucb",
                                  "hds"])
def test_methods_with_their_own_refits_restart_at_every_refit(name):
    """Methods whose refits follow their own schedule report the schedule they use, and refuse
    the one they do not honour, whatever the prior."""
    assert make_method(name, [(0, 1)] * 6, seed=0).restart_schedule == "every"
    with pytest.raises(ValueError, match="restart_schedule='doubling' is not supported"):
        make_method(name, [(0, 1)] * 6, seed=0, restart_schedule="doubling")


@pytest.mark.filterwarnings("ignore:hds. no variable was selected")
@pytest.mark.parametrize("name", ["hesbo", "rembo", "sre", "gp-ucb", "hds"])
def test_batch_starts_runs_the_lbfgsb_starts_together(monkeypatch, name):
    """batch_starts=True reaches maximize_lbfgsb as batched=True for the acquisition search (not
    for the polish); the default keeps one start at a time."""
    from hdbo.acquisition import maximizers

    original, seen = maximizers.MAXIMIZERS["lbfgsb"], []

    def spy(*args, **kwargs):
        seen.append((kwargs.get("batched", False), kwargs.get("n_raw")))
        return original(*args, **kwargs)

    monkeypatch.setitem(maximizers.MAXIMIZERS, "lbfgsb", spy)
    monkeypatch.setattr("hdbo.methods.hds.maximize", lambda n, *a, **k: maximizers.MAXIMIZERS[n](*a, **k))
    for flag in (False, True):
        seen.clear()
        opts = {"d": 2} if name in ("hesbo", "rembo", "sre") else {"selection_budget": 4} if name == "hds" else {}
        m = make_method(name, [(0, 1)] * 6, seed=0, maximizer="lbfgsb", batch_starts=flag, n_init=4,
                        acq_budget=200, **opts)
        for _ in range(12):
            x = m.ask()
            m.tell(x, float(-np.sum((x - 0.3) ** 2)))
        searches = [b for b, n_raw in seen if n_raw != 0]  # the polish screens no random points
        assert searches and all(b is flag for b in searches), (flag, seen)


def test_batch_starts_is_refused_where_it_would_be_ignored():
    with pytest.raises(ValueError, match="batch_starts=True needs maximizer='lbfgsb', got maximizer='direct'"):
        make_method("gp-ucb", [(0, 1)] * 4, seed=0, maximizer="direct", batch_starts=True)
    for name in ("ms-ucb", "dropout-ucb", "line-bo", "si-bo", "highdim-random-ucb"):
        with pytest.raises(ValueError, match="batch_starts=True is not supported"):
            make_method(name, [(0, 1)] * 6, seed=0, batch_starts=True)
    with pytest.raises(TypeError, match="batch_starts"):
        make_method("gp-ucb", [(0, 1)] * 4, seed=0, maximizer="lbfgsb", batch_starts="yes")


def test_gp_ei_improves_on_random_search(run):
    problem = problems.get("hartmann6", domain="unit")
    ei = np.mean([run("gp-ei", problem, 40, s, acq_budget=600)[0] for s in range(2)])
    rnd = np.mean([run("random", problem, 40, s)[0] for s in range(2)])
    assert ei < rnd


def test_minimize_api_with_gp_ucb():
    res = hdbo.minimize(lambda x: float(np.sum((x - 0.25) ** 2)), [(-1, 1)] * 3, method="gp-ucb", budget=25,
                        seed=0, n_init=5, acq_budget=300)
    assert res.fun < 0.05
    assert res.history.X.shape == (25, 3)
    assert "hyperparameters" in res.method.diagnostics()


def test_beta_uses_the_iteration_after_the_initial_design():
    m = make_method("gp-ucb", [(0, 1)] * 20, seed=0, n_init=10, acq_budget=100)
    for _ in range(10):
        m.tell(m.ask(), 0.0)
    # Algorithm 2 of Kandasamy et al.: t = 1 for the first model-based query
    assert m.iteration == 1
    assert m.beta_t() == pytest.approx(0.2 * 20 * np.log(2.0))
    m.tell(m.ask(), 1.0)
    assert m.beta_t() == pytest.approx(0.2 * 20 * np.log(4.0))


@pytest.mark.parametrize(
    "options,match",
    [({"maximizer": "grid"}, "maximizer='grid' works for at most 3"),
     ({"noise_variance": 5.0}, "noise_variance must be"),
     ({"noise_variance": -1.0, "fit_noise": False}, "noise_variance must be"),
     ({"maximizer": "cmaes"}, "maximizer must be one of"),
     ({"kernel": "rbf"}, "kernel must be one of"),
     ({"beta": "nope"}, "unknown beta schedule"),
     ({"restart_schedule": "sometimes"}, "restart_schedule must be one of")],
)
def test_bad_options_fail_at_construction(options, match):
    with pytest.raises(ValueError, match=match):
        make_method("gp-ucb", [(0, 1)] * 5, **options)


def test_numerical_failure_falls_back_instead_of_crashing(monkeypatch):
    from hdbo.exceptions import NumericalError
    from hdbo.gp import GaussianProcess

    m = make_method("gp-ucb", [(0, 1)] * 3, seed=0, n_init=3, acq_budget=50)
    for _ in range(3):
        x = m.ask()
        m.tell(x, float(np.sum(x)))

    def broken(self, *args, **kwargs):
        raise NumericalError("factorization failed")

    monkeypatch.setattr(GaussianProcess, "fit", broken)
    with pytest.warns(RuntimeWarning, match="querying a random point"):
        x = m.ask()
    assert np.all((x >= 0) & (x <= 1))
    monkeypatch.undo()
    m.tell(x, 0.5)
    assert np.all(np.isfinite(m.ask()))  # recovers: refits from defaults next time
