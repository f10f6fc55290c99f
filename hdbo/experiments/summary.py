"""Compact summaries of a store: one gzip-compressed CSV row per evaluation, without the points.

A SQLite store keeps every evaluated point (``x``), which makes it tens of MB for a suite in
hundreds of dimensions. What a comparison report needs is much smaller: per run its
identity, and per evaluation the value, the regret, whether it failed and how long the
proposal and the evaluation took. :func:`export_summary` writes exactly that, so results can
be committed and reports regenerated from git; the store stays the place to resume from.

Columns: ``experiment, problem, problem_label, method, label, seed, budget, status, t, y, f,
regret, failed, ask_seconds, eval_seconds, config, wall_seconds, diagnostics, optimum`` (``y``
noisy value, ``f`` noise-free value, ``regret`` the optimum minus ``f``; problems maximize).
Only runs with at least one evaluation appear (one row per evaluation). The last four are about
the run and are written on its first row only (empty on the others): ``config`` is
:func:`config_id` of the run's full identity (problem and method parameters included), so
``hdbo reproduce`` can count a run of a committed summary as done exactly when the spec still
asks for the same run; ``wall_seconds`` its wall time; ``diagnostics`` the
``Method.diagnostics()`` of a finished run as JSON (its scalar entries: numbers, booleans,
strings; vectors and nested entries stay in the store); ``optimum`` the value from which the
``f`` or ``regret`` left out are computed (below): the problem's optimum as far as the written
values tell (a sum ``f + regret``, so it may differ in the last digits between runs of one
problem; it is not a reference value). Summaries of the older layouts are still read: 15
columns (no run columns; ``config`` read as empty) and 18 (no ``optimum``; every ``f`` and
``regret`` written out). To keep the file small:

* the run's identity (``experiment`` to ``status``) is written on its first row only (a run's
  rows are contiguous; an empty identity means "the run of the row above"), and ``t`` only
  where it is not the previous row's ``t`` plus one (an empty ``t`` means that);
* ``y``, ``f`` and ``regret`` are written with 9 significant digits (``%.9g``), the seconds
  with 2 (``%.2g``);
* with ``noisy_values=False`` the noisy ``y`` is not kept (written ``-``, read as NaN): the
  reproduction reports use only the noise-free ``f`` and the regret, and a noisy ``y`` is
  most of a summary's size;
* ``y`` is left empty where it is written the same as ``f`` (every evaluation of a noise-free
  problem): **an empty** ``y`` **means** ``y = f``. A missing ``y`` next to a present ``f``
  (not written by hdbo's runner) is written ``nan``;
* ``f`` and ``regret`` are empty where the store has none (a failed evaluation: both; a
  problem whose optimum is unknown: every ``regret``, and the run has no ``optimum``);
* ``f`` and ``regret`` determine each other through the optimum, so one of them is left out
  where it can be computed from the other as written: when the run has an ``optimum``
  (written with Python's shortest round-trip ``repr``, so it reads back exactly), an empty
  ``regret`` next to a present ``f`` **means** ``format(optimum - float(f), ".9g")``, and an
  empty ``f`` next to a present ``regret`` **means** ``format(optimum - float(regret), ".9g")``.
  The writer leaves a value out only where that gives back exactly the text it would have
  written (the regret first; the ``f`` where the regret is too small against ``f`` to be
  computed from it), so nothing is lost and a summary of a problem with a known optimum is
  16-26 % smaller (nothing is gained without a known optimum). A run with a row that has only
  one of the two (no regret where an ``f`` is: a problem without a known optimum) has no
  ``optimum`` and keeps both written out.

:func:`read_summary` reads a summary back (the ``f`` or ``regret`` left out computed, then an
empty ``y`` read as ``f``) into one
:class:`SummaryRun` per run, with the values as arrays (NaN where empty).
:func:`merge_summaries` combines summaries into one file, a later file's runs replacing the
same runs of an earlier one (a method rerun with a new default, a run finished elsewhere).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import math
import os
import sqlite3
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np
from numpy.typing import NDArray

from .._docstrings import fill_doc
from .store import RunConfig, canonical_json

__all__ = ["SUMMARY_COLUMNS", "SummaryRun", "config_id", "copy_summary_runs", "export_summary", "merge_summaries",
           "read_summary"]

#: Columns of a summary written before the run columns existed; still read.
_EVAL_COLUMNS = ("experiment", "problem", "problem_label", "method", "label", "seed", "budget", "status",
                 "t", "y", "f", "regret", "failed", "ask_seconds", "eval_seconds")
#: Columns about the run, written on its first row only (a summary written before ``optimum``
#: existed has the first three; still read).
_RUN_COLUMNS = ("config", "wall_seconds", "diagnostics", "optimum")
SUMMARY_COLUMNS = _EVAL_COLUMNS + _RUN_COLUMNS
_HEADERS = (SUMMARY_COLUMNS, SUMMARY_COLUMNS[:-1], _EVAL_COLUMNS)

Array = NDArray[np.float64]

# Sections shared by the docstrings of export_summary and merge_summaries.
_DOC = {
    "rows_written": """
    int
        Rows written (evaluations).
    """,
}


def config_id(config: RunConfig) -> str:
    """A short, stable name of a run's full identity (:meth:`RunConfig.key`).

    Parameters
    ----------
    config : RunConfig

    Returns
    -------
    str
        16 hex digits of the SHA-256 of the key as canonical JSON: equal for equal configs,
        different (with overwhelming probability) when any parameter differs.
    """
    return hashlib.sha256(canonical_json(list(config.key())).encode("utf-8")).hexdigest()[:16]


@fill_doc(**_DOC)
def export_summary(
    store: str | Path,
    out: str | Path,
    *,
    experiments: Iterable[str] | None = None,
    run_ids: Iterable[int] | None = None,
    noisy_values: bool = True,
) -> int:
    """Write the evaluations of a store as a gzip-compressed CSV (no points).

    Parameters
    ----------
    store : str or Path
        An existing store, opened read-only (nothing in it changes).
    out : str or Path
        The ``.csv.gz`` file to write (replaced if it exists).
    experiments : iterable of str, optional
        Only these experiments (default: all).
    run_ids : iterable of int, optional
        Only these runs (default: all).
    noisy_values : bool, default True
        Keep the noisy observations ``y``; False writes ``-`` instead (read as NaN).

    Returns
    -------
    %(rows_written)s

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
        clauses: list[str] = []
        args: list[object] = []
        names = None if experiments is None else sorted(set(experiments))
        if names is not None:
            clauses.append(f"r.experiment IN ({', '.join('?' * len(names))})")
            args += names
        ids = None if run_ids is None else sorted({int(i) for i in run_ids})
        if ids is not None:
            clauses.append(f"r.id IN ({', '.join('?' * len(ids))})" if ids else "0")
            args += ids
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = conn.execute(
            "SELECT r.experiment, r.problem, r.problem_label, r.method, r.label, r.seed, r.budget, r.status, "
            "e.t, e.y, e.f, e.regret, e.failed, e.ask_seconds, e.eval_seconds, "
            "r.id, r.problem_params, r.method_params, r.wall_seconds, r.diagnostics "
            f"FROM runs r JOIN evaluations e ON e.run_id = r.id {where} "
            "ORDER BY r.experiment, r.problem_label, r.label, r.seed, r.id, e.t",
            args,
        )
        n = 0
        with gzip.open(out, "wt", newline="", compresslevel=9) as fh:
            writer = csv.writer(fh)
            writer.writerow(SUMMARY_COLUMNS)
            for run_rows in _by_run(rows):
                n += _write_run(writer, run_rows, noisy_values)
        return n
    finally:
        conn.close()


def _by_run(rows: Iterable[tuple]) -> Iterable[list[tuple]]:
    """The store's rows (ordered by run) in one list per run."""
    current: list[tuple] = []
    for row in rows:
        if current and row[15] != current[0][15]:  # run id
            yield current
            current = []
        current.append(row)
    if current:
        yield current


def _write_run(writer: "csv._writer", rows: list[tuple], noisy_values: bool) -> int:
    """Write one run's rows (the store's columns of export_summary's query); returns their number."""
    *evaluation, _, problem_params, method_params, wall, diagnostics = rows[0]
    exp, prob, plabel, method, label, seed, budget = evaluation[:7]
    config = RunConfig(experiment=exp, problem=prob, method=method, seed=int(seed), budget=int(budget),
                       problem_params=json.loads(problem_params or "{}"),
                       method_params=json.loads(method_params or "{}"), label=label, problem_label=plabel)
    out = [_compact(tuple(row[:15]), noisy_values) for row in rows]
    both = [row for row in rows if row[10] is not None and row[11] is not None]
    optimum = None if not both else _leave_out(out, float(both[0][10]) + float(both[0][11]))
    last_t = -1
    for i, (row, cells) in enumerate(zip(rows, out)):
        run_cells = ["", "", "", ""]
        if i:
            cells[:8] = [""] * 8  # the identity is on the run's first row
            if cells[8] == last_t + 1:
                cells[8] = ""  # t follows on
        else:  # the run's first row carries its identity, time, diagnostics and optimum
            run_cells = [config_id(config), _g(wall, 6), _diagnostics_text(diagnostics),
                         "" if optimum is None else repr(optimum)]
        last_t = int(row[8])
        writer.writerow(cells + run_cells)
    return len(rows)


def _leave_out(cells: list[list], optimum: float) -> float | None:
    """Leave out, in one run's written rows, the ``f`` or ``regret`` that ``optimum`` and the other
    give back exactly as written (the regret first); returns ``optimum``, or None (nothing left
    out) when it is not finite or some row has one of the two without the other (an empty cell
    next to a written one would be read as computed)."""
    if not math.isfinite(optimum) or any((c[10] == "") != (c[11] == "") for c in cells):
        return None  # some row has f without a regret or a regret without f: both read as written
    for c in cells:
        if c[10] == "":
            continue
        if _regret_text(optimum, c[10]) == c[11]:
            c[11] = ""
        elif _regret_text(optimum, c[11]) == c[10]:  # f = optimum - regret: the same formula
            c[10] = ""
    return optimum


def _compact_written_run(rows: list[list[str]]) -> None:
    """A run of a summary written without an ``optimum`` (the older layout) gets one and leaves out
    what it gives back exactly (in place; nothing when a row has only one of ``f`` and ``regret``).
    The sum of a row's written ``f`` and ``regret`` is the optimum only to their 9 digits: of the
    sums of the first 8 rows with both, the one that gives back most of the first 50 is used."""
    if rows[0][18]:
        return  # it has one already
    both = [r for r in rows if r[10] != "" and r[11] != ""]
    if not both:
        return
    sample = both[:50]

    def given_back(opt: float) -> int:
        return sum(_regret_text(opt, r[10]) == r[11] or _regret_text(opt, r[11]) == r[10] for r in sample)

    candidates = [float(r[10]) + float(r[11]) for r in both[:8]]
    optimum = _leave_out(rows, max(candidates, key=given_back))
    if optimum is not None:
        rows[0][18] = repr(optimum)


def _regret_text(optimum: float, other: str) -> str:
    """What an empty ``regret`` (``f``) cell stands for, given the written ``f`` (``regret``):
    ``optimum - other`` with 9 significant digits, as the writer would have written it."""
    return _g(optimum - float(other), 9)


def _g(value: float | None, digits: int) -> str:
    return "" if value is None else format(float(value), f".{digits}g")


def _diagnostics_text(stored: str | None) -> str:
    """The store's diagnostics as compact JSON, scalar entries only (empty when there are none).

    Reports read only a run's scalar diagnostics (``diag:KEY``, the diagnostics tables);
    vectors and nested entries (a GP's length-scales, an embedding matrix of about 100 KB per
    run at D = 5000) stay in the store and are left out here.
    """
    if not stored:
        return ""
    value = json.loads(stored)
    if value is None:
        return ""
    if isinstance(value, dict):
        value = {k: v for k, v in value.items() if v is None or isinstance(v, (bool, int, float, str))}
    return json.dumps(value, separators=(",", ":"), sort_keys=True, allow_nan=True)


def _compact(row: tuple, noisy_values: bool = True) -> list[object]:
    """One store row as written: 9 significant digits for values, 2 for seconds, ``y`` empty if it reads as ``f``."""
    *ident, t, y, f, regret, failed, ask_s, eval_s = row
    f_text = _g(f, 9)
    if y is None:
        y_text = "" if f is None else "nan"
    else:
        y_text = _g(y, 9)
        if f is not None and y_text == f_text:
            y_text = ""
        elif not noisy_values:
            y_text = "-"
    return [*ident, t, y_text, f_text, _g(regret, 9), int(failed), _g(ask_s, 2), _g(eval_s, 2)]


@dataclass(frozen=True)
class SummaryRun:
    """The evaluations of one run, read from a summary (:func:`read_summary`).

    Attributes
    ----------
    experiment, problem, problem_label, method, label : str
        Identity of the run, as in the store.
    seed, budget : int
    status : str
        ``"finished"``, ``"failed"``, ``"running"`` or ``"pending"`` when the summary was written.
    t : ndarray of int, shape (n,)
        Evaluation indices, increasing.
    y, f, regret : ndarray of shape (n,)
        Values as written (NaN where empty; an ``f`` or ``regret`` left out for the run's
        ``optimum`` computed from it; ``y`` equal to ``f`` where it was left empty, NaN where it
        was not kept).
    failed : ndarray of bool, shape (n,)
    ask_seconds, eval_seconds : ndarray of shape (n,)
        Seconds of each proposal and each evaluation.
    source : str
        The file the run was read from.
    config : str
        :func:`config_id` of the run's full identity ("" in a summary written before that
        column existed).
    wall_seconds : float
        Wall time of the run (NaN when unknown).
    diagnostics : dict or None
        ``Method.diagnostics()`` of the finished run, when stored.
    """

    experiment: str
    problem: str
    problem_label: str
    method: str
    label: str
    seed: int
    budget: int
    status: str
    t: NDArray[np.int64]
    y: Array
    f: Array
    regret: Array
    failed: NDArray[np.bool_]
    ask_seconds: Array
    eval_seconds: Array
    source: str
    config: str = ""
    wall_seconds: float = math.nan
    diagnostics: dict | None = None

    @property
    def seconds(self) -> Array:
        """Seconds of each proposal plus its evaluation."""
        return self.ask_seconds + self.eval_seconds


def _number(text: str) -> float:
    return float(text) if text else float("nan")


def read_summary(path: str | Path) -> list[SummaryRun]:
    """Read a summary written by :func:`export_summary`.

    Parameters
    ----------
    path : str or Path
        A ``.csv.gz`` summary.

    Returns
    -------
    list of SummaryRun
        One per run, in the order of the file; an ``f`` or ``regret`` left out is computed from
        the run's ``optimum`` (module docstring), then an empty ``y`` is read as ``f``.

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist.
    ValueError
        ``path`` is not a summary (not gzip-compressed CSV, other columns, or a row that does
        not parse); the message names the file and, for a row, its line.
    """
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(f"summary {str(path)!r} does not exist")
    runs: dict[tuple, dict[str, list]] = {}
    run_info: dict[tuple, tuple[str, float, dict | None]] = {}
    line = 1
    try:
        with gzip.open(file, "rt", newline="", encoding="utf-8") as fh:
            reader = csv.reader(fh)
            header = tuple(next(reader, ()))
            if header not in _HEADERS:
                raise ValueError(f"summary {str(path)!r} is not an hdbo summary: its columns are {list(header)[:18]}, "
                                 f"expected {list(SUMMARY_COLUMNS)}")
            ident: list[str] | None = None
            last_t = -1
            optimum: float | None = None
            for line, row in enumerate(reader, start=2):
                if len(row) != len(header):
                    raise ValueError(f"{len(row)} fields, expected {len(header)}")
                first = bool(row[0])
                if first:
                    ident = row[:8]
                    optimum = float(row[18]) if len(row) > 18 and row[18] else None
                elif ident is None:
                    raise ValueError("the first row of a run must name it (experiment is empty)")
                else:
                    row = ident + row[8:]
                if row[8] == "":
                    if first:
                        raise ValueError("t is empty on a run's first row")
                    row = row[:8] + [str(last_t + 1)] + row[9:]
                last_t = int(row[8])
                exp, prob, plabel, method, label, seed, budget, status, t, y, f, regret, failed, ask_s, eval_s = row[:15]
                key = (exp, prob, plabel, method, label, int(seed), int(budget), status)
                if len(row) > 15 and row[15]:
                    cfg, wall, diag = row[15:18]
                    run_info[key] = (cfg, _number(wall), json.loads(diag) if diag else None)
                cols = runs.setdefault(key, {k: [] for k in ("t", "y", "f", "regret", "failed", "ask", "eval")})
                if optimum is not None:  # a value left out is the optimum minus the other, as written
                    if f == "" and regret != "":
                        f = _regret_text(optimum, regret)
                    elif regret == "" and f != "":
                        regret = _regret_text(optimum, f)
                f_val = _number(f)
                cols["t"].append(int(t))
                cols["y"].append(f_val if y == "" else math.nan if y == "-" else float(y))
                cols["f"].append(f_val)
                cols["regret"].append(_number(regret))
                cols["failed"].append(bool(int(failed)))
                cols["ask"].append(float(ask_s))
                cols["eval"].append(float(eval_s))
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"summary {str(path)!r} is not an hdbo summary (a gzip-compressed CSV): {exc}") from None
    except ValueError as exc:
        if str(exc).startswith(f"summary {str(path)!r}"):
            raise
        raise ValueError(f"summary {str(path)!r} is not an hdbo summary: line {line}: {exc}") from None
    out = []
    for (exp, prob, plabel, method, label, seed, budget, status), cols in runs.items():
        order = np.argsort(cols["t"], kind="stable")
        arr = {k: np.asarray(v)[order] for k, v in cols.items()}
        cfg, wall, diag = run_info.get((exp, prob, plabel, method, label, seed, budget, status), ("", math.nan, None))
        out.append(SummaryRun(
            experiment=exp, problem=prob, problem_label=plabel, method=method, label=label, seed=seed,
            budget=budget, status=status, t=arr["t"].astype(np.int64), y=arr["y"].astype(float),
            f=arr["f"].astype(float), regret=arr["regret"].astype(float), failed=arr["failed"].astype(bool),
            ask_seconds=arr["ask"].astype(float), eval_seconds=arr["eval"].astype(float), source=str(path),
            config=cfg, wall_seconds=wall, diagnostics=diag,
        ))
    return out


@fill_doc(**_DOC)
def merge_summaries(summaries: Iterable[str | Path], out: str | Path) -> int:
    """Combine summaries into one, the runs of a later summary replacing the same runs of earlier ones.

    A run is identified by ``(experiment, problem_label, label, seed, budget)``; its rows are
    copied as written (no value is rounded again), except that a run of the older layout
    (without ``optimum``) gets one, from its written values, and leaves out the ``f`` or
    ``regret`` cells it gives back exactly (the values read are unchanged; a run with a row
    that has only one of the two is left as it is). Use it to replace a method's runs after
    rerunning it (for example the default method after a change of its defaults: merge the
    old summary, then the new runs' summary), or to fold in runs finished in another store.

    Parameters
    ----------
    summaries : iterable of str or Path
        Summary files written by :func:`export_summary`, oldest first.
    out : str or Path
        The ``.csv.gz`` file to write (replaced if it exists; it may be one of ``summaries``).

    Returns
    -------
    %(rows_written)s

    Raises
    ------
    ValueError
        No summary is given, or a file is not a summary.
    FileNotFoundError
        A summary does not exist.
    """
    paths = [Path(p) for p in summaries]
    if not paths:
        raise ValueError("summaries: expected at least one summary file (.csv.gz), got none")
    runs: dict[tuple, list[list[str]]] = {}
    for path in paths:
        mine: dict[tuple, list[list[str]]] = {}
        for rows in _written_runs(path):  # each run's rows (a file may repeat a key)
            exp, _, plabel, _, label, seed, budget = rows[0][:7]
            _compact_written_run(rows)
            mine.setdefault((exp, plabel, label, int(seed), int(budget)), []).extend(rows)
        runs.update(mine)  # a later file's copy of a run replaces the earlier one as a whole
    n = 0
    with gzip.open(out, "wt", newline="", compresslevel=9) as fh:
        writer = csv.writer(fh)
        writer.writerow(SUMMARY_COLUMNS)
        for rows in runs.values():
            writer.writerows(rows)
            n += len(rows)
    return n


def _written_runs(path: str | Path) -> list[list[list[str]]]:
    """The rows of a summary as written (all columns, identity only on a run's first row), one
    list per contiguous run; the file is validated first with :func:`read_summary`'s messages."""
    read_summary(path)
    out: list[list[list[str]]] = []
    with gzip.open(path, "rt", newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        next(reader)
        for row in reader:
            row = row + [""] * (len(SUMMARY_COLUMNS) - len(row))  # an older summary: fewer run columns
            if row[0]:  # a run's first row names it; the rows after it belong to it
                out.append([])
            out[-1].append(row)
    return out


def copy_summary_runs(summary: str | Path, pairs: Iterable[tuple[RunConfig, RunConfig, str]]) -> list[RunConfig]:
    """Add to a summary, as finished runs of other configs, the first evaluations of its finished runs.

    For ``hdbo reproduce``'s runs taken from another spec's runs (``prefix_of``, see
    :mod:`hdbo.experiments.prefix`) on a machine whose store does not hold the donor run: the
    summary does, so the copy is made there. A pair ``(config, donor, note)`` copies the rows of
    the finished run of ``donor`` (found by :func:`config_id`) as written (no value is rounded
    again) under ``config``'s identity: all of them when the budgets are equal (the same run, also
    one that ended before its budget), with the donor's scalar diagnostics (plus ``derived_from``:
    note) and wall time; otherwise those with ``t = 0 .. config.budget - 1``, with only
    ``{"derived_from": note}`` and the summed (rounded) seconds of the rows copied as wall time. A
    config that already has a finished run in the summary, and a donor that has none or whose
    evaluations are not ``0, 1, ...`` in order (enough of them for the copy), are skipped. The
    summary is replaced in one step (a new file moved over it), never left half-written.

    Parameters
    ----------
    summary : str or Path
        An existing summary; rewritten in place when a run is added.
    pairs : iterable of (RunConfig, RunConfig, str)
        The run to add, the run to copy it from, and the ``derived_from`` text.

    Returns
    -------
    list of RunConfig
        The configs whose runs were added.

    Raises
    ------
    FileNotFoundError
        ``summary`` does not exist.
    ValueError
        ``summary`` is not a summary.
    """
    written = _written_runs(summary)
    finished = {rows[0][15]: rows for rows in written if rows[0][7] == "finished" and rows[0][15]}
    added: list[list[list[str]]] = []
    done: list[RunConfig] = []
    for config, donor, note in pairs:
        cid = config_id(config)
        rows = finished.get(config_id(donor))
        if cid in finished or rows is None:
            continue
        whole = config.budget == donor.budget  # the same run: all of it, also if it ended early
        n = len(rows) if whole else config.budget
        kept: list[list[str]] = []
        last_t = -1
        for row in rows:
            t = last_t + 1 if row[8] == "" else int(row[8])
            if t >= n:
                break
            if t != last_t + 1:
                kept = []
                break
            kept.append(list(row))
            last_t = t
        if not kept or len(kept) != n:
            continue
        diag = {"derived_from": note}
        if whole and rows[0][17]:
            diag = {**json.loads(rows[0][17]), **diag}
        wall = rows[0][16] if whole else _g(sum(float(r[13] or 0.0) + float(r[14] or 0.0) for r in kept), 6)
        first = kept[0]
        first[0], first[2], first[4], first[6], first[7] = (
            config.experiment, config.problem_label, config.label, str(config.budget), "finished")
        first[15], first[16] = cid, wall
        first[17] = json.dumps(diag, separators=(",", ":"), sort_keys=True, allow_nan=True)
        finished[cid] = kept
        added.append(kept)
        done.append(config)
    if added:  # written beside the summary, then moved over it in one step (never half-written)
        with tempfile.TemporaryDirectory(dir=Path(summary).parent) as tmp:
            copies, merged = Path(tmp) / "copies.csv.gz", Path(tmp) / "merged.csv.gz"
            with gzip.open(copies, "wt", newline="", compresslevel=9) as fh:
                writer = csv.writer(fh)
                writer.writerow(SUMMARY_COLUMNS)
                for kept in added:
                    writer.writerows(kept)
            merge_summaries([summary, copies], merged)
            os.replace(merged, summary)
    return done
