"""Method options are keyword arguments of hdbo.minimize/maximize/Optimizer: names, renames, defaults.

* Registration refuses an option named like an argument of :func:`hdbo.minimize`,
  :func:`hdbo.maximize` or :class:`hdbo.Optimizer` (the set comes from their signatures).
* Every documented option of every registered method goes through :func:`hdbo.minimize` with
  its default value given explicitly (or, where the default needs the problem's structure, the
  value of ``REQUIRED_OPTIONS``), and survives a JSON state round trip.
* A renamed option (line-bo's ``direction``, now ``line_direction``): stored runs and states
  written with the old name are still found and loaded.
"""

from __future__ import annotations

import inspect
import json
import warnings

import numpy as np
import pytest

from _fast_options import REQUIRED_OPTIONS, missing_packages
from hdbo.methods.peers import PEERS_INSTALL

import hdbo
from hdbo.experiments.runner import run_one
from hdbo.experiments.spec import load_spec
from hdbo.experiments.store import RunConfig, RunStore
from hdbo.methods import Method, available_methods, get_method_class, make_method, register
from hdbo.methods.registry import option_names, option_spellings, reserved_option_names

BOUNDS = [(-2.0, 3.0), (0.0, 1.0), (10.0, 20.0), (-1.0, 1.0), (0.0, 5.0)]
BUDGET = 3
# Fast settings, overridden by the option under test; n_init = 2 leaves one model-based step.
FAST = {"n_init": 2, "acq_budget": 100, "n_restarts": 0}


def sphere(x: np.ndarray) -> float:
    u = (x - np.array(BOUNDS)[:, 0]) / np.ptp(np.array(BOUNDS), axis=1)
    return float(np.sum((u - 0.3) ** 2))


def test_reserved_names_are_the_api_arguments():
    expected = set()
    for fn in (hdbo.minimize, hdbo.maximize, hdbo.Optimizer.__init__):
        expected |= {p.name for p in inspect.signature(fn).parameters.values()
                     if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
    assert reserved_option_names() == expected
    assert {"direction", "budget", "callback", "on_error", "progress", "args", "fun"} <= expected
    for name in available_methods():
        assert not set(option_names(get_method_class(name))) & expected, name


@pytest.mark.parametrize("option", ["direction", "callback", "progress", "on_error", "args", "fun"])
def test_registration_refuses_an_option_named_like_an_api_argument(option):
    namespace: dict = {}
    exec(  # a method whose constructor takes the option (built with exec to vary its name)
        f"def __init__(self, bounds, *, {option}=None, **kwargs):\n"
        f"    super(type(self), self).__init__(bounds, **kwargs)\n",
        namespace,
    )
    cls = type("Clash", (Method,), {"name": f"clash-{option}", "__init__": namespace["__init__"],
                                    "_ask": lambda self: np.full(self.dim, 0.5)})
    with pytest.raises(ValueError, match=f"'{option}' is an argument of hdbo"):
        register(cls)
    assert f"clash-{option}" not in available_methods()


def test_registration_checks_renamed_options():
    class BadRename(Method):
        name = "bad-rename-test-only"
        renamed_options = {"old": "missing_new"}

        def _ask(self):
            return np.full(self.dim, 0.5)

    with pytest.raises(ValueError, match="renamed_options"):
        register(BadRename)


def _options(name: str) -> list[tuple[str, object]]:
    """(option, default) of a method: every option of its constructors' signatures, with the value
    a method built without it stores (a class may change an inherited default, e.g. HDS's n_init)."""
    if missing_packages(name):  # a peer without its packages: the constructors' declared defaults
        cls = get_method_class(name)
        defaults = {p.name: p.default for c in reversed(cls.__mro__) if "__init__" in vars(c)
                    for p in inspect.signature(c.__init__).parameters.values()}
    else:
        defaults = make_method(name, BOUNDS, **REQUIRED_OPTIONS.get(name, {})).get_params()
    return [(option, defaults[option]) for option in option_names(get_method_class(name))]


CASES = [(name, option, default) for name in available_methods() for option, default in _options(name)]


def test_every_method_has_its_options_listed():
    # random and direct are the only methods without GP options; the list is not empty
    assert len(CASES) > 300
    assert {n for n, _, _ in CASES} == set(available_methods()) - {"random"}


def _case(name: str, option: str, default: object):
    missing = missing_packages(name)
    reason = f"{name} needs {', '.join(missing)} (the 'peers' extra): {PEERS_INSTALL}"
    return pytest.param(name, option, default, id=f"{name}-{option}",
                        marks=pytest.mark.skipif(bool(missing), reason=reason))


@pytest.mark.parametrize(("name", "option", "default"), [_case(*c) for c in CASES])
def test_every_option_through_minimize(name, option, default):
    cls = get_method_class(name)
    accepted = set(option_names(cls))
    options = {k: v for k, v in FAST.items() if k in accepted}
    options.update(REQUIRED_OPTIONS.get(name, {}))
    options[option] = default  # (a REQUIRED_OPTIONS value where the default needs problem structure)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # e.g. si-bo: no optimization phase in 3 evaluations
        res = hdbo.minimize(sphere, BOUNDS, method=name, budget=BUDGET, seed=0, **options)
        # the option's value survives the JSON state (rebuilt through the constructor)
        resumed = Method.from_state(json.loads(json.dumps(res.method.state_dict())))
    assert 1 <= res.nfev <= BUDGET and res.success
    params = res.method.get_params()
    assert option in params
    assert json.dumps(resumed.get_params(), sort_keys=True, default=str) == json.dumps(
        json.loads(json.dumps(params, default=list)), sort_keys=True, default=str)


# --------------------------------------------------------------------------- renamed options
def test_option_spellings_of_a_renamed_option():
    assert option_spellings("line-bo", {"line_direction": "random", "n_init": 3}) == [
        {"line_direction": "random", "n_init": 3}, {"direction": "random", "n_init": 3}]
    assert option_spellings("line-bo", {"direction": "random"})[0] == {"line_direction": "random"}
    assert option_spellings("line-bo", {"n_init": 3}) == [{"n_init": 3}]
    assert option_spellings("gp-ucb", {"n_init": 3}) == [{"n_init": 3}]
    assert option_spellings("not-a-method", {"direction": 1}) == [{"direction": 1}]


def _line_bo_config(params: dict, budget: int = 5) -> RunConfig:
    return RunConfig(experiment="rename", problem="branin", method="line-bo", seed=0, budget=budget,
                     problem_params={"dim": 5}, method_params=params, label="LineBO")


def _stop_after(k: int):
    def callback(evaluation) -> None:
        if evaluation.t + 1 >= k:
            raise KeyboardInterrupt
    return callback


def _write_old_spelling(path) -> None:
    """Rewrite a store as hdbo wrote it before the rename: 'direction' in the params and states."""
    import sqlite3

    con = sqlite3.connect(path)
    rows = con.execute("SELECT id, method_params, method_state FROM runs").fetchall()
    for rid, params, state in rows:
        p = json.loads(params)
        p["direction"] = p.pop("line_direction")
        s = json.loads(state)
        s["params"]["direction"] = s["params"].pop("line_direction")
        con.execute("UPDATE runs SET method_params = ?, method_state = ? WHERE id = ?",
                    (json.dumps(p, sort_keys=True, separators=(",", ":")), json.dumps(s), rid))
    con.commit()
    con.close()


def test_runs_stored_with_the_old_option_name_are_found_and_resumed(tmp_path):
    new = {"line_direction": "coordinate", "n_init": 2, "acq_budget": 50, "n_restarts": 0}
    # reference: the same run straight through
    with RunStore(tmp_path / "ref.db") as store:
        run_one(store, _line_bo_config(new))
        ref = store.load_evaluations(store.find_run(_line_bo_config(new)).id)
    # a finished run and an interrupted one (different seeds), then the store as an old hdbo left it
    path = tmp_path / "old.db"
    with RunStore(path) as store:
        run_one(store, _line_bo_config(new, budget=4))
        with pytest.raises(KeyboardInterrupt):
            run_one(store, _line_bo_config(new), callback=_stop_after(3))
    _write_old_spelling(path)
    with RunStore(path) as store:
        assert len(store.list_runs()) == 2
        finished = run_one(store, _line_bo_config(new, budget=4))  # the spec now says line_direction
        assert finished.skipped
        resumed = run_one(store, _line_bo_config(new))
        assert resumed.status == "finished" and resumed.n_evaluations == 5 and not resumed.skipped
        rec = store.find_run(_line_bo_config(new))
        assert rec.config.method_params == new  # read under the current name
        ev = store.load_evaluations(rec.id)
        assert len(store.list_runs()) == 2  # no duplicate run was created
        # a spec still written with the old name finds the same runs
        old_spec = {**{k: v for k, v in new.items() if k != "line_direction"}, "direction": "coordinate"}
        assert run_one(store, _line_bo_config(old_spec)).skipped
        assert len(store.list_runs()) == 2
    np.testing.assert_array_equal(ev.X, ref.X)  # resumed exactly


def test_tranthe2020_specs_use_the_new_option_name():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "experiments" / "tranthe2020"
    found = 0
    for path in sorted(root.glob("fig1_d*.toml")):
        spec = load_spec(path)
        for m in spec.methods:
            if m.name == "line-bo":
                assert m.params.get("line_direction") == "random" and "direction" not in m.params
                make_method("line-bo", [(-1.0, 1.0)] * 3, **m.params)  # the params build the method
                found += 1
    assert found == 3
