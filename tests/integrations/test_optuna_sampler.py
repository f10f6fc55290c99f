"""hdbo.integrations.optuna: the Optuna sampler (issue 24) and the method "hdbo-optuna"."""

from __future__ import annotations

import importlib
import json
import math
import os
import re
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

optuna = pytest.importorskip("optuna", reason="the optuna extra is not installed (pip install 'hdbo[optuna]')")

from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution  # noqa: E402
from optuna.trial import TrialState, create_trial  # noqa: E402

import hdbo  # noqa: E402
from hdbo import Optimizer  # noqa: E402
from hdbo.integrations.optuna import (  # noqa: E402
    SYSTEM_ATTR,
    HDBOSampler,
    IndependentSamplingWarning,
    ParameterBox,
    ThroughOptuna,
)
from hdbo.methods import available_methods  # noqa: E402
from hdbo.utils import generator_state  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::hdbo.integrations.optuna.IndependentSamplingWarning")
optuna.logging.set_verbosity(optuna.logging.WARNING)

ROOT = Path(__file__).resolve().parents[2]
FAST = {"n_init": 4, "acq_budget": 200}
BOUNDS = {"a": (-5.0, 5.0), "b": (0.0, 2.0), "c": (-1.0, 3.0)}
NAMES = sorted(BOUNDS)  # Optuna's search spaces are sorted by name: the box's coordinate order


def _suggest(trial) -> dict:
    return {n: trial.suggest_float(n, *BOUNDS[n]) for n in NAMES}


def _value(p: dict) -> float:
    return (p["a"] - 1.0) ** 2 + (p["b"] - 0.5) ** 2 + 0.3 * math.cos(3.0 * p["c"])


def _objective(trial) -> float:
    return _value(_suggest(trial))


def _random_trials(n: int, seed: int = 1) -> list:
    rng = np.random.default_rng(seed)
    dists = {k: FloatDistribution(*BOUNDS[k]) for k in NAMES}
    out = []
    for _ in range(n):
        p = {k: float(rng.uniform(*BOUNDS[k])) for k in NAMES}
        out.append(create_trial(params=p, distributions=dists, value=_value(p)))
    return out


def _ask_params(study) -> dict:
    trial = study.ask()
    return _suggest(trial)


# ----------------------------------------------------------------------------- consistency
@pytest.mark.parametrize("direction", ["minimize", "maximize"])
@pytest.mark.parametrize("n_done", [2, 9])
def test_proposal_equals_an_optimizer_rebuilt_from_the_same_trials(direction, n_done):
    study = optuna.create_study(direction=direction, sampler=HDBOSampler("gp-ucb", seed=0, **FAST))
    study.optimize(_objective, n_trials=n_done)
    trial = study.ask()
    proposed = _suggest(trial)

    # The path of the module docstring, with hdbo's public API only.
    done = [t for t in study.trials if t.state == TrialState.COMPLETE]
    assert len(done) == n_done
    opt = Optimizer([BOUNDS[n] for n in NAMES], method="gp-ucb", seed=0, direction=direction, **FAST)
    opt.tell([[t.params[n] for n in NAMES] for t in done], [t.value for t in done])
    state = opt.state_dict()
    state["method"]["pending"] = []
    state["method"]["rng"] = generator_state(np.random.default_rng([0, trial.number]))
    expected = Optimizer.from_state(state).ask()
    np.testing.assert_array_equal([proposed[n] for n in NAMES], expected)


@pytest.mark.parametrize("method", ["gp-ucb", "auto"])
def test_two_samplers_with_the_same_seed_propose_the_same_point(method):
    def propose(seed: int, n_trials: int) -> list[float]:
        study = optuna.create_study(sampler=HDBOSampler(method, seed=seed, **FAST))
        study.add_trials(_random_trials(n_trials))
        return list(_ask_params(study).values())

    for n_trials in (2, 8):  # in the initial design, and from the model
        assert propose(5, n_trials) == propose(5, n_trials)
    assert propose(6, 2) != propose(5, 2)  # the seed matters (a model's optimum may not depend on it)


def test_the_cache_changes_no_proposal():
    runs = {}
    for cache in (True, False):
        sampler = HDBOSampler("auto", seed=1, cache=cache, **FAST)
        study = optuna.create_study(sampler=sampler)
        study.optimize(_objective, n_trials=12)
        runs[cache] = ([t.params for t in study.trials], sampler)
    assert runs[True][0] == runs[False][0]
    assert sum(t.cached for t in runs[True][1].timings) >= 9  # every proposal after the first
    assert not any(t.cached for t in runs[False][1].timings)
    for t in runs[True][1].timings:
        assert t.read_s >= 0 and t.rebuild_s >= 0 and t.ask_s > 0 and t.total_s >= t.ask_s


def test_a_copied_sampler_proposes_the_same_and_threads_share_one_study():
    import pickle  # what tools that send a sampler to another process do (nothing is stored)

    sampler = HDBOSampler("gp-ucb", seed=4, **FAST)
    copy = pickle.loads(pickle.dumps(sampler))
    proposals = []
    for s in (sampler, copy):
        study = optuna.create_study(sampler=s)
        study.add_trials(_random_trials(7))
        proposals.append(_ask_params(study))
    assert proposals[0] == proposals[1]

    study = optuna.create_study(sampler=HDBOSampler("gp-ucb", seed=4, **FAST))
    study.optimize(_objective, n_trials=12, n_jobs=2)  # Optuna's threads share the sampler
    points = {tuple(t.params[n] for n in NAMES) for t in study.trials}
    assert len(study.trials) == 12 and len(points) == 12
    assert all(t.state == TrialState.COMPLETE for t in study.trials)


# ----------------------------------------------------------------------------- trials -> optimizer
def test_rebuild_tells_failed_and_pruned_trials_as_failures_and_running_ones_as_pending():
    sampler = HDBOSampler("gp-ucb", seed=0, **FAST)
    study = optuna.create_study(sampler=sampler)
    dists = {k: FloatDistribution(*BOUNDS[k]) for k in NAMES}
    rng = np.random.default_rng(3)
    points = [{k: float(rng.uniform(*BOUNDS[k])) for k in NAMES} for _ in range(9)]
    states = [TrialState.COMPLETE] * 5 + [TrialState.FAIL, TrialState.PRUNED, TrialState.RUNNING, TrialState.COMPLETE]
    for p, s in zip(points, states):
        study.add_trial(create_trial(params=p, distributions=dists, state=s,
                                     value=_value(p) if s == TrialState.COMPLETE else None))
    study.add_trial(create_trial(params={"a": 0.0}, distributions={"a": dists["a"]}, state=TrialState.FAIL))
    study.enqueue_trial({"a": 1.0, "b": 1.5, "c": 2.0})  # waiting, number 10

    rb = sampler.rebuild(study, 11)
    assert rb.observed == [0, 1, 2, 3, 4, 8]
    assert rb.failed == [5, 6]  # trial 9 lacks parameters: left out
    assert rb.pending == [7, 10]
    opt = rb.optimizer
    X, y = opt.history
    assert opt.n_told == 8 and opt.method.n_failed == 2
    np.testing.assert_array_equal(np.isnan(y), [False] * 5 + [True, True, False])
    np.testing.assert_array_equal(X[5], [points[5][k] for k in NAMES])
    np.testing.assert_array_equal(opt.pending, [[points[7][k] for k in NAMES], [1.0, 1.5, 2.0]])
    x = opt.ask()
    assert not any(np.allclose(x, p) for p in opt.pending[:-1])


def test_int_and_log_parameters_are_told_as_evaluated():
    def objective(trial):
        m = trial.suggest_int("m", 1, 1000, log=True)
        n = trial.suggest_int("n", 0, 20)
        lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
        return (n - 7) ** 2 + (math.log(m) - 3.0) ** 2 + (math.log10(lr) + 3.0) ** 2

    sampler = HDBOSampler("gp-ucb", seed=2, **FAST)
    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=10)
    for t in study.trials:
        assert type(t.params["m"]) is int and type(t.params["n"]) is int
    X, _ = sampler.rebuild(study, 99).optimizer.history  # coordinates: lr, m, n (sorted names)
    np.testing.assert_allclose(X[:, 0], [math.log(t.params["lr"]) for t in study.trials], rtol=0, atol=1e-12)
    np.testing.assert_allclose(X[:, 1], [math.log(t.params["m"]) for t in study.trials], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(X[:, 2], [t.params["n"] for t in study.trials])


# ----------------------------------------------------------------------------- parameter box
def test_parameter_box_gives_every_grid_value_an_equal_slice():
    pb = ParameterBox({"n": IntDistribution(1, 4), "s": IntDistribution(1, 10, step=3),
                       "q": FloatDistribution(0.0, 1.0, step=0.25)})
    np.testing.assert_allclose(pb.box.bounds, [[0.5, 4.5], [-0.5, 11.5], [-0.125, 1.125]])
    grid = np.linspace(pb.box.lower, pb.box.upper, 4801)[1:-1]  # interior points, not on a slice edge
    values = [pb.decode(x) for x in grid]
    for name, expected in (("n", [1, 2, 3, 4]), ("s", [1, 4, 7, 10]), ("q", [0.0, 0.25, 0.5, 0.75, 1.0])):
        got, counts = np.unique([v[name] for v in values], return_counts=True)
        np.testing.assert_allclose(got, expected)
        assert counts.max() - counts.min() <= 2  # equal slices, up to the grid's resolution
    for v in values[::97]:  # every decoded point is a valid value of its distribution, and round-trips
        create_trial(params=v, distributions=pb.distributions, value=0.0)
        assert pb.decode(pb.encode(v)) == v


def test_parameter_box_log_int_rounds_to_the_nearest_int_and_refuses_other_distributions():
    pb = ParameterBox({"k": IntDistribution(2, 256, log=True)})
    assert pb.decode([math.log(2.49)]) == {"k": 2} and pb.decode([math.log(2.51)]) == {"k": 3}
    assert pb.decode(pb.box.lower) == {"k": 2} and pb.decode(pb.box.upper) == {"k": 256}
    assert pb.encode({"k": 64})[0] == pytest.approx(math.log(64))
    with pytest.raises(TypeError, match="search_space\\['c'\\] must be a FloatDistribution"):
        ParameterBox({"c": CategoricalDistribution(["x", "y"])})
    with pytest.raises(ValueError, match="single value"):
        ParameterBox({"z": FloatDistribution(1.0, 1.0)})
    with pytest.raises(ValueError, match="non-empty mapping"):
        ParameterBox({})
    with pytest.raises(ValueError, match="x must be a finite point of shape \\(1,\\)"):
        pb.decode([1.0, 2.0])


# ----------------------------------------------------------------------------- independent sampling
def test_a_mixed_space_runs_and_names_each_independent_parameter_once():
    def objective(trial):
        x = trial.suggest_float("x", -3.0, 3.0)
        lr = trial.suggest_float("lr", 1e-5, 1e-1, log=True)
        n = trial.suggest_int("n", 1, 9)
        k = trial.suggest_int("k", 2, 256, log=True)
        q = trial.suggest_float("q", 0.0, 1.0, step=0.1)
        kind = trial.suggest_categorical("kind", ["a", "b", "c"])
        return x**2 + (math.log10(lr) + 3) ** 2 + (n - 4) ** 2 + math.log(k) + q + (kind == "b")

    sampler = HDBOSampler("auto", seed=0, **FAST)
    study = optuna.create_study(sampler=sampler)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        study.optimize(objective, n_trials=12)
    messages = [str(w.message) for w in caught if issubclass(w.category, IndependentSamplingWarning)]
    assert len(messages) == 2, messages
    assert sum("'kind'" in m and "categorical" in m for m in messages) == 1
    assert sum("trial 0" in m and "not known before a trial completes" in m for m in messages) == 1
    assert all("RandomSampler" in m for m in messages)
    assert all(t.state == TrialState.COMPLETE for t in study.trials)
    numeric = ["k", "lr", "n", "q", "x"]
    for t in study.trials[1:]:  # every float and int parameter after trial 0 is hdbo's proposal
        assert t.system_attrs[SYSTEM_ATTR]["params"] == {p: t.params[p] for p in numeric}


def test_a_parameter_outside_the_relative_space_is_named_once():
    def objective(trial):
        x = trial.suggest_float("x", -3.0, 3.0)
        extra = trial.suggest_float("extra", 0.0, 1.0) if trial.number % 2 else 0.0
        return x**2 + extra

    study = optuna.create_study(sampler=HDBOSampler("gp-ucb", seed=0, **FAST))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        study.optimize(objective, n_trials=8)
    messages = [str(w.message) for w in caught if issubclass(w.category, IndependentSamplingWarning)]
    assert sum("'extra'" in m and "not in the relative search space" in m for m in messages) == 1
    assert not any("'x'" in m for m in messages)


def test_a_method_that_must_wait_leaves_the_trial_to_the_independent_sampler():
    sampler = HDBOSampler("direct", seed=0)
    study = optuna.create_study(sampler=sampler)
    study.add_trials(_random_trials(6))
    first = _ask_params(study)  # DIRECT's query, now running
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        second = _ask_params(study)
    messages = [str(w.message) for w in caught if issubclass(w.category, IndependentSamplingWarning)]
    assert len(messages) == 1 and "'direct' cannot propose a point for trial 7" in messages[0]
    assert sampler.timings[-1].fallback and not sampler.timings[-2].fallback
    assert second != first
    with warnings.catch_warnings(record=True) as caught:  # said once
        warnings.simplefilter("always")
        _ask_params(study)
    assert not [w for w in caught if issubclass(w.category, IndependentSamplingWarning)]
    assert sampler.timings[-1].fallback


def test_two_workers_that_saw_the_same_trials_do_not_propose_the_same_point(monkeypatch):
    # A deterministic proposal (grid maximizer, no hyperparameter restarts): two workers that
    # rebuild from the same trials propose the same point; the later check separates them.
    opts = {"n_init": 4, "maximizer": "grid", "acq_budget": 512, "n_restarts": 0}
    a, b = HDBOSampler("gp-ucb", seed=0, **opts), HDBOSampler("gp-ucb", seed=0, **opts)
    study = optuna.create_study(sampler=a)
    study.add_trials(_random_trials(6))
    seen = {}
    rebuild = a.rebuild

    def rebuild_then_b_proposes(*args, **kwargs):
        out = rebuild(*args, **kwargs)
        other = optuna.load_study(study_name=study.study_name, storage=study._storage, sampler=b)
        seen["b"] = _ask_params(other)  # b does not see a's trial: it has no parameters yet
        return out

    monkeypatch.setattr(a, "rebuild", rebuild_then_b_proposes)
    pa = _ask_params(study)
    trials = study.get_trials(deepcopy=False)
    assert trials[6].system_attrs[SYSTEM_ATTR]["duplicate_of"] == 7
    assert trials[7].system_attrs[SYSTEM_ATTR]["duplicate_of"] is None
    assert pa != seen["b"] and not a.timings[-1].fallback


# ----------------------------------------------------------------------------- errors
def test_a_multi_objective_study_gets_a_clear_error():
    study = optuna.create_study(directions=["minimize", "maximize"], sampler=HDBOSampler(seed=0))
    trial = study.ask()
    with pytest.raises(ValueError, match="single objective.*has 2 \\(minimize, maximize\\)"):
        trial.suggest_float("x", 0.0, 1.0)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="unknown method 'nope'; available methods: .*gp-ucb"):
        HDBOSampler("nope")
    with pytest.raises(TypeError, match="method 'gp-ucb' has no option\\(s\\) 'n_inti'; its options: budget, "):
        HDBOSampler("gp-ucb", n_inti=3)
    with pytest.raises(ValueError, match="seed must be an int >= 0 or None, got -1"):
        HDBOSampler(seed=-1)
    with pytest.raises(TypeError, match="seed must be an int"):
        HDBOSampler(seed=1.5)
    with pytest.raises(ValueError, match="'hdbo-optuna' is hdbo through Optuna itself"):
        HDBOSampler("hdbo-optuna")
    with pytest.raises(TypeError, match="independent_sampler must be an optuna.samplers.BaseSampler"):
        HDBOSampler(independent_sampler="random")
    with pytest.raises(TypeError, match="method must be a registered method name \\(str\\)"):
        HDBOSampler(3)


def test_a_method_that_cannot_run_on_the_space_says_why():
    study = optuna.create_study(sampler=HDBOSampler("peer:cma", seed=0))
    study.add_trials([create_trial(params={"x": 0.5}, distributions={"x": FloatDistribution(0, 1)}, value=1.0)])
    trial = study.ask()
    with pytest.raises(ValueError, match="method 'peer:cma' cannot be built on the study's 1 float/int parameter"):
        trial.suggest_float("x", 0.0, 1.0)


# ----------------------------------------------------------------------------- several processes
_WORKER = textwrap.dedent("""
    import math, sys, time, warnings
    import optuna
    from hdbo.integrations.optuna import HDBOSampler, IndependentSamplingWarning

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.simplefilter("ignore", IndependentSamplingWarning)
    storage, n_trials = sys.argv[1], int(sys.argv[2])
    sampler = HDBOSampler("gp-ucb", seed=0, n_init=5, acq_budget=200)
    study = optuna.load_study(study_name="shared", storage=storage, sampler=sampler)

    def objective(trial):
        x = [trial.suggest_float(f"x{i}", -2.0, 2.0) for i in range(3)]
        time.sleep(0.05)  # an evaluation that takes a while, so the workers overlap
        return sum((v - 0.5) ** 2 for v in x)

    study.optimize(objective, n_trials=n_trials)
""")


def test_two_processes_share_one_sqlite_study(tmp_path):
    url = f"sqlite:///{tmp_path / 'study.db'}"
    optuna.create_study(study_name="shared", storage=url, direction="minimize")
    script = tmp_path / "worker.py"
    script.write_text(_WORKER)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    procs = [subprocess.Popen([sys.executable, str(script), url, "20"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    deadline = time.monotonic() + 240.0
    try:
        for p in procs:
            out, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            assert p.returncode == 0, err[-2000:]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()

    trials = optuna.load_study(study_name="shared", storage=url).get_trials()
    assert len(trials) == 40
    assert all(t.state == TrialState.COMPLETE for t in trials)
    points = np.array([[t.params[f"x{i}"] for i in range(3)] for t in trials])
    for t, x in zip(trials, points):  # every value stored, the objective's at the trial's parameters
        assert t.value == pytest.approx(float(np.sum((x - 0.5) ** 2)), rel=1e-12, abs=1e-15)
    gaps = np.max(np.abs(points[:, None, :] - points[None, :, :]), axis=2) + np.eye(40)
    assert gaps.min() > 1e-9 * 4.0  # no point proposed twice
    info = [t.system_attrs.get(SYSTEM_ATTR) for t in trials]
    from_hdbo = [i for i in info if i and i.get("params") and not i.get("fallback")]
    assert len(from_hdbo) >= 36  # all but the first trials, sampled before the space was known
    assert max(i["n_pending"] for i in from_hdbo) >= 1  # the workers did overlap
    best = min(t.value for t in trials)
    assert best < 0.5  # random search over [-2, 2]^3 with 40 points: median best about 0.9


# ----------------------------------------------------------------------------- hdbo through Optuna
@pytest.fixture
def hdbo_optuna(monkeypatch):
    """The plugin module imported (method "hdbo-optuna" registered), the registry restored afterwards."""
    from hdbo.methods import registry

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    name = "hdbo.integrations.optuna_plugin"
    sys.modules.pop(name, None)
    importlib.import_module(name)
    yield
    sys.modules.pop(name, None)


def test_importing_the_sampler_registers_nothing():
    assert "hdbo-optuna" not in available_methods()


def test_hdbo_through_optuna_is_a_method(hdbo_optuna):
    assert "hdbo-optuna" in available_methods()
    opts = {"sampler_method": "gp-ucb", "sampler_options": FAST}
    bounds = [(-2.0, 2.0), (0.0, 1.0)]

    def run(n: int) -> Optimizer:
        opt = Optimizer(bounds, method="hdbo-optuna", seed=0, **opts)
        for _ in range(n):
            x = opt.ask()
            opt.tell(x, float(np.sum(x**2)))
        return opt

    opt = run(7)
    X, y = opt.history
    assert np.all(X >= [-2.0, 0.0]) and np.all(X <= [2.0, 1.0])
    np.testing.assert_array_equal(run(7).history[0], X)  # deterministic under the seed
    resumed = Optimizer.from_state(json.loads(json.dumps(opt.state_dict())))
    np.testing.assert_array_equal(resumed.ask(), opt.ask())
    res = hdbo.minimize(lambda x: float(np.sum(x**2)), bounds, method="hdbo-optuna", budget=6, seed=1, **opts)
    assert res.nfev == 6 and res.success


def test_hdbo_through_optuna_checks_its_options(hdbo_optuna):
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        Optimizer([(0, 1)], method="hdbo-optuna", sampler_method="nope")
    with pytest.raises(TypeError, match="sampler_options must be a dict"):
        Optimizer([(0, 1)], method="hdbo-optuna", sampler_options=[("n_init", 3)])
    with pytest.raises(TypeError, match="must not hold 'budget'"):
        Optimizer([(0, 1)], method="hdbo-optuna", sampler_options={"budget": 3})
    with pytest.raises(TypeError, match="has no option\\(s\\) 'bogus'"):
        Optimizer([(0, 1)], method="hdbo-optuna", sampler_options={"bogus": 1})
    assert isinstance(Optimizer([(0, 1)], method="hdbo-optuna").method, ThroughOptuna)


# ----------------------------------------------------------------------------- the guide
def test_the_guide_example_runs(tmp_path, monkeypatch, capsys):
    text = (ROOT / "docs" / "guide" / "optuna.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- runnable.*?-->\s*```python\n(.*?)```", text, flags=re.S)
    assert match, "the guide has no block marked runnable"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__guide__"}
    with pytest.warns(IndependentSamplingWarning, match="'activation' is categorical"):  # as the guide says
        exec(compile(match.group(1), "docs/guide/optuna.md", "exec"), namespace)  # noqa: S102
    study = namespace["study"]
    assert len(study.trials) == 40 and all(t.state == TrialState.COMPLETE for t in study.trials)
    assert study.best_value < 0.05  # the guide quotes 0.0017 (RandomSampler with the same seed: 0.44)
    assert f"best {study.best_value:.4f}" in capsys.readouterr().out
