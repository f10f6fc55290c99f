"""export_summary: a compact, point-free CSV of a store that matches the store's evaluations."""

from __future__ import annotations

import csv
import gzip
import json
import math
import re

import numpy as np
import pytest
from _hdbo_test_problems import make_config
from numpy.testing import assert_allclose

from hdbo.experiments import RunStore, run_many
from hdbo.experiments.summary import SUMMARY_COLUMNS, config_id, export_summary, merge_summaries, read_summary


def _filled(reader) -> list[dict[str, str]]:
    """The rows of a summary with each run's identity (on its first row only) carried down, and
    the ``f`` or ``regret`` left out filled in by the documented rule (the optimum minus the other)."""
    rows, ident, last_t, optimum = [], {}, -1, None
    for r in reader:
        if r["experiment"]:
            ident = {k: r[k] for k in ("experiment", "problem", "problem_label", "method", "label", "seed", "budget",
                                       "status")}
            assert r["t"] != ""
            optimum = float(r["optimum"]) if r.get("optimum") else None
        else:
            assert all(r[k] == "" for k in ident)  # written once per run
            assert not r.get("optimum")
            r = {**r, **ident}
            if r["t"] == "":  # t written only where it does not follow on
                r["t"] = str(last_t + 1)
        if optimum is not None:
            assert not (r["f"] == "" and r["regret"] == "") or r["failed"] == "1"
            if r["regret"] == "" and r["f"]:
                r = {**r, "regret": format(optimum - float(r["f"]), ".9g")}
            elif r["f"] == "" and r["regret"]:
                r = {**r, "f": format(optimum - float(r["regret"]), ".9g")}
        last_t = int(r["t"])
        rows.append(r)
    return rows


def test_summary_has_every_evaluation_and_no_points(tmp_path):
    configs = [make_config(seed=s, budget=5) for s in (0, 1)]
    run_many(tmp_path / "s.db", configs, progress=False)
    before = (tmp_path / "s.db").read_bytes()
    n = export_summary(tmp_path / "s.db", tmp_path / "s.csv.gz")
    assert (tmp_path / "s.db").read_bytes() == before  # read-only
    with gzip.open(tmp_path / "s.csv.gz", "rt", newline="") as fh:
        rows = _filled(csv.DictReader(fh))
    assert n == len(rows) == 10 and tuple(rows[0]) == SUMMARY_COLUMNS
    with RunStore(tmp_path / "s.db") as store:
        for cfg in configs:
            rec = store.find_run(cfg)
            ev = store.load_evaluations(rec.id)
            mine = [r for r in rows if int(r["seed"]) == cfg.seed]
            assert [int(r["t"]) for r in mine] == list(range(5))
            # to the written precision: 9 significant digits for values, 3 for seconds
            assert_allclose([float(r["f"]) for r in mine], ev.f, rtol=5e-9, atol=0)
            assert_allclose([float(r["regret"]) for r in mine], ev.regret, rtol=5e-9, atol=1e-300)
            assert_allclose([float(r["ask_seconds"]) for r in mine], ev.ask_seconds, rtol=5e-2, atol=0)
            assert_allclose([float(r["eval_seconds"]) for r in mine], ev.eval_seconds, rtol=5e-2, atol=0)
            assert all(r["y"] == "" for r in mine)  # noise-free: y is f, left empty
    assert "x" not in rows[0]
    assert export_summary(tmp_path / "s.db", tmp_path / "none.csv.gz", experiments=["nope"]) == 0


def test_summary_refuses_a_missing_or_foreign_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        export_summary(tmp_path / "missing.db", tmp_path / "o.csv.gz")
    (tmp_path / "junk.db").write_bytes(b"not a database at all" * 10)
    with pytest.raises(ValueError, match="is not an hdbo store"):
        export_summary(tmp_path / "junk.db", tmp_path / "o.csv.gz")


def _digits(text: str) -> int:
    """Significant digits of a number as written."""
    mantissa = re.split("[eE]", text)[0].lstrip("-").replace(".", "").lstrip("0")
    return len(mantissa)


def test_summary_is_compact_and_reads_back_with_y_as_f(tmp_path):
    noisy = make_config(seed=1, budget=6, problem_params={"dim": 3, "noise_std": 0.1})
    configs = [make_config(seed=0, budget=6), noisy]
    run_many(tmp_path / "s.db", configs, progress=False)
    export_summary(tmp_path / "s.db", tmp_path / "s.csv.gz")
    with gzip.open(tmp_path / "s.csv.gz", "rt", newline="") as fh:
        rows = _filled(csv.DictReader(fh))
    for r in rows:
        assert all(_digits(r[c]) <= 9 for c in ("y", "f", "regret") if r[c])
        assert _digits(r["ask_seconds"]) <= 2 and _digits(r["eval_seconds"]) <= 2
    assert [r["y"] for r in rows if r["seed"] == "0"] == [""] * 6  # noise-free: y left empty
    assert all(r["y"] and r["y"] != r["f"] for r in rows if r["seed"] == "1")  # noisy: y written
    runs = read_summary(tmp_path / "s.csv.gz")
    assert [(r.seed, r.status, r.budget) for r in runs] == [(0, "finished", 6), (1, "finished", 6)]
    with RunStore(tmp_path / "s.db") as store:
        for cfg, run in zip(configs, runs, strict=True):
            ev = store.load_evaluations(store.find_run(cfg).id)
            assert_allclose(run.y, ev.y, rtol=5e-9, atol=0)  # the empty y of seed 0 read as f
            assert_allclose(run.f, ev.f, rtol=5e-9, atol=0)
            assert_allclose(run.ask_seconds, ev.ask_seconds, rtol=5e-2, atol=0)
            assert run.t.tolist() == list(range(6)) and not run.failed.any()
    assert not np.array_equal(runs[1].y, runs[1].f)


def test_failed_evaluations_and_unknown_optimum_stay_empty(tmp_path):
    cfg = make_config(problem="toy-flaky", seed=3, budget=12)
    unknown = make_config(seed=4, budget=3, problem_params={"dim": 3, "known_optimum": False})
    run_many(tmp_path / "s.db", [cfg, unknown], progress=False)
    export_summary(tmp_path / "s.db", tmp_path / "s.csv.gz")
    with gzip.open(tmp_path / "s.csv.gz", "rt", newline="") as fh:
        rows = _filled(csv.DictReader(fh))
    bad = [r for r in rows if r["failed"] == "1"]
    assert bad and all(r["y"] == r["f"] == r["regret"] == "" for r in bad)
    assert [(r["regret"], r["y"], bool(r["f"])) for r in rows if r["seed"] == "4"] == [("", "", True)] * 3
    run, _ = read_summary(tmp_path / "s.csv.gz")
    assert np.isnan(run.f[run.failed]).all() and np.isnan(run.y[run.failed]).all()
    assert np.isfinite(run.f[~run.failed]).all() and np.array_equal(run.y[~run.failed], run.f[~run.failed])


@pytest.mark.parametrize(
    "content, match",
    [
        (None, "does not exist"),
        (b"experiment,problem\n", "is not an hdbo summary .a gzip"),
        (gzip.compress(b"a,b,c\n1,2,3\n"), "columns are"),
        (gzip.compress((",".join(SUMMARY_COLUMNS) + "\ne,p,P,m,M,x,10,finished,0,,1,,0,0.1,0.1\n").encode()),
         "line 2"),
    ],
)
def test_read_summary_refuses_what_is_not_a_summary(tmp_path, content, match):
    path = tmp_path / "x.csv.gz"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises((ValueError, FileNotFoundError), match=match):
        read_summary(path)


def test_merge_summaries_later_runs_replace_earlier_ones(tmp_path):
    """merge_summaries: the union of the runs; a run in a later file replaces the same run as a whole."""
    from hdbo.experiments.summary import merge_summaries

    db_a, db_b = tmp_path / "a.db", tmp_path / "b.db"
    run_many(db_a, [make_config(seed=s, budget=4, label="M") for s in (0, 1)], progress=False)
    run_many(db_b, [make_config(seed=s, budget=4, method="direct", label="M") for s in (1, 2)], progress=False)
    export_summary(db_a, tmp_path / "a.csv.gz")
    export_summary(db_b, tmp_path / "b.csv.gz")
    old, new = read_summary(tmp_path / "a.csv.gz"), read_summary(tmp_path / "b.csv.gz")
    assert old[0].label == new[0].label  # same labels, so seed 1 is the same run in both files
    n = merge_summaries([tmp_path / "a.csv.gz", tmp_path / "b.csv.gz"], tmp_path / "a.csv.gz")  # in place
    merged = {r.seed: r for r in read_summary(tmp_path / "a.csv.gz")}
    assert n == 12 and sorted(merged) == [0, 1, 2]
    assert merged[0].method == "random" and merged[1].method == merged[2].method == "direct"
    np.testing.assert_array_equal(merged[1].f, new[0].f)
    assert not np.array_equal(merged[1].f, old[1].f)
    with pytest.raises(ValueError, match="at least one summary"):
        merge_summaries([], tmp_path / "o.csv.gz")
    (tmp_path / "junk.csv.gz").write_bytes(b"junk")
    with pytest.raises(ValueError, match="not an hdbo summary"):
        merge_summaries([tmp_path / "b.csv.gz", tmp_path / "junk.csv.gz"], tmp_path / "o.csv.gz")


def test_summary_keeps_each_runs_identity_time_and_diagnostics(tmp_path):
    """The run columns are on each run's first row; config_id changes with any parameter."""
    configs = [make_config(seed=s, budget=4) for s in (0, 1)]
    run_many(tmp_path / "s.db", configs, progress=False)
    export_summary(tmp_path / "s.db", tmp_path / "s.csv.gz")
    with gzip.open(tmp_path / "s.csv.gz", "rt", newline="") as fh:
        rows = _filled(csv.DictReader(fh))
    firsts = [r for r in rows if r["t"] == "0"]
    assert [r["config"] for r in firsts] == [config_id(c) for c in configs]
    assert all(r["config"] == r["wall_seconds"] == r["diagnostics"] == "" for r in rows if r["t"] != "0")
    runs = {r.seed: r for r in read_summary(tmp_path / "s.csv.gz")}
    with RunStore(tmp_path / "s.db") as store:
        for cfg in configs:
            rec = store.find_run(cfg)
            assert runs[cfg.seed].config == config_id(cfg)
            assert runs[cfg.seed].wall_seconds == pytest.approx(rec.wall_seconds, rel=1e-5)
            assert runs[cfg.seed].diagnostics == json.loads(json.dumps(rec.diagnostics))
    import dataclasses

    other = dataclasses.replace(configs[0], method_params={**configs[0].method_params, "n_init": 3})
    assert len(config_id(configs[0])) == 16 and config_id(other) != config_id(configs[0])
    assert config_id(dataclasses.replace(configs[0])) == config_id(configs[0])
    # only some runs
    assert export_summary(tmp_path / "s.db", tmp_path / "one.csv.gz", run_ids=[store_id(tmp_path, configs[1])]) == 4
    assert [r.seed for r in read_summary(tmp_path / "one.csv.gz")] == [1]


def store_id(tmp_path, config):
    with RunStore(tmp_path / "s.db") as store:
        return store.find_run(config).id


def test_summaries_of_the_older_layout_are_read_and_merged(tmp_path):
    """A 15-column summary (before the run columns) reads with an empty config and merges with a new one."""
    old = tmp_path / "old.csv.gz"
    header = SUMMARY_COLUMNS[:15]
    old.write_bytes(gzip.compress((",".join(header) + "\ne,p,P,m,M,0,2,finished,0,,1,,0,0.1,0.1\n"
                                   "e,p,P,m,M,0,2,finished,1,,2,,0,0.1,0.1\n").encode()))
    (run,) = read_summary(old)
    assert run.config == "" and math.isnan(run.wall_seconds) and run.diagnostics is None
    assert list(run.f) == [1.0, 2.0]
    configs = [make_config(seed=3, budget=2)]
    run_many(tmp_path / "s.db", configs, progress=False)
    export_summary(tmp_path / "s.db", tmp_path / "new.csv.gz")
    assert merge_summaries([old, tmp_path / "new.csv.gz"], tmp_path / "both.csv.gz") == 4
    both = read_summary(tmp_path / "both.csv.gz")
    assert [(r.experiment, r.config == "") for r in both] == [("e", True), (configs[0].experiment, False)]


def test_noisy_values_can_be_left_out(tmp_path):
    """noisy_values=False: y is written '-' where it differs from f and read back as NaN."""
    noisy = make_config(seed=1, budget=5, problem_params={"dim": 3, "noise_std": 0.1})
    run_many(tmp_path / "s.db", [noisy], progress=False)
    export_summary(tmp_path / "s.db", tmp_path / "n.csv.gz", noisy_values=False)
    with gzip.open(tmp_path / "n.csv.gz", "rt", newline="") as fh:
        rows = _filled(csv.DictReader(fh))
    assert [r["y"] for r in rows] == ["-"] * 5 and all(r["f"] for r in rows)
    with gzip.open(tmp_path / "n.csv.gz", "rt", newline="") as fh:
        raw = list(csv.DictReader(fh))
    assert [r["t"] for r in raw] == ["0", "", "", "", ""]  # t only where it does not follow on
    (run,) = read_summary(tmp_path / "n.csv.gz")
    assert np.isnan(run.y).all() and np.isfinite(run.f).all()
    assert merge_summaries([tmp_path / "n.csv.gz"], tmp_path / "m.csv.gz") == 5
    assert np.array_equal(read_summary(tmp_path / "m.csv.gz")[0].f, run.f)


def test_summary_diagnostics_keep_scalar_entries_only():
    """Vectors and nested entries (length-scales, an embedding matrix) stay in the store only."""
    from hdbo.experiments.summary import _diagnostics_text

    stored = json.dumps({"n": 3, "ok": True, "choice": "ucb", "none": None, "x": 0.5,
                         "hyperparameters": {"lengthscale": [0.1, 0.2]}, "embedding": {"A": [[1.0] * 50] * 50},
                         "dims": [1, 2]})
    assert json.loads(_diagnostics_text(stored)) == {"n": 3, "ok": True, "choice": "ucb", "none": None, "x": 0.5}
    assert _diagnostics_text(None) == _diagnostics_text("") == _diagnostics_text("null") == ""


def _older_layout_values(ev, i: int) -> tuple[str, str, str]:
    """(y, f, regret) of evaluation i as the 18-column layout wrote them (both f and regret)."""
    from hdbo.experiments.summary import _compact

    def cell(v: float) -> float | None:  # the store's NULL is loaded as NaN
        return None if np.isnan(v) else float(v)

    cells = _compact(("",) * 8 + (i, cell(ev.y[i]), cell(ev.f[i]), cell(ev.regret[i]), 0, 0.0, 0.0))
    return cells[9], cells[10], cells[11]


def _same_bits(a: float, text: str) -> bool:
    return float(a).hex() == float(text).hex() if text else np.isnan(a)


@pytest.mark.parametrize("noisy_values", [True, False])
def test_f_or_regret_left_out_reads_back_exactly(tmp_path, noisy_values):
    """With a known optimum (here Branin's, -0.3979) one of f and regret is left out where the
    other gives it back as written; reading gives bit for bit the values of the older layout,
    which wrote both, and y (noisy or not) reads as it did."""
    configs = [make_config(seed=s, budget=12, problem="branin", problem_params={}) for s in (0, 1)]
    configs.append(make_config(seed=2, budget=12, problem="branin", problem_params={"noise_std": 0.5}))
    run_many(tmp_path / "s.db", configs, progress=False)
    export_summary(tmp_path / "s.db", tmp_path / "s.csv.gz", noisy_values=noisy_values)
    with gzip.open(tmp_path / "s.csv.gz", "rt", newline="") as fh:
        raw = list(csv.DictReader(fh))
    firsts = [r for r in raw if r["experiment"]]
    assert len(firsts) == 3 and all(r["optimum"] for r in firsts)
    assert all(r["optimum"] == "" for r in raw if not r["experiment"])
    assert sum(r["regret"] == "" or r["f"] == "" for r in raw) >= 18  # half the rows or more lose one
    runs = {r.seed: r for r in read_summary(tmp_path / "s.csv.gz")}
    with RunStore(tmp_path / "s.db") as store:
        for cfg in configs:
            ev = store.load_evaluations(store.find_run(cfg).id)
            run = runs[cfg.seed]
            for i in range(cfg.budget):
                y, f, regret = _older_layout_values(ev, i)
                assert _same_bits(run.f[i], f) and _same_bits(run.regret[i], regret)
                if y == "":  # noise-free: y is f
                    assert _same_bits(run.y[i], f)
                elif noisy_values:
                    assert _same_bits(run.y[i], y)
                else:
                    assert np.isnan(run.y[i])
            if cfg.seed == 2:
                assert not np.array_equal(ev.y, ev.f)  # the noisy run is noisy


def test_writer_keeps_the_regret_where_f_cannot_give_it(tmp_path):
    """Regrets far below |f| do not follow from f's 9 digits: then f is left out (it follows from
    the regret) or, where neither follows, both are written; values read as written."""
    import io

    from hdbo.experiments.summary import _g, _write_run

    f = [1234.56789012, 1234.5678, -3.0, None, 1234.56789]
    regret = [1.3e-7, 1.1e-4, 1237.56789013, None, 1.45e-6]
    optimum = f[0] + regret[0]
    rows = [("e", "p", "P", "m", "M", 0, 5, "finished", t, v, v, r, int(v is None),
             0.01, 0.01, 7, "{}", "{}", 1.0, None) for t, (v, r) in enumerate(zip(f, regret))]
    buf = io.StringIO()
    assert _write_run(csv.writer(buf), rows, noisy_values=True) == 5
    written = list(csv.reader(io.StringIO(buf.getvalue())))
    assert float(written[0][18]) == optimum
    cells = [(w[10], w[11]) for w in written]
    assert cells[0] == ("", "1.3e-07")  # f follows from the tiny regret
    assert cells[2] == ("-3", "")  # the regret follows from f
    assert cells[3] == ("", "") and written[3][12] == "1"  # failed
    both = [c for c in cells if c[0] and c[1]]
    assert both, "some row needs both written"
    path = tmp_path / "w.csv.gz"
    with gzip.open(path, "wt", newline="") as fh:
        fh.write(",".join(SUMMARY_COLUMNS) + "\r\n" + buf.getvalue())
    (run,) = read_summary(path)
    for i in (0, 1, 2, 4):
        assert _same_bits(run.f[i], _g(f[i], 9)) and _same_bits(run.regret[i], _g(regret[i], 9))
        assert run.y[i] == run.f[i]
    assert run.failed.tolist() == [False, False, False, True, False]


def test_a_regret_without_f_keeps_every_value_written(tmp_path):
    """A row with a regret but no f (the store allows it; the runner does not write it) would be
    read as computed if the run had an optimum: such a run gets none."""
    import io

    from hdbo.experiments.summary import _write_run

    rows = [("e", "p", "P", "m", "M", 0, 2, "finished", 0, 1.0, 1.0, 2.0, 0, 0.01, 0.01, 7, "{}", "{}", 1.0, None),
            ("", "", "", "", "", "", "", "", 1, None, None, 0.5, 0, 0.01, 0.01, 7, "{}", "{}", 1.0, None)]
    buf = io.StringIO()
    _write_run(csv.writer(buf), rows, noisy_values=True)
    written = list(csv.reader(io.StringIO(buf.getvalue())))
    assert written[0][18] == "" and [w[10:12] for w in written] == [["1", "2"], ["", "0.5"]]
    path = tmp_path / "r.csv.gz"
    with gzip.open(path, "wt", newline="") as fh:
        fh.write(",".join(SUMMARY_COLUMNS) + "\r\n" + buf.getvalue())
    (run,) = read_summary(path)
    assert run.f[0] == 1.0 and np.isnan(run.f[1]) and np.isnan(run.y[1]) and run.regret.tolist() == [2.0, 0.5]


def test_hand_written_rows_with_f_or_regret_left_out(tmp_path):
    """The reader's rule on hand-made rows: an empty regret (f) next to a written f (regret) is
    the optimum minus the other, to 9 digits; failed rows and runs without an optimum stay empty."""
    path = tmp_path / "h.csv.gz"
    head = ["e", "p", "P", "m", "M"]
    lines = [SUMMARY_COLUMNS,
             [*head, 0, 3, "finished", 0, "", "1.5", "", 0, 0.1, 0.1, "c0", "1", "", "3.25"],
             ["", "", "", "", "", "", "", "", "", "", "", "0.125", 0, 0.1, 0.1, "", "", "", ""],
             ["", "", "", "", "", "", "", "", "", "", "", "", 1, 0.1, 0.1, "", "", "", ""],
             [*head, 1, 2, "finished", 0, "", "1.5", "", 0, 0.1, 0.1, "c1", "1", "", ""],
             ["", "", "", "", "", "", "", "", "", "", "2.5", "", 0, 0.1, 0.1, "", "", "", ""]]
    with gzip.open(path, "wt", newline="") as fh:
        csv.writer(fh).writerows(lines)
    with_opt, without = sorted(read_summary(path), key=lambda r: r.seed)
    assert with_opt.f[:2].tolist() == [1.5, 3.125] and with_opt.regret[:2].tolist() == [1.75, 0.125]
    assert np.isnan(with_opt.f[2]) and np.isnan(with_opt.regret[2]) and with_opt.failed[2]
    assert without.f.tolist() == [1.5, 2.5] and np.isnan(without.regret).all()
    # merged with a file of the older 18-column layout, both read as written
    old = tmp_path / "old.csv.gz"
    with gzip.open(old, "wt", newline="") as fh:
        csv.writer(fh).writerows([SUMMARY_COLUMNS[:18], ["x", "p", "P", "m", "M", 0, 1, "finished", 0, "", "1", "2",
                                                         0, 0.1, 0.1, "c2", "1", ""]])
    assert merge_summaries([old, path], tmp_path / "m.csv.gz") == 6
    merged = {r.experiment + str(r.seed): r for r in read_summary(tmp_path / "m.csv.gz")}
    assert merged["x0"].regret.tolist() == [2.0] and merged["e0"].regret[:2].tolist() == [1.75, 0.125]


def test_merge_gives_runs_of_the_older_layout_an_optimum(tmp_path):
    """merge_summaries leaves out, in runs written without an optimum, the values one gives back
    exactly; every value reads as before, and a run without regrets is left as written."""
    configs = [make_config(seed=s, budget=6) for s in (0, 1)]
    unknown = make_config(seed=2, budget=3, problem_params={"dim": 3, "known_optimum": False})
    run_many(tmp_path / "s.db", [*configs, unknown], progress=False)
    export_summary(tmp_path / "s.db", tmp_path / "new.csv.gz")
    # the same runs in the 18-column layout, from the store: every f and regret written, no optimum
    old = tmp_path / "old.csv.gz"
    with gzip.open(tmp_path / "new.csv.gz", "rt", newline="") as fh:
        rows = list(csv.DictReader(fh))
    with RunStore(tmp_path / "s.db") as store:
        evs = [store.load_evaluations(store.find_run(c).id) for c in [*configs, unknown]]
    values = [_older_layout_values(ev, i) for ev in evs for i in range(ev.f.size)]
    with gzip.open(old, "wt", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(SUMMARY_COLUMNS[:18])
        for raw, (_, f, regret) in zip(rows, values, strict=True):
            w.writerow([raw[c] for c in SUMMARY_COLUMNS[:10]] + [f, regret] + [raw[c] for c in SUMMARY_COLUMNS[12:18]])
    assert merge_summaries([old], tmp_path / "m.csv.gz") == 15
    after = read_summary(tmp_path / "m.csv.gz")
    for run, ev in zip(after, evs, strict=True):
        for i in range(ev.f.size):
            _, f, regret = _older_layout_values(ev, i)
            assert _same_bits(run.f[i], f) and _same_bits(run.regret[i], regret)
    with gzip.open(tmp_path / "m.csv.gz", "rt", newline="") as fh:
        merged = list(csv.DictReader(fh))
    assert [bool(r["optimum"]) for r in merged if r["experiment"]] == [True, True, False]
    assert sum(r["regret"] == "" or r["f"] == "" for r in merged[:12]) >= 10
    assert all(r["f"] and not r["regret"] for r in merged[12:])  # unknown optimum: as written
