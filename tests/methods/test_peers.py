"""Peers (BoTorch, Optuna's TPE and GP samplers, CMA-ES, SMAC3) as hdbo methods.

The registry-wide suites (contract, options, small budgets, runner resume) cover them too,
with the fast settings of ``tests/_fast_options.py``; here: what is particular to each peer,
the missing-package error, and runs through ``hdbo.minimize`` and ``hdbo run``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from _fast_options import FAST_OPTIONS, method_params, missing_packages

import hdbo
from hdbo.cli import main
from hdbo.experiments.plugins import check_registry_name
from hdbo.experiments.store import RunStore
from hdbo.methods import Method, available_methods, make_method
from hdbo.methods.peers import PEER_PACKAGES

PEERS = ["peer:botorch", "peer:cma", "peer:optuna-gp", "peer:smac", "peer:tpe"]
BOUNDS = [(-2.0, 3.0), (0.0, 1.0), (10.0, 20.0)]


def sphere(x: np.ndarray) -> float:
    u = (x - np.array(BOUNDS)[:, 0]) / np.ptp(np.array(BOUNDS), axis=1)
    return float(np.sum((u - 0.3) ** 2))


def test_peers_are_registered_and_their_names_accepted():
    assert set(PEERS) <= set(available_methods()) and set(PEER_PACKAGES) == set(PEERS)
    for name in PEERS:
        assert check_registry_name(name, "method") == name
    for bad, what in [("peer:tpe", "problem"), ("os:system", "method"), ("peer:a:b", "method"),
                      ("peers:tpe", "method")]:
        with pytest.raises(ValueError, match="looks like 'module:attr'"):
            check_registry_name(bad, what)


@pytest.mark.parametrize("name", PEERS)
def test_missing_package_gives_one_clear_error(name, monkeypatch):
    module = PEER_PACKAGES[name][-1 if name == "peer:botorch" else 0]
    monkeypatch.setitem(sys.modules, module, None)  # "import module" now fails
    with pytest.raises(ModuleNotFoundError) as info:
        make_method(name, BOUNDS, seed=0)
    msg = str(info.value)
    assert f"method {name!r} needs the package {module!r}" in msg
    assert 'pip install -e ".[peers]"' in msg and "torch==2.13.0" in msg


def test_missing_packages_skip_the_suites_with_a_reason(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda m, *a: None if m == "cma" else real(m, *a))
    assert missing_packages("peer:cma") == ["cma"] and missing_packages("random") == []
    (param,) = method_params(["peer:cma"])
    (mark,) = param.marks
    assert mark.args == (True,) and "peer:cma needs cma" in mark.kwargs["reason"]
    assert 'pip install -e ".[peers]"' in mark.kwargs["reason"]


def test_import_hdbo_without_the_peer_packages():
    code = ("import sys\n"
            "for m in ('torch', 'botorch', 'gpytorch', 'optuna', 'cma'):\n"
            "    sys.modules[m] = None\n"
            "import hdbo\n"
            "assert 'peer:botorch' in hdbo.available_methods()\n"
            "try:\n"
            "    hdbo.minimize(lambda x: 0.0, [(0, 1)] * 2, method='peer:cma', budget=2)\n"
            "except ModuleNotFoundError as exc:\n"
            "    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert "method 'peer:cma' needs the package 'cma'" in out.stdout


@pytest.mark.parametrize(("name", "option", "value", "error"), [
    ("peer:botorch", "n_init", 0, ValueError), ("peer:botorch", "num_restarts", 1.5, TypeError),
    ("peer:botorch", "raw_samples", 0, ValueError), ("peer:tpe", "n_startup_trials", -1, ValueError),
    ("peer:optuna-gp", "n_startup_trials", "10", TypeError), ("peer:cma", "sigma0", 0.0, ValueError),
    ("peer:cma", "sigma0", 2.0, ValueError), ("peer:cma", "popsize", 1, ValueError),
    ("peer:cma", "popsize", 4.0, TypeError), ("peer:smac", "n_init", 0, ValueError),
    ("peer:smac", "challengers", 2.5, TypeError),
])
def test_bad_options_are_refused_by_name(name, option, value, error):
    with pytest.raises(error, match=option):
        make_method(name, BOUNDS, **{option: value})


@pytest.mark.parametrize("name", PEERS)
def test_one_dimensional_boxes(name):
    """cma cannot run D = 1: refused when built, naming the bounds; the other peers run it."""
    opts = {"peer:botorch": {"n_init": 4, "num_restarts": 2, "raw_samples": 32},
            "peer:smac": {"n_init": 4, "challengers": 100}}.get(name, {"n_startup_trials": 4})
    if name == "peer:cma":
        with pytest.raises(ValueError, match="bounds must have D >= 2"):
            make_method(name, [(0.0, 1.0)], seed=0)
        return
    if missing_packages(name):
        pytest.skip(f"{name} needs {missing_packages(name)} (the 'peers' extra)")
    res = hdbo.minimize(lambda x: float((x[0] - 0.3) ** 2), [(0.0, 1.0)], method=name, budget=8, seed=0, **opts)
    assert res.nfev == 8 and np.all((res.history.X >= 0) & (res.history.X <= 1))


@pytest.mark.filterwarnings("ignore:objective returned nan:RuntimeWarning")
@pytest.mark.parametrize("name", method_params(PEERS))
def test_minimize_with_failures_resumes_through_json(name):
    """hdbo.minimize records proposal times; a state saved mid-run (with a failure) resumes exactly."""
    opts = FAST_OPTIONS[name]

    def flaky(x):
        return float("nan") if x[0] > 1.0 else sphere(x)

    res = hdbo.minimize(flaky, BOUNDS, method=name, budget=14, seed=5, **opts)
    assert res.nfev == 14 and res.history.X.shape == (14, 3)
    lo, hi = np.array(BOUNDS).T
    assert np.all(res.history.X >= lo) and np.all(res.history.X <= hi)
    assert res.history.ask_seconds.shape == (14,) and np.all(res.history.ask_seconds > 0)
    assert res.fun == pytest.approx(np.nanmin(res.history.y))
    again = hdbo.minimize(flaky, BOUNDS, method=name, budget=14, seed=5, **opts)
    assert_array_equal(again.history.X, res.history.X)
    # interrupted after 9 evaluations, a JSON round trip, then the rest: the same points
    m = make_method(name, BOUNDS, seed=5, budget=14, **opts)
    for _ in range(9):
        x = m.ask()
        m.tell(x, -flaky(x))
    resumed = Method.from_state(json.loads(json.dumps(m.state_dict())))
    for x_ref in res.history.X[9:]:
        x = resumed.ask()
        assert_array_equal(x, x_ref)
        resumed.tell(x, -flaky(x))
    assert resumed.n_failed == int(np.isnan(res.history.y).sum()) > 0


@pytest.mark.parametrize("name", method_params(["peer:botorch"]))
def test_botorch_design_then_gp_leaves_torch_state_alone(name):
    import torch

    state, threads = torch.random.get_rng_state().clone(), torch.get_num_threads()
    m = make_method(name, BOUNDS, seed=0, n_init=4, num_restarts=2, raw_samples=32)
    xs = []
    for _ in range(6):
        x = m.ask()
        xs.append(x)
        m.tell(x, -sphere(x))
    U = m.to_canonical(np.array(xs[:4]))
    # a scrambled Sobol design: one point in each half of every coordinate's range
    assert np.all(np.sum(U < 0.5, axis=0) == 2)
    assert torch.equal(torch.random.get_rng_state(), state) and torch.get_num_threads() == threads
    assert np.allclose(m.state_dict()["internal"]["design"], U)


@pytest.mark.parametrize("name", method_params(["peer:cma"]))
def test_cma_starts_at_a_random_point_and_keeps_numpy_global_state(name):
    before = np.random.get_state()[1].copy()
    starts = []
    for seed in range(3):
        m = make_method(name, [(0.0, 1.0)] * 4, seed=seed)
        x0 = np.array(m.state_dict()["internal"]["x0"])
        starts.append(x0)
        pop = []
        for _ in range(7):  # cma's default population in D = 4: 4 + int(3 ln 4) = 8; 7 asked and told
            x = m.ask()
            pop.append(x)
            m.tell(x, -float(np.sum(x ** 2)))
        # the first population is spread around x0 with sigma0 = 0.3
        assert np.linalg.norm(np.mean(pop, axis=0) - x0) < 0.5
        assert m.diagnostics()["sigma"] == pytest.approx(0.3)  # population not complete: not told yet
        m.tell(m.ask(), 0.0)
        assert m.diagnostics()["sigma"] != pytest.approx(0.3)  # 8th value: the population was told
    assert all(np.max(np.abs(s - 0.5)) > 0.05 for s in starts)
    assert not np.allclose(starts[0], starts[1])
    assert_array_equal(np.random.get_state()[1], before)


@pytest.mark.parametrize("name", method_params(["peer:tpe", "peer:optuna-gp"]))
def test_optuna_random_startup_then_model(name):
    """Optuna's n_startup_trials random trials, then its model: a sphere's optimum is approached."""
    n0 = 6 if name == "peer:tpe" else 5
    budget = 30 if name == "peer:tpe" else 10
    res = hdbo.minimize(sphere, BOUNDS, method=name, budget=budget, seed=0, n_startup_trials=n0)
    startup = np.array([sphere(x) for x in res.history.X[:n0]])
    assert res.fun < 0.5 * startup.min()


@pytest.mark.parametrize("name", method_params(["peer:smac"]))
def test_smac_sobol_design_then_forest_writes_nothing_here(name, tmp_path, monkeypatch):
    """SMAC's Sobol design (a size given is not capped), then its model's proposals improve on
    it; nothing is written to the working directory."""
    monkeypatch.chdir(tmp_path)
    m = make_method(name, BOUNDS, seed=3, budget=40, n_init=8, challengers=500)
    X, y, origins = [], [], []
    for _ in range(40):
        x = m.ask()
        origins.append(m._out[-1][1].config.origin)
        X.append(x)
        y.append(sphere(x))
        m.tell(x, -y[-1])
    X, y = np.array(X), np.array(y)
    U = (X - np.array(BOUNDS)[:, 0]) / np.ptp(np.array(BOUNDS), axis=1)
    # 8 Sobol points, although SMAC caps designs at a quarter of n_trials (10 here) by default
    assert origins[:8] == ["Initial Design: Sobol"] * 8 and "Sobol" not in origins[8]
    assert np.all(np.sum(U[:8] < 0.5, axis=0) == 4)  # four points in each half of every range
    # 0.028 against 0.065 (seed 3) when run alone, 0.050 in a full CI run on 2026-11-29: SMAC's
    # proposals are not exactly reproducible here under one seed, so the margin is 10 %.
    assert y[8:].min() < 0.9 * y[:8].min()
    assert m.diagnostics()["smac_proposed"] == 40
    assert list(tmp_path.iterdir()) == []
    # the default design is SMAC's: min(10 D, budget / 4) points, here 40 / 4 = 10
    m = make_method(name, BOUNDS, seed=0, budget=40, challengers=100)
    origins = []
    for _ in range(12):
        x = m.ask()
        origins.append(m._out[-1][1].config.origin)
        m.tell(x, -sphere(x))
    assert origins[:10] == ["Initial Design: Sobol"] * 10 and "Sobol" not in origins[10]


@pytest.mark.parametrize("name", method_params(["peer:smac"]))
def test_smac_is_told_failures_as_the_worst_cost(name):
    """A failure reaches SMAC's run history as the worst cost told so far; failures before the
    first success wait for it (cost 0 would make a failed point SMAC's best when costs are
    positive)."""
    def flaky(x):  # fails first (and on a slab); the successes' costs -y = -(5 + sphere) are all < 0
        return float("nan") if x[0] < -0.5 else 5.0 + sphere(x)

    m = make_method(name, BOUNDS, seed=1, budget=16, n_init=4, challengers=100)
    m.tell(np.array([-1.5, 0.5, 15.0]), None)  # a failed point of the user's, before anything else
    ys = []
    for _ in range(15):
        x = m.ask()
        ys.append(flaky(x))
        m.tell(x, None if np.isnan(ys[-1]) else ys[-1])
    assert np.isnan(ys).sum() >= 1 and np.isfinite(ys).sum() >= 5
    # the run history's costs: each success's -y; each failure the largest cost (-y) of the
    # successes told before it, the failures before the first success that success's cost
    told = [np.nan] + ys
    expected, worst, waiting = [], None, 0
    for v in told:
        if np.isnan(v):
            if worst is None:
                waiting += 1
            else:
                expected.append(worst)
            continue
        worst = -v if worst is None else max(worst, -v)
        expected += [-v] + [worst] * waiting
        waiting = 0
    history = m._smac.runhistory
    costs = sorted(history[k].cost for k in history)
    assert len(costs) == 16 and costs == pytest.approx(sorted(expected), abs=1e-12)
    assert min(costs) == pytest.approx(min(-v for v in ys if np.isfinite(v)))  # a success is SMAC's best


def test_cli_run_with_a_peer(tmp_path, capsys):
    if missing_packages("peer:tpe"):
        pytest.skip(f"peer:tpe needs {missing_packages('peer:tpe')} (the 'peers' extra)")
    db = tmp_path / "runs.db"
    argv = ["run", "--problem", "branin", "--dim", "4", "--method", "peer:tpe", "--seeds", "2", "--budget", "12",
            "--store", str(db), "--no-progress"]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "peer:tpe" in out
    with RunStore(db) as store:
        runs = store.list_runs()
        assert [r.config.method for r in runs] == ["peer:tpe"] * 2
        assert all(r.status == "finished" and r.n_evaluations == 12 for r in runs)
        X0 = store.load_evaluations(runs[0].id).X
        X1 = store.load_evaluations(runs[1].id).X
    assert X0.shape == (12, 4) and not np.array_equal(X0, X1)
    assert main(argv) == 0  # finished runs are skipped
    assert "2 already finished" in capsys.readouterr().err
