"""Compact summaries of a store: one gzip-compressed CSV row per evaluation, without the points.

A SQLite store keeps every evaluated point (``x``), which makes it tens of MB for a suite in
hundreds of dimensions. What a comparison report needs is much smaller: per run its
identity, and per evaluation the value, the regret, whether it failed and how long the
proposal and the evaluation took. :func:`export_summary` writes exactly that, so results can
be committed and reports regenerated from git; the store stays the place to resume from.

Columns: ``experiment, problem, problem_label, method, label, seed, budget, status, t, y, f,
regret, failed, ask_seconds, eval_seconds`` (``y`` noisy value, ``f`` noise-free value; empty
where a failed evaluation has none).
"""

from __future__ import annotations

import csv
import gzip
import sqlite3
from pathlib import Path
from typing import Iterable

__all__ = ["SUMMARY_COLUMNS", "export_summary"]

SUMMARY_COLUMNS = ("experiment", "problem", "problem_label", "method", "label", "seed", "budget", "status",
                   "t", "y", "f", "regret", "failed", "ask_seconds", "eval_seconds")


def export_summary(store: str | Path, out: str | Path, *, experiments: Iterable[str] | None = None) -> int:
    """Write the evaluations of a store as a gzip-compressed CSV (no points).

    Parameters
    ----------
    store : str or Path
        An existing store, opened read-only (nothing in it changes).
    out : str or Path
        The ``.csv.gz`` file to write (replaced if it exists).
    experiments : iterable of str, optional
        Only these experiments (default: all).

    Returns
    -------
    int
        Rows written (evaluations).

    Raises
    ------
    FileNotFoundError
        ``store`` does not exist.
    ValueError
        ``store`` is not an hdbo store.
    """
    path = Path(store)
    if not path.is_file():
        raise FileNotFoundError(f"store {str(store)!r} does not exist")
    conn = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True)
    try:
        try:
            conn.execute("SELECT id, t FROM runs JOIN evaluations ON evaluations.run_id = runs.id LIMIT 1")
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"store {str(store)!r} is not an hdbo store: {exc}") from None
        where, args = "", []
        names = None if experiments is None else sorted(set(experiments))
        if names is not None:
            where = f"WHERE r.experiment IN ({', '.join('?' * len(names))})"
            args = names
        rows = conn.execute(
            "SELECT r.experiment, r.problem, r.problem_label, r.method, r.label, r.seed, r.budget, r.status, "
            "e.t, e.y, e.f, e.regret, e.failed, e.ask_seconds, e.eval_seconds "
            f"FROM runs r JOIN evaluations e ON e.run_id = r.id {where} "
            "ORDER BY r.experiment, r.problem_label, r.label, r.seed, e.t",
            args,
        )
        n = 0
        with gzip.open(out, "wt", newline="", compresslevel=9) as fh:
            writer = csv.writer(fh)
            writer.writerow(SUMMARY_COLUMNS)
            for row in rows:
                writer.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v) for v in row])
                n += 1
        return n
    finally:
        conn.close()
