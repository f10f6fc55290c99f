"""Aggregation and the markdown/PNG report, checked against numbers computed by hand."""

from __future__ import annotations

import math
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from _hdbo_test_problems import FLAKY, make_config
from numpy.testing import assert_allclose, assert_array_equal

from hdbo.experiments.report import aggregate, format_mean_se, mean_se, run_curves, write_report
from hdbo.experiments.runner import run_many
from hdbo.experiments.spec import ReferenceValue
from hdbo.experiments.store import Evaluation, RunStore


@pytest.fixture
def filled(tmp_path):
    """A store with 3 seeds of random search on the quadratic, 2 on the flaky problem, one unfinished run."""
    path = tmp_path / "runs.db"
    configs = [make_config(seed=s, budget=10, label="Random") for s in range(3)]
    configs += [make_config(seed=s, budget=10, problem=FLAKY, label="Random") for s in range(2)]
    run_many(path, configs, progress=False)
    store = RunStore(path)
    pending = store.get_or_create_run(make_config(seed=9, budget=10, label="Random"))
    yield store, configs, pending
    store.close()


def test_mean_se_and_format():
    m, se = mean_se([1.0, 2.0, 4.0, np.nan])
    assert m == pytest.approx(7 / 3)
    assert se == pytest.approx(np.std([1, 2, 4], ddof=1) / math.sqrt(3))
    assert math.isnan(mean_se([3.0])[1]) and math.isnan(mean_se([])[0])
    assert format_mean_se(0.5, 0.01) == "0.5 ± 0.01"
    assert format_mean_se(0.5, math.nan) == "0.5" and format_mean_se(math.nan, math.nan) == "—"
    # values whose squares overflow (li2016's delta-ratios reach 1e250): a finite SE, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m, se = mean_se([1e250, 3e250, 2e250])
    assert m == pytest.approx(2e250) and se == pytest.approx(np.std([1, 3, 2], ddof=1) / math.sqrt(3) * 1e250)


def test_run_curves_by_hand():
    regret = np.array([3.0, np.nan, 1.0, 2.0])
    ev = _arrays(regret, failed=np.array([False, True, False, False]))
    c = run_curves(ev)
    assert_array_equal(c["simple_regret"], [3.0, 3.0, 1.0, 1.0])
    assert_allclose(c["avg_regret"], [3.0, 3.0, 2.0, 2.0])  # failures left out of the average
    assert_array_equal(c["best_f"], [-3.0, -3.0, -1.0, -1.0])


def _arrays(regret, failed):
    from hdbo.experiments.store import EvaluationArrays

    n = regret.size
    return EvaluationArrays(
        t=np.arange(n), X=np.zeros((n, 1)), y=-regret, f=-regret, regret=regret, failed=failed,
        errors=[None] * n, ask_seconds=np.full(n, 0.1), eval_seconds=np.full(n, 0.2),
    )


def test_aggregate_matches_hand_computation(filled):
    store, configs, pending = filled
    groups = aggregate(store)
    assert [(g.problem_label, g.label, g.n_runs) for g in groups] == [
        ("toy-quadratic(dim=3)", "Random", 3),
        ("toy-flaky(dim=3)", "Random", 2),
    ]
    assert pending.id not in groups[0].run_ids  # unfinished runs are left out
    for g in groups:
        finals_s, finals_avg, secs, n_failed = [], [], [], 0
        for rid in g.run_ids:
            ev = store.load_evaluations(rid)
            ok = ~ev.failed
            finals_s.append(np.min(ev.regret[ok]))
            finals_avg.append(np.sum(ev.regret[ok]) / ok.sum())
            secs.extend(ev.ask_seconds + ev.eval_seconds)
            n_failed += int(ev.failed.sum())
        assert g.simple_regret[0] == pytest.approx(np.mean(finals_s))
        assert g.simple_regret[1] == pytest.approx(np.std(finals_s, ddof=1) / math.sqrt(len(finals_s)))
        assert g.avg_regret[0] == pytest.approx(np.mean(finals_avg))
        assert g.best_f[0] == pytest.approx(-np.mean(finals_s))
        assert g.sec_per_eval == pytest.approx(np.median(secs))
        assert g.n_failed_evals == n_failed
        assert g.curves["simple_regret"].shape == (g.n_runs, 10)
    assert groups[1].n_failed_evals > 0


def test_report_files_and_numbers(filled):
    store, configs, pending = filled
    out = store.path.replace("runs.db", "out/report.md")
    refs = {"exp": [ReferenceValue("toy-flaky(dim=3)", "Random", "avg_regret", 0.125, "Tab. 9", 10),
                    ReferenceValue("toy-flaky(dim=3)", "Random", "simple_regret", 0.5, "Tab. 8", 4, at=4)]}
    path = write_report(store, out, title="Test report", references=refs, descriptions={"exp": "Toy runs."})
    text = path.read_text()
    groups = aggregate(store)
    assert text.startswith("# Test report")
    assert "## exp" in text and "Toy runs." in text
    for g in groups:
        row = f"| Random | {g.n_runs} | 10 | {format_mean_se(*g.simple_regret)} | {format_mean_se(*g.avg_regret)} |"
        assert row in text
    # the paper's value next to ours
    flaky = groups[1]
    assert f"| Random | R_T/T | 0.125 | 10 | {format_mean_se(*flaky.avg_regret)} | 10 | Tab. 9 |" in text
    # a paper value for an earlier T, read off our curves after `at` evaluations
    at4 = flaky.metric_at("simple_regret", 4)
    assert at4[0] == pytest.approx(np.nanmean(flaky.curves["simple_regret"][:, 3]))
    assert at4[0] >= flaky.simple_regret[0]
    assert f"| Random | simple regret S_T | 0.5 | 4 | {format_mean_se(*at4)} | 4 | Tab. 8 |" in text
    assert math.isnan(flaky.metric_at("simple_regret", 11)[0])
    assert "1 run(s) are not finished" in text
    pngs = sorted(path.parent.rglob("*.png"))
    assert len(pngs) == 2
    for png in pngs:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"](figures/report/{png.name})" in text  # relative link; the folder defaults to the stem


def test_report_without_matplotlib(filled, monkeypatch, tmp_path):
    store, _, _ = filled
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    path = write_report(store, tmp_path / "plain" / "r.md")
    text = path.read_text()
    assert "matplotlib is not installed" in text
    assert "| Random | 3 | 10 |" in text
    assert not list(path.parent.rglob("*.png")) and not (path.parent / "figures").exists()


def test_report_filters_and_empty(filled, tmp_path):
    store, _, _ = filled
    text = write_report(store, tmp_path / "none.md", experiment="nothing", plots=False).read_text()
    assert "No finished runs." in text
    ids = aggregate(store)[0].run_ids[:1]
    groups = aggregate(store, run_ids=ids)
    assert len(groups) == 1 and groups[0].n_runs == 1 and math.isnan(groups[0].simple_regret[1])


def test_unknown_optimum_plots_best_f(tmp_path):
    with RunStore(tmp_path / "u.db") as store:
        run_many(store, [make_config(seed=s, budget=5, problem_params={"dim": 2, "known_optimum": False})
                         for s in range(2)], progress=False)
        path = write_report(store, tmp_path / "u.md")
        text = path.read_text()
        g = aggregate(store)[0]
        assert math.isnan(g.simple_regret[0]) and np.isfinite(g.best_f[0])
        assert f"| — | — | {format_mean_se(*g.best_f)} |" in text
        assert len(list((tmp_path / "figures" / "u").glob("u-*.png"))) == 1


def test_hand_written_run_aggregates(tmp_path):
    """A hand-written run (no runner) aggregates as expected: S_T = 1, R_T/T = 2."""
    with RunStore(tmp_path / "h.db") as store:
        run = store.get_or_create_run(make_config(budget=3))
        for t, r in enumerate([3.0, 1.0, 2.0]):
            store.append_evaluation(
                run.id,
                Evaluation(t=t, x=[0.5] * 3, y=-r, f=-r, regret=r, failed=False, error=None,
                           ask_seconds=0.0, eval_seconds=0.0),
                method_state={}, noise_rng_state=None, wall_seconds=1.0,
            )
        store.finish_run(run.id, diagnostics={}, wall_seconds=1.0)
        (g,) = aggregate(store)
        assert g.simple_regret[0] == 1.0 and g.avg_regret[0] == 2.0 and g.best_f[0] == -1.0
        assert g.wall_seconds == 1.0


# ---------------------------------------------------------------------------- claims
CLAIM_SPEC = """
name = "claims"
budget = 4
seeds = 3
problems = [
    { name = "toy-quadratic", label = "P1", params = { dim = 3 } },
    { name = "toy-quadratic", label = "P2", params = { dim = 2 } },
    { name = "toy-quadratic", label = "U", params = { dim = 3, known_optimum = false } },
]
methods = [{ name = "random", label = "A" }, { name = "random", label = "B" },
           { name = "random", label = "C" }, { name = "random", label = "D" }]

# one claim a line: its text, kind, problems, metric, then the method (and those it must beat)
claim = [
    { text = "A beats B on P1", kind = "better", problems = ["P1"], metric = "simple_regret", method = "A", than = ["B"], source = "Sec. 1" },
    { text = "A beats C on P1", kind = "better", problems = ["P1"], metric = "simple_regret", method = "A", than = ["C"] },
    { text = "A beats B on P1 and P2", kind = "better", problems = ["P1", "P2"], metric = "simple_regret", method = "A", than = ["B"] },
    { text = "A beats D on P1", kind = "better", problems = ["P1"], metric = "simple_regret", method = "A", than = ["D"] },
    { text = "A is best on P1", kind = "best", problems = ["P1"], metric = "simple_regret", method = "A" },
    { text = "C is best on P2", kind = "best", problems = ["P2"], metric = "simple_regret", method = "C" },
    { text = "A finds higher values than B on U", kind = "better", problems = ["U"], metric = "best_f", method = "A", than = ["B"] },
    { text = "B finds higher values than A on U", kind = "better", problems = ["U"], metric = "best_f", method = "B", than = ["A"] },
    { text = "A has lower regret than B on U", kind = "better", problems = ["U"], metric = "simple_regret", method = "A", than = ["B"] },
    { text = "B is best on P2", kind = "best", problems = ["P2"], metric = "avg_regret", method = "B" },
]
"""

# Final simple regret S_T of each hand-made run (U: -best f, its optimum is unknown), per (problem, method).
# P1: A clearly beats B (0.2 vs 1.1), A beats C within noise (0.2 vs 0.3); P2: B clearly beats A;
# D has no runs, C none on P2.
FINALS = {
    ("P1", "A"): [0.1, 0.2, 0.3],
    ("P1", "B"): [1.0, 1.1, 1.2],
    ("P1", "C"): [0.2, 0.3, 0.4],
    ("P2", "A"): [1.0, 1.1, 1.2],
    ("P2", "B"): [0.1, 0.2, 0.3],
    ("U", "A"): [0.1, 0.2, 0.3],
    ("U", "B"): [1.0, 1.1, 1.2],
}


def _claim_spec():
    from hdbo.experiments.spec import parse_spec, tomllib

    return parse_spec(tomllib.loads(CLAIM_SPEC), source="claims.toml")


def _put_runs(store, spec, problem, method, finals, *, budget):
    """One finished run per value v of ``finals``: regrets v + 1 (t < T-1), then v; so S_T = v, best f = -v."""
    from hdbo.experiments.store import RunConfig

    p = next(p for p in spec.problems if p.label == problem)
    m = next(m for m in spec.methods if m.label == method)
    known = p.params.get("known_optimum", True)
    for seed, v in enumerate(finals):
        config = RunConfig(
            experiment=spec.name, problem=p.name, method=m.name, seed=seed, budget=budget,
            problem_params=dict(p.params), method_params=dict(m.params), label=m.label, problem_label=p.label,
        )
        run = store.get_or_create_run(config)
        for t in range(budget):
            r = v if t == budget - 1 else v + 1.0
            store.append_evaluation(
                run.id,
                Evaluation(t=t, x=[0.5] * p.params["dim"], y=-r, f=-r, regret=r if known else None,
                           failed=False, error=None, ask_seconds=0.0, eval_seconds=0.0),
                method_state={}, noise_rng_state=None, wall_seconds=1.0,
            )
        store.finish_run(run.id, diagnostics={}, wall_seconds=1.0)


@pytest.fixture
def claim_store(tmp_path):
    spec = _claim_spec()
    store = RunStore(tmp_path / "claims.db")
    for (problem, method), finals in FINALS.items():
        _put_runs(store, spec, problem, method, finals, budget=spec.budget)
    # an unfinished run does not count: D still has no data
    store.get_or_create_run(spec.run_configs()[3 * 3])
    assert spec.run_configs()[3 * 3].label == "D"
    yield store, spec
    store.close()


def test_check_claims_verdicts(claim_store):
    from hdbo.experiments.report import check_claims

    store, spec = claim_store
    checks = check_claims(aggregate(store), spec.claims, experiment="claims")
    assert [c.claim.text for c in checks] == [c.text for c in spec.claims]  # one budget: one check per claim
    assert {c.budget for c in checks} == {4}
    verdict = {c.claim.text: c for c in checks}

    held = verdict["A beats B on P1"]
    assert held.result == "held" and held.significant is True and held.missing == []
    (comp,) = held.comparisons
    se = 0.1 / math.sqrt(3)
    assert (comp.problem, comp.method, comp.other, comp.n_runs, comp.other_n_runs) == ("P1", "A", "B", 3, 3)
    assert_allclose([comp.mean, comp.se, comp.other_mean, comp.other_se], [0.2, se, 1.1, se])
    assert comp.better and comp.significant and comp.se_diff == pytest.approx(se * math.sqrt(2))

    within_noise = verdict["A beats C on P1"]  # 0.2 vs 0.3, 2 SE of the difference = 0.15
    assert within_noise.result == "held" and within_noise.significant is False
    assert not within_noise.comparisons[0].significant and within_noise.n_runs == (3, 3)
    assert within_noise.verdict == "held in direction only" and held.verdict == "held significantly"

    # holds on P1, not on P2: not held, and clearly so (it loses P2 by more than 2 SE)
    mixed = verdict["A beats B on P1 and P2"]
    assert mixed.result == "not held" and mixed.significant is True
    assert [(c.problem, c.better) for c in mixed.comparisons] == [("P1", True), ("P2", False)]

    no_runs = verdict["A beats D on P1"]
    assert no_runs.result == "no data" and no_runs.missing == ["D on P1"] and no_runs.significant is None

    # "best" without "than": every other method with runs on P1 (B and C; D has none and is left out)
    best = verdict["A is best on P1"]
    assert best.result == "held" and [c.other for c in best.comparisons] == ["B", "C"]
    assert best.significant is False  # C is within noise
    assert verdict["C is best on P2"].result == "no data" and verdict["C is best on P2"].missing == ["C on P2"]
    only_a = verdict["B is best on P2"]  # avg_regret; A is the only other method run on P2
    assert only_a.result == "held" and [c.other for c in only_a.comparisons] == ["A"]
    assert only_a.comparisons[0].mean == pytest.approx(0.2 + 3 / 4)  # R_T/T = v + (T-1)/T

    # best_f: higher is better
    assert verdict["A finds higher values than B on U"].result == "held"
    assert verdict["A finds higher values than B on U"].comparisons[0].mean == pytest.approx(-0.2)
    assert verdict["B finds higher values than A on U"].result == "not held"
    unknown = verdict["A has lower regret than B on U"]  # no known optimum: regret is unknown
    assert unknown.result == "no data" and unknown.missing == ["A on U (S_T unknown)", "B on U (S_T unknown)"]

    assert check_claims(aggregate(store), spec.claims, experiment="other") == []


def test_check_claims_one_row_per_budget(claim_store):
    """Runs at another budget (a different scale) are checked on their own, never mixed in."""
    from hdbo.experiments.report import check_claims

    store, spec = claim_store
    _put_runs(store, spec, "P1", "A", [0.9], budget=8)
    _put_runs(store, spec, "P1", "B", [0.4], budget=8)
    all_checks = check_claims(aggregate(store), spec.claims, experiment="claims")
    checks = [c for c in all_checks if c.claim.text == "A beats B on P1"]
    # one run each at T = 8: fewer than MIN_RUNS, so no verdict although A trails B
    assert [(c.budget, c.result, c.n_runs) for c in checks] == [(4, "held", (3, 3)), (8, "not testable", (1, 1))]
    one_run = checks[1].comparisons[0]
    assert math.isnan(one_run.se_diff) and not one_run.significant  # one run: no standard error
    assert checks[1].significant is None
    best = [c for c in all_checks if c.claim.text == "A is best on P1"]
    assert [(c.budget, c.result, [x.other for x in c.comparisons]) for c in best] == [
        (4, "held", ["B", "C"]), (8, "not testable", ["B"])
    ]
    text = write_report(store, store.path.replace("claims.db", "r.md"), claims={"claims": spec.claims},
                        plots=False).read_text()
    assert ("T = 4: 5 of 7 testable claims held (3 significantly, 2 in direction only), 2 not held "
            "(2 significantly); 3 no data; T = 8: 0 of 0 testable claims held, 0 not held; "
            "2 not testable (fewer than 3 runs), 8 no data.") in text
    assert "| A beats B on P1 | Sec. 1 | P1 | not testable | S_T: A 0.9 vs B 0.4 (no SE) | — | 1 run, T = 8 |" in text


def test_not_testable_with_fewer_than_three_runs(claim_store):
    """Two runs against three: no verdict, whatever the means say, and not counted."""
    from hdbo.experiments.report import MIN_RUNS, check_claims, claims_summary

    store, spec = claim_store
    assert MIN_RUNS == 3
    groups = aggregate(store)
    for g in groups:  # drop C's third run on P1: A (3 runs) vs C (2 runs)
        if (g.problem_label, g.label) == ("P1", "C"):
            g.n_runs = 2
    check = next(c for c in check_claims(groups, spec.claims, experiment="claims") if c.claim.text == "A beats C on P1")
    assert check.result == "not testable" and check.significant is None and check.verdict == "not testable"
    assert "1 not testable (fewer than 3 runs)" in claims_summary([check])
    assert claims_summary([check]).startswith("T = 4: 0 of 0 testable claims held")


def test_significance_claims_need_their_test(claim_store, tmp_path):
    """significant = true: a difference in the claimed direction within noise does not hold the claim."""
    import dataclasses

    from hdbo.experiments.report import check_claims
    from hdbo.experiments.spec import SpecError, parse_spec, tomllib

    store, spec = claim_store
    claims = [dataclasses.replace(c, test="welch", significant=True)
              for c in spec.claims if c.text in ("A beats B on P1", "A beats C on P1")]
    got = {c.claim.text: c for c in check_claims(aggregate(store), claims, experiment="claims")}
    assert got["A beats B on P1"].result == "held" and got["A beats B on P1"].verdict == "held significantly"
    assert got["A beats C on P1"].result == "not held"  # 0.2 vs 0.3, p > 0.05
    assert got["A beats C on P1"].verdict == "not held (right direction, not significant)"
    text = write_report(store, tmp_path / "s.md", claims={spec.name: claims}, plots=False).read_text()
    assert "| A beats C on P1 *(t-test)* *(significant)* | — | P1 | not held (right direction, not significant) |" in text
    # a spec must name the test of a significance claim
    raw = tomllib.loads(CLAIM_SPEC)
    raw["claim"][0]["significant"] = True
    raw["claim"][0].pop("test", None)
    with pytest.raises(SpecError, match="needs the test"):
        parse_spec(raw, source="claims.toml")
    raw["claim"][0]["test"] = "welch"
    assert parse_spec(raw, source="claims.toml").claims[0].significant is True
    raw["claim"][0]["significant"] = "yes"
    with pytest.raises(SpecError, match="significant"):
        parse_spec(raw, source="claims.toml")


def test_welch_claims(claim_store, tmp_path):
    """test = "welch": significance by Welch's t-test (p-value as SciPy computes it from the data)."""
    import dataclasses

    from scipy.stats import ttest_ind_from_stats

    from hdbo.experiments.report import check_claims

    store, spec = claim_store
    claims = [dataclasses.replace(c, test="welch") for c in spec.claims if c.text in ("A beats B on P1", "A beats C on P1")]
    checks = {c.claim.text: c for c in check_claims(aggregate(store), claims, experiment="claims")}
    for text, sig in (("A beats B on P1", True), ("A beats C on P1", False)):
        comp = checks[text].comparisons[0]
        expected = ttest_ind_from_stats(comp.mean, comp.se * math.sqrt(comp.n_runs), comp.n_runs, comp.other_mean,
                                        comp.other_se * math.sqrt(comp.other_n_runs), comp.other_n_runs,
                                        equal_var=False).pvalue
        assert comp.p_value == pytest.approx(expected, rel=1e-9)
        assert comp.significant is sig
    section = write_report(store, tmp_path / "w.md", claims={spec.name: claims}, plots=False).read_text()
    assert "| A beats B on P1 *(t-test)* | Sec. 1 | P1 | held significantly | S_T: A 0.2 ± 0.058 vs B 1.1 ± 0.058 (sig., p = " in section


def test_close_claims(claim_store, tmp_path):
    """kind = "close": held when the method trails each other method by at most `within`."""
    import dataclasses

    from hdbo.experiments.report import check_claims

    store, spec = claim_store
    base = next(c for c in spec.claims if c.text == "A beats B on P1")
    # On P2, A (mean 1.1) trails B (0.2) by 0.9; 2 SE of the difference ~ 0.163.
    cases = {"w1.5": 1.5, "w0.95": 0.95, "w0.8": 0.8, "w0.3": 0.3}
    claims = [
        dataclasses.replace(base, text=name, kind="close", problems=("P2",), within=w) for name, w in cases.items()
    ]
    claims.append(dataclasses.replace(base, text="ahead", kind="close", within=0.0))  # A leads B on P1
    for name, w in (("best_f 1.0", 1.0), ("best_f 0.5", 0.5)):  # higher is better: A trails B by 0.9 too
        claims.append(dataclasses.replace(base, text=name, kind="close", problems=("P2",), within=w, metric="best_f"))
    got = {c.claim.text: (c.result, c.significant) for c in check_claims(aggregate(store), claims, experiment="claims")}
    assert got["w1.5"] == ("held", True)
    assert got["w0.95"] == ("held", False)  # inside the tolerance, but by less than 2 SE
    assert got["w0.8"] == ("not held", False)
    assert got["w0.3"] == ("not held", True)
    assert got["ahead"] == ("held", True)  # ahead of the other method counts as close
    assert (got["best_f 1.0"][0], got["best_f 0.5"][0]) == ("held", "not held")
    text = write_report(store, tmp_path / "c.md", claims={spec.name: claims[:1]}, plots=False).read_text()
    assert "| w1.5 *(within 1.5)* | Sec. 1 | P2 | held significantly | S_T: A 1.1 ± 0.058 vs B 0.2 ± 0.058 (sig.) |" in text
    assert "Claims marked *(within w)* are about being close" in text


def test_report_claims_section(claim_store, tmp_path):
    store, spec = claim_store
    path = write_report(store, tmp_path / "claims.md", claims={spec.name: spec.claims}, plots=False)
    text = path.read_text()
    section = text.split("### Claims\n", 1)[1].split("\n### ", 1)[0]
    assert text.index("### Claims") < text.index("### P1 (T = 4)")  # before the per-problem tables
    assert section.lstrip().startswith(
        "T = 4: 5 of 7 testable claims held (3 significantly, 2 in direction only), 2 not held (2 significantly); "
        "3 no data.")
    assert "| claim | source | problem(s) | result | numbers (mean ± SE) | significant | scale |" in section
    s_t = "S_T: A 0.2 ± 0.058 vs "
    rows = [  # claim | source | problem(s) | result | numbers | significant (2 SE) | scale
        ("A beats B on P1", "Sec. 1", "P1", "held significantly", s_t + "B 1.1 ± 0.058 (sig.)", "yes", "3 runs, T = 4"),
        ("A beats C on P1", "—", "P1", "held in direction only", s_t + "C 0.3 ± 0.058 (n.s.)", "no",
         "3 runs, T = 4"),
        ("A beats B on P1 and P2", "—", "P1, P2", "not held",
         "S_T: P1: A 0.2 ± 0.058 vs B 1.1 ± 0.058 (sig.)<br>P2: A 1.1 ± 0.058 vs B 0.2 ± 0.058 (sig.)",
         "yes", "3 runs, T = 4"),
        ("A beats D on P1", "—", "P1", "no data", "S_T: A 0.2 ± 0.058<br>missing: D on P1", "—", "3 runs, T = 4"),
        ("A is best on P1", "—", "P1", "held in direction only", s_t + "B 1.1 ± 0.058 (sig.), C 0.3 ± 0.058 (n.s.)",
         "no", "3 runs, T = 4"),
        ("C is best on P2", "—", "P2", "no data", "S_T: A 1.1 ± 0.058, B 0.2 ± 0.058<br>missing: C on P2", "—",
         "3 runs, T = 4"),
        ("A finds higher values than B on U", "—", "U", "held significantly", "best f: A -0.2 ± 0.058 vs B -1.1 ± 0.058 (sig.)",
         "yes", "3 runs, T = 4"),
        ("B finds higher values than A on U", "—", "U", "not held",
         "best f: B -1.1 ± 0.058 vs A -0.2 ± 0.058 (sig.)", "yes", "3 runs, T = 4"),
        ("A has lower regret than B on U", "—", "U", "no data",
         "S_T: missing: A on U (S_T unknown), B on U (S_T unknown)", "—", "3 runs, T = 4"),
        ("B is best on P2", "—", "P2", "held significantly", "R_T/T: B 0.95 ± 0.058 vs A 1.85 ± 0.058 (sig.)", "yes",
         "3 runs, T = 4"),
    ]
    for cells in rows:
        row = "| " + " | ".join(cells) + " |"
        assert row in section, row
    # no claims given (as with `hdbo report`, which has no spec): no section
    assert "### Claims" not in write_report(store, tmp_path / "plain.md", plots=False).read_text()


def test_best_claim_without_rivals_and_hand_made_claim(claim_store):
    from hdbo.experiments.report import check_claims
    from hdbo.experiments.spec import Claim

    store, spec = claim_store
    claim = next(c for c in spec.claims if c.text == "A is best on P1")
    only_a = [g for g in aggregate(store) if g.label == "A"]
    (check,) = check_claims(only_a, [claim], experiment="claims")
    assert check.result == "no data" and check.missing == ["any other method on P1"] and check.comparisons == []
    # a Claim built by hand (no spec): "best" compares with every other label among the runs
    hand = Claim(text="A is best", kind="best", problems=("P1",), metric="simple_regret", method="A")
    (check,) = check_claims(aggregate(store), [hand], experiment="claims")
    assert check.result == "held" and [c.other for c in check.comparisons] == ["B", "C"]


TOY_CLAIM_SPEC = """
name = "toy"
budget = 6
seeds = 2
problems = [{ name = "toy-quadratic", label = "Quad", params = { dim = 2 } }]
methods = [{ name = "random", label = "RS" }, { name = "random", label = "RS again" }]

[scale.quick]
budget = 3

[[claim]]
text = "RS is best | really"
kind = "best"
problems = ["Quad"]
metric = "best_f"
method = "RS"
source = "made up"
"""


def test_reproduce_writes_claims_and_report_skips_them(tmp_path, capsys):
    """`hdbo reproduce` knows the spec and checks its claims; `hdbo report` has only the store."""
    from hdbo.cli import main

    root = tmp_path / "specs"
    root.mkdir()
    (root / "toy.toml").write_text(TOY_CLAIM_SPEC)
    db, rep = tmp_path / "toy.db", tmp_path / "toy.md"
    args = ["reproduce", "toy", "--specs-dir", str(root), "--store", str(db), "--report", str(rep), "--no-progress"]
    assert main(args) == 0
    text = rep.read_text()
    section = text.split("### Claims\n", 1)[1].split("\n### ", 1)[0]
    assert "T = 3: 0 of 0 testable claims held, 0 not held; 1 not testable (fewer than 3 runs)." in section
    # the title and the table under it say exactly what the report holds of the set
    assert text.startswith("# Reproduction: toy (quick scale, complete (1 spec))\n")
    assert "| toy | 1 of 1: Quad | 2 of 2 | 0-1 of 0-1 (2 runs) | 3 | complete |" in text
    assert main(args + ["--runs", "1", "--report", str(tmp_path / "one.md")]) == 0
    one = (tmp_path / "one.md").read_text()
    assert one.startswith("# Reproduction: toy (quick, first 1 seed(s) scale, incomplete: 0 of 1 specs complete, "
                          "1 of 1 with runs)\n")
    assert "| toy | 1 of 1: Quad | 2 of 2 | 0 of 0-1 (2 runs) | 3 | incomplete (fewest runs of a problem and method: 1) |" in one
    assert "| RS is best \\| really | made up | Quad | " in section  # a | in the text is escaped
    assert "best f: RS " in section and " vs RS again " in section and "| 2 runs, T = 3 |" in section
    assert main(["report", "--store", str(db), "--out", str(tmp_path / "plain.md"), "--no-plots"]) == 0
    assert "### Claims" not in (tmp_path / "plain.md").read_text()
    capsys.readouterr()


# ---------------------------------------------------------------------------- diagnostics and log10 metrics
DIAG_SPEC = """
name = "diag"
budget = 2
seeds = 3
diagnostics = ["n_used", "recovered"]
problems = [
    { name = "toy-quadratic", label = "D=4", params = { dim = 4 } },
    { name = "toy-quadratic", label = "D=8", params = { dim = 8 } },
]
methods = [{ name = "random", label = "A" }, { name = "random", label = "B" }]

claim = [
    { text = "A uses fewer samples than B", kind = "better", problems = ["D=4", "D=8"], metric = "diag:n_used", method = "A", than = ["B"], higher_is_better = false },
    { text = "A recovers more often than B", kind = "better", problems = ["D=4"], metric = "diag:recovered", method = "A", than = ["B"], higher_is_better = true },
    { text = "A has lower log10 regret", kind = "better", problems = ["D=4"], metric = "log10_simple_regret", method = "A", than = ["B"] },
]
"""


def _put_diag_runs(store, spec, problem, method, runs):
    """One finished run per (final regret, diagnostics) pair of ``runs``."""
    from hdbo.experiments.store import RunConfig

    p = next(p for p in spec.problems if p.label == problem)
    m = next(m for m in spec.methods if m.label == method)
    for seed, (r, diag) in enumerate(runs):
        config = RunConfig(
            experiment=spec.name, problem=p.name, method=m.name, seed=seed, budget=spec.budget,
            problem_params=dict(p.params), method_params=dict(m.params), label=m.label, problem_label=p.label,
        )
        run = store.get_or_create_run(config)
        for t in range(spec.budget):
            store.append_evaluation(
                run.id,
                Evaluation(t=t, x=[0.5] * p.params["dim"], y=-r, f=-r, regret=r, failed=False, error=None,
                           ask_seconds=0.0, eval_seconds=0.0),
                method_state={}, noise_rng_state=None, wall_seconds=1.0,
            )
        store.finish_run(run.id, diagnostics=diag, wall_seconds=1.0)


def test_diag_and_log10_metrics_in_claims_and_report(tmp_path):
    from hdbo.experiments.report import check_claims, write_report
    from hdbo.experiments.spec import parse_spec, tomllib

    spec = parse_spec(tomllib.loads(DIAG_SPEC), source="diag.toml")
    assert spec.diagnostics == ("n_used", "recovered")
    with RunStore(tmp_path / "d.db") as store:
        # A: 10, 20, 30 samples, recovered 3/3, regrets 1e-3, 1e-1, 10 (log10 mean -1)
        _put_diag_runs(store, spec, "D=4", "A", [(1e-3, {"n_used": 10, "recovered": True, "sel": [1, 2]}),
                                                 (1e-1, {"n_used": 20, "recovered": True}),
                                                 (10.0, {"n_used": 30, "recovered": True})])
        # B: 40 samples each, recovered 1/3, regrets 1 (log10 mean 0 although its plain mean is lower than A's)
        _put_diag_runs(store, spec, "D=4", "B", [(1.0, {"n_used": 40, "recovered": r}) for r in (True, False, False)])
        _put_diag_runs(store, spec, "D=8", "A", [(1.0, {"n_used": 50}), (1.0, {"n_used": 70}), (1.0, {})])
        _put_diag_runs(store, spec, "D=8", "B", [(1.0, {"n_used": 55})] * 3)
        groups = aggregate(store)
        a4 = next(g for g in groups if g.problem_label == "D=4" and g.label == "A")
        assert a4.metric("diag:n_used") == pytest.approx((20.0, 10.0 / np.sqrt(3)))
        assert a4.metric("diag:recovered")[0] == 1.0
        assert a4.metric("log10_simple_regret")[0] == pytest.approx(-1.0)
        assert a4.simple_regret[0] > 1.0  # the plain mean is dominated by the bad run
        assert np.isnan(a4.metric("diag:missing")[0])
        a8 = next(g for g in groups if g.problem_label == "D=8" and g.label == "A")
        assert a8.metric("diag:n_used")[0] == 60.0  # the run without the key is left out
        results = {c.claim.text: c.result for c in check_claims(groups, spec.claims, experiment="diag")}
        assert results == {
            "A uses fewer samples than B": "not held",  # 60 > 55 on D=8
            "A recovers more often than B": "held",
            "A has lower log10 regret": "held",
        }
        out = write_report(store, tmp_path / "r.md", claims={"diag": spec.claims},
                           diagnostics={"diag": spec.diagnostics}, plots=False)
    text = out.read_text()
    assert "### Diagnostics" in text and "**n_used**" in text and "| method | D=4 | D=8 |" in text
    assert "| A | 20 ± 5.8 | 60 ± 10 |" in text


def _image_links(text):
    return re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text)


def _diag_store(path):
    from hdbo.experiments.spec import parse_spec, tomllib

    spec = parse_spec(tomllib.loads(DIAG_SPEC), source="diag.toml")
    store = RunStore(path)
    for problem in ("D=4", "D=8"):
        _put_diag_runs(store, spec, problem, "A", [(1.0, {"n_used": 10, "recovered": True})] * 3)
        _put_diag_runs(store, spec, problem, "B", [(2.0, {"n_used": 20, "recovered": False})] * 3)
    return spec, store


def test_report_figures_go_in_the_papers_folder(tmp_path):
    """figures/<paper>/<stem>-... next to the report, linked relatively; other files there are kept."""
    spec, store = _diag_store(tmp_path / "d.db")
    docs = tmp_path / "docs" / "reproductions"
    folder = docs / "figures" / "toy"
    folder.mkdir(parents=True)
    (folder / "other-report-fig.png").write_bytes(b"not ours")  # another report's figure
    (folder / "toy-full-diag-old-problem-T2.png").write_bytes(b"stale")  # this report's, from an older run
    with store:
        out = write_report(store, docs / "toy-full.md", diagnostics={"diag": spec.diagnostics}, paper="toy")
        links = _image_links(out.read_text())
        assert links == [
            "figures/toy/toy-full-diag-diag-n_used.png",
            "figures/toy/toy-full-diag-diag-recovered.png",
            "figures/toy/toy-full-diag-D-4-T2.png",
            "figures/toy/toy-full-diag-D-8-T2.png",
        ]
        for link in links:
            assert (out.parent / link).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert sorted(p.name for p in docs.iterdir()) == ["figures", "toy-full.md"]  # nothing else at the root
        assert (folder / "other-report-fig.png").read_bytes() == b"not ours"
        assert (folder / "toy-full-diag-old-problem-T2.png").read_bytes() == b"stale"

        # the paper's quick report shares the folder without touching the full report's figures
        before = {p.name: p.read_bytes() for p in folder.iterdir()}
        quick = write_report(store, docs / "toy.md", diagnostics={"diag": spec.diagnostics}, paper="toy")
        quick_links = _image_links(quick.read_text())
        assert quick_links == [link.replace("/toy-full-", "/toy-") for link in links]
        assert all((quick.parent / link).is_file() for link in quick_links)
        assert {p.name: p.read_bytes() for p in folder.iterdir() if p.name in before} == before

        # regenerating gives the same layout
        again = write_report(store, docs / "toy-full.md", diagnostics={"diag": spec.diagnostics}, paper="toy")
        assert _image_links(again.read_text()) == links
        assert len(list(folder.iterdir())) == 2 + 2 * len(links)

        # without ``paper`` the folder is the report's stem; a name unfit for a path is made one
        other = write_report(store, tmp_path / "x" / "my report.md", plots=True)
        assert _image_links(other.read_text())[0] == "figures/my-report/my-report-diag-D-4-T2.png"
        odd = write_report(store, tmp_path / "y" / "r.md", paper="a b/c")
        assert _image_links(odd.read_text())[0] == "figures/a-b-c/r-diag-D-4-T2.png"
        assert (tmp_path / "y" / "figures" / "a-b-c" / "r-diag-D-4-T2.png").is_file()


def test_report_paper_argument_errors(tmp_path):
    with RunStore(tmp_path / "e.db") as store:
        with pytest.raises(TypeError, match="paper must be a str"):
            write_report(store, tmp_path / "r.md", paper=Path("toy"))
        with pytest.raises(ValueError, match="paper must be a non-empty"):
            write_report(store, tmp_path / "r.md", paper=" ")
        out = write_report(store, tmp_path / "r.md", paper="toy")  # no runs: no figures, no folder
    assert "No finished runs." in out.read_text() and not (tmp_path / "figures").exists()


@pytest.mark.parametrize(
    "claim, match",
    [
        ('metric = "diag:n"', "needs higher_is_better"),
        ('metric = "diag:"', "unknown metric"),
        ('metric = "regret"', "unknown metric"),
        ('metric = "best_f"\nhigher_is_better = 1', "expected true or false"),
    ],
)
def test_claim_metric_errors(claim, match):
    from hdbo.experiments.spec import SpecError, parse_spec, tomllib

    text = DIAG_SPEC.split("claim = [")[0] + f"""
[[claim]]
text = "x"
kind = "better"
problems = ["D=4"]
method = "A"
than = ["B"]
{claim}
"""
    with pytest.raises(SpecError, match=match):
        parse_spec(tomllib.loads(text), source="bad.toml")


def test_scope_lines_seed_ranges_and_specs_not_run():
    from hdbo.experiments.report import GroupSummary, SpecScope, _seed_ranges, scope_lines

    assert _seed_ranges([12, *range(10), 3]) == "0-9, 12" and _seed_ranges([]) == "none" and _seed_ranges([4]) == "4"
    scopes = [SpecScope("a", ("P",), ("M", "N"), tuple(range(5)), 10), SpecScope("b", ("Q",), ("M",), (0, 1), 10)]
    groups = [GroupSummary("a", "p", "P", "m", "M", 10, n_runs=5, seeds=[0, 1, 2, 3, 4]),
              GroupSummary("a", "p", "P", "n", "N", 10, n_runs=4, seeds=[0, 1, 2, 4])]
    suffix, lines = scope_lines(scopes, groups, "full")
    assert suffix == "full scale, incomplete: 0 of 2 specs complete, 1 of 2 with runs"
    assert "| a | 1 of 1: P | 2 of 2 | 0-4 of 0-4 (5 runs) | 10 | incomplete (fewest runs of a problem and method: 4) |" in lines
    assert "| b | 0 of 1 | 0 of 1 | none of 0-1 (2 runs) | 10 | not run |" in lines
    groups[1] = GroupSummary("a", "p", "P", "n", "N", 10, n_runs=5, seeds=[0, 1, 2, 3, 4])
    suffix, _ = scope_lines(scopes[:1], groups, "full")
    assert suffix == "full scale, complete (1 spec)"


def test_reproduce_counts_runs_of_a_committed_summary_as_done(tmp_path, capsys):
    """A run in the summary is not run again and is reported from it; a changed spec reruns it."""
    from hdbo.cli import main
    from hdbo.experiments.summary import read_summary

    root = tmp_path / "specs"
    root.mkdir()
    (root / "toy.toml").write_text(TOY_CLAIM_SPEC)
    rep = tmp_path / "out" / "toy.md"
    base = ["reproduce", "toy", "--specs-dir", str(root), "--report", str(rep), "--no-progress"]
    assert main(base + ["--store", str(tmp_path / "a.db")]) == 0
    summary = tmp_path / "out" / "summaries" / "toy.csv.gz"
    first = read_summary(summary)
    assert sorted((r.label, r.seed) for r in first) == [("RS", 0), ("RS", 1), ("RS again", 0), ("RS again", 1)]
    table = rep.read_text().split("### Quad (T = 3)", 1)[1]
    capsys.readouterr()
    # a new machine: no store, only the summary (as from git)
    assert main(base + ["--store", str(tmp_path / "b.db")]) == 0
    err = capsys.readouterr().err
    assert "(4 already done in" in err and "0 runs: 0 finished now" in err
    again = rep.read_text()
    rows_now = [line.split("|")[1:7] for line in again.split("### Quad (T = 3)", 1)[1].splitlines()[4:6]]
    assert rows_now == [line.split("|")[1:7] for line in table.splitlines()[4:6]]  # same runs, same numbers
    assert [r[0].strip() for r in rows_now] == ["RS", "RS again"] and rows_now[0][1].strip() == "2"
    assert "toy.csv.gz" in again.splitlines()[2]
    # --no-run without a store reports from the summary alone
    assert main(base + ["--store", str(tmp_path / "none.db"), "--no-run"]) == 0
    assert not (tmp_path / "none.db").exists()
    # a changed parameter is a different run: it runs and replaces the summary's copy
    (root / "toy.toml").write_text(TOY_CLAIM_SPEC.replace("params = { dim = 2 }", "params = { dim = 3 }"))
    capsys.readouterr()
    assert main(base + ["--store", str(tmp_path / "c.db")]) == 0
    assert "4 runs: 4 finished now" in capsys.readouterr().err
    now = read_summary(summary)
    assert len(now) == 4 and not {r.config for r in now} & {r.config for r in first}
    # --no-summary neither reads nor writes one
    assert main(base + ["--store", str(tmp_path / "d.db"), "--no-summary", "--report", str(tmp_path / "n.md")]) == 0
    assert "already done" not in capsys.readouterr().err and not (tmp_path / "summaries").exists()


def test_spec_order_lists_problems_then_methods_as_the_spec_does():
    """A report from summaries (file order) lists problems and methods as one from a store."""
    from hdbo.experiments.report import GroupSummary, SpecScope, spec_order

    def group(exp, problem, method):
        return GroupSummary(exp, "p", problem, "m", method, 10)

    groups = [group("b", "P2", "M1"), group("a", "P1", "X"), group("b", "P1", "M2"), group("b", "Q", "M1"),
              group("b", "P1", "M1"), group("b", "P2", "N")]
    scopes = [SpecScope("b", ("P1", "P2"), ("M1", "M2"), (0,), 10)]
    got = [(g.experiment, g.problem_label, g.label) for g in spec_order(groups, scopes)]
    # experiments alphabetically; unnamed problems and methods last, in order of appearance
    assert got == [("a", "P1", "X"), ("b", "P1", "M1"), ("b", "P1", "M2"), ("b", "P2", "M1"), ("b", "P2", "N"),
                   ("b", "Q", "M1")]


def test_save_png_writes_a_compact_palette_png(tmp_path):
    pytest.importorskip("matplotlib")
    PIL = pytest.importorskip("PIL.Image")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from hdbo.experiments.report import save_png

    fig = Figure(figsize=(5, 4))
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    t = np.arange(1, 200)
    for k in range(6):
        (line,) = ax.plot(t, np.log(t) * (k + 1), label=f"m{k}")
        ax.fill_between(t, np.log(t) * k, np.log(t) * (k + 1), color=line.get_color(), alpha=0.2)
    ax.legend()
    full = tmp_path / "full.png"
    fig.savefig(full, dpi=110)
    compact = tmp_path / "compact.png"
    save_png(fig, compact, dpi=110)
    with PIL.open(compact) as im, PIL.open(full) as ref:
        assert im.mode == "P" and im.size == ref.size
        # the same picture: few pixels move by more than a little after the palette
        a = np.asarray(im.convert("RGB"), dtype=float)
        b = np.asarray(ref.convert("RGB"), dtype=float)
        assert np.mean(np.abs(a - b).max(axis=2) > 24) < 0.01
    assert compact.stat().st_size < 0.7 * full.stat().st_size
    # deterministic
    again = tmp_path / "again.png"
    save_png(fig, again, dpi=110)
    assert again.read_bytes() == compact.read_bytes()


# ---------------------------------------------------------------------------- trend claims
TREND_SPEC = """
name = "trend"
budget = 4
seeds = 3
problems = [
    { name = "toy-quadratic", label = "D=10", params = { dim = 2 } },
    { name = "toy-quadratic", label = "D=100", params = { dim = 3 } },
    { name = "toy-quadratic", label = "D=1000", params = { dim = 4 } },
]
methods = [{ name = "random", label = "A" }, { name = "random", label = "B" }]
claim = [
    { text = "A grows like log D", kind = "trend", problems = ["D=10", "D=100", "D=1000"], x = [10, 100, 1000], shape = "log", metric = "simple_regret", method = "A" },
    { text = "A grows like D", kind = "trend", problems = ["D=10", "D=100", "D=1000"], x = [10, 100, 1000], shape = "linear", metric = "simple_regret", method = "A" },
    { text = "B grows like log D", kind = "trend", problems = ["D=10", "D=100", "D=1000"], x = [10, 100, 1000], shape = "log", metric = "simple_regret", method = "B" },
]
"""


def test_fit_trend_slopes_errors_and_shapes():
    from hdbo.experiments.report import fit_trend

    x = [10.0, 100.0, 1000.0]
    fit = fit_trend(x, [1.0, 2.0, 3.0], [0.1, 0.1, 0.1], "log")
    # exactly linear in log x: slope 1 / log(10), residual 0; the SE of an OLS slope from the
    # means' SEs is sqrt(sum(c_i^2)) * 0.1 with c = (g - mean g) / sum((g - mean g)^2)
    g = np.log(x)
    c = (g - g.mean()) / np.sum((g - g.mean()) ** 2)
    assert fit.slope == pytest.approx(1 / np.log(10)) and fit.rss == pytest.approx(0, abs=1e-12)
    assert fit.slope_se == pytest.approx(0.1 * np.sqrt(np.sum(c**2)))
    assert fit.other_rss > 0.1 and fit.held and fit.significant
    linear = fit_trend(x, [1.0, 2.0, 3.0], [0.1, 0.1, 0.1], "linear")
    assert not linear.held and linear.slope > 0 and linear.other_rss == pytest.approx(0, abs=1e-12)
    flat = fit_trend(x, [2.0, 1.9, 2.1], [0.5, 0.5, 0.5], "log")  # noise around a constant
    assert not flat.significant
    falling = fit_trend(x, [3.0, 2.0, 1.0], [0.1, 0.1, 0.1], "log")
    assert not falling.held and falling.significant  # it significantly does not grow
    assert math.isnan(fit_trend(x, [1.0, 2.0, 3.0], [0.1, math.nan, 0.1], "log").slope_se)


def test_trend_claims_checked_and_reported(tmp_path):
    from hdbo.experiments.report import check_claims
    from hdbo.experiments.spec import parse_spec, tomllib

    spec = parse_spec(tomllib.loads(TREND_SPEC), source="trend.toml")
    assert spec.claims[0].x == (10.0, 100.0, 1000.0) and spec.claims[0].shape == "log" and spec.claims[0].others == ()
    with RunStore(tmp_path / "t.db") as store:
        # A's S_T: 1, 2, 3 (+- 0.1) at D = 10, 100, 1000 (like log D); B: 5 everywhere, 2 runs at D=1000
        for problem, mean in (("D=10", 1.0), ("D=100", 2.0), ("D=1000", 3.0)):
            _put_runs(store, spec, problem, "A", [mean - 0.1, mean, mean + 0.1], budget=spec.budget)
            _put_runs(store, spec, problem, "B", [5.0, 5.0, 5.0][: 2 if problem == "D=1000" else 3], budget=spec.budget)
        checks = {c.claim.text: c for c in check_claims(aggregate(store), spec.claims, experiment="trend")}
        log, lin, b = checks["A grows like log D"], checks["A grows like D"], checks["B grows like log D"]
        assert (log.result, log.significant, log.verdict) == ("held", True, "held significantly")
        assert log.trend is not None and log.trend.slope == pytest.approx(1 / np.log(10))
        assert (lin.result, lin.significant) == ("not held", False)  # it grows, but not like D
        assert (b.result, b.trend) == ("not testable", None)  # 2 runs at D=1000
        out = write_report(store, tmp_path / "t.md", claims={"trend": spec.claims}, plots=False)
    text = out.read_text()
    assert "| A grows like log D *(trend: linear in log x)* |" in text
    assert "A at x = 10: 1 ± 0.058, 100: 2 ± 0.058, 1000: 3 ± 0.058<br>slope per unit of log x 0.4343 ± " in text
    assert "Claims marked *(trend: linear in x / log x)*" in text
