"""write_suite_report / ``hdbo suite-report``: the suite's report from summaries, numbers checked."""

from __future__ import annotations

import csv
import gzip
import re
import sys
from pathlib import Path

import _hdbo_test_problems as toy
import numpy as np
import pytest
from _hdbo_test_problems import make_config
from numpy.testing import assert_allclose

from hdbo.cli import main
from hdbo.experiments import RunStore, export_summary, run_many, run_one, write_suite_report
from hdbo.experiments.suite_report import _cells, rank_medians
from hdbo.experiments.summary import SUMMARY_COLUMNS, read_summary

AUTO = "hdbo auto (default)"


def _table(md: str, heading: str) -> list[dict[str, str]]:
    """The rows of the first markdown table after ``heading`` (a line of its own)."""
    lines = md.splitlines()
    i = lines.index(heading)
    while not lines[i].startswith("|"):
        i += 1
    header = [h.strip() for h in lines[i].strip("|").split("|")]
    rows = []
    for line in lines[i + 2:]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(header, [c.strip() for c in line.strip("|").split("|")], strict=True)))
    return rows


def _write_summary(path: Path, runs: list[dict]) -> Path:
    """A summary by hand: each run gives its identity, ``f`` (None = failed) and ``ask`` seconds."""
    with gzip.open(path, "wt", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(SUMMARY_COLUMNS)
        for r in runs:
            ask = r.get("ask", [0.01] * len(r["f"]))
            for t, (f, a) in enumerate(zip(r["f"], ask, strict=True)):
                w.writerow([r.get("experiment", "exp-b4"), "toy", r["problem"], r["method"], r["label"], r["seed"],
                            r.get("budget", 4), r.get("status", "finished"), t, "", "" if f is None else repr(f),
                            "", int(f is None), a, 0.001, "", "", "", ""])
    return path


def _runs(problem: str, medians: dict[tuple[str, str], float], seeds=(1, 2, 3), **extra) -> list[dict]:
    """Runs whose best value (minimization convention) is the given one for every seed (f = -m is the largest)."""
    return [
        dict(problem=problem, method=method, label=label, seed=s, f=[-m - 1.0, -m, -m - 2.0, -m - 3.0], **extra)
        for (method, label), m in medians.items() for s in seeds
    ]


def test_rank_medians_ties_share_a_rank_and_the_next_skips():
    assert rank_medians([3.0, 1.0, 1.0, 2.0]) == [4, 1, 1, 3]
    assert rank_medians([-3.32, -3.32 * (1 + 1e-13), -3.3]) == [1, 1, 3]  # equal to 1e-12 relative
    assert rank_medians([-3.32, -3.32 * (1 + 1e-11), -3.3]) == [2, 1, 3]  # beyond it: not a tie
    assert rank_medians([float("nan"), 0.0, 0.0]) == [None, 1, 1]


def test_report_of_real_runs_matches_the_store(tmp_path, monkeypatch):
    """Runs through the real runner, exported, reported: medians, ranks, seconds, notes, figures."""
    db, seeds = tmp_path / "s.db", (1, 2, 3)
    configs = [make_config(experiment="exp-b6", method=m, label=lab, seed=s, budget=6, problem_label="Quad D=3")
               for m, lab in (("auto", AUTO), ("random", "Random"), ("random", "Random twin"), ("direct", "DIRECT"))
               for s in seeds]
    run_many(db, configs, progress=False)
    interrupted = make_config(experiment="exp-b6", method="random", label="Random", seed=4, budget=6,
                              problem_label="Quad D=3")
    toy.TRIGGER["countdown"] = 3  # the third evaluation raises: two stored, run not finished
    with RunStore(db) as store, pytest.raises(KeyboardInterrupt):
        run_one(store, interrupted)
    (tmp_path / "docs" / "benchmarks").mkdir(parents=True)
    export_summary(db, tmp_path / "docs" / "benchmarks" / "part.csv.gz")
    monkeypatch.chdir(tmp_path)
    out = write_suite_report([Path("docs/benchmarks/part.csv.gz")], Path("docs/benchmarks.md"))
    md = out.read_text()
    lines = md.splitlines()

    # first lines: title, the scale found in the data, the commands
    assert lines[0] == "# hdbo high-dimensional comparison suite"
    scale = _table(md, "## Scale")
    assert scale == [{"experiment": "exp-b6", "budget": "6", "problems": "1", "methods": "4",
                      "finished runs per method and problem": "3", "seeds (instances)": "1-3",
                      "runs not finished": "1"}]
    head = "\n".join(lines[:20])
    assert "instances 1-5" in head and "instance 0 is kept for development and tuning" in head
    assert "`hdbo suite-report docs/benchmarks/*.csv.gz --out docs/benchmarks.md`" in head
    assert "hdbo reproduce highdim --scale full --only exp-b6 --problem \"Quad D=3\" --runs 1" in head

    # per-method numbers, against the store (to the summary's precision)
    rows = {r["method"].strip("*"): r for r in _table(md, "### Quad D=3, budget 6")}
    assert set(rows) == {AUTO, "Random", "Random twin", "DIRECT"}
    with RunStore(db) as store:
        for label, row in rows.items():
            evs = [store.load_evaluations(store.find_run(c).id) for c in configs if c.label == label]
            best = np.array([-np.max(ev.f) for ev in evs])  # minimization convention
            assert np.all(best > 0)  # -max f of a problem whose maximum is 0
            ask = np.concatenate([ev.ask_seconds for ev in evs])
            assert row["all runs: n"] == "3"  # every method finished seeds 1-3: all runs are the common ones
            assert_allclose(float(row["median best"]), np.median(best), rtol=1e-5)
            assert_allclose([float(row["min"]), float(row["max"])], [best.min(), best.max()], rtol=1e-5)
            assert [row[f"all runs: {k}"] for k in ("median", "min", "max")] == [row[k] for k in
                                                                                ("median best", "min", "max")]
            assert_allclose(float(row["median proposal s"]), np.median(ask), rtol=5e-2)  # seconds have 2 significant digits
            assert_allclose(float(row["max proposal s"]), np.max(ask), rtol=5e-2)
    medians = {label: float(r["median best"]) for label, r in rows.items()}
    ranks = {label: int(r["rank"]) for label, r in rows.items()}
    assert ranks["Random"] == ranks["Random twin"]  # same method, same seeds: a tie
    expected = {lab: 1 + sum(m < medians[lab] and m != medians[lab] for m in medians.values()) for lab in medians}
    assert ranks == expected
    assert [int(r["rank"]) for r in rows.values()] == sorted(ranks.values())  # the table is in rank order
    assert "Not counted (not finished when the summary was written): Random seed 4 (failed, 2 of 6 evaluations)." in md
    assert "seeds (instances) 1-3; ranked on the 3 instances every method finished: 1, 2, 3." in md

    overview = _table(md, "## Overview")
    assert len(overview) == 1 and overview[0]["hdbo auto: rank"] == f"{ranks[AUTO]} of 4"
    assert overview[0]["instances compared"] == "1, 2, 3"
    assert float(overview[0]["random search: median"]) == medians["Random"]

    # one figure, linked relatively, a PNG
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    assert links == ["benchmarks/fig-b6-quad-d-3.png"]
    assert (tmp_path / "docs" / links[0]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_overview_counts_auto_against_peers_and_random(tmp_path):
    a = _write_summary(tmp_path / "a.csv.gz", [
        # P1: auto beats both peers; random worst
        *_runs("P1", {("auto", AUTO): 1.0, ("peer:a", "Peer A"): 2.0, ("peer:b", "Peer B"): 3.0,
                      ("random", "Random"): 5.0}),
        # P2: auto ties peer A (equal to 1e-13 relative); random is better than auto
        *_runs("P2", {("auto", AUTO): 2.0, ("peer:a", "Peer A"): 2.0 * (1 + 1e-13), ("random", "Random"): 1.0}),
        # P3: a peer is better
        *_runs("P3", {("auto", AUTO): 3.0, ("peer:a", "Peer A"): -1.5, ("random", "Random"): 4.0}),
        # P4: no peer ran; a method whose every evaluation failed
        *_runs("P4", {("auto", AUTO): 3.0, ("random", "Random"): 4.0}),
        dict(problem="P4", method="gp-ucb", label="GP-UCB", seed=1, f=[None] * 4),
    ])
    b = _write_summary(tmp_path / "b.csv.gz", [
        # budget 8, two experiments merged in one cell: the best median is tied between two
        *_runs("P1", {("auto", AUTO): 7.0, ("random", "Random"): 6.0}, experiment="exp-b8", budget=8),
        *_runs("P1", {("peer:a", "Peer A"): 6.0}, experiment="exp-b8-peers", budget=8),
        dict(problem="P1", method="peer:a", label="Peer A", seed=4, f=[-1.0, -0.5], experiment="exp-b8-peers",
             budget=8, status="running"),
    ])
    out = write_suite_report([a, b], tmp_path / "r.md", figures_dir=tmp_path / "figs")
    md = out.read_text()
    overview = {(r["budget"], r["problem"]): r for r in _table(md, "## Overview")}
    assert list(overview) == [("4", "P1"), ("4", "P2"), ("4", "P3"), ("4", "P4"), ("8", "P1")]
    assert overview[("4", "P1")]["best median (method)"] == AUTO
    assert overview[("4", "P1")]["hdbo auto: rank"] == "1 of 4"
    assert overview[("4", "P2")]["best median (method)"] == "Random"
    assert overview[("4", "P2")]["hdbo auto: rank"] == "2 of 3"  # tied with Peer A at rank 2
    assert overview[("4", "P3")]["best median (method)"] == "Peer A"
    assert float(overview[("4", "P3")]["best median"]) == -1.5  # minimization convention: -max f
    assert overview[("4", "P4")]["methods"] == "3" and overview[("4", "P4")]["hdbo auto: rank"] == "1 of 2"
    assert overview[("8", "P1")]["best median (method)"] in ("Random = Peer A", "Peer A = Random")
    assert overview[("8", "P1")]["hdbo auto: rank"] == "3 of 3"
    assert ("on 1 of the 4 (budget, problem) cells where hdbo auto and at least one peer (`peer:*`) ran, "
            "compared on the instances every method of the cell finished, hdbo auto's median is better than every "
            "peer's") in md
    assert "1 tie(s) (P2 (budget 4))" in md
    assert "A peer's median is better on 2: P3 (budget 4); P1 (budget 8)." in md
    assert ("hdbo auto's median is worse than random search's on 2 of the 5 cells where both ran (on the instances "
            "compared): P2 (budget 4); P1 (budget 8).") in md

    p2 = _table(md, "### P2, budget 4")
    assert [(r["rank"], r["method"]) for r in p2] == [("1", "Random"), ("2", f"**{AUTO}**"), ("2", "Peer A")]
    p4 = _table(md, "### P4, budget 4")
    assert p4[-1]["rank"] == "—" and p4[-1]["median best"] == "—" and p4[-1]["all runs: n"] == "1"
    # GP-UCB finished seed 1 only (every evaluation failed): P4 is compared on instance 1
    assert overview[("4", "P4")]["instances compared"] == "1"
    assert "No median on the common instances (at least half of those runs have no successful evaluation), " \
           "no rank: GP-UCB." in md
    assert "Runs without a successful evaluation (counted as the worst value in the median; " in md
    merged = md.split("### P1, budget 8")[1]
    assert ("Experiments `exp-b8`, `exp-b8-peers`; seeds (instances) 1-3; ranked on the 3 instances every method "
            "finished: 1, 2, 3.") in merged
    assert "Peer A seed 4 (running, 2 of 8 evaluations)" in merged
    assert {p.name for p in (tmp_path / "figs").iterdir()} == {
        "fig-b4-p1.png", "fig-b4-p2.png", "fig-b4-p3.png", "fig-b4-p4.png", "fig-b8-p1.png"}
    assert "](figs/fig-b8-p1.png)" in md


def test_methods_are_ranked_on_the_instances_every_method_finished(tmp_path):
    """Runs on different instances: ranks, best median and counts use the common ones; the rest is shown."""
    def one(problem, method, label, seed, best, **extra):
        return dict(problem=problem, method=method, label=label, seed=seed, f=[-best - 1.0, -best], **extra)

    s = _write_summary(tmp_path / "s.csv.gz", [
        # P: auto finished instances 1-5, Peer A 1-2, Random 1-3; instances 3-5 are easy for auto
        *[one("P", "auto", AUTO, k, v) for k, v in ((1, 5.0), (2, 5.0), (3, 0.0), (4, 0.0), (5, 0.0))],
        *[one("P", "peer:a", "Peer A", k, 4.0) for k in (1, 2)],
        *[one("P", "random", "Random", k, v) for k, v in ((1, 6.0), (2, 6.0), (3, -10.0))],
        # Peer B has no finished run on P: named, left out, and it does not empty the common set
        one("P", "peer:b", "Peer B", 3, -99.0, status="running"),
        # Q: no instance has a finished run of both methods
        one("Q", "auto", AUTO, 1, 1.0), one("Q", "peer:a", "Peer A", 2, 2.0),
    ])
    md = write_suite_report([s], tmp_path / "r.md").read_text()

    rows = {r["method"].strip("*"): r for r in _table(md, "### P, budget 4")}
    # on all runs auto's median would be 0 (best); on instances 1, 2 it is 5, between Peer A's 4 and Random's 6
    assert [(lab, rows[lab]["rank"], rows[lab]["median best"]) for lab in rows] == [
        ("Peer A", "1", "4"), (AUTO, "2", "5"), ("Random", "3", "6")]
    assert [rows[AUTO][f"all runs: {k}"] for k in ("n", "median", "min", "max")] == ["5", "0", "0", "5"]
    assert [rows["Random"][f"all runs: {k}"] for k in ("n", "median", "min", "max")] == ["3", "6", "-10", "6"]
    assert [rows["Random"][k] for k in ("min", "max")] == ["6", "6"]  # instance 3 only in the all-runs columns
    assert "seeds (instances) 1-5; ranked on the 2 instances every method finished: 1, 2." in md
    assert "No finished run (left out of the table, the ranking and the common instances): Peer B." in md
    assert "Peer B" not in rows

    overview = {r["problem"]: r for r in _table(md, "## Overview")}
    assert {k: overview["P"][k] for k in ("methods", "instances compared", "best median (method)", "best median",
                                          "hdbo auto: rank", "hdbo auto: median", "random search: median")} == {
        "methods": "3", "instances compared": "1, 2", "best median (method)": "Peer A", "best median": "4",
        "hdbo auto: rank": "2 of 3", "hdbo auto: median": "5", "random search: median": "6"}
    assert "A peer's median is better on 1: P (budget 4)." in md  # Q is not counted
    assert "on 0 of the 1 (budget, problem) cells" in md
    assert "Not compared (no instance on which every method has a finished run): Q (budget 4)." in md
    assert "worse than random search's on 0 of the 1 cells where both ran" in md

    # empty common set: said, not ranked, every method's own runs still shown
    assert {k: overview["Q"][k] for k in ("instances compared", "best median (method)", "best median",
                                          "hdbo auto: rank", "hdbo auto: median")} == {
        "instances compared": "none", "best median (method)": "—", "best median": "—", "hdbo auto: rank": "—",
        "hdbo auto: median": "—"}
    q = {r["method"].strip("*"): r for r in _table(md, "### Q, budget 4")}
    assert {lab: (r["rank"], r["median best"], r["all runs: n"], r["all runs: median"]) for lab, r in q.items()} == {
        AUTO: ("—", "—", "1", "1"), "Peer A": ("—", "—", "1", "2")}
    q_text = md.split("### Q, budget 4")[1]
    assert "**not ranked**: no instance has a finished run of every method" in q_text
    assert "No median on the common instances" not in q_text

    # figures: P's curves over instances 1, 2 (as its caption says); Q's over each method's own runs
    p_text = md.split("### P, budget 4")[1].split("### Q")[0]
    assert "over each method's runs on the instances compared (1, 2), the runs behind the ranks" in p_text
    assert "over each method's own finished runs (no common instance" in q_text
    cells = {c.problem_label: c for c in _cells(read_summary(s))}
    auto = cells["P"].find(lambda m: m.is_auto)
    assert_allclose(auto.curve, [6.0, 5.0, 5.0, 5.0])  # the median of instances 1, 2 (not 0 from instances 3-5)
    assert [int(m.used.sum()) for m in cells["Q"].methods] == [1, 1]


def test_even_run_counts_take_the_middle_mean_and_medians_use_finished_runs_only(tmp_path):
    runs = [dict(problem="P", method="random", label="Random", seed=s, f=[-v]) for s, v in ((1, 1.0), (2, 4.0))]
    runs.append(dict(problem="P", method="random", label="Random", seed=3, f=[-100.0], status="failed"))
    # a run without a successful evaluation is the worst value: median of (1, 2, worst) is 2, not 1.5
    runs += [dict(problem="P", method="line-bo", label="LineBO", seed=s, f=f)
             for s, f in ((1, [-1.0]), (2, [None, -2.0]), (3, [None, None]))]
    s = _write_summary(tmp_path / "s.csv.gz", runs)
    md = write_suite_report([s], tmp_path / "r.md").read_text()
    rows = {r["method"]: r for r in _table(md, "### P, budget 4")}
    cols = ("rank", "median best", "min", "max", "all runs: n", "all runs: median", "all runs: min", "all runs: max")
    # Random's seed 3 did not finish, so both are ranked on instances 1, 2 (even counts: the middle mean)
    assert [rows["Random"][k] for k in cols] == ["2", "2.5", "1", "4", "2", "2.5", "1", "4"]
    assert [rows["LineBO"][k] for k in cols] == ["1", "1.5", "1", "2", "3", "2", "1", "2"]
    assert "ranked on the 2 instances every method finished: 1, 2." in md
    assert "left out of min and max): LineBO seed 3." in md
    assert (tmp_path / "benchmarks" / "fig-b4-p.png").is_file()  # default figures folder: benchmarks/ next to out


def test_without_matplotlib_the_tables_stay_and_a_note_says_why(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    s = _write_summary(tmp_path / "s.csv.gz", [dict(problem="P", method="random", label="Random", seed=1, f=[-2.0])])
    md = write_suite_report([s], tmp_path / "r.md").read_text()
    assert "matplotlib is not installed, so there are no figures" in md and "![" not in md
    assert _table(md, "### P, budget 4")[0]["median best"] == "2"
    assert not (tmp_path / "benchmarks").exists()


def test_a_run_in_two_summaries_finished_copy_wins_and_conflicts_are_refused(tmp_path):
    """A run finished in another store replaces its unfinished copy; two different finished copies are refused."""
    part = dict(problem="P", method="random", label="Random", seed=1, status="running", f=[-5.0, -4.0])
    done = dict(problem="P", method="random", label="Random", seed=1, f=[-5.0, -4.0, -1.5, -3.0])
    other = dict(problem="P", method="random", label="Random", seed=2, f=[-2.0, -2.5, -3.0, -3.5])
    a = _write_summary(tmp_path / "a.csv.gz", [part, other])
    b = _write_summary(tmp_path / "b.csv.gz", [done])
    for order in ([a, b], [b, a]):
        md = write_suite_report(order, tmp_path / "r.md").read_text()
        row = _table(md, "### P, budget 4")[0]
        assert row["all runs: n"] == "2" and row["min"] == "1.5" and row["max"] == "2"
        scale = _table(md, "## Scale")[0]
        assert scale["runs not finished"] == "0" and scale["seeds (instances)"] == "1, 2"  # running copy superseded
    twice = _write_summary(tmp_path / "c.csv.gz", [done])
    write_suite_report([b, twice], tmp_path / "r.md")  # the same finished run written twice: one run
    clash = _write_summary(tmp_path / "d.csv.gz", [dict(done, f=[-5.0, -4.0, -1.0, -3.0])])
    with pytest.raises(ValueError, match="finished twice with different values"):
        write_suite_report([b, clash], tmp_path / "x.md")
    with pytest.raises(ValueError, match="at least one summary"):
        write_suite_report([], tmp_path / "x.md")
    assert not (tmp_path / "x.md").exists()


def test_cli_default_paths_and_one_line_errors(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["suite-report"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("hdbo: error: no summaries given and none found in docs/benchmarks/*.csv.gz")
    assert len(err.splitlines()) == 1

    (tmp_path / "docs" / "benchmarks").mkdir(parents=True)
    (tmp_path / "text.csv.gz").write_text("not a summary")
    _write_summary(tmp_path / "columns.csv.gz", [])
    with gzip.open(tmp_path / "columns.csv.gz", "wt") as fh:
        fh.write("a,b\n1,2\n")
    for argv, match in (
        (["missing.csv.gz"], "summary 'missing.csv.gz' does not exist"),
        (["text.csv.gz"], "summary 'text.csv.gz' is not an hdbo summary (a gzip-compressed CSV)"),
        (["columns.csv.gz"], "summary 'columns.csv.gz' is not an hdbo summary: its columns are"),
    ):
        assert main(["suite-report", *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and err.startswith("hdbo: error: ") and match in err, err
        assert not (tmp_path / "docs" / "benchmarks.md").exists()  # nothing written

    _write_summary(tmp_path / "docs" / "benchmarks" / "x.csv.gz",
                   [dict(problem="P", method="random", label="Random", seed=1, f=[-1.0, -0.25])])
    assert main(["suite-report"]) == 0
    assert "report written to docs/benchmarks.md" in capsys.readouterr().out
    md = (tmp_path / "docs" / "benchmarks.md").read_text()
    assert "`hdbo suite-report docs/benchmarks/*.csv.gz --out docs/benchmarks.md`" in md
    assert (tmp_path / "docs" / "benchmarks" / "fig-b4-p.png").is_file() and "](benchmarks/fig-b4-p.png)" in md


def test_cli_from_store_exports_every_experiment_then_reports(tmp_path, monkeypatch, capsys):
    """--from-store: one summary per experiment next to --out, then the report from them."""
    monkeypatch.chdir(tmp_path)
    configs = [make_config(experiment=e, method="random", seed=s, budget=3, problem_params={"dim": d})
               for e, d in (("exp-a", 3), ("exp-b", 2)) for s in (1, 2)]
    run_many(tmp_path / "s.db", configs, progress=False)
    assert main(["suite-report", "--from-store", "s.db"]) == 0
    out = capsys.readouterr().out
    for e in ("exp-a", "exp-b"):
        summary = tmp_path / "docs" / "benchmarks" / f"{e}.csv.gz"
        assert f"summary of {e}: 6 evaluations -> " in out and summary.is_file()
        assert len(read_summary(summary)) == 2  # two runs
    md = (tmp_path / "docs" / "benchmarks.md").read_text()
    assert "exp-a" in md and "exp-b" in md
    # with --out elsewhere, the report is made from the summaries written there, not docs/benchmarks
    assert main(["suite-report", "--from-store", "s.db", "--out", "elsewhere/report.md"]) == 0
    capsys.readouterr()
    assert (tmp_path / "elsewhere" / "benchmarks" / "exp-a.csv.gz").is_file()
    md2 = (tmp_path / "elsewhere" / "report.md").read_text()
    assert "elsewhere/benchmarks/exp-a.csv.gz" in md2 and "docs/benchmarks/exp-a.csv.gz" not in md2
    assert main(["suite-report", "--from-store", "missing.db"]) == 2
    assert "store 'missing.db' does not exist" in capsys.readouterr().err


def test_structured_methods_are_set_against_random_search_on_their_problems(tmp_path):
    """Issue 19's criterion: each structured method's median against random search's on the problem
    with its structure (better, worse or tie), and methods on other problems are left out."""
    runs = _runs("Styblinski-Tang D=100", {("add-gp-ucb", "Add-GP-UCB"): 10.0, ("random", "Random"): 20.0,
                                           ("hds", "HDS"): 5.0})
    runs += _runs("Hartmann-6 hidden D=300", {("hds", "HDS"): -1.0, ("random", "Random"): -2.0,
                                              ("dropout-ucb", "DropoutUCB"): -1.0})
    runs += _runs("Branin rotated D=100", {("hesbo", "HeSBO"): 2.0, ("random", "Random"): 2.0})
    md = write_suite_report([_write_summary(tmp_path / "s.csv.gz", runs)], tmp_path / "r.md").read_text()
    assert "2 of 3 better than random search" not in md  # a tie is not better
    assert "1 of 3 better than random search; 1 of 3 cannot learn their structure" in md
    assert ("| structure | method | problem | budget | structure learning needs | median best "
            "| random search: median | against random |") in md
    assert "| additive | Add-GP-UCB | Styblinski-Tang D=100 | 4 | no separate phase | 10 | 20 | better |" in md
    assert "| embedding | HeSBO | Branin rotated D=100 | 4 | no separate phase | 2 | 2 | tie |" in md
    # DropoutUCB assumes no structure (Tran-The et al. 2020): named beside the table, not judged in it.
    assert "| DropoutUCB |" not in "\n".join(line for line in md.splitlines() if line.startswith("| variable"))
    assert ("Not in the table: `dropout-ucb`, which Tran-The et al. (2020, Experiments) describe as making no "
            "assumption on the objective's structure") in md
    assert "| HDS | Styblinski-Tang" not in md  # HDS is judged on the hidden problem only
    # HDS's selection needs hundreds of evaluations at D = 300: no better/worse at this budget.
    assert ("| variable selection | HDS | Hartmann-6 hidden D=300 | 4 "
            "| 611 evaluations at D = 300: more than the budget | -1 | -2 | cannot learn within the budget |") in md
    # cws (same structure) has no run: named with what it would need.
    assert "`cws` (its structure learning needs 600 evaluations at D = 300)" in md


def test_structure_notes_follow_the_table_for_the_methods_that_ran(tmp_path):
    """RandomS-UCB's and PP-GP-UCB's verdicts come with why (once each); without them, no notes."""
    runs = _runs("Hartmann-6 rotated D=100", {("random-subspace-ucb", "RandomS-UCB"): -0.5,
                                              ("pp-gp-ucb", "PP-GP-UCB"): -1.0, ("random", "Random"): -1.5})
    runs += _runs("Hartmann-6 rotated D=300", {("random-subspace-ucb", "RandomS-UCB"): -0.4,
                                               ("random", "Random"): -1.6})
    md = write_suite_report([_write_summary(tmp_path / "s.csv.gz", runs)], tmp_path / "r.md").read_text()
    rows = {(r["method"], r["problem"]): r["against random"] for r in _structure_rows(md)}
    assert rows["RandomS-UCB", "Hartmann-6 rotated D=300"] == "**worse**"  # the verdict stays
    assert md.count("* RandomS-UCB is Djolonga et al.'s (2013) strawman baseline") == 1
    assert md.count("* PP-GP-UCB is Li et al.'s (2016) unrestricted variant") == 1
    assert "Not in the table:" not in md  # neither ms-ucb nor dropout-ucb ran
    only_add = _runs("Styblinski-Tang D=100", {("add-gp-ucb", "Add-GP-UCB"): 1.0, ("random", "Random"): 2.0})
    md2 = write_suite_report([_write_summary(tmp_path / "t.csv.gz", only_add)], tmp_path / "r2.md").read_text()
    assert "strawman" not in md2 and "unrestricted variant" not in md2


def test_structure_verdict_needs_the_count_below_the_budget(tmp_path):
    """HDS at budget 100 on D = 300 cannot learn (611 > 100); CWS's one round of 2 D is compared only
    when it leaves evaluations over; without D in the label the need is unknown and the verdict stays."""
    runs = _runs("Hartmann-6 hidden D=300", {("hds", "HDS"): -3.0, ("random", "Random"): -2.0}, budget=100)
    runs += _runs("Hartmann-6 hidden D=2", {("cws", "CWS"): -3.0, ("random", "Random"): -2.0}, budget=5)
    runs += _runs("Hartmann-6 hidden D=3", {("cws", "CWS"): -3.0, ("random", "Random"): -2.0}, budget=6)
    runs += _runs("Hartmann-6 hidden", {("hds", "HDS"): -3.0, ("random", "Random"): -2.0})
    md = write_suite_report([_write_summary(tmp_path / "s.csv.gz", runs)], tmp_path / "r.md").read_text()
    rows = {(r["method"], r["problem"]): r for r in _structure_rows(md)}
    hds = rows["HDS", "Hartmann-6 hidden D=300"]
    assert hds["against random"] == "cannot learn within the budget"  # although its median is the better one
    assert hds["structure learning needs"] == "611 evaluations at D = 300: more than the budget"
    assert (hds["median best"], hds["random search: median"]) == ("-3", "-2")  # medians still shown
    within = rows["CWS", "Hartmann-6 hidden D=2"]
    assert within["structure learning needs"] == "4 evaluations at D = 2: within the budget"
    assert within["against random"] == "better"
    whole = rows["CWS", "Hartmann-6 hidden D=3"]
    assert whole["structure learning needs"] == "6 evaluations at D = 3: the whole budget"
    assert whole["against random"] == "cannot learn within the budget"
    unknown = rows["HDS", "Hartmann-6 hidden"]
    assert unknown["structure learning needs"] == "unknown (no D in the problem label)"
    assert unknown["against random"] == "better"
    assert "2 of 4 better than random search; 2 of 4 cannot learn their structure" in md


def test_structure_rows_of_unregistered_methods_have_no_annotation(tmp_path, monkeypatch):
    from hdbo.experiments import suite_report

    monkeypatch.setattr(suite_report, "STRUCTURE_CELLS",
                        (("variable selection", "Hartmann-6 hidden", ("my-selector", "hds")),))
    runs = _runs("Hartmann-6 hidden D=300", {("my-selector", "Mine"): -3.0, ("random", "Random"): -2.0})
    md = write_suite_report([_write_summary(tmp_path / "s.csv.gz", runs)], tmp_path / "r.md").read_text()
    (row,) = _structure_rows(md)
    assert (row["method"], row["structure learning needs"], row["against random"]) == ("Mine", "—", "better")
    assert "`hds` (its structure learning needs 611 evaluations at D = 300)" in md  # not run here


def _structure_rows(md: str) -> list[dict[str, str]]:
    """The rows of the structured-methods table."""
    lines = md.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("| structure | method |"))
    return _table("\n".join(lines[head - 1:]), lines[head - 1])


def test_overview_gains_a_column_for_hdbo_through_optuna_when_it_ran(tmp_path):
    s = _write_summary(tmp_path / "s.csv.gz", _runs("P", {("auto", AUTO): 5.0, ("random", "Random"): 6.0,
                                                          ("hdbo-optuna", "hdbo through Optuna"): 4.5}))
    md = write_suite_report([s], tmp_path / "r.md").read_text()
    row = _table(md, "## Overview")[0]
    assert (row["hdbo auto: median"], row["hdbo through Optuna: median"]) == ("5", "4.5")
    s2 = _write_summary(tmp_path / "s2.csv.gz", _runs("P", {("auto", AUTO): 5.0, ("random", "Random"): 6.0}))
    md2 = write_suite_report([s2], tmp_path / "r2.md").read_text()
    assert "hdbo through Optuna" not in md2


def test_hdbo_through_optuna_is_paired_with_auto_by_instance(tmp_path):
    def run(method, label, seed, best):
        return dict(problem="P", method=method, label=label, seed=seed, f=[-best - 1.0, -best, -best - 2.0, -best - 3.0])

    # through Optuna better on instances 1 and 2, worse on 3, equal on 4
    auto = [run("auto", AUTO, s, b) for s, b in zip((1, 2, 3, 4), (5.0, 5.0, 5.0, 5.0))]
    opt = [run("hdbo-optuna", "hdbo through Optuna", s, b) for s, b in zip((1, 2, 3, 4), (4.0, 4.5, 6.0, 5.0))]
    s = _write_summary(tmp_path / "s.csv.gz", auto + opt + _runs("P", {("random", "Random"): 7.0}, seeds=(1, 2, 3, 4)))
    md = write_suite_report([s], tmp_path / "r.md").read_text()
    line = next(x for x in md.splitlines() if x.startswith("**hdbo through Optuna against hdbo auto:**"))
    assert "over the 4 (problem, instance) runs both finished in 1 cells" in line
    assert "better best value on 2, the worse on 1 and an equal one on 1" in line
    assert "p = 1" in line  # 2 of 3 decided pairs: no evidence either way
    s2 = _write_summary(tmp_path / "s2.csv.gz", auto)
    assert "against hdbo auto" not in write_suite_report([s2], tmp_path / "r2.md").read_text()


def test_auto_is_paired_with_each_cells_best_peer_instance_by_instance(tmp_path):
    def run(problem, method, label, seed, best):
        return dict(problem=problem, method=method, label=label, seed=seed,
                    f=[-best - 1.0, -best, -best - 2.0, -best - 3.0])

    seeds = (1, 2, 3, 4, 5)
    runs = [
        # P: Peer B has the better median (3 < 4), auto beats it on instances 1 and 2, ties on 3, loses on 4, 5
        *(run("P", "auto", AUTO, s, b) for s, b in zip(seeds, (1.0, 2.0, 3.0, 4.0, 5.0))),
        *(run("P", "peer:b", "Peer B", s, b) for s, b in zip(seeds, (2.0, 3.0, 3.0, 3.0, 3.5))),
        *(run("P", "peer:a", "Peer A", s, b) for s, b in zip(seeds, (9.0,) * 5)),
        # Q: auto better on all five instances; no second peer
        *(run("Q", "auto", AUTO, s, 1.0) for s in seeds),
        *(run("Q", "peer:a", "Peer A", s, 2.0) for s in seeds),
        # R: no peer, so no row (and its 7 instances do not enter the floors of the sign test)
        *(run("R", "auto", AUTO, s, 1.0) for s in range(1, 8)),
        *(run("R", "random", "Random", s, 2.0) for s in range(1, 8)),
    ]
    md = write_suite_report([_write_summary(tmp_path / "s.csv.gz", runs)], tmp_path / "r.md").read_text()
    heading = next(x for x in md.splitlines() if x.startswith("**hdbo auto against each cell's best peer"))
    assert "cannot go below p = 0.0625 with 5 instances, so no single cell can show a difference" in heading
    assert "7 instances" not in heading
    rows = {r["problem"]: r for r in _table(md, heading)}
    assert set(rows) == {"P", "Q"}
    assert (rows["P"]["best peer"], rows["P"]["its median"], rows["P"]["hdbo auto: median"]) == ("Peer B", "3", "3")
    assert rows["P"]["hdbo auto better / worse / equal"] == "2 / 2 / 1"
    assert rows["P"]["sign test p"] == "1"
    assert (rows["P"]["peers"], rows["Q"]["peers"]) == ("2", "1")
    assert rows["Q"]["hdbo auto better / worse / equal"] == "5 / 0 / 0"
    assert rows["Q"]["sign test p"] == "0.062"
    assert ("budget 4, 2 cells: hdbo auto better on 7 (cell, instance) pairs, worse on 2, equal on 1, "
            "sign test p = 0.18.") in md
    s2 = _write_summary(tmp_path / "s2.csv.gz", [run("R", "auto", AUTO, 1, 1.0), run("R", "random", "Random", 1, 2.0)])
    assert "best peer, instance by instance" not in write_suite_report([s2], tmp_path / "r2.md").read_text()


def test_pairing_with_the_best_peer_breaks_median_ties_by_name_and_skips_runs_without_a_value(tmp_path):
    def run(method, label, seed, best):
        f = [None] * 4 if best is None else [-best - 1.0, -best, -best - 2.0, -best - 3.0]
        return dict(problem="P", method=method, label=label, seed=seed, f=f)

    seeds = (1, 2, 3, 4, 5)
    runs = [
        # both peers have median 3: "Peer A" (first by name) is the best peer, whatever its order in the file
        *(run("peer:z", "Peer Z", s, b) for s, b in zip(seeds, (1.0, 1.0, 3.0, 8.0, 8.0))),
        *(run("peer:a", "Peer A", s, b) for s, b in zip(seeds, (2.0, 3.0, 3.0, 4.0, 4.0))),
        # auto: no successful evaluation on instance 2 (left out of the pairing, not counted as worse);
        # against Peer A better on 1 and 4, equal on 3, worse on 5 (against Peer Z it would be 3 / 0 / 1)
        *(run("auto", AUTO, s, b) for s, b in zip(seeds, (0.5, None, 3.0, 3.5, 5.0))),
    ]
    md = write_suite_report([_write_summary(tmp_path / "s.csv.gz", runs)], tmp_path / "r.md").read_text()
    heading = next(x for x in md.splitlines() if x.startswith("**hdbo auto against each cell's best peer"))
    (row,) = _table(md, heading)
    assert (row["best peer"], row["its median"]) == ("Peer A", "3")
    assert row["hdbo auto: median"] == "3.5"  # the run without a value counts as the worst in the median
    assert row["hdbo auto better / worse / equal"] == "2 / 1 / 1"
    assert "budget 4, 1 cell: hdbo auto better on 2 (cell, instance) pairs, worse on 1, equal on 1" in md
