"""Aggregate stored runs into tables and regret plots (markdown + PNG).

Runs are grouped by (experiment, problem label, method label, budget); only finished runs
count. For each run, with ``r_t = f* - f(x_t)`` from the noise-free ``f``:

* simple regret ``S_t = min_{s<=t} r_s``;
* average cumulative regret ``R_t / t = (1/t) sum_{s<=t} r_s``;
* best noise-free value ``max_{s<=t} f(x_s)``.

Failed evaluations have no ``f``: they count against the budget (the curves are indexed by
evaluation number ``t``) but are left out of the minimum, the maximum and the average
(``R_t / t`` averages over the successful evaluations among the first ``t``). A group
reports, over its runs, the mean and the standard error ``std(ddof=1) / sqrt(n)`` of the
final values, and the median and the mean over all its evaluations of the seconds spent in
``ask`` plus the objective (both: a few slow refits can make the mean many times the median).

Claims of a spec (:class:`~hdbo.experiments.spec.Claim`) are checked by
:func:`check_claims` on the same group means, separately at each budget ``T`` present in the
experiment: held (significantly, or in direction only) / not held / not testable (a compared
method has fewer than :data:`MIN_RUNS` finished runs) / no data, and for each comparison
whether the difference of the means exceeds two standard errors of the difference
``sqrt(se_a^2 + se_b^2)`` (or, for claims that name it, whether Welch's t-test rejects equal
means at 5%).

Plots need matplotlib (``pip install hdbo[plots]``); it is imported only when plotting and
used through its object API with the Agg canvas, so no global backend is changed. Without
matplotlib the report has the tables and a note.

Figures go in one folder per paper next to the report, ``figures/<paper>/``, where
``<paper>`` is the experiment set's name for ``hdbo reproduce`` (so the quick and the full
report of a paper share the folder) and the report's file stem otherwise. A figure is named
``<report stem>-<experiment>-<problem>-T<budget>.png`` (a diagnostic
``<report stem>-<experiment>-diag-<key>.png``), so two reports of one paper never write the
same file, and is linked relatively (``figures/<paper>/<name>``). :func:`write_report`
creates the folder and overwrites only the figures it writes; it deletes nothing.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from .spec import DIAG_PREFIX, Claim, ExperimentSpec, ReferenceValue
from .store import EvaluationArrays, RunConfig, RunStore, hdbo_version
from .summary import SummaryRun

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "MIN_RUNS",
    "GroupSummary",
    "SpecScope",
    "run_curves",
    "aggregate",
    "mean_se",
    "format_mean_se",
    "Comparison",
    "TrendFit",
    "trend_numbers",
    "fit_trend",
    "ClaimCheck",
    "check_claims",
    "claims_summary",
    "scope_lines",
    "render_markdown",
    "write_report",
]


def run_curves(ev: EvaluationArrays) -> dict[str, NDArray[np.float64]]:
    """Per-evaluation curves of one run, each of shape (n,), NaN before the first success.

    Parameters
    ----------
    ev : EvaluationArrays
        The run's ``n`` evaluations (:meth:`RunStore.load_evaluations`).

    Returns
    -------
    dict of str -> ndarray of shape (n,)
        ``"simple_regret"`` (``S_t``), ``"avg_regret"`` (``R_t / t`` over successful
        evaluations), ``"best_f"`` (best noise-free value so far).
    """
    r = np.where(ev.failed, np.nan, ev.regret)
    f = np.where(ev.failed, np.nan, ev.f)
    ok = np.isfinite(r)
    count = np.cumsum(ok)
    with np.errstate(invalid="ignore", divide="ignore"):
        avg = np.cumsum(np.where(ok, r, 0.0)) / count
    avg[count == 0] = np.nan
    return {
        "simple_regret": np.fmin.accumulate(r) if r.size else r,
        "avg_regret": avg,
        "best_f": np.fmax.accumulate(f) if f.size else f,
    }


def mean_se(values: Sequence[float] | NDArray[np.float64]) -> tuple[float, float]:
    """Mean and standard error (``std(ddof=1) / sqrt(n)``) of the finite values.

    Parameters
    ----------
    values : array_like of shape (n,)
        Non-finite entries are ignored.

    Returns
    -------
    mean : float
        NaN without finite values.
    se : float
        NaN with fewer than two finite values.

    Examples
    --------
    >>> mean_se([1.0, 3.0, float("nan")])
    (2.0, 1.0)
    >>> m, se = mean_se([1e250, 3e250])  # no overflow in the squares
    >>> m, round(se / 1e250, 9)
    (2e+250, 1.0)
    """
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return math.nan, math.nan
    if v.size < 2:
        return float(np.mean(v)), math.nan
    with np.errstate(over="ignore"):
        sd = float(np.std(v, ddof=1))
    if not math.isfinite(sd):  # squares overflow (a diagnostic like a delta-ratio of 1e250): scaled
        scale = float(np.max(np.abs(v)))
        sd = float(np.std(v / scale, ddof=1)) * scale
    return float(np.mean(v)), sd / math.sqrt(v.size)


def format_mean_se(mean: float, se: float) -> str:
    """Text of a mean and its standard error for a report table.

    Parameters
    ----------
    mean, se : float
        As returned by :func:`mean_se` (NaN when unknown).

    Returns
    -------
    str
        ``"0.123 ± 0.045"``, ``"0.123"`` without a standard error, ``"—"`` without a mean.
    """
    if not math.isfinite(mean):
        return "—"
    if not math.isfinite(se):
        return f"{mean:.4g}"
    return f"{mean:.4g} ± {se:.2g}"
#: Fewest finished runs per compared method for a claim to be checked ("not testable" below).
MIN_RUNS = 3


@dataclass(frozen=True)
class SpecScope:
    """What one spec of a reproduction asks for at a scale, to state what a report holds.

    Attributes
    ----------
    experiment : str
        The spec's experiment name.
    problems, methods : tuple of str
        Its problem and method labels, in spec order.
    seeds : tuple of int
        Its run seeds at the scale.
    budget : int
        Its budget ``T`` at the scale.
    """

    experiment: str
    problems: tuple[str, ...]
    methods: tuple[str, ...]
    seeds: tuple[int, ...]
    budget: int

    @classmethod
    def from_spec(cls, spec: ExperimentSpec) -> "SpecScope":
        """The scope of a spec already set to its scale (:meth:`ExperimentSpec.at_scale`)."""
        return cls(spec.name, tuple(p.label for p in spec.problems), tuple(m.label for m in spec.methods),
                   tuple(int(s) for s in spec.seeds), int(spec.budget))


@dataclass
class GroupSummary:
    """Aggregate of the finished runs of one (experiment, problem, method label, budget).

    Attributes
    ----------
    experiment, problem, problem_label, method, label : str
    budget : int
    n_runs : int
    run_ids : list of int
    seeds : list of int
        The run seeds, in the order of ``run_ids``.
    simple_regret, avg_regret, best_f : (float, float)
        Mean and standard error over runs of the final ``S_T``, ``R_T / T`` and best ``f``
        (NaN when unknown, e.g. a problem without a known optimum).
    sec_per_eval : float
        Median over all evaluations of ask + objective seconds.
    sec_per_eval_mean : float
        Mean over all evaluations of ask + objective seconds.
    wall_seconds : float
        Mean over runs of the total wall seconds of a run.
    n_failed_evals : int
        Failed evaluations over all runs.
    evaluations_used : list of int
        Evaluations each run made (less than ``budget`` for a run its method ended early).
    curves : dict of str -> ndarray of shape (n_runs, budget)
        Per-run curves (see :func:`run_curves`).
    """

    experiment: str
    problem: str
    problem_label: str
    method: str
    label: str
    budget: int
    n_runs: int = 0
    run_ids: list[int] = field(default_factory=list)
    seeds: list[int] = field(default_factory=list)
    simple_regret: tuple[float, float] = (math.nan, math.nan)
    avg_regret: tuple[float, float] = (math.nan, math.nan)
    best_f: tuple[float, float] = (math.nan, math.nan)
    log10_simple_regret: tuple[float, float] = (math.nan, math.nan)
    diagnostics: dict[str, tuple[float, float]] = field(default_factory=dict)
    sec_per_eval: float = math.nan
    sec_per_eval_mean: float = math.nan
    wall_seconds: float = math.nan
    n_failed_evals: int = 0
    evaluations_used: list[int] = field(default_factory=list)
    curves: dict[str, NDArray[np.float64]] = field(default_factory=dict)

    @property
    def t_column(self) -> str:
        """The budget, or the median evaluations used and the budget when runs stopped early."""
        used = self.evaluations_used
        if not used or min(used) >= self.budget:
            return str(self.budget)
        return f"{float(np.median(used)):g} of {self.budget}"

    def metric(self, name: str) -> tuple[float, float]:
        """Mean and standard error of one final metric.

        Parameters
        ----------
        name : str
            ``"simple_regret"``, ``"avg_regret"``, ``"best_f"``, ``"log10_simple_regret"`` or
            ``"diag:KEY"``.

        Returns
        -------
        (float, float)
            Mean and standard error over the group's runs; NaN for a diagnostic no run has.

        Raises
        ------
        KeyError
            An unknown metric name.
        """
        if name.startswith(DIAG_PREFIX):
            return self.diagnostics.get(name[len(DIAG_PREFIX):], (math.nan, math.nan))
        return {
            "simple_regret": self.simple_regret,
            "avg_regret": self.avg_regret,
            "best_f": self.best_f,
            "log10_simple_regret": self.log10_simple_regret,
        }[name]

    def metric_at(self, name: str, t: int) -> tuple[float, float]:
        """Mean and standard error of a curve metric after ``t`` evaluations.

        Parameters
        ----------
        name : str
            ``"simple_regret"``, ``"avg_regret"``, ``"best_f"`` or ``"log10_simple_regret"``
            (diagnostics exist only at the end of a run: NaN).
        t : int
            Evaluations, ``1 <= t``; NaN when ``t`` exceeds the budget.

        Returns
        -------
        (float, float)
        """
        if name.startswith(DIAG_PREFIX) or not 1 <= t <= self.budget or not self.curves:
            return (math.nan, math.nan)
        if name == "log10_simple_regret":
            with np.errstate(invalid="ignore", divide="ignore"):
                return mean_se(np.log10(np.maximum(self.curves["simple_regret"][:, t - 1], 1e-12)))
        return mean_se(self.curves[name][:, t - 1])


def aggregate(
    store: RunStore | None,
    *,
    experiment: str | None = None,
    run_ids: Iterable[int] | None = None,
    summary_runs: Iterable[SummaryRun] = (),
) -> list[GroupSummary]:
    """Group the finished runs of ``store`` (and of summaries) and compute their summaries.

    Parameters
    ----------
    store : RunStore or None
        The store to read (None: only ``summary_runs``).
    experiment : str, optional
        Only this experiment.
    run_ids : iterable of int, optional
        Only these runs of the store.
    summary_runs : iterable of SummaryRun, optional
        Runs read from committed summaries (:func:`~hdbo.experiments.summary.read_summary`);
        the finished ones count like the store's (their ``run_ids`` entry is -1). The caller
        leaves out those the store also has.

    Returns
    -------
    list of GroupSummary
        Ordered by experiment, then problem and method in order of first appearance; each
        with ``curves`` of shape (n_runs, budget).
    """
    rows: list[_RunRow] = []
    if store is not None:
        ids = None if run_ids is None else list(run_ids)
        for run in store.list_runs(experiment=experiment, status="finished", ids=ids):
            c = run.config
            ev = store.load_evaluations(run.id)
            rows.append(_RunRow(c, run.id, ev, run.diagnostics, run.wall_seconds))
    for sr in summary_runs:
        if sr.status == "finished" and (experiment is None or sr.experiment == experiment):
            rows.append(_RunRow(sr, -1, sr, sr.diagnostics, sr.wall_seconds))
    groups: dict[tuple[str, str, str, int], list[_RunRow]] = {}
    for row in rows:
        c = row.config
        groups.setdefault((c.experiment, c.problem_label, c.label, c.budget), []).append(row)
    out: list[GroupSummary] = []
    for (exp, plabel, label, budget), members in groups.items():
        members.sort(key=lambda r: r.config.seed)
        g = GroupSummary(exp, members[0].config.problem, plabel, members[0].config.method, label, budget)
        per_run: dict[str, list[NDArray[np.float64]]] = {"simple_regret": [], "avg_regret": [], "best_f": []}
        seconds: list[NDArray[np.float64]] = []
        for run in members:
            ev = run.evaluations
            curves = run_curves(ev)
            for k, v in curves.items():
                padded = np.full(budget, np.nan)
                n = min(v.size, budget)
                padded[:n] = v[:budget]
                if 0 < n < budget:  # a finished run that stopped early (Method.done) keeps its last value
                    padded[n:] = v[n - 1]
                per_run[k].append(padded)
            seconds.append(ev.ask_seconds + ev.eval_seconds)
            g.evaluations_used.append(int(len(ev.ask_seconds)))
            g.n_failed_evals += int(ev.failed.sum())
            g.run_ids.append(run.run_id)
            g.seeds.append(int(run.config.seed))
        g.n_runs = len(members)
        g.curves = {k: np.vstack(v) for k, v in per_run.items()}
        g.simple_regret = mean_se(g.curves["simple_regret"][:, -1])
        g.avg_regret = mean_se(g.curves["avg_regret"][:, -1])
        g.best_f = mean_se(g.curves["best_f"][:, -1])
        with np.errstate(invalid="ignore", divide="ignore"):
            g.log10_simple_regret = mean_se(np.log10(np.maximum(g.curves["simple_regret"][:, -1], 1e-12)))
        g.diagnostics = _diagnostic_stats([run.diagnostics for run in members])
        allsec = np.concatenate(seconds) if seconds else np.array([])
        g.sec_per_eval = float(np.median(allsec)) if allsec.size else math.nan
        g.sec_per_eval_mean = float(np.mean(allsec)) if allsec.size else math.nan
        g.wall_seconds = float(np.mean([run.wall_seconds for run in members]))
        out.append(g)
    order = {e: i for i, e in enumerate(sorted({g.experiment for g in out}))}
    out.sort(key=lambda g: order[g.experiment])  # stable: keeps first-appearance order inside
    return out


@dataclass(frozen=True)
class _RunRow:
    """One finished run to aggregate, from a store or a summary."""

    config: RunConfig | SummaryRun  # names the run: experiment, problem(_label), method, label, budget, seed
    run_id: int
    evaluations: EvaluationArrays | SummaryRun  # both have f, regret, failed, ask_seconds, eval_seconds
    diagnostics: Mapping[str, object] | None
    wall_seconds: float


def _diagnostic_stats(per_run: Sequence[Mapping[str, object] | None]) -> dict[str, tuple[float, float]]:
    """Mean and standard error of every scalar diagnostic (numbers; bools as 0/1) over the runs having it."""
    values: dict[str, list[float]] = {}
    for diag in per_run:
        for key, v in (diag or {}).items():
            if isinstance(v, (bool, np.bool_, int, float, np.integer, np.floating)):
                values.setdefault(key, []).append(float(v))
    return {k: mean_se(np.array(v)) for k, v in values.items()}


# ---------------------------------------------------------------------------- claims
_METRIC_SHORT = {"simple_regret": "S_T", "avg_regret": "R_T/T", "best_f": "best f", "log10_simple_regret": "log10 S_T"}


def _short(metric: str) -> str:
    return _METRIC_SHORT.get(metric, metric[len(DIAG_PREFIX):] if metric.startswith(DIAG_PREFIX) else metric)


@dataclass(frozen=True)
class Comparison:
    """``method`` against ``other`` on one problem at one budget (final-evaluation means).

    Attributes
    ----------
    problem, method, other : str
        Problem label and the two method labels.
    mean, se : float
        Mean and standard error over runs of the metric for ``method`` (``se`` NaN for one run).
    n_runs : int
    other_mean, other_se : float
    other_n_runs : int
    better : bool
        ``method``'s mean is strictly better (lower regret, higher ``best_f``); for a
        ``"close"`` claim: worse by at most the claim's ``within``.
    significant : bool
        By the claim's test: ``|mean - other_mean| > 2 sqrt(se^2 + other_se^2)`` (``"2se"``)
        or ``p_value < 0.05`` (``"welch"``); for a ``"close"`` claim: the shortfall differs
        from ``within`` by more than two standard errors of the difference. False when a
        standard error is unknown (a group of one run).
    p_value : float
        Two-sided p-value of Welch's t-test for equal means (from the means, standard errors
        and run counts); NaN when a group has fewer than two runs.
    """

    problem: str
    method: str
    other: str
    mean: float
    se: float
    n_runs: int
    other_mean: float
    other_se: float
    other_n_runs: int
    better: bool
    significant: bool
    p_value: float = math.nan

    @property
    def se_diff(self) -> float:
        """Standard error of the difference, ``sqrt(se^2 + other_se^2)`` (NaN if unknown)."""
        return math.sqrt(self.se**2 + self.other_se**2)


@dataclass(frozen=True)
class TrendFit:
    """How one method's metric grows across the problems of a ``"trend"`` claim.

    Attributes
    ----------
    x : tuple of float
        The varied setting, one value per problem (the claim's ``x``).
    means, ses : tuple of float
        The method's mean and standard error of the metric on each problem.
    shape : {"linear", "log"}
        The claimed shape: a line in ``x`` or in ``log x``.
    slope, slope_se : float
        Least-squares slope of the means against ``x`` (or ``log x``) and its standard error,
        propagated from the means' standard errors (NaN when one is unknown).
    rss, other_rss : float
        Residual sums of squares of the means about the claimed shape's line and about the
        other shape's line.
    """

    x: tuple[float, ...]
    means: tuple[float, ...]
    ses: tuple[float, ...]
    shape: str
    slope: float
    slope_se: float
    rss: float
    other_rss: float

    @property
    def held(self) -> bool:
        """The metric grows (positive slope) and the claimed shape fits at least as well as the other."""
        return self.slope > 0 and self.rss <= self.other_rss

    @property
    def significant(self) -> bool:
        """The slope is more than two standard errors from 0 (False when its SE is unknown)."""
        return bool(abs(self.slope) > 2.0 * self.slope_se)


def _line_fit(g: NDArray[np.float64], y: NDArray[np.float64], se: NDArray[np.float64]) -> tuple[float, float, float]:
    """Ordinary least squares ``y ~ a + b g``: slope, its standard error from ``se``, residual SS."""
    gc = g - g.mean()
    weights = gc / float(gc @ gc)  # slope = weights @ y
    slope = float(weights @ y)
    slope_se = float(np.sqrt(np.sum((weights * se) ** 2)))
    resid = y - (y.mean() + slope * gc)
    return slope, slope_se, float(resid @ resid)


def fit_trend(x: Sequence[float], means: Sequence[float], ses: Sequence[float], shape: str) -> TrendFit:
    """Fit the means by a line in ``x`` and a line in ``log x`` (see :class:`TrendFit`).

    Parameters
    ----------
    x : sequence of float
        Values > 0 of the varied setting, at least 3 distinct.
    means, ses : sequence of float
        Mean and standard error of the metric at each ``x`` (an SE may be NaN: then the
        slope's SE is NaN).
    shape : {"linear", "log"}
        The claimed shape.

    Returns
    -------
    TrendFit

    Examples
    --------
    >>> fit = fit_trend([10, 100, 1000], [1.0, 2.0, 3.0], [0.1, 0.1, 0.1], "log")
    >>> fit.held, fit.significant, round(fit.slope, 3)
    (True, True, 0.434)
    >>> fit_trend([10, 100, 1000], [1.0, 2.0, 3.0], [0.1, 0.1, 0.1], "linear").held
    False
    """
    xs = np.asarray(x, dtype=float)
    y = np.asarray(means, dtype=float)
    se = np.asarray(ses, dtype=float)
    fits = {"linear": _line_fit(xs, y, se), "log": _line_fit(np.log(xs), y, se)}
    other = "log" if shape == "linear" else "linear"
    slope, slope_se, rss = fits[shape]
    return TrendFit(tuple(xs.tolist()), tuple(y.tolist()), tuple(se.tolist()), shape, slope, slope_se, rss,
                    fits[other][2])


@dataclass(frozen=True)
class ClaimCheck:
    """The verdict on one claim at one budget.

    Attributes
    ----------
    claim : Claim
    experiment : str
    budget : int
        The ``T`` of the runs compared.
    result : {"held", "not held", "not testable", "no data"}
        ``"held"``: on every problem ``method`` beats every compared method (and, for a claim
        with ``significant = true``, every comparison is significant). ``"not testable"``: a
        compared method has fewer than :data:`MIN_RUNS` finished runs at ``budget``.
        ``"no data"``: something required has no finished runs at ``budget`` (see
        ``missing``), or the metric is unknown (e.g. regret on a problem without a known
        optimum).
    comparisons : list of Comparison
        Every comparison that could be made, in problem order then ``than`` order.
    missing : list of str
        What prevented a verdict: ``"GP-UCB on (10,3,3)"`` (no finished runs),
        ``"GP-UCB on (10,3,3) (S_T unknown)"`` (metric unknown) or ``"any other method on
        (10,3,3)"`` (a ``"best"`` claim with nothing to compare with).
    values : dict of (str, str) -> (float, float, int)
        ``(problem, method label) -> (mean, se, n_runs)`` of every group consulted, also
        those of comparisons that could not be made (mean NaN when the metric is unknown).
    trend : TrendFit or None
        For a ``"trend"`` claim with a verdict: the fit it was judged by (``comparisons`` is
        then empty); None otherwise.
    """

    claim: Claim
    experiment: str
    budget: int
    result: str
    comparisons: list[Comparison] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    values: dict[tuple[str, str], tuple[float, float, int]] = field(default_factory=dict)
    trend: TrendFit | None = None

    @property
    def significant(self) -> bool | None:
        """Whether the verdict is beyond noise by the claim's test; None without a verdict.

        Held: every comparison is significant. Not held: some comparison the claim loses is
        significant (one clear loss is enough to refute it). For a ``"trend"`` claim: the
        slope is more than two standard errors from 0 (held: it grows; not held: it
        significantly does not, or the slope is significant but the other shape fits better).
        None for ``"not testable"`` and ``"no data"``.
        """
        if self.trend is not None and self.result in ("held", "not held"):
            if self.result == "not held" and self.trend.slope > 0 and self.trend.rss > self.trend.other_rss:
                return False  # it grows, but the other shape fits better: no test of the shapes
            return self.trend.significant
        if self.result == "held":
            return all(c.significant for c in self.comparisons)
        if self.result == "not held":
            return any(c.significant for c in self.comparisons if not c.better)
        return None

    @property
    def verdict(self) -> str:
        """The result in words: "held significantly", "held in direction only", "not held",
        "not held (direction only, not significant)" for a significance claim whose
        differences point its way, "not testable" or "no data"."""
        if self.result == "held":
            return "held significantly" if self.significant else "held in direction only"
        if self.result == "not held" and self.claim.significant and all(c.better for c in self.comparisons):
            return "not held (right direction, not significant)"
        return self.result

    @property
    def n_runs(self) -> tuple[int, int]:
        """Smallest and largest number of runs among the groups in ``values`` ((0, 0) if none)."""
        counts = [n for _, _, n in self.values.values()]
        return (min(counts), max(counts)) if counts else (0, 0)


def check_claims(
    groups: Sequence[GroupSummary],
    claims: Sequence[Claim],
    *,
    experiment: str,
) -> list[ClaimCheck]:
    """Check the claims of one experiment against aggregated runs, at every budget present.

    Parameters
    ----------
    groups : sequence of GroupSummary
        Output of :func:`aggregate` (only finished runs); groups of other experiments are ignored.
    claims : sequence of Claim
        The claims of the experiment's spec.
    experiment : str
        The experiment (spec name) the claims belong to.

    Returns
    -------
    list of ClaimCheck
        One per claim and budget ``T`` present among the experiment's groups, ordered by
        claim, then budget. Empty if the experiment has no finished runs.

    Notes
    -----
    At budget ``T``, for each problem of the claim, the final-evaluation mean of the metric
    of ``claim.method`` is compared with that of each method in ``claim.than`` (for
    ``kind = "best"`` without ``than``: every other method with finished runs on that problem
    at ``T``). The claim is held when ``method`` is strictly better in every comparison (for
    ``kind = "close"``: worse by at most ``claim.within``; for a claim with
    ``significant = true``: also significantly, by its test), not held when it is not, no
    data when a required method has no finished runs on a problem at ``T`` or its metric is
    unknown (NaN), and not testable when a compared method has fewer than :data:`MIN_RUNS`
    finished runs (equal means are never a win). Groups of different budgets are never
    mixed. A ``"trend"`` claim is judged by :func:`fit_trend` on ``method``'s means over its
    problems (see :mod:`hdbo.experiments.spec`).

    Examples
    --------
    With a spec and a store of finished runs (not run as a doctest: it needs the runs)::

        spec = load_spec("experiments/kandasamy2015/fig3_d10.toml")
        with RunStore("runs/kandasamy2015.db") as store:
            for c in check_claims(aggregate(store), spec.claims, experiment=spec.name):
                print(c.budget, c.result, c.significant, c.claim.text)
    """
    mine = [g for g in groups if g.experiment == experiment]
    by_key = {(g.problem_label, g.label, g.budget): g for g in mine}
    budgets = sorted({g.budget for g in mine})
    return [
        _check_trend(claim, experiment, budget, by_key) if claim.kind == "trend"
        else _check_one(claim, experiment, budget, by_key, mine)
        for claim in claims for budget in budgets
    ]


def _check_trend(
    claim: Claim, experiment: str, budget: int, by_key: Mapping[tuple[str, str, int], GroupSummary]
) -> ClaimCheck:
    """A ``"trend"`` claim at one budget: fit ``method``'s means across the problems."""
    missing: list[str] = []
    values: dict[tuple[str, str], tuple[float, float, int]] = {}
    for problem in claim.problems:
        g = by_key.get((problem, claim.method, budget))
        if g is None:
            missing.append(f"{claim.method} on {problem}")
            continue
        mean, se = g.metric(claim.metric)
        values[(problem, claim.method)] = (mean, se, g.n_runs)
        if not math.isfinite(mean):
            missing.append(f"{claim.method} on {problem} ({_short(claim.metric)} unknown)")
    if missing:
        return ClaimCheck(claim, experiment, budget, "no data", [], missing, values)
    if any(n < MIN_RUNS for _, _, n in values.values()):
        return ClaimCheck(claim, experiment, budget, "not testable", [], [], values)
    stats = [values[(p, claim.method)] for p in claim.problems]
    assert claim.x is not None and claim.shape is not None  # parse_spec requires both for "trend"
    fit = fit_trend(claim.x, [m for m, _, _ in stats], [se for _, se, _ in stats], claim.shape)
    return ClaimCheck(claim, experiment, budget, "held" if fit.held else "not held", [], [], values, fit)


def _check_one(
    claim: Claim,
    experiment: str,
    budget: int,
    by_key: Mapping[tuple[str, str, int], GroupSummary],
    groups: Sequence[GroupSummary],
) -> ClaimCheck:
    higher = claim.higher
    comparisons: list[Comparison] = []
    missing: list[str] = []
    values: dict[tuple[str, str], tuple[float, float, int]] = {}

    def stats(label: str, problem: str) -> tuple[float, float, int] | None:
        g = by_key.get((problem, label, budget))
        if g is None:
            missing.append(f"{label} on {problem}")
            return None
        mean, se = g.metric(claim.metric)
        values[(problem, label)] = (mean, se, g.n_runs)
        if not math.isfinite(mean):
            missing.append(f"{label} on {problem} ({_short(claim.metric)} unknown)")
            return None
        return values[(problem, label)]

    for problem in claim.problems:
        if claim.than is not None:
            others = list(claim.than)
        else:
            have = [g.label for g in groups if g.problem_label == problem and g.budget == budget]
            candidates = claim.others or tuple(have)  # spec order when known
            others = [label for label in candidates if label != claim.method and label in have]
            if not others:
                missing.append(f"any other method on {problem}")
        a = stats(claim.method, problem)
        for other in others:
            b = stats(other, problem)
            if a is None or b is None:
                continue
            (mean, se, n), (other_mean, other_se, other_n) = a, b
            diff = mean - other_mean
            se_diff = math.sqrt(se**2 + other_se**2)  # NaN when a group has one run
            p_value = _welch_p(mean, se, n, other_mean, other_se, other_n)
            if claim.kind == "close":
                # shortfall of `method` behind `other`, against the spec's tolerance
                shortfall = -diff if higher else diff
                within = float(claim.within or 0.0)  # parse_spec requires it for "close"
                better = shortfall <= within
                significant = bool(abs(shortfall - within) > 2.0 * se_diff)  # False for NaN
            else:
                better = diff > 0 if higher else diff < 0
                if claim.test == "welch":
                    significant = bool(p_value < 0.05)  # False for NaN
                else:
                    significant = bool(abs(diff) > 2.0 * se_diff)  # False for NaN
            comparisons.append(
                Comparison(
                    problem=problem,
                    method=claim.method,
                    other=other,
                    mean=mean,
                    se=se,
                    n_runs=n,
                    other_mean=other_mean,
                    other_se=other_se,
                    other_n_runs=other_n,
                    better=better,
                    significant=significant,
                    p_value=p_value,
                )
            )
    if missing:
        result = "no data"
    elif any(n < MIN_RUNS for _, _, n in values.values()):
        result = "not testable"
    elif all(c.better and (c.significant or not claim.significant) for c in comparisons):
        result = "held"
    else:
        result = "not held"
    return ClaimCheck(claim, experiment, budget, result, comparisons, list(dict.fromkeys(missing)), values)


# ---------------------------------------------------------------------------- markdown
_METRIC_TITLES = {
    "simple_regret": "simple regret S_T",
    "avg_regret": "R_T/T",
    "best_f": "best f",
    "log10_simple_regret": "log10 S_T",
}


def _title(metric: str) -> str:
    return _METRIC_TITLES.get(metric, _short(metric))


def _slug(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return s or "x"


def _fmt_seconds(s: float) -> str:
    return "—" if not math.isfinite(s) else f"{s:.3g}"


def _cell(text: str) -> str:
    """Text safe inside a markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def _welch_p(m1: float, se1: float, n1: int, m2: float, se2: float, n2: int) -> float:
    """Two-sided p-value of Welch's t-test from means, standard errors and run counts."""
    if n1 < 2 or n2 < 2 or not all(math.isfinite(v) for v in (m1, se1, m2, se2)):
        return math.nan
    var = se1**2 + se2**2
    if var == 0.0:
        return 1.0 if m1 == m2 else 0.0
    from scipy.stats import t as student_t  # imported here: scipy.stats is slow to import

    t = (m1 - m2) / math.sqrt(var)
    dof = var**2 / (se1**4 / (n1 - 1) + se2**4 / (n2 - 1))
    return float(2.0 * student_t.sf(abs(t), dof))


def trend_numbers(check: ClaimCheck, sep: str = "<br>") -> str:
    """The numbers of a ``"trend"`` claim: the means per ``x``, the slope and both fits."""
    claim = check.claim
    assert claim.x is not None
    means = ", ".join(
        f"{x:g}: {format_mean_se(*values[:2])}" if (values := check.values.get((p, claim.method))) else f"{x:g}: —"
        for p, x in zip(claim.problems, claim.x)
    )
    parts = [f"{claim.method} at x = {means}"]
    fit = check.trend
    if fit is not None:
        unit = "x" if fit.shape == "linear" else "log x"
        other = "log x" if fit.shape == "linear" else "x"
        mark = "no SE" if not math.isfinite(fit.slope_se) else "sig." if fit.significant else "n.s."
        parts.append(f"slope per unit of {unit} {format_mean_se(fit.slope, fit.slope_se)} ({mark}); "
                     f"residual SS of a line in {unit} {fit.rss:.3g}, in {other} {fit.other_rss:.3g}")
    if check.missing:
        parts.append("missing: " + ", ".join(check.missing))
    return f"{_short(claim.metric)}: " + sep.join(parts)


def _claim_numbers(check: ClaimCheck) -> str:
    """``S_T: Add-* 0.12 ± 0.03 vs GP-UCB 1.3 ± 0.2 (sig.), DiRect 0.5 ± 0.1 (n.s.)``, a line per problem."""
    if check.claim.kind == "trend":
        return trend_numbers(check)
    parts: list[str] = []
    multi = len(check.claim.problems) > 1
    for problem in check.claim.problems:
        comps = [c for c in check.comparisons if c.problem == problem]
        if not comps:  # nothing to compare: show what there is
            found = [
                f"{label} {format_mean_se(m, se)}"
                for (p, label), (m, se, _) in check.values.items()
                if p == problem and math.isfinite(m)
            ]
            if found:
                parts.append((f"{problem}: " if multi else "") + ", ".join(found))
            continue
        versus = []
        for c in comps:
            mark = "no SE" if not math.isfinite(c.se_diff) else "sig." if c.significant else "n.s."
            if check.claim.test == "welch" and math.isfinite(c.p_value):
                mark += f", p = {c.p_value:.2g}"
            versus.append(f"{c.other} {format_mean_se(c.other_mean, c.other_se)} ({mark})")
        head = f"{comps[0].method} {format_mean_se(comps[0].mean, comps[0].se)} vs "
        parts.append((f"{problem}: " if multi else "") + head + ", ".join(versus))
    if check.missing:
        parts.append("missing: " + ", ".join(check.missing))
    return f"{_short(check.claim.metric)}: " + "<br>".join(parts)


def _claim_scale(check: ClaimCheck) -> str:
    lo, hi = check.n_runs
    if hi == 0:
        runs = "no runs"
    elif lo == hi:
        runs = f"{lo} run" + ("s" if lo != 1 else "")
    else:
        runs = f"{lo}–{hi} runs"
    return f"{runs}, T = {check.budget}"


def claims_summary(checks: Sequence[ClaimCheck]) -> str:
    """The summary line of a claims section: the verdicts counted at each budget.

    Only claims with a verdict (held or not held) are counted; "not testable" and "no data"
    claims are named separately. Held claims are split into those held significantly and
    those held in direction only.

    Parameters
    ----------
    checks : sequence of ClaimCheck
        Output of :func:`check_claims`.

    Returns
    -------
    str
        E.g. ``"T = 100: 3 of 5 testable claims held (2 significantly, 1 in direction only),
        2 not held (1 significantly); 1 not testable (fewer than 3 runs)."``
    """
    parts = []
    for budget in sorted({c.budget for c in checks}):
        at = [c for c in checks if c.budget == budget]
        held = [c for c in at if c.result == "held"]
        lost = [c for c in at if c.result == "not held"]
        n_sig = sum(bool(c.significant) for c in held)
        text = f"T = {budget}: {len(held)} of {len(held) + len(lost)} testable claims held"
        if held:
            text += f" ({n_sig} significantly, {len(held) - n_sig} in direction only)"
        text += f", {len(lost)} not held"
        if lost:
            text += f" ({sum(bool(c.significant) for c in lost)} significantly)"
        rest = []
        if n := sum(c.result == "not testable" for c in at):
            rest.append(f"{n} not testable (fewer than {MIN_RUNS} runs)")
        if n := sum(c.result == "no data" for c in at):
            rest.append(f"{n} no data")
        parts.append(text + ("; " + ", ".join(rest) if rest else ""))
    return "; ".join(parts) + "." if parts else "No claims."


def _claims_section(checks: Sequence[ClaimCheck]) -> list[str]:
    """Markdown lines of the "Claims" section of one experiment."""
    lines = ["### Claims", ""]
    lines += [claims_summary(checks), ""]
    lines += [
        (
            "Means over finished runs of the metric at the final evaluation T; *significant* when the "
            "difference exceeds 2 standard errors of the difference, or for claims marked *(t-test)* when "
            "Welch's two-sided t-test rejects equal means at the 5% level (held: every comparison; "
            f"not held: some comparison it loses). A claim is checked only with at least {MIN_RUNS} "
            "finished runs of every compared method (else *not testable*); claims marked *(significant)* "
            "are the paper's claims of a significant difference and hold only when every comparison is "
            "significant."
            + (
                " Claims marked *(within w)* are about being close: held when the method is worse than "
                "each other method by at most w (in the metric's units), significant when the shortfall "
                "is 2 standard errors of the difference away from w."
                if any(c.claim.kind == "close" for c in checks)
                else ""
            )
            + (
                " Claims marked *(trend: linear in x / log x)* are about one method across problems that "
                "differ in one setting x: held when the least-squares slope of its means against x (or "
                "log x) is positive and that line fits the means at least as well as a line in the other "
                "(log x or x), significant when the slope exceeds 2 of its standard errors (the choice of "
                "shape is not tested)."
                if any(c.claim.kind == "trend" for c in checks)
                else ""
            )
        ),
        "",
        "| claim | source | problem(s) | result | numbers (mean ± SE) | significant | scale |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in checks:
        sig = {True: "yes", False: "no", None: "—"}[c.significant]
        if c.claim.kind == "close":
            mark = f" *(within {c.claim.within:g})*"
        elif c.claim.kind == "trend":
            mark = f" *(trend: linear in {'x' if c.claim.shape == 'linear' else 'log x'})*"
        else:
            mark = " *(t-test)*" if c.claim.test == "welch" else ""
            mark += " *(significant)*" if c.claim.significant else ""
        lines.append(
            f"| {_cell(c.claim.text + mark)} | {_cell(c.claim.source) or '—'} | {_cell(', '.join(c.claim.problems))} | "
            f"{c.verdict} | {_cell(_claim_numbers(c))} | {sig} | {_claim_scale(c)} |"
        )
    lines.append("")
    return lines


def _diagnostics_section(
    exp: str, groups: Sequence[GroupSummary], keys: Sequence[str], figures: Mapping[tuple[str, str, int], str]
) -> list[str]:
    """Markdown lines of the "Diagnostics" section: per key, methods x problems (mean ± SE)."""
    lines = ["### Diagnostics", "", "Values the methods report at the end of each run (mean ± SE over runs).", ""]
    columns = list(dict.fromkeys((g.problem_label, g.budget) for g in groups))
    multi_t = len({b for _, b in columns}) > 1
    methods = list(dict.fromkeys(g.label for g in groups))
    by_key = {(g.problem_label, g.budget, g.label): g for g in groups}
    for key in keys:
        head = [_cell(p + (f" (T = {b})" if multi_t else "")) for p, b in columns]
        lines += [f"**{key}**", "", "| method | " + " | ".join(head) + " |", "|---|" + "---:|" * len(columns)]
        for label in methods:
            cells = []
            for p, b in columns:
                g = by_key.get((p, b, label))
                cells.append(format_mean_se(*g.metric(DIAG_PREFIX + key)) if g else "—")
            lines.append(f"| {_cell(label)} | " + " | ".join(cells) + " |")
        lines.append("")
        fig = figures.get((exp, DIAG_PREFIX + key, 0))
        if fig:
            lines += [f"![{exp}: {key}]({fig})", ""]
    return lines


def _seed_ranges(seeds: Iterable[int]) -> str:
    """``0-9, 12`` for seeds 0..9 and 12 (``none`` if empty)."""
    ordered = sorted(set(seeds))
    if not ordered:
        return "none"
    parts, start, prev = [], ordered[0], ordered[0]
    for s in ordered[1:] + [None]:
        if s is not None and s == prev + 1:
            prev = s
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if s is not None:
            start = prev = s
    return ", ".join(parts)


def spec_order(groups: Sequence[GroupSummary], scopes: Sequence[SpecScope]) -> list[GroupSummary]:
    """The groups in spec order: experiment, then the spec's problem order, then its method order.

    A report built from a store (runs created in spec order) and one built from summaries
    (runs in file order) then list problems and methods alike. Groups of a problem or method
    the scopes do not name keep their order of appearance, after the named ones.

    Parameters
    ----------
    groups : sequence of GroupSummary
        As from :func:`aggregate`.
    scopes : sequence of SpecScope
        The specs' problem and method labels in spec order.

    Returns
    -------
    list of GroupSummary
        The same groups, reordered (a stable sort).
    """
    problem_rank: dict[tuple[str, str], int] = {}
    method_rank: dict[tuple[str, str], int] = {}
    for sc in scopes:
        for i, label in enumerate(sc.problems):
            problem_rank.setdefault((sc.experiment, label), i)
        for i, label in enumerate(sc.methods):
            method_rank.setdefault((sc.experiment, label), i)
    last = len(problem_rank) + len(method_rank) + 1
    return sorted(groups, key=lambda g: (g.experiment, problem_rank.get((g.experiment, g.problem_label), last),
                                         method_rank.get((g.experiment, g.label), last)))


def scope_lines(scopes: Sequence[SpecScope], groups: Sequence[GroupSummary], scale: str) -> tuple[str, list[str]]:
    """What a report holds against what its specs ask for: a title suffix and a table.

    Parameters
    ----------
    scopes : sequence of SpecScope
        Every spec of the reproduction's set at ``scale``, also those not run.
    groups : sequence of GroupSummary
        The report's groups (finished runs only).
    scale : str
        The scale's name, e.g. ``"full"``.

    Returns
    -------
    (str, list of str)
        A title suffix such as ``"full scale, incomplete: 1 of 5 specs complete"`` and the
        markdown lines of a table with one row per spec: the problems, methods and seeds that
        have finished runs in the report, the fewest finished runs of a (problem, method)
        against the seeds the spec asks for, and whether the spec is complete.
    """
    n_complete = 0
    rows = []
    for sc in scopes:
        mine = [g for g in groups if g.experiment == sc.experiment and g.budget == sc.budget]
        runs = {(g.problem_label, g.label): g.n_runs for g in mine}
        wanted = [(p, m) for p in sc.problems for m in sc.methods]
        fewest = min((runs.get(k, 0) for k in wanted), default=0)
        problems = [p for p in sc.problems if any(runs.get((p, m), 0) for m in sc.methods)]
        methods = [m for m in sc.methods if any(runs.get((p, m), 0) for p in sc.problems)]
        seeds = [s for g in mine for s in g.seeds]
        complete = bool(wanted) and fewest >= len(sc.seeds)
        n_complete += complete
        if not mine:
            status = "not run"
        else:
            status = "complete" if complete else f"incomplete (fewest runs of a problem and method: {fewest})"
        listed = ", ".join(problems) if len(problems) <= 6 else f"{', '.join(problems[:6])}, ..."
        rows.append(
            f"| {_cell(sc.experiment)} | {len(problems)} of {len(sc.problems)}" + (f": {_cell(listed)}" if problems else "")
            + f" | {len(methods)} of {len(sc.methods)} | {_seed_ranges(seeds)} of {_seed_ranges(sc.seeds)} "
            f"({len(sc.seeds)} runs) | {sc.budget} | {status} |"
        )
    n = len(scopes)
    if n and n_complete == n:
        suffix = f"{scale} scale, complete ({n} spec{'s' if n != 1 else ''})"
    else:
        have = sum(1 for sc in scopes if any(g.experiment == sc.experiment for g in groups))
        suffix = f"{scale} scale, incomplete: {n_complete} of {n} specs complete, {have} of {n} with runs"
    lines = [
        f"**What this report holds** ({suffix}): per spec of the set, the problems, methods and seeds with "
        "finished runs here, against what the spec asks for at this scale. Only complete specs are "
        f"reproduced at this scale; a claim needs {MIN_RUNS} runs per compared method to be tested.",
        "",
        "| spec | problems with runs | methods with runs | seeds with runs (of the spec's) | T | status |",
        "|---|---|---|---|---:|---|",
        *rows,
        "",
    ]
    return suffix, lines


def render_markdown(
    groups: Sequence[GroupSummary],
    *,
    title: str,
    source: str = "",
    descriptions: Mapping[str, str] | None = None,
    references: Mapping[str, Sequence[ReferenceValue]] | None = None,
    claims: Mapping[str, Sequence[Claim]] | None = None,
    diagnostics: Mapping[str, Sequence[str]] | None = None,
    figures: Mapping[tuple[str, str, int], str] | None = None,
    notes: Sequence[str] = (),
    scopes: Sequence[SpecScope] | None = None,
    scale: str = "",
) -> str:
    """Markdown text of a report (see :func:`write_report`).

    Parameters
    ----------
    groups : sequence of GroupSummary
        Output of :func:`aggregate`.
    title : str
        First heading.
    source : str, default ""
        Store file name, printed under the title.
    descriptions, references, claims, diagnostics : mapping experiment -> ..., optional
        As in :func:`write_report`.
    figures : mapping (experiment, problem label or "diag:KEY", budget) -> str, optional
        Relative paths of the figures to link.
    notes : sequence of str
        Printed as block quotes under the introduction.
    scopes : sequence of SpecScope, optional
        Every spec of the set at ``scale``: the title then says how complete the report is
        and a table under it lists what it holds (see :func:`scope_lines`).
    scale : str, default ""
        The scale's name, for ``scopes``.

    Returns
    -------
    str
        The markdown text (no trailing newline).
    """
    descriptions = descriptions or {}
    references = references or {}
    claims = claims or {}
    diagnostics = diagnostics or {}
    figures = figures or {}
    scope_table: list[str] = []
    if scopes is not None:
        suffix, scope_table = scope_lines(scopes, groups, scale or "this")
        title = f"{title} ({suffix})"
    lines = [f"# {title}", ""]
    meta = f"Generated {time.strftime('%Y-%m-%d %H:%M')} by hdbo {hdbo_version()}"
    lines += [meta + (f" from `{source}`." if source else "."), ""]
    lines += scope_table
    lines += [
        "Regret is `r_t = f* - f(x_t)` from the noise-free objective; simple regret `S_T = min_t r_t`; "
        "average regret `R_T/T`. Values are mean ± standard error over runs (seeds); failed "
        "evaluations count against the budget but not in these statistics. "
        "`s/eval` is the median (and the mean) time of one ask plus one objective evaluation; `T` is the budget, "
        "or `m of T` (the median evaluations used) when runs ended early (e.g. selection-only runs).",
        "",
    ]
    for note in notes:
        lines += [f"> {note}", ""]
    if not groups:
        lines += ["No finished runs.", ""]
        return "\n".join(lines)

    by_exp: dict[str, list[GroupSummary]] = {}
    for g in groups:
        by_exp.setdefault(g.experiment, []).append(g)
    for exp, exp_groups in by_exp.items():
        lines += [f"## {exp}", ""]
        if descriptions.get(exp):
            lines += [descriptions[exp].strip(), ""]
        if claims.get(exp):
            lines += _claims_section(check_claims(exp_groups, claims[exp], experiment=exp))
        if diagnostics.get(exp):
            lines += _diagnostics_section(exp, exp_groups, diagnostics[exp], figures)
        by_problem: dict[tuple[str, int], list[GroupSummary]] = {}
        for g in exp_groups:
            by_problem.setdefault((g.problem_label, g.budget), []).append(g)
        for (plabel, budget), pgroups in by_problem.items():
            lines += [f"### {plabel} (T = {budget})", ""]
            lines += [
                "| method | runs | T (evals used) | simple regret S_T | R_T/T | best f | s/eval median (mean) | failed evals |",
                "|---|---:|---:|---:|---:|---:|---:|---:|",
            ]
            for g in pgroups:
                lines.append(
                    f"| {g.label} | {g.n_runs} | {g.t_column} | {format_mean_se(*g.simple_regret)} | "
                    f"{format_mean_se(*g.avg_regret)} | {format_mean_se(*g.best_f)} | "
                    f"{_fmt_seconds(g.sec_per_eval)} ({_fmt_seconds(g.sec_per_eval_mean)}) | {g.n_failed_evals} |"
                )
            lines.append("")
            refs = [r for r in references.get(exp, []) if r.problem == plabel]
            if refs:
                ours = {g.label: g for g in pgroups}
                lines += [
                    "Paper values next to ours:",
                    "",
                    "| method | metric | paper | paper T | ours | our T | note |",
                    "|---|---|---:|---:|---:|---:|---|",
                ]
                for r in refs:
                    g = ours.get(r.method)
                    if g is None:
                        our, our_t = "not run", "—"
                    elif r.at is not None:
                        our, our_t = format_mean_se(*g.metric_at(r.metric, r.at)), str(r.at)
                    else:
                        our, our_t = format_mean_se(*g.metric(r.metric)), str(g.budget)
                    lines.append(
                        f"| {r.method} | {_title(r.metric)} | {r.value:.4g} | "
                        f"{r.budget if r.budget is not None else '—'} | {our} | {our_t} | "
                        f"{r.note.replace('|', '/')} |"
                    )
                lines.append("")
            fig = figures.get((exp, plabel, budget))
            if fig:
                lines += [f"![{exp}: {plabel}]({fig})", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------- plots
def save_png(fig: Figure, path: str | Path, *, dpi: int) -> None:
    """Write a matplotlib figure as a compact PNG (a 256-colour palette when Pillow is there).

    Line plots use few colours, so a palette image without dithering looks the same as the
    full-colour one at about a third of its size (the committed reports hold hundreds of
    figures). Without Pillow the full-colour PNG is written. The output is deterministic.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure (with a canvas attached).
    path : str or Path
        The file to write.
    dpi : int
        Resolution passed to ``savefig``.
    """
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    compact_png(buf.getvalue(), path)


def compact_png(data: bytes, path: str | Path) -> None:
    """Write PNG bytes ``data`` to ``path`` as a 256-colour palette PNG (unchanged without Pillow)."""
    import io

    try:
        from PIL import Image
    except ImportError:  # matplotlib depends on Pillow, so this is rare
        Path(path).write_bytes(data)
        return
    with Image.open(io.BytesIO(data)) as im:
        q = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        q.save(path, format="PNG", optimize=True)


def _plot_problem(groups: Sequence[GroupSummary], path: Path, title: str) -> None:
    """One PNG: simple regret (left) and R_t/t (right) vs evaluations, mean ± SE bands."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    has_regret = any(np.isfinite(g.curves["simple_regret"]).any() for g in groups)
    panels = (
        [("simple_regret", "simple regret $S_t$"), ("avg_regret", "average regret $R_t/t$")]
        if has_regret
        else [("best_f", "best noise-free value")]
    )
    fig = Figure(figsize=(5.0 * len(panels) + 1.0, 4.0), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (key, ylabel) in zip(axes, panels, strict=True):
        all_positive = True
        for g in groups:
            c = g.curves[key]
            t = np.arange(1, c.shape[1] + 1)
            n = np.sum(np.isfinite(c), axis=0)
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = np.where(n > 0, np.nansum(c, axis=0) / np.maximum(n, 1), np.nan)
                sd = np.sqrt(np.where(n > 1, np.nansum((c - mean) ** 2, axis=0) / np.maximum(n - 1, 1), 0.0))
                se = sd / np.sqrt(np.maximum(n, 1))
            (line,) = ax.plot(t, mean, label=f"{g.label} (n={g.n_runs})", linewidth=1.6)
            ax.fill_between(t, mean - se, mean + se, color=line.get_color(), alpha=0.2, linewidth=0)
            finite = mean[np.isfinite(mean)]
            all_positive = all_positive and bool(np.all(finite > 0))
        if all_positive and key != "best_f":
            ax.set_yscale("log")
        ax.set_xlabel("evaluations t")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize="small")
    fig.suptitle(title)
    save_png(fig, path, dpi=110)


def _plot_diagnostic(groups: Sequence[GroupSummary], key: str, path: Path, title: str) -> None:
    """One PNG: a diagnostic (mean ± SE) per method against the experiment's problems, in spec order."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    columns = list(dict.fromkeys((g.problem_label, g.budget) for g in groups))
    multi_t = len({b for _, b in columns}) > 1
    fig = Figure(figsize=(max(5.0, 1.0 + 0.9 * len(columns)), 4.0), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    x = np.arange(len(columns))
    for label in dict.fromkeys(g.label for g in groups):
        by = {(g.problem_label, g.budget): g for g in groups if g.label == label}
        stats = np.array([by[c].metric(DIAG_PREFIX + key) if c in by else (math.nan, math.nan) for c in columns])
        se = np.nan_to_num(stats[:, 1])
        ax.errorbar(x, stats[:, 0], yerr=se, marker="o", capsize=3, label=label)
    ax.set_xticks(x, [p + (f"\nT={b}" if multi_t else "") for p, b in columns], rotation=30, ha="right")
    ax.set_ylabel(key)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.suptitle(title)
    save_png(fig, path, dpi=110)


def write_report(
    store: RunStore,
    out: str | Path,
    *,
    experiment: str | None = None,
    run_ids: Iterable[int] | None = None,
    title: str | None = None,
    descriptions: Mapping[str, str] | None = None,
    references: Mapping[str, Sequence[ReferenceValue]] | None = None,
    claims: Mapping[str, Sequence[Claim]] | None = None,
    diagnostics: Mapping[str, Sequence[str]] | None = None,
    plots: bool = True,
    scopes: Sequence[SpecScope] | None = None,
    scale: str = "",
    summary_runs: Iterable[SummaryRun] = (),
    paper: str | None = None,
) -> Path:
    """Write a markdown report of the finished runs, with one PNG per problem in its paper's folder.

    Parameters
    ----------
    store : RunStore
        The store to read.
    out : str or Path
        Markdown file to write (parent folders are created). Figures are written to
        ``figures/<paper>/`` next to it as ``<stem>-<experiment>-<problem>-T<budget>.png``
        (``<stem>`` is the file's stem) and linked relatively; see ``paper``.
    experiment : str, optional
        Only this experiment.
    run_ids : iterable of int, optional
        Only these runs.
    title : str, optional
        Report title (default ``"hdbo report"``).
    descriptions : mapping experiment -> str, optional
        Text printed under each experiment heading.
    references : mapping experiment -> list of ReferenceValue, optional
        Paper values printed next to ours.
    claims : mapping experiment -> list of Claim, optional
        Qualitative claims of the paper; each experiment with claims gets a "Claims"
        section checking them at every budget present (see :func:`check_claims`).
    diagnostics : mapping experiment -> list of str, optional
        ``Method.diagnostics()`` keys tabulated (and plotted) per method across the
        experiment's problems, e.g. a sample count against the dimension.
    plots : bool, default True
        Write PNG figures (skipped with a note when matplotlib is not installed).
    scopes : sequence of SpecScope, optional
        Every spec of the reproduction's set at ``scale``, also those not run: the title
        and a table at the top then state exactly which specs, problems and seeds the report
        holds and whether each spec is complete.
    scale : str, default ""
        The scale's name (``"quick"``, ``"full"``), for ``scopes``.
    summary_runs : iterable of SummaryRun, optional
        Finished runs from a committed summary to report with the store's (see
        :func:`aggregate`; the caller leaves out those the store has).
    paper : str, optional
        Name of the figures' folder ``figures/<paper>/`` next to ``out`` (default: ``out``'s
        stem). ``hdbo reproduce`` passes the experiment set's name, so every report of a paper
        (quick and full scale) puts its figures in the same folder. Characters other than
        letters, digits, ``.``, ``_`` and ``-`` become ``-``. The folder is created when a
        figure is written; figures already in it are kept (only this report's files, whose
        names start with ``out``'s stem, are overwritten).

    Returns
    -------
    Path
        The markdown file.

    Raises
    ------
    TypeError
        If ``paper`` is not a string.
    ValueError
        If ``paper`` is empty.
    """
    if paper is None:
        paper = Path(out).stem
    elif not isinstance(paper, str):
        raise TypeError(f"paper must be a str, got {type(paper).__name__}")
    elif not paper.strip():
        raise ValueError("paper must be a non-empty folder name, got an empty string")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    ids = None if run_ids is None else list(run_ids)
    summary_runs = list(summary_runs)
    groups = aggregate(store, experiment=experiment, run_ids=ids, summary_runs=summary_runs)
    if scopes:
        groups = spec_order(groups, scopes)
    notes: list[str] = []
    unfinished = [
        r for r in store.list_runs(experiment=experiment, status=("pending", "running", "failed"), ids=ids)
    ]
    if unfinished:
        notes.append(
            f"{len(unfinished)} run(s) are not finished and are left out "
            f"(statuses: {', '.join(sorted({r.status for r in unfinished}))})."
        )
    figures: dict[tuple[str, str, int], str] = {}
    if plots and groups:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            notes.append("matplotlib is not installed, so there are no figures (pip install 'hdbo[plots]').")
        else:
            folder = f"figures/{_slug(paper)}"  # relative to out.parent, so also the links' prefix
            (out.parent / folder).mkdir(parents=True, exist_ok=True)
            by_problem: dict[tuple[str, str, int], list[GroupSummary]] = {}
            for g in groups:
                by_problem.setdefault((g.experiment, g.problem_label, g.budget), []).append(g)
            for key, pgroups in by_problem.items():
                exp, plabel, budget = key
                name = f"{folder}/{_slug(out.stem)}-{_slug(exp)}-{_slug(plabel)}-T{budget}.png"
                _plot_problem(pgroups, out.parent / name, f"{exp}: {plabel}")
                figures[key] = name
            for exp, keys in (diagnostics or {}).items():
                egroups = [g for g in groups if g.experiment == exp]
                for key in keys:
                    if not egroups or not any(math.isfinite(g.metric(DIAG_PREFIX + key)[0]) for g in egroups):
                        continue
                    name = f"{folder}/{_slug(out.stem)}-{_slug(exp)}-diag-{_slug(key)}.png"
                    _plot_diagnostic(egroups, key, out.parent / name, f"{exp}: {key}")
                    figures[(exp, DIAG_PREFIX + key, 0)] = name
    text = render_markdown(
        groups,
        title=title or "hdbo report",
        source=" and ".join(
            [Path(store.path).name] * (store.path != ":memory:")
            + sorted({Path(r.source).name for r in summary_runs})
        ),
        descriptions=descriptions,
        references=references,
        claims=claims,
        diagnostics=diagnostics,
        figures=figures,
        notes=notes,
        scopes=scopes,
        scale=scale,
    )
    out.write_text(text + "\n", encoding="utf-8")
    return out
