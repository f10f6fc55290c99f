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
    assert "2 run(s) taken from the evaluations of another spec's runs (prefix_of)" in err
    assert "2 run(s) of prefix_of specs are not runs of the spec they name" in err  # DIRECT uses its budget
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
    assert "taken from the evaluations" not in capsys.readouterr().err


def test_a_prefix_run_is_run_when_its_longer_run_is_not_available(tmp_path, capsys):
    root = _specs(tmp_path)
    db = tmp_path / "s.db"
    assert main(["reproduce", "toy", *TOY, "--specs-dir", str(root), "--store", str(db), "--report",
                 str(tmp_path / "r.md"), "--no-progress", "--no-summary", "--only", "toy-short"]) == 0
    assert "taken from the evaluations" not in capsys.readouterr().err
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


def _same_specs(tmp_path: Path) -> Path:
    """toy-long (budget 9) and toy-same (budget 9, prefix_of toy-long) whose methods have other labels."""
    root = _specs(tmp_path)
    text = textwrap.dedent(SPEC.format(name="same", budget=9, extra='prefix_of = "toy-long"'))
    text = text.replace('label = "DIRECT"', 'label = "DIRECT (same)"').replace('label = "RS"', 'label = "Random"')
    (root / "toy" / "short.toml").unlink()
    (root / "toy" / "same.toml").write_text(text)
    return root


def test_a_run_of_the_same_budget_is_copied_whatever_the_method_and_label(tmp_path, capsys):
    """With equal budgets the run is the same run: DIRECT (which uses its budget) is copied too,
    under its own label, with the donor's diagnostics; the copy equals a run made from scratch."""
    root = _same_specs(tmp_path)
    db, scratch = tmp_path / "s.db", tmp_path / "scratch.db"
    common = ["reproduce", "toy", *TOY, "--specs-dir", str(root), "--report", str(tmp_path / "r.md"),
              "--no-progress", "--no-summary"]
    assert main(common + ["--store", str(db)]) == 0
    assert "4 run(s) taken from the evaluations of another spec's runs (prefix_of)" in capsys.readouterr().err
    # the same spec run alone in another store, without the donor runs: made from scratch
    assert main(common + ["--store", str(scratch), "--only", "toy-same"]) == 0
    assert "taken from the evaluations" not in capsys.readouterr().err
    long, same, fresh = _runs(db, "toy-long"), _runs(db, "toy-same"), _runs(scratch, "toy-same")
    assert sorted(same) == sorted(fresh) == [("DIRECT (same)", 0), ("DIRECT (same)", 1), ("Random", 0), ("Random", 1)]
    for (label, seed), (rec, ev) in same.items():
        donor_rec, donor_ev = long[({"DIRECT (same)": "DIRECT", "Random": "RS"}[label], seed)]
        fresh_rec, fresh_ev = fresh[(label, seed)]
        assert rec.status == "finished" and len(ev) == 9
        np.testing.assert_array_equal(ev.X, fresh_ev.X)
        np.testing.assert_array_equal(ev.f, fresh_ev.f)
        np.testing.assert_array_equal(ev.X, donor_ev.X)
        assert rec.diagnostics["derived_from"] == f"toy-long ({donor_rec.config.label}), the same run"
        assert {k: v for k, v in rec.diagnostics.items() if k != "derived_from"} == (donor_rec.diagnostics or {})


def test_a_new_machine_copies_shared_runs_in_the_summary(tmp_path, capsys):
    """Only the committed summary holds the donor runs (a fresh store): the runs they share are
    copied there, counted as done (nothing is run for them) and reported."""
    from hdbo.experiments.summary import read_summary

    root = _same_specs(tmp_path)
    summ, rep = tmp_path / "summaries" / "toy.csv.gz", tmp_path / "toy.md"
    common = ["reproduce", "toy", *TOY, "--specs-dir", str(root), "--report", str(rep), "--no-progress",
              "--summary", str(summ)]
    assert main(common + ["--store", str(tmp_path / "first.db"), "--only", "toy-long"]) == 0
    capsys.readouterr()
    fresh = tmp_path / "second.db"
    assert main(common + ["--store", str(fresh), "--only", "toy-same"]) == 0
    err = capsys.readouterr().err
    assert f"4 run(s) copied in {summ} from the same runs of another spec (prefix_of)" in err
    assert "4 runs" in err and "(4 already done in" in err
    with RunStore(fresh) as store:
        assert store.list_runs() == []  # nothing run
    runs = {(r.experiment, r.label, r.seed): r for r in read_summary(summ)}
    for seed in (0, 1):
        for label, donor_label in (("Random", "RS"), ("DIRECT (same)", "DIRECT")):
            copy, donor = runs[("toy-same", label, seed)], runs[("toy-long", donor_label, seed)]
            assert copy.status == "finished" and copy.budget == 9 and copy.config and copy.config != donor.config
            np.testing.assert_array_equal(copy.f, donor.f)
            np.testing.assert_array_equal(copy.t, donor.t)
            assert copy.diagnostics["derived_from"] == f"toy-long ({donor_label}), the same run"
            assert copy.wall_seconds == donor.wall_seconds
            # the whole run: the donor's (scalar) diagnostics come with it
            assert {k: v for k, v in copy.diagnostics.items() if k != "derived_from"} == (donor.diagnostics or {})
        assert runs[("toy-same", "DIRECT (same)", seed)].diagnostics.keys() > {"derived_from"}
    report = rep.read_text()
    assert "| Random | 2 |" in report and "| DIRECT (same) | 2 |" in report  # the copies are reported
    # copied once: a second call finds them done
    assert main(common + ["--store", str(fresh), "--only", "toy-same"]) == 0
    assert "copied in" not in capsys.readouterr().err


def test_a_shorter_copy_in_the_summary_takes_the_first_evaluations(tmp_path, capsys):
    from hdbo.experiments.summary import read_summary

    root = _specs(tmp_path)
    summ = tmp_path / "toy.csv.gz"
    common = ["reproduce", "toy", *TOY, "--specs-dir", str(root), "--report", str(tmp_path / "toy.md"),
              "--no-progress", "--summary", str(summ)]
    assert main(common + ["--store", str(tmp_path / "a.db"), "--only", "toy-long"]) == 0
    assert main(common + ["--store", str(tmp_path / "b.db"), "--only", "toy-short"]) == 0
    assert "2 run(s) copied in" in capsys.readouterr().err  # RS only: DIRECT uses its budget
    runs = {(r.experiment, r.label, r.seed): r for r in read_summary(summ)}
    for seed in (0, 1):
        copy, donor = runs[("toy-short", "RS", seed)], runs[("toy-long", "RS", seed)]
        assert copy.budget == 6 and len(copy.t) == 6
        np.testing.assert_array_equal(copy.f, donor.f[:6])
        np.testing.assert_array_equal(copy.regret, donor.regret[:6])
        assert copy.diagnostics == {"derived_from": "toy-long, first 6 of 9 evaluations"}
        assert "derived_from" not in (runs[("toy-short", "DIRECT", seed)].diagnostics or {})  # run in b.db


def test_shared_runs_of_the_paper_specs_are_found():
    """li2016's Table 5 takes 6 of its 10 methods from Table 1 (T = 1000); tranthe2020's Figures 2
    and 3 take MS-UCB (N0 = 1, alpha = 0, d = 5) from Figure 1 at D = 100, on both their problems."""
    from hdbo.experiments.prefix import prefix_donors

    base = Path(__file__).resolve().parents[2] / "experiments"
    li = [load_spec(p).at_scale("full") for p in sorted((base / "li2016").glob("*.toml"))]
    delta = next(s for s in li if s.name == "li2016-delta")
    pairs = prefix_donors(delta.run_configs(), li)
    assert len(pairs) == 6 * 50
    assert {(c.label, d.label) for c, d in pairs} == {
        ("ADD-5", "ADD-5"), ("ADD-10", "ADD-10"), ("ADD-25", "ADD-25"), ("RPP-5 delta=0.1", "RPP-5"),
        ("RPP-10 delta=0.1", "RPP-10"), ("RPP-25 delta=0.1", "RPP-25")}
    assert all(d.experiment == "li2016-D50-T1000" and d.budget == c.budget for c, d in pairs)
    tt = [load_spec(p).at_scale("full") for p in sorted((base / "tranthe2020").glob("*.toml"))]
    for name, label in (("tranthe2020-fig2", "MS-UCB (N0=1, alpha=0)"), ("tranthe2020-fig3", "MS-UCB (d=5)")):
        spec = next(s for s in tt if s.name == name)
        pairs = prefix_donors(spec.run_configs(), tt)
        assert len(pairs) == 2 * 30
        assert {(c.label, c.problem_label, d.label) for c, d in pairs} == {
            (label, "Ackley D=100", "MS-UCB"), (label, "Hyper-Ellipsoid D=100", "MS-UCB")}


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


def test_the_store_copies_what_it_holds_the_summary_the_rest(tmp_path, capsys):
    """Where the store holds the donor run finished, the copy is made in the store (whole
    diagnostics, exact seconds), not in the summary."""
    root = _same_specs(tmp_path)
    summ, db = tmp_path / "toy.csv.gz", tmp_path / "s.db"
    common = ["reproduce", "toy", *TOY, "--specs-dir", str(root), "--report", str(tmp_path / "toy.md"),
              "--no-progress", "--summary", str(summ), "--store", str(db)]
    assert main(common + ["--only", "toy-long"]) == 0
    capsys.readouterr()
    assert main(common + ["--only", "toy-same"]) == 0
    err = capsys.readouterr().err
    assert "copied in" not in err and "4 run(s) taken from the evaluations of another spec's runs" in err
    same = _runs(db, "toy-same")
    assert len(same) == 4 and all(rec.status == "finished" for rec, _ in same.values())


def test_copy_summary_runs_skips_what_it_cannot_copy_and_keeps_failed_evaluations(tmp_path):
    """Direct calls: a failed evaluation is copied as failed; a config already finished in the
    summary, a donor that is not in it or not finished, and a donor with a gap in t are skipped."""
    import csv
    import gzip

    from hdbo.experiments.runner import run_many
    from hdbo.experiments.summary import config_id, copy_summary_runs, export_summary, read_summary
    from _hdbo_test_problems import FLAKY, make_config

    db, summ = tmp_path / "s.db", tmp_path / "s.csv.gz"
    donor = make_config(experiment="long", problem=FLAKY, method="random", budget=30, label="RS")
    unfinished = make_config(experiment="long", problem=FLAKY, method="random", budget=30, label="RS", seed=1)
    with RunStore(db) as store:
        run_many(store, [donor], progress=False)
        store.get_or_create_run(unfinished)  # pending, no evaluations: not in the summary
    export_summary(db, summ)
    [d] = read_summary(summ)
    assert d.failed.any() and not d.failed.all()  # the flaky problem failed some evaluations
    short = make_config(experiment="short", problem=FLAKY, method="random", budget=12, label="R")
    same = make_config(experiment="same", problem=FLAKY, method="random", budget=30, label="R")
    lost = make_config(experiment="short", problem=FLAKY, method="random", budget=12, label="R", seed=1)
    done = copy_summary_runs(summ, [(short, donor, "n1"), (same, donor, "n2"), (lost, unfinished, "n3")])
    assert done == [short, same]
    runs = {r.experiment: r for r in read_summary(summ)}
    for name, n in (("short", 12), ("same", 30)):
        r = runs[name]
        assert r.config == config_id(short if name == "short" else same) and len(r.t) == n
        for field in ("f", "y", "regret", "failed", "t"):
            np.testing.assert_array_equal(getattr(r, field), getattr(d, field)[:n])
    assert copy_summary_runs(summ, [(short, donor, "again")]) == []  # already finished there
    # a donor whose written evaluations have a gap (t = 5 missing) is not copied
    with gzip.open(summ, "rt", newline="") as fh:
        rows = list(csv.reader(fh))
    out, run, t = [rows[0]], None, -1
    for r in rows[1:]:
        if r[0]:
            run, t = r[0], int(r[8])
        else:
            t = t + 1 if r[8] == "" else int(r[8])
        if run == "long" and t == 5:
            continue  # dropped: the run now jumps from t = 4 to t = 6
        if run == "long" and t == 6:
            r = r[:8] + ["6"] + r[9:]
        out.append(r)
    with gzip.open(summ, "wt", newline="") as fh:
        csv.writer(fh).writerows(out)
    other = make_config(experiment="other", problem=FLAKY, method="random", budget=12, label="R")
    assert copy_summary_runs(summ, [(other, donor, "gap")]) == []


def test_no_run_copies_the_shared_runs_the_store_holds(tmp_path, capsys):
    """--no-run runs nothing, but a run that is a copy of a finished run in the store is copied
    (li2016's T = 500 and Table 5 runs when the T = 1000 runs were made with --only)."""
    root = _same_specs(tmp_path)
    db = tmp_path / "s.db"
    common = ["reproduce", "toy", *TOY, "--specs-dir", str(root), "--report", str(tmp_path / "toy.md"),
              "--no-progress", "--no-summary", "--store", str(db)]
    assert main(common + ["--only", "toy-long"]) == 0
    capsys.readouterr()
    assert main(common + ["--no-run"]) == 0
    assert "4 run(s) taken from the evaluations of another spec's runs" in capsys.readouterr().err
    same = _runs(db, "toy-same")
    assert len(same) == 4 and all(rec.status == "finished" and len(ev) == 9 for rec, ev in same.values())
    assert "| Random | 2 |" in (tmp_path / "toy.md").read_text()
