"""export_summary: a compact, point-free CSV of a store that matches the store's evaluations."""

from __future__ import annotations

import csv
import gzip

import pytest
from _hdbo_test_problems import make_config

from hdbo.experiments import RunStore, run_many
from hdbo.experiments.summary import SUMMARY_COLUMNS, export_summary


def test_summary_has_every_evaluation_and_no_points(tmp_path):
    configs = [make_config(seed=s, budget=5) for s in (0, 1)]
    run_many(tmp_path / "s.db", configs, progress=False)
    before = (tmp_path / "s.db").read_bytes()
    n = export_summary(tmp_path / "s.db", tmp_path / "s.csv.gz")
    assert (tmp_path / "s.db").read_bytes() == before  # read-only
    with gzip.open(tmp_path / "s.csv.gz", "rt", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert n == len(rows) == 10 and tuple(rows[0]) == SUMMARY_COLUMNS
    with RunStore(tmp_path / "s.db") as store:
        for cfg in configs:
            rec = store.find_run(cfg)
            ev = store.load_evaluations(rec.id)
            mine = [r for r in rows if int(r["seed"]) == cfg.seed]
            assert [int(r["t"]) for r in mine] == list(range(5))
            assert [float(r["f"]) for r in mine] == ev.f.tolist()  # exact: floats written by repr
            assert [float(r["ask_seconds"]) for r in mine] == ev.ask_seconds.tolist()
    assert "x" not in rows[0]
    assert export_summary(tmp_path / "s.db", tmp_path / "none.csv.gz", experiments=["nope"]) == 0


def test_summary_refuses_a_missing_or_foreign_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        export_summary(tmp_path / "missing.db", tmp_path / "o.csv.gz")
    (tmp_path / "junk.db").write_bytes(b"not a database at all" * 10)
    with pytest.raises(ValueError, match="is not an hdbo store"):
        export_summary(tmp_path / "junk.db", tmp_path / "o.csv.gz")
