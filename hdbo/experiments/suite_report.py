"""The report of the high-dimensional comparison suite (``docs/benchmarks.md``), from summaries.

:func:`write_suite_report` reads one or more summaries written by
:func:`~hdbo.experiments.summary.export_summary` (gzip-compressed CSV, committed under
``docs/benchmarks/``) and writes a markdown report with one PNG per problem; no SQLite store is
needed, so the report is regenerated from git alone (``hdbo suite-report``). Every number in
it is computed from the summaries, except the structured methods' structure-learning counts,
which come from the methods (see below).

Conventions
-----------
* **Cells.** Runs are grouped by (budget, problem label); experiments with the same budget and
  problem are merged (the budget-300 GP peers are a separate spec). Within a cell, a method is
  its label. Only runs with status ``finished`` count; the others are named in a note. The
  same run (budget, problem, method label, seed) may be in two summaries (a part of a spec
  finished in another store): a finished copy replaces an unfinished one; two finished copies
  with different values are an error.
* **Minimization convention.** Problems maximize ``f`` internally; the report states values the
  way the problems are usually stated, as minimization: the best value of a run is
  ``-max_t f(x_t)`` over its successful evaluations (failed ones have no ``f``), and the
  best-so-far curve is ``-max_{s<=t} f(x_s)``. Lower is better. A run without a successful
  evaluation (so far) counts as the worst value in the median; where that is the median, the
  method has none (and no rank).
* **Common instances.** The suite is filled in over several sessions, so at a given moment the
  methods of a cell may have finished runs on different instances (seeds), and instances differ
  a lot. The methods shown for a cell are those with at least one finished run; its *common
  instances* are the seeds on which every one of them has a finished run. The ranks, the best
  median and the overview counts use only the runs on the common instances, so every method is
  compared on the same instances; each per-problem table names them, and the overview has a
  column "instances compared". Every method's median, min and max over all its finished runs
  stay in the "all runs" columns. A method with no finished run on a cell (only runs still
  going or failed) is named in a note and left out, so it does not empty the common set; if the
  common set is still empty, the cell says so and is neither ranked nor counted.
* **Ranks.** Methods are ranked by the median, over their runs on the common instances, of the
  runs' best values (lower first). Medians equal to ``TIE_RTOL = 1e-12`` relative,
  ``|a - b| <= 1e-12 max(|a|, |b|)``, share a rank, and the next rank skips (1, 1, 3): a
  method's rank is one plus the number of methods whose median is lower and not tied with it.
  A method without a median (at least half of those runs have no successful evaluation) has no
  rank. Values are read at the 9 significant digits of the summaries, so medians that differ
  only beyond them are ties.
* **Overview counts.** On each cell with common instances where hdbo's default and at least one
  peer have a median on them: a win when its median is lower than every peer's and tied with
  none, a tie when no peer's is lower but one is tied (not counted as best), else a loss; and
  the cells where random search's median is lower than the default's (and not tied), with the
  same medians on the common instances.
* **Against the best peer, instance by instance.** On the same cells, the default is paired with
  the cell's best peer: the peer with the lowest median on the common instances, chosen after the
  fact (of peers with tied medians, the first by label). For each common instance its best value
  is better, worse or equal (``TIE_RTOL``) to the peer's; an instance on which either run has no
  successful evaluation is left out. Each cell gets a two-sided sign test over the instances
  that differ (:func:`scipy.stats.binomtest`), and the counts are pooled over the cells of one
  budget, never across budgets (they share instances). The table states the floor of a cell's
  test at its instance counts and how many peers ran in each cell.
* **Structured methods.** Each method of :data:`STRUCTURE_CELLS` against random search on the
  problems with its structure (additive: Styblinski-Tang; projection and subspace: rotated
  Hartmann-6; variable selection: hidden Hartmann-6; embedding: rotated Branin), with the same
  medians on the common instances: better, worse or tied, unless the method cannot learn its
  structure within the budget. What its structure learning needs is
  :meth:`~hdbo.methods.base.Method.structure_evaluations` of the registered method at the
  problem's D, read from the label's ``D=<n>`` (the summaries hold no problem parameters; "unknown"
  without it), with the method's default options (the summaries hold no method options either):
  a count of evaluations, or "no separate phase". A count at least the cell's budget gives the
  verdict ``"cannot learn within the budget"`` instead of better or worse; the medians are still
  shown. A method name that is not registered gets no annotation. Methods of the pairing without
  a run on their problems (the specs exclude ``si-bo`` and ``cws``) are named with their counts.
  MS-UCB and DropoutUCB, which their paper describes as assuming no structure
  (:data:`NO_STRUCTURE`), are named beside the table instead of judged in it, and the methods of
  :data:`STRUCTURE_NOTES` get a note under it on why their verdict is what it is.
* **Figures.** One per cell: each method's median best-so-far over its runs on the common
  instances (the runs behind the ranks; the legend gives the run count); on a cell without
  common instances, over each method's own finished runs, as its caption says.
* **Proposal seconds.** The median and the maximum of ``ask_seconds`` over every evaluation of
  the method's finished runs (the time the method took to propose each point).
* **hdbo's default** is the method whose label starts with ``"hdbo auto"``; the peers are the
  methods registered as ``peer:*``; random search is the method ``random``.

Figures need matplotlib (``pip install hdbo[plots]``), used through its object API with the
Agg canvas; without it the report has the tables and a note.
"""

from __future__ import annotations

import datetime
import inspect
import math
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

from ..methods import Method, available_methods, get_method_class
from .report import _cell, _slug, save_png
from .summary import SummaryRun, read_summary

__all__ = ["TIE_RTOL", "rank_medians", "write_suite_report"]

#: Relative tolerance under which two medians are a tie (they share a rank).
TIE_RTOL = 1e-12
#: Label prefix of hdbo's default method in the suite's specs.
AUTO_PREFIX = "hdbo auto"
#: The registered name of hdbo run through :class:`hdbo.integrations.optuna.HDBOSampler`
#: (``hdbo.integrations.optuna_plugin``); the overview gets a column for it when it has runs.
THROUGH_OPTUNA = "hdbo-optuna"
#: The spec set the suite's runs come from (``experiments/highdim/``).
SPEC_SET = "highdim"
#: The cell the report's reproduction command names when the data has it.
EXAMPLE_CELL = ("highdim-b100-synthetic", "Levy D=100")
TITLE = "hdbo high-dimensional comparison suite"


def _tied(a: float, b: float) -> bool:
    return abs(a - b) <= TIE_RTOL * max(abs(a), abs(b))


def rank_medians(medians: Sequence[float]) -> list[int | None]:
    """Competition ranks of medians (lower is better), ties within :data:`TIE_RTOL` relative.

    Parameters
    ----------
    medians : sequence of float
        One median per method; NaN for a method without one.

    Returns
    -------
    list of (int or None)
        ``1 +`` the number of medians that are lower and not tied; None for NaN.

    Examples
    --------
    >>> rank_medians([2.0, 1.0, 1.0 + 1e-15, 3.0, float("nan")])
    [3, 1, 1, 4, None]
    """
    vals = [float(m) for m in medians]
    return [
        None if math.isnan(m) else 1 + sum(1 for o in vals if not math.isnan(o) and o < m and not _tied(o, m))
        for m in vals
    ]


@dataclass
class _Method:
    """One method in one cell: its finished runs and what the report shows of them."""

    label: str
    method: str
    runs: list[SummaryRun]  # every finished run, by seed
    best: NDArray[np.float64]  # per run, minimization convention (NaN: no successful evaluation)
    curves: NDArray[np.float64]  # (runs, budget): best-so-far per evaluation, minimization convention
    ask_median: float
    ask_max: float
    all_median: float  # over every finished run
    used: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))  # runs the figure shows
    median: float = math.nan  # over the runs on the cell's common instances
    rank: int | None = None

    @property
    def curve(self) -> NDArray[np.float64]:
        """The median best-so-far over the runs in ``used``."""
        return _median_worst_if_missing(self.curves[self.used], axis=0)

    @property
    def is_peer(self) -> bool:
        return self.method.startswith("peer:")

    @property
    def is_auto(self) -> bool:
        return self.label.startswith(AUTO_PREFIX)


@dataclass
class _Cell:
    """One (budget, problem): its methods sorted by rank, and the runs left out."""

    budget: int
    problem_label: str
    experiments: list[str]
    methods: list[_Method] = field(default_factory=list)
    common: list[int] = field(default_factory=list)  # seeds on which every method has a finished run
    no_finished: list[str] = field(default_factory=list)  # labels with runs here but none finished
    unfinished: list[SummaryRun] = field(default_factory=list)
    figure: str | None = None

    def find(self, pred) -> _Method | None:  # type: ignore[no-untyped-def]
        return next((m for m in self.methods if pred(m)), None)


def _best_so_far(run: SummaryRun, budget: int) -> NDArray[np.float64]:
    """``-max_{s<=t} f`` for t = 1..budget (NaN before the first success; the last value carried on)."""
    vals = np.full(budget, np.nan)
    keep = (run.t >= 0) & (run.t < budget) & np.isfinite(run.f)
    vals[run.t[keep]] = -run.f[keep]
    return np.fmin.accumulate(vals)


def _median_worst_if_missing(values: NDArray[np.float64], axis: int | None = None) -> NDArray[np.float64]:
    """Median with NaN (no successful evaluation yet) counted as the worst value; NaN where that is the median."""
    med = np.median(np.where(np.isnan(values), np.inf, values), axis=axis)
    return np.where(np.isfinite(med), med, np.nan)


def _build_method(label: str, runs: list[SummaryRun], budget: int) -> _Method:
    best = np.array([(-np.max(r.f[np.isfinite(r.f)]) if np.isfinite(r.f).any() else np.nan) for r in runs])
    ask = np.concatenate([r.ask_seconds for r in runs])
    return _Method(
        label=label,
        method=runs[0].method,
        runs=runs,
        best=best,
        curves=np.vstack([_best_so_far(r, budget) for r in runs]),
        ask_median=float(np.median(ask)) if ask.size else math.nan,
        ask_max=float(np.max(ask)) if ask.size else math.nan,
        all_median=float(_median_worst_if_missing(best)),
    )


def _deduplicated(runs: list[SummaryRun]) -> list[SummaryRun]:
    """One copy of each run (budget, problem label, method label, seed), in the order first seen.

    A run may be in two summaries when it was finished in another store (a part of a spec run
    on another machine, or a run resumed elsewhere): a finished copy replaces an unfinished one,
    and of two unfinished copies the one with more evaluations is kept. Two finished copies are
    an error unless their values are the same (then they are one run, written twice).
    """
    kept: dict[tuple, SummaryRun] = {}
    for r in runs:
        key = (r.budget, r.problem_label, r.label, r.seed)
        o = kept.get(key)
        if o is None:
            kept[key] = r
            continue
        done_o, done_r = o.status == "finished", r.status == "finished"
        if done_o and done_r:
            if o.t.size == r.t.size and np.array_equal(o.f, r.f, equal_nan=True):
                continue
            raise ValueError(
                f"summaries: the run {r.label!r} on {r.problem_label!r}, budget {r.budget}, seed {r.seed} is finished "
                f"twice with different values (experiment {o.experiment!r} in {o.source!r} and experiment "
                f"{r.experiment!r} in {r.source!r})"
            )
        if done_r or (not done_o and r.t.size > o.t.size):
            kept[key] = r
    return list(kept.values())


def _cells(runs: list[SummaryRun]) -> list[_Cell]:
    """Group runs into cells, ordered by budget, then first experiment, then problem label.

    The runs are one copy each (:func:`_deduplicated`, which :func:`write_suite_report` applies).
    """
    grouped: dict[tuple[int, str], list[SummaryRun]] = {}
    for r in runs:
        grouped.setdefault((r.budget, r.problem_label), []).append(r)
    cells = []
    for (budget, plabel), group in grouped.items():
        cell = _Cell(budget=budget, problem_label=plabel, experiments=sorted({r.experiment for r in group}))
        by_label: dict[str, list[SummaryRun]] = {}
        for r in group:
            if r.status == "finished":
                by_label.setdefault(r.label, []).append(r)
            else:
                cell.unfinished.append(r)
        methods = [_build_method(label, sorted(rs, key=lambda r: r.seed), budget) for label, rs in by_label.items()]
        cell.no_finished = sorted({r.label for r in cell.unfinished} - set(by_label))
        common = set.intersection(*({r.seed for r in m.runs} for m in methods)) if methods else set()
        cell.common = sorted(common)
        for m in methods:
            on_common = np.array([r.seed in common for r in m.runs])
            m.used = on_common if common else np.ones(len(m.runs), dtype=bool)
            m.median = float(_median_worst_if_missing(m.best[on_common])) if common else math.nan
        for m, rank in zip(methods, rank_medians([m.median for m in methods]), strict=True):
            m.rank = rank
        methods.sort(key=lambda m: (m.rank is None, m.median if m.rank is not None else 0.0, m.label))
        cell.methods = methods
        cells.append(cell)
    cells.sort(key=lambda c: (c.budget, c.experiments[0], c.problem_label))
    return cells


# ---------------------------------------------------------------------------- text
def _num(x: float) -> str:
    return "—" if not math.isfinite(x) else f"{x:.6g}"


def _sec(x: float) -> str:
    return "—" if not math.isfinite(x) else f"{x:.3g}"


def _span(values: Iterable[int]) -> str:
    vals = sorted(set(values))
    if not vals:
        return "0"
    return str(vals[0]) if vals[0] == vals[-1] else f"{vals[0]}-{vals[-1]}"


def _seeds(values: Iterable[int]) -> str:
    vals = sorted(set(values))
    if vals and vals == list(range(vals[0], vals[-1] + 1)) and len(vals) > 2:
        return f"{vals[0]}-{vals[-1]}"
    return ", ".join(map(str, vals)) or "none"


def _rel(path: Path) -> str:
    """``path`` relative to the current directory when it lies under it, else absolute (POSIX slashes)."""
    full = path.resolve()
    try:
        return full.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return full.as_posix()


def _regenerate_command(summaries: Sequence[Path], out: Path) -> str:
    rel = [_rel(p) for p in summaries]
    folders = {p.resolve().parent for p in summaries}
    args = " ".join(shlex.quote(r) for r in rel)
    if len(folders) == 1:
        folder = folders.pop()
        everything = {p.resolve() for p in folder.glob("*.csv.gz")}
        if everything == {p.resolve() for p in summaries}:
            args = shlex.quote(Path(rel[0]).parent.as_posix()) + "/*.csv.gz"
    return f"hdbo suite-report {args} --out {shlex.quote(_rel(out))}"


def _botorch_settings() -> str | None:
    """BoTorch's acquisition-optimization defaults, read from the wrapper (None if unavailable)."""
    try:
        from ..methods.peers import BoTorchPeer
    except ImportError:  # pragma: no cover - the module imports no optional package
        return None
    params = inspect.signature(BoTorchPeer.__init__).parameters
    try:
        return f"num_restarts={params['num_restarts'].default}, raw_samples={params['raw_samples'].default}"
    except KeyError:  # pragma: no cover
        return None


def _scale_lines(runs: list[SummaryRun], summaries: Sequence[Path], out: Path) -> list[str]:
    lines = [
        "| experiment | budget | problems | methods | finished runs per method and problem | seeds (instances) "
        "| runs not finished |",
        "|---|---:|---:|---:|---:|---|---:|",
    ]
    first_budget = {e: min(r.budget for r in runs if r.experiment == e) for e in {r.experiment for r in runs}}
    for exp in sorted(first_budget, key=lambda e: (first_budget[e], e)):
        mine = [r for r in runs if r.experiment == exp]
        done = [r for r in mine if r.status == "finished"]
        per_cell: dict[tuple[int, str, str], int] = {}
        for r in mine:
            per_cell.setdefault((r.budget, r.problem_label, r.label), 0)
        for r in done:
            per_cell[(r.budget, r.problem_label, r.label)] += 1
        lines.append(
            f"| {_cell(exp)} | {_span(r.budget for r in mine)} | {len({r.problem_label for r in mine})} "
            f"| {len({r.label for r in mine})} | {_span(per_cell.values())} | {_seeds(r.seed for r in done)} "
            f"| {len(mine) - len(done)} |"
        )
    n_eval = sum(r.t.size for r in runs)
    lines += [
        "",
        "The run seed is the problem instance (run k on instance k). The suite's runs use instances 1-5 "
        "(the budget-300 runs 1-3); instance 0 is kept for development and tuning and is not used here.",
    ]
    odd = sorted({r.seed for r in runs if not 1 <= r.seed <= 5})
    if odd:
        lines.append(f"**Note:** these summaries also hold seeds outside 1-5: {', '.join(map(str, odd))}.")
    lines += [
        "",
        f"Generated on {datetime.date.today().isoformat()} from "
        f"{', '.join(f'`{_rel(p)}`' for p in summaries)} ({len(runs)} runs, {n_eval} evaluations). "
        f"Regenerate it (from the repository root) with `{_regenerate_command(summaries, out)}`.",
    ]
    return lines


def _reproduce_line(cells: list[_Cell]) -> str:
    keys = [(exp, c.problem_label) for c in cells for exp in c.experiments]
    exp, plabel = EXAMPLE_CELL if EXAMPLE_CELL in keys else (keys[0] if keys else EXAMPLE_CELL)
    quoted = f'"{plabel}"' if not set(plabel) & set('"$`\\!') else shlex.quote(plabel)
    return (
        "Reproduce one cell (one run of every method on one problem) from a fresh clone, after "
        "`pip install -e \".[all,peers]\"` (install `torch` first, see the README): "
        f"`hdbo reproduce {SPEC_SET} --scale full --only {exp} --problem {quoted} --runs 1` "
        f"(everything: `hdbo reproduce {SPEC_SET} --scale full`; the store resumes)."
    )


def _overview_lines(cells: list[_Cell]) -> list[str]:
    # hdbo's default run through its Optuna sampler (issue 24), a column once any cell has it
    through = any(c.find(lambda m: m.method == THROUGH_OPTUNA) for c in cells)
    lines = [
        "## Overview",
        "",
        "Best value = the median over runs of each run's best value, in the minimization convention "
        "(minus the largest `f` found; lower is better). Methods are compared only on the instances on "
        "which every method with a finished run on the problem (at that budget) has one (column "
        "\"instances compared\"; instances differ a lot, and the suite is filled in over several "
        "sessions): the medians, ranks and counts here are over those runs. Rank among those methods; "
        "ties share a rank. The per-problem tables also give each method's median over all its runs.",
        "",
        "| budget | problem | methods | instances compared | best median (method) | best median | hdbo auto: rank "
        "| hdbo auto: median | random search: median |" + (" hdbo through Optuna: median |" if through else ""),
        "|---:|---|---:|---|---|---:|---:|---:|---:|" + ("---:|" if through else ""),
    ]
    for c in cells:
        ranked = [m for m in c.methods if m.rank is not None]
        top = [m for m in ranked if m.rank == 1]
        auto = c.find(lambda m: m.is_auto)
        rnd = c.find(lambda m: m.method == "random")
        opt = c.find(lambda m: m.method == THROUGH_OPTUNA)
        auto_rank = "—" if auto is None or auto.rank is None else f"{auto.rank} of {len(ranked)}"
        lines.append(
            f"| {c.budget} | {_cell(c.problem_label)} | {len(c.methods)} | {_instances(c.common)} "
            f"| {_cell(' = '.join(m.label for m in top)) or '—'} | {_num(top[0].median) if top else '—'} "
            f"| {auto_rank} | {_num(auto.median) if auto else '—'} | {_num(rnd.median) if rnd else '—'} |"
            + (f" {_num(opt.median) if opt and opt.rank is not None else '—'} |" if through else "")
        )
    lines += ["", *_auto_lines(cells), *_paired_peer_lines(cells), *_through_optuna_lines(cells),
              *_structure_lines(cells)]
    return lines


def _paired_counts(a: _Method, b: _Method, seeds: Sequence[int]) -> tuple[int, int, int]:
    """On how many of ``seeds`` ``a``'s best value is lower than ``b``'s, higher, equal (within TIE_RTOL).

    An instance on which either run has no successful evaluation is left out.
    """
    va = {r.seed: v for r, v in zip(a.runs, a.best)}
    vb = {r.seed: v for r, v in zip(b.runs, b.best)}
    better = worse = equal = 0
    for s in seeds:
        x, y = va.get(s, math.nan), vb.get(s, math.nan)
        if math.isnan(x) or math.isnan(y):
            continue
        if _tied(x, y):
            equal += 1
        elif x < y:
            better += 1
        else:
            worse += 1
    return better, worse, equal


def _sign_p(better: int, worse: int) -> float:
    """Two-sided sign test of equal chances over the decided pairs (1 when there are none)."""
    from scipy.stats import binomtest

    n = better + worse
    return float(binomtest(better, n).pvalue) if n else 1.0


def _paired_peer_lines(cells: list[_Cell]) -> list[str]:
    """hdbo auto against each cell's best peer, instance by instance, with a sign test per cell and pooled."""
    rows = []
    sizes: set[int] = set()  # instance counts of the cells in the table
    pooled: dict[int, list[int]] = {}  # budget -> [better, worse, equal, cells]
    for c in cells:
        auto = c.find(lambda m: m.is_auto)
        peers = [m for m in c.methods if m.is_peer and m.rank is not None]
        if auto is None or auto.rank is None or not peers:
            continue
        best = min(peers, key=lambda m: (m.median, m.label))  # a tie on the median: the first label
        b, w, e = _paired_counts(auto, best, c.common)
        sizes.add(len(c.common))
        pooled[c.budget] = [x + y for x, y in zip(pooled.get(c.budget, [0, 0, 0, 0]), (b, w, e, 1))]
        rows.append(
            f"| {c.budget} | {_cell(c.problem_label)} | {len(peers)} | {_cell(best.label)} | {_num(best.median)} "
            f"| {_num(auto.median)} "
            f"| {b} / {w} / {e} | {_sign_p(b, w):.2g} |"
        )
    if not rows:
        return []
    floors = ", ".join(f"p = {_sign_p(k, 0):.3g} with {k} instance{'s' if k != 1 else ''}" for k in sorted(sizes))
    return [
        "",
        "**hdbo auto against each cell's best peer, instance by instance.** The best peer is the peer with "
        "the best median on the instances compared (chosen after the fact, which favours the peer; of peers "
        "with equal medians, the first by name). Column \"peers\" counts the peers that ran in the cell: "
        "where it is small, the comparison is only against those. The counts are the instances on which "
        "hdbo auto's best value is better / worse / equal (an instance where either run has no successful "
        "evaluation is left out); p is a two-sided sign test of equal chances over the instances where the "
        f"two differ. A cell's test cannot go below {floors}"
        + (", so no single cell can show a difference at the 5% level either way."
           if _sign_p(max(sizes), 0) > 0.05 else ".")
        + " A median of 3-5 values is the 2nd or 3rd of them, so one instance can change which median is lower.",
        "",
        "| budget | problem | peers | best peer | its median | hdbo auto: median | hdbo auto better / worse / equal "
        "| sign test p |",
        "|---:|---|---:|---|---:|---:|---|---:|",
        *rows,
        "",
        "Pooled by budget (the cells of one budget are different problems; the budgets share instances, so they "
        "are not pooled together): "
        + "; ".join(
            f"budget {budget}, {k} cell{'s' if k != 1 else ''}: hdbo auto better on {b} (cell, instance) pairs, "
            f"worse on {w}, equal on {e}, sign test p = {_sign_p(b, w):.2g}"
            for budget, (b, w, e, k) in sorted(pooled.items()))
        + ".",
        "",
    ]


def _through_optuna_lines(cells: list[_Cell]) -> list[str]:
    """hdbo auto run through its Optuna sampler against hdbo auto itself, paired by instance."""
    better = worse = equal = 0
    n_cells = 0
    for c in cells:
        auto = c.find(lambda m: m.is_auto)
        opt = c.find(lambda m: m.method == THROUGH_OPTUNA)
        if auto is None or opt is None:
            continue
        both = sorted({r.seed for r in auto.runs} & {r.seed for r in opt.runs})
        b, w, e = _paired_counts(opt, auto, both)
        n_cells += bool(b + w + e)
        better, worse, equal = better + b, worse + w, equal + e
    if not n_cells:
        return []
    p = _sign_p(better, worse)
    return [
        f"**hdbo through Optuna against hdbo auto:** paired by instance over the {better + worse + equal} "
        f"(problem, instance) runs both finished in {n_cells} cells, hdbo auto run through its Optuna sampler "
        f"(`{THROUGH_OPTUNA}`: `HDBOSampler` rebuilding `auto` from the study's trials at every trial) has the "
        f"better best value on {better}, the worse on {worse} and an equal one on {equal}; a two-sided sign test "
        f"of equal chances gives p = {p:.2g}. Its proposals take different random draws and refit the GP "
        "from scratch at every trial, so runs differ one by one; the sampler should match `auto` in "
        "distribution, not run for run.",
        "",
    ]


#: Issue 19's pairing of each structured method with the suite problem that has its structure
#: (problem labels start with the prefix): (structure, problem prefix, registered method names).
#: MS-UCB and DropoutUCB are not here: Tran-The et al. (AAAI 2020, Experiments) describe MS-UCB as
#: "free of any low dimensional structure assumption" and DropoutUCB (with GP-UCB and LineBO) as
#: making no assumption on the structure of the objective, so no suite problem "has their structure"
#: (until 2026-11-26 they were paired with rotated and hidden Hartmann-6); see NO_STRUCTURE.
STRUCTURE_CELLS = (
    ("additive", "Styblinski-Tang", ("add-gp-ucb",)),
    ("projection", "Hartmann-6 rotated", ("pp-gp-ucb", "rpp-gp-ucb")),
    ("subspace", "Hartmann-6 rotated", ("random-subspace-ucb", "highdim-random-ucb", "si-bo")),
    ("variable selection", "Hartmann-6 hidden", ("hds", "cws")),
    ("embedding", "Branin rotated", ("rembo", "hesbo", "sre")),
)

#: Methods their paper describes as assuming no structure, named beside the table (registered names).
NO_STRUCTURE = ("ms-ucb", "dropout-ucb")

#: What a reader needs to read a verdict of these methods (printed under the table when they ran).
STRUCTURE_NOTES = {
    "random-subspace-ucb": (
        "RandomS-UCB is Djolonga et al.'s (2013) strawman baseline: GP-UCB on one random k-dimensional "
        "subspace through the box centre (k = 2 by default), drawn once and never learned. On rotated "
        "Hartmann-6 it sees a 2-dimensional slice of the 6 active directions, and a small one: its search "
        "disc maps into the active coordinates as an ellipse with semi-axes about 0.29 and 0.17 times the "
        "disc's radius at D = 100 (0.16 and 0.09 at D = 300; medians over random draws of the singular "
        "values of A Q^T), so it reaches the optimum only by chance; losing to random search is what this "
        "baseline is there to show."),
    "pp-gp-ucb": (
        "PP-GP-UCB is Li et al.'s (2016) unrestricted variant (delta = infinity), the ablation their "
        "restriction answers; they report it failing (Section 5.1: average simple regret over 500 at D = 50 "
        "and 100, because it queries many points outside the original domain). Ours does the same: on "
        "rotated Hartmann-6 (development instance 0, budget 100, D = 100 and 300) the preimages of 72% of its "
        "model-based proposals leave the box and are clipped, and every coordinate of its proposals after the "
        "exploration phase lies on a face of the box."),
}


#: The problem's D in a suite label ("Hartmann-6 hidden D=300").
_DIM_IN_LABEL = re.compile(r"\bD\s*=\s*(\d+)")
#: Verdict of a structured method whose learning phase needs at least the cell's budget.
CANNOT_LEARN = "cannot learn within the budget"


def _label_dim(problem_label: str) -> int | None:
    """The problem's D from its label's ``D=<n>`` (every suite label has it), or None."""
    match = _DIM_IN_LABEL.search(problem_label)
    return int(match.group(1)) if match else None


def _structure_count(method: str, dim: int | None) -> int | str | None:
    """Evaluations ``method``'s structure learning needs at ``dim`` with its defaults.

    None: no separate learning phase; ``"unknown"``: the count depends on D and D is not
    known, or the method rejects ``dim``; ``"unregistered"``: no method of that name.
    """
    if method not in available_methods():
        return "unregistered"
    cls = get_method_class(method)
    if getattr(cls.structure_evaluations, "__func__", None) is Method.structure_evaluations.__func__:
        return None  # the base class's answer, whatever D
    if dim is None:
        return "unknown"
    try:
        return cls.structure_evaluations(dim)
    except (TypeError, ValueError):
        return "unknown"


def _need_text(method: str, dim: int | None, budget: int) -> tuple[str, bool]:
    """The "structure learning needs" cell, and whether the need is at least the budget."""
    count = _structure_count(method, dim)
    if isinstance(count, str):
        if count == "unregistered":
            return "—", False
        return "unknown" if dim is not None else "unknown (no D in the problem label)", False
    if count is None:
        return "no separate phase", False
    if count > budget:
        return f"{count} evaluations at D = {dim}: more than the budget", True
    if count == budget:
        return f"{count} evaluations at D = {dim}: the whole budget", True
    return f"{count} evaluations at D = {dim}: within the budget", False


def _structure_lines(cells: list[_Cell]) -> list[str]:
    """Each structured method against random search on the problems that have its structure."""
    rows, verdicts, not_run, noted = [], [], [], []
    for structure, prefix, names in STRUCTURE_CELLS:
        mine = [c for c in cells if c.problem_label.startswith(prefix)]
        for c in mine:
            rnd = c.find(lambda m: m.method == "random")
            for name in names:
                m = c.find(lambda m, name=name: m.method == name)
                if m is None or m.rank is None or rnd is None or rnd.rank is None:
                    continue
                need, too_many = _need_text(name, _label_dim(c.problem_label), c.budget)
                if too_many:
                    verdict = CANNOT_LEARN
                elif _tied(m.median, rnd.median):
                    verdict = "tie"
                else:
                    verdict = "better" if m.median < rnd.median else "**worse**"
                verdicts.append(verdict)
                if name in STRUCTURE_NOTES and name not in noted:
                    noted.append(name)
                rows.append(f"| {structure} | {_cell(m.label)} | {_cell(c.problem_label)} | {c.budget} "
                            f"| {_cell(need)} | {_num(m.median)} | {_num(rnd.median)} | {verdict} |")
        for name in names:
            if mine and not any(m.method == name for c in mine for m in c.methods) and name not in not_run:
                not_run.append(name)
    if not rows:
        return []
    n_better = verdicts.count("better")
    n_cannot = verdicts.count(CANNOT_LEARN)
    needs = []
    for name in not_run:
        dims = sorted({d for _, prefix, names in STRUCTURE_CELLS if name in names for c in cells
                       if c.problem_label.startswith(prefix) and (d := _label_dim(c.problem_label)) is not None})
        counts = [(d, _structure_count(name, d)) for d in dims]
        said = ", ".join(f"{n}{' evaluations' if i == 0 else ''} at D = {d}"
                         for i, (d, n) in enumerate((d, n) for d, n in counts if isinstance(n, int)))
        needs.append(f"`{name}`" + (f" (its structure learning needs {said})" if said else ""))
    excluded = (" Without a run on their problems (the specs' header comments give the reasons for the "
                f"methods they exclude): {'; '.join(needs)}." if needs else "")
    ran = {m.method for c in cells for m in c.methods}
    free = [name for name in NO_STRUCTURE if name in ran]
    if free:
        excluded += (f" Not in the table: {' and '.join(f'`{n}`' for n in free)}, which Tran-The et al. (2020, "
                     "Experiments) describe as making no assumption on the objective's structure; their ranks are "
                     "in the per-problem tables.")
    return [
        "",
        "**Structured methods on the problems with their structure** (each against random search, on "
        f"the same instances as the ranks): {n_better} of {len(rows)} better than random search; {n_cannot} of "
        f"{len(rows)} cannot learn their structure within the cell's budget. \"Structure learning needs\" is "
        "what the method's `structure_evaluations` gives at the problem's D (read from its label) with its "
        "default options: the evaluations of its separate learning phase (for HDS our measured selection "
        "counts, interpolated in log D; for SI-BO its Phase 1; for CWS one round, 2 D), or \"no separate "
        "phase\" for a method that learns as it optimizes or learns nothing. A method whose phase needs at "
        f"least the budget has the verdict \"{CANNOT_LEARN}\" instead of better or worse (its medians are "
        f"still shown).{excluded}",
        "",
        "| structure | method | problem | budget | structure learning needs | median best "
        "| random search: median | against random |",
        "|---|---|---|---:|---|---:|---:|---|",
        *rows,
        *([""] + [f"* {STRUCTURE_NOTES[name]}" for name in noted] if noted else []),
    ]


def _instances(seeds: Sequence[int]) -> str:
    return ", ".join(map(str, seeds)) or "none"


def _where(cells: list[_Cell]) -> str:
    return "; ".join(f"{c.problem_label} (budget {c.budget})" for c in cells)


def _auto_lines(cells: list[_Cell]) -> list[str]:
    """hdbo auto against every peer, and against random search, cell by cell."""
    wins, ties, losses = [], [], []
    for c in cells:
        auto = c.find(lambda m: m.is_auto)
        peers = [m for m in c.methods if m.is_peer and m.rank is not None]
        if auto is None or auto.rank is None or not peers:
            continue
        if any(p.median < auto.median and not _tied(p.median, auto.median) for p in peers):
            losses.append(c)
        elif any(_tied(p.median, auto.median) for p in peers):
            ties.append(c)
        else:
            wins.append(c)
    n = len(wins) + len(ties) + len(losses)
    out = []
    if n == 0:
        out.append("No problem has both hdbo auto and a peer (`peer:*`) with a median on common instances, so "
                   "there is no comparison.")
    else:
        out.append(
            f"**hdbo auto against the peers:** on {len(wins)} of the {n} (budget, problem) cells where hdbo auto "
            f"and at least one peer (`peer:*`) ran, compared on the instances every method of the cell finished, "
            f"hdbo auto's median is better than every peer's. A median "
            f"equal to a peer's within {TIE_RTOL:g} relative is a tie and not counted as best: "
            f"{len(ties)} tie(s){' (' + _where(ties) + ')' if ties else ''}. A peer's median is better on "
            f"{len(losses)}{': ' + _where(losses) if losses else ''}."
        )
    uncommon = [c for c in cells if c.methods and not c.common]
    if uncommon:
        out += ["", f"Not compared (no instance on which every method has a finished run): {_where(uncommon)}."]
    worse, vs = [], 0
    for c in cells:
        auto = c.find(lambda m: m.is_auto)
        rnd = c.find(lambda m: m.method == "random")
        if auto is None or rnd is None or auto.rank is None or rnd.rank is None:
            continue
        vs += 1
        if rnd.median < auto.median and not _tied(rnd.median, auto.median):
            worse.append(c)
    if vs == 0:
        out.append("")
        out.append("No problem has both hdbo auto and random search (`random`) with a median on common instances.")
    else:
        out.append("")
        out.append(
            f"**hdbo auto against random search:** hdbo auto's median is worse than random search's on "
            f"{len(worse)} of the {vs} cells where both ran (on the instances compared)"
            f"{': ' + _where(worse) if worse else ''}."
        )
    return out


def _cell_lines(c: _Cell, has_peers: bool) -> list[str]:
    seeds = _seeds(r.seed for m in c.methods for r in m.runs)
    n = len(c.common)
    if c.common:
        compared = (f"ranked on the {n} instance{'s' if n != 1 else ''} every method finished: "
                    f"{_instances(c.common)}")
    else:
        compared = ("**not ranked**: no instance has a finished run of every method (each method's own runs "
                    "are in the \"all runs\" columns)")
    lines = [
        f"### {c.problem_label}, budget {c.budget}",
        "",
        f"Experiment{'s' if len(c.experiments) > 1 else ''} {', '.join(f'`{e}`' for e in c.experiments)}; "
        f"seeds (instances) {seeds}; {compared}. Best value per run in the minimization convention (lower is "
        "better); rank, median, min and max over the runs on those instances, \"all runs\" over every finished "
        "run of the method; proposal seconds over all their evaluations.",
        "",
        "| rank | method | name | median best | min | max | all runs: n | all runs: median | all runs: min "
        "| all runs: max | median proposal s | max proposal s |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for m in c.methods:
        label = f"**{_cell(m.label)}**" if m.is_auto else _cell(m.label)
        lo, hi = _min_max(m.best[m.used]) if c.common else (math.nan, math.nan)
        all_lo, all_hi = _min_max(m.best)
        lines.append(
            f"| {m.rank if m.rank is not None else '—'} | {label} | `{_cell(m.method)}` "
            f"| {_num(m.median)} | {_num(lo)} | {_num(hi)} | {len(m.runs)} | {_num(m.all_median)} | {_num(all_lo)} "
            f"| {_num(all_hi)} | {_sec(m.ask_median)} | {_sec(m.ask_max)} |"
        )
    if c.no_finished:
        lines += ["", "No finished run (left out of the table, the ranking and the common instances): "
                  f"{', '.join(c.no_finished)}."]
    no_median = [m.label for m in c.methods if m.rank is None and c.common]
    if no_median:
        lines += ["", "No median on the common instances (at least half of those runs have no successful "
                  f"evaluation), no rank: {', '.join(no_median)}."]
    empty = [f"{m.label} seed {r.seed}" for m in c.methods for r, b in zip(m.runs, m.best, strict=True) if np.isnan(b)]
    if empty:
        lines += ["", "Runs without a successful evaluation (counted as the worst value in the median; "
                  f"left out of min and max): {', '.join(empty)}."]
    if c.unfinished:
        desc = ", ".join(
            f"{r.label} seed {r.seed} ({r.status}, {r.t.size} of {r.budget} evaluations)"
            for r in sorted(c.unfinished, key=lambda r: (r.label, r.seed))
        )
        lines += ["", f"Not counted (not finished when the summary was written): {desc}."]
    if c.figure:
        style = "hdbo auto thick, peers dashed" if has_peers else "hdbo auto thick"
        over = (f"over each method's runs on the instances compared ({_instances(c.common)}), the runs behind "
                "the ranks" if c.common else "over each method's own finished runs (no common instance, so the "
                "curves are over different instances and are not comparable)")
        lines += [
            "",
            f"![{_cell(c.problem_label)}, budget {c.budget}: median best-so-far]({c.figure})",
            "",
            f"*Median of the best value so far (minimization convention) against the evaluation count, {over}; "
            f"{style}; n in the legend is the number of runs behind each curve.*",
        ]
    return lines + [""]


# ---------------------------------------------------------------------------- figures
def _min_max(best: NDArray[np.float64]) -> tuple[float, float]:
    """Min and max of the finite values (NaN, NaN if there are none)."""
    finite = best[np.isfinite(best)]
    return (float(finite.min()), float(finite.max())) if finite.size else (math.nan, math.nan)


def _plot_cell(c: _Cell, path: Path, labels: Sequence[str]) -> None:
    """One PNG: the median best-so-far of every method (over its runs in ``used``) against the evaluation count.

    A method's colour is fixed by its place in ``labels`` (every label of the report), so it is
    the same in every figure.
    """
    from matplotlib import colormaps
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10.0, 5.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    tab20 = colormaps["tab20"].colors  # dark shades first, then their light partners
    palette = tab20[0::2] + tab20[1::2] + colormaps["Dark2"].colors
    t = np.arange(1, c.budget + 1)
    finite_all = []
    for m in c.methods:
        curve = m.curve
        finite_all.append(curve[np.isfinite(curve)])
        if m.is_auto:
            style = dict(color="black", linewidth=3.0, linestyle="-", zorder=5)
        else:
            color = palette[list(labels).index(m.label) % len(palette)]
            style = dict(color=color, linewidth=1.3, linestyle="--" if m.is_peer else "-")
        ax.plot(t, curve, label=f"{m.label} (n={int(m.used.sum())})", **style)
    vals = np.concatenate(finite_all) if finite_all else np.array([])
    if vals.size and np.all(vals > 0) and vals.max() / vals.min() > 100:
        ax.set_yscale("log")
    ax.set_xlabel("evaluation t")
    ax.set_ylabel("median best value so far (minimization)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_title(f"{c.problem_label}, budget {c.budget}")
    save_png(fig, path, dpi=90)


# ---------------------------------------------------------------------------- entry point
def write_suite_report(
    summaries: Sequence[str | Path],
    out: str | Path,
    *,
    figures_dir: str | Path | None = None,
) -> Path:
    """Write the suite's markdown report, with one PNG per (budget, problem), from summaries.

    Parameters
    ----------
    summaries : sequence of str or Path
        Summary files (``.csv.gz``) written by :func:`~hdbo.experiments.summary.export_summary`.
    out : str or Path
        The markdown file to write (parent folders are created).
    figures_dir : str or Path, optional
        Folder of the figures ``fig-b<budget>-<problem>.png`` (default: ``benchmarks/`` next to
        ``out``, e.g. ``docs/benchmarks/`` for ``docs/benchmarks.md``); linked from the report by
        relative paths.

    Returns
    -------
    Path
        ``out``, the report written.

    Raises
    ------
    ValueError
        ``summaries`` is empty, a file is not a summary, or the same run is in two of them.
    FileNotFoundError
        A summary does not exist.

    Notes
    -----
    The conventions (cells, minimization convention, ranks and ties, proposal seconds) are those
    of the module docstring.
    """
    paths = [Path(p) for p in summaries]
    if not paths:
        raise ValueError("summaries: expected at least one summary file (.csv.gz), got none")
    out = Path(out)
    runs = _deduplicated([r for p in paths for r in read_summary(p)])
    if not runs:
        raise ValueError(f"summaries: no runs in {', '.join(str(p) for p in paths)}")
    cells = _cells(runs)
    out.parent.mkdir(parents=True, exist_ok=True)
    notes = []
    fig_dir = Path(figures_dir) if figures_dir is not None else out.parent / "benchmarks"
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        notes.append("matplotlib is not installed, so there are no figures (pip install 'hdbo[plots]').")
    else:
        fig_dir.mkdir(parents=True, exist_ok=True)
        labels = sorted({r.label for r in runs})
        for c in cells:
            path = fig_dir / f"fig-b{c.budget}-{_slug(c.problem_label).lower()}.png"
            _plot_cell(c, path, labels)
            c.figure = Path(os.path.relpath(path, out.parent)).as_posix()
    lines = [f"# {TITLE}", "", "## Scale", ""]
    lines += _scale_lines(runs, paths, out)
    lines += ["", _reproduce_line(cells), ""]
    methods_line = (
        "Methods and settings: the specs `experiments/" + SPEC_SET + "/*.toml` (header comments); the same budget, "
        "seeds and problem instances for every method. Peers are the methods named `peer:*`"
    )
    if any(r.method == "peer:botorch" for r in runs):
        settings = _botorch_settings()
        if settings:
            methods_line += f"; BoTorch's acquisition is optimized by `optimize_acqf` with {settings}"
    lines += [methods_line + ".", ""]
    lines += [f"**Note:** {n}" for n in notes] + ([""] if notes else [])
    lines += _overview_lines(cells)
    has_peers = any(r.method.startswith("peer:") for r in runs)
    for budget in sorted({c.budget for c in cells}):
        lines += ["", f"## Budget {budget}", ""]
        for c in cells:
            if c.budget == budget:
                lines += _cell_lines(c, has_peers)
    out.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    return out
