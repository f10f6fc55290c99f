"""Aggregation and the markdown/PNG report, checked against numbers computed by hand."""

from __future__ import annotations

import math
import sys

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
        ("_hdbo_test_problems:quadratic(dim=3)", "Random", 3),
        ("_hdbo_test_problems:flaky(dim=3)", "Random", 2),
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
    refs = {"exp": [ReferenceValue("_hdbo_test_problems:flaky(dim=3)", "Random", "avg_regret", 0.125, "Tab. 9", 10)]}
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
    assert "1 run(s) are not finished" in text
    pngs = sorted(path.parent.glob("*.png"))
    assert len(pngs) == 2
    for png in pngs:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"]({png.name})" in text  # relative link


def test_report_without_matplotlib(filled, monkeypatch, tmp_path):
    store, _, _ = filled
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    path = write_report(store, tmp_path / "plain" / "r.md")
    text = path.read_text()
    assert "matplotlib is not installed" in text
    assert "| Random | 3 | 10 |" in text
    assert not list(path.parent.glob("*.png"))


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
        assert len(list(tmp_path.glob("u-*.png"))) == 1


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
