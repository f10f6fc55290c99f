"""Prefix runs (``prefix_of``): a shorter spec's runs taken from a longer spec's runs."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from hdbo import problems
from hdbo.cli import main
from hdbo.experiments.spec import SpecError, load_spec, parse_spec
from hdbo.experiments.store import RunStore
from hdbo.methods import make_method

TOY = ("--plugin", "_hdbo_test_problems")


@pytest.fixture(autouse=True)
def _toy_problems_importable(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent))


@pytest.mark.parametrize("name, params", [
    ("random", {}),
    ("add-gp-ucb", {"d": 2, "n_init": 4, "acq_budget": 60, "refit_every": 3, "n_decompositions": 2}),
    ("rpp-gp-ucb", {"d": 2, "n_init": 4, "acq_budget": 60, "refit_every": 3, "n_decompositions": 2,
                    "explore_iters": 3, "w_iters": 5, "alpha_grid": 5}),
])
def test_budget_independent_methods_make_the_same_run_whatever_the_budget(name, params):
    """What prefix_of relies on: the run with budget 14 is the first 14 evaluations of the run with 22."""
    from hdbo.methods.registry import get_method_class

    assert get_method_class(name).budget_independent
    prob = problems.get("projected-trimodal", dim=4, seed=1)
    runs = []
    for budget in (14, 22):
        m = make_method(name, prob.bounds, seed=3, budget=budget, structure=prob.structure, **params)
        X = []
        for _ in range(14):
            x = m.ask()
            m.tell(x, float(prob(x)))
            X.append(x)
        runs.append(np.array(X))
    np.testing.assert_array_equal(runs[0], runs[1])


def test_methods_that_use_the_budget_do_not_claim_otherwise():
    from hdbo.methods.registry import get_method_class

    for name in ("direct", "hds", "cws", "sre"):  # they split or cap their work by the budget
        assert not get_method_class(name).budget_independent, name


SPEC = """
name = "toy-{name}"
description = "Toy spec {name}."
budget = {budget}
seeds = 2
{extra}

[[problems]]
name = "toy-quadratic"
params = {{ dim = 3 }}
label = "Toy Q3"

[[methods]]
name = "direct"
label = "DIRECT"

[[methods]]
label = "RS"
name = "random"
"""


def _specs(tmp_path: Path) -> Path:
    root = tmp_path / "specs"
    (root / "toy").mkdir(parents=True)
    (root / "toy" / "long.toml").write_text(textwrap.dedent(SPEC.format(name="long", budget=9, extra="")))
    (root / "toy" / "short.toml").write_text(
        textwrap.dedent(SPEC.format(name="short", budget=6, extra='prefix_of = "toy-long"')))
    return root


def _runs(db: Path, experiment: str) -> dict[tuple[str, int], object]:
    with RunStore(db) as store:
        return {(r.config.label, r.config.seed): (r, store.load_evaluations(r.id))
                for r in store.list_runs() if r.config.experiment == experiment}


@pytest.mark.parametrize("together", [True, False])
def test_reproduce_takes_the_runs_of_a_prefix_spec_from_the_longer_runs(tmp_path, capsys, together):
    root = _specs(tmp_path)
    db, rep = tmp_path / "s.db", tmp_path / "rep.md"
    common = ["reproduce", "toy", *TOY, "--specs-dir", str(root), "--store", str(db), "--report", str(rep),
              "--no-progress", "--no-summary"]
    if together:  # the longer runs are made in the same call, before the shorter ones are copied
        assert main(common) == 0
    else:  # the longer runs were made by an earlier call
        assert main(common + ["--only", "toy-long"]) == 0
        capsys.readouterr()
        assert main(common + ["--only", "toy-short"]) == 0
    err = capsys.readouterr().err
    assert "2 run(s) taken from the first evaluations of longer runs (prefix_of)" in err
    assert "2 run(s) of prefix_of specs have no matching longer run" in err  # DIRECT uses its budget
    long, short = _runs(db, "toy-long"), _runs(db, "toy-short")
    assert len(short) == 4
    for seed in (0, 1):
        rec, ev = short[("RS", seed)]
        lrec, lev = long[("RS", seed)]
        assert rec.status == "finished" and len(ev) == 6 and len(lev) == 9
        np.testing.assert_array_equal(ev.X, lev.X[:6])
        np.testing.assert_array_equal(ev.f, lev.f[:6])
        assert rec.diagnostics == {"derived_from": "toy-long, first 6 of 9 evaluations"}
        # DIRECT uses its budget, so its shorter runs are run, not copied
        drec, dev = short[("DIRECT", seed)]
        assert drec.status == "finished" and len(dev) == 6 and "derived_from" not in (drec.diagnostics or {})
    # a second call finds everything done and copies nothing again
    assert main(common) == 0
    assert "taken from the first evaluations" not in capsys.readouterr().err


def test_a_prefix_run_is_run_when_its_longer_run_is_not_available(tmp_path, capsys):
    root = _specs(tmp_path)
    db = tmp_path / "s.db"
    assert main(["reproduce", "toy", *TOY, "--specs-dir", str(root), "--store", str(db), "--report",
                 str(tmp_path / "r.md"), "--no-progress", "--no-summary", "--only", "toy-short"]) == 0
    assert "taken from the first evaluations" not in capsys.readouterr().err
    short = _runs(db, "toy-short")
    assert all(rec.status == "finished" and len(ev) == 6 and not (rec.diagnostics or {}).get("derived_from")
               for rec, ev in short.values())


def test_an_interrupted_copy_or_run_is_completed_not_replaced(tmp_path):
    """A short run with some evaluations already stored (an interrupted attempt) gets only the
    evaluations it lacks; one owned by another live process is left alone."""
    from hdbo.experiments.prefix import derive_prefix_runs, prefix_donors
    from hdbo.experiments.store import Evaluation, RunOwner

    root = _specs(tmp_path)
    db = tmp_path / "s.db"
    assert main(["reproduce", "toy", *TOY, "--specs-dir", str(root), "--store", str(db), "--report",
                 str(tmp_path / "r.md"), "--no-progress", "--no-summary", "--only", "toy-long"]) == 0
    specs = [load_spec(p).at_scale("quick") for p in sorted((root / "toy").glob("*.toml"))]
    short = next(s for s in specs if s.name == "toy-short")
    pairs = prefix_donors(short.run_configs(), specs)
    assert [c.label for c, _ in pairs] == ["RS", "RS"]
    with RunStore(db) as store:
        (c0, d0), (c1, d1) = pairs
        donor_ev = store.load_evaluations(store.find_run(d0).id)
        run = store.get_or_create_run(c0)  # seed 0: 2 evaluations stored, then interrupted
        claim = store.claim_run(run.id, owner=RunOwner("elsewhere", 999999999))
        store.append_evaluations(run.id, [Evaluation(t=i, x=donor_ev.X[i], y=float(donor_ev.y[i]),
                                                     f=float(donor_ev.f[i]), regret=float(donor_ev.regret[i]),
                                                     failed=False, error=None, ask_seconds=0.0, eval_seconds=0.0)
                                          for i in range(2)], method_state={}, noise_rng_state=None,
                                 wall_seconds=0.0)
        store.fail_run(run.id, "interrupted: test")
        other = store.get_or_create_run(c1)  # seed 1: running under a live process (this one's parent)
        import os
        store.claim_run(other.id, owner=RunOwner(claim.owner.host, os.getppid()))
        done = derive_prefix_runs(store, pairs)
        assert [c.seed for c in done] == [0]
        rec = store.find_run(c0)
        ev = store.load_evaluations(rec.id)
        assert rec.id == run.id and rec.status == "finished" and len(ev) == 6
        np.testing.assert_array_equal(ev.X, donor_ev.X[:6])
        assert store.find_run(c1).status == "running"


def test_prefix_of_must_name_a_spec_of_the_set(tmp_path, capsys):
    root = _specs(tmp_path)
    text = (root / "toy" / "short.toml").read_text().replace('prefix_of = "toy-long"', 'prefix_of = "toy-lon"')
    (root / "toy" / "short.toml").write_text(text)
    code = main(["reproduce", "toy", *TOY, "--specs-dir", str(root), "--store", str(tmp_path / "s.db"),
                 "--report", str(tmp_path / "r.md"), "--no-progress", "--no-summary"])
    err = capsys.readouterr().err
    assert code == 2 and "prefix_of names 'toy-lon', which is not a spec of 'toy'" in err


def test_prefix_of_is_parsed_and_checked(tmp_path):
    base = textwrap.dedent(SPEC.format(name="short", budget=6, extra='prefix_of = "toy-long"'))
    path = tmp_path / "s.toml"
    path.write_text(base)
    assert load_spec(path).prefix_of == "toy-long"
    with pytest.raises(SpecError, match="prefix_of"):
        parse_spec({"name": "a", "budget": 3, "seeds": 1, "prefix_of": 5,
                    "problems": [{"name": "sphere"}], "methods": [{"name": "random"}]}, source="x")
    with pytest.raises(SpecError, match="a spec cannot be a prefix of itself"):
        parse_spec({"name": "a", "budget": 3, "seeds": 1, "prefix_of": "a",
                    "problems": [{"name": "sphere"}], "methods": [{"name": "random"}]}, source="x")


def test_li2016_t500_tables_are_prefixes_of_the_t1000_runs():
    """Every full-scale run of the T = 500 tables can be taken from a T = 1000 run."""
    from hdbo.experiments.prefix import prefix_donors

    root = Path(__file__).resolve().parents[2] / "experiments" / "li2016"
    specs = [load_spec(p).at_scale("full") for p in sorted(root.glob("*.toml"))]
    for short in ("li2016-D50-T500", "li2016-D100-T500"):
        spec = next(s for s in specs if s.name == short)
        configs = spec.run_configs()
        pairs = prefix_donors(configs, specs)
        assert len(pairs) == len(configs) == 7 * 50
        assert all(d.budget == 1010 and d.experiment == spec.prefix_of for _, d in pairs)
