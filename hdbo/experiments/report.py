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
final values, and the median over all its evaluations of the seconds spent in ``ask`` plus
the objective.

Plots need matplotlib (``pip install hdbo[plots]``); it is imported only when plotting and
used through its object API with the Agg canvas, so no global backend is changed. Without
matplotlib the report has the tables and a note.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from .spec import ReferenceValue
from .store import EvaluationArrays, RunRecord, RunStore, hdbo_version

__all__ = ["GroupSummary", "run_curves", "aggregate", "mean_se", "format_mean_se", "render_markdown", "write_report"]


def run_curves(ev: EvaluationArrays) -> dict[str, NDArray[np.float64]]:
    """Per-evaluation curves of one run, each of shape (n,), NaN before the first success.

    Returns
    -------
    dict
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
    """Mean and standard error (``std(ddof=1) / sqrt(n)``) of the finite values; NaN if none.

    The standard error of a single value is NaN.
    """
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return math.nan, math.nan
    se = float(np.std(v, ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan
    return float(np.mean(v)), se


def format_mean_se(mean: float, se: float) -> str:
    """``"0.123 ± 0.045"``, ``"0.123"`` without a standard error, ``"—"`` without a mean."""
    if not math.isfinite(mean):
        return "—"
    if not math.isfinite(se):
        return f"{mean:.4g}"
    return f"{mean:.4g} ± {se:.2g}"


@dataclass
class GroupSummary:
    """Aggregate of the finished runs of one (experiment, problem, method label, budget).

    Attributes
    ----------
    experiment, problem, problem_label, method, label : str
    budget : int
    n_runs : int
    run_ids : list of int
    simple_regret, avg_regret, best_f : (float, float)
        Mean and standard error over runs of the final ``S_T``, ``R_T / T`` and best ``f``
        (NaN when unknown, e.g. a problem without a known optimum).
    sec_per_eval : float
        Median over all evaluations of ask + objective seconds.
    wall_seconds : float
        Mean over runs of the total wall seconds of a run.
    n_failed_evals : int
        Failed evaluations over all runs.
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
    simple_regret: tuple[float, float] = (math.nan, math.nan)
    avg_regret: tuple[float, float] = (math.nan, math.nan)
    best_f: tuple[float, float] = (math.nan, math.nan)
    sec_per_eval: float = math.nan
    wall_seconds: float = math.nan
    n_failed_evals: int = 0
    curves: dict[str, NDArray[np.float64]] = field(default_factory=dict)

    def metric(self, name: str) -> tuple[float, float]:
        """Mean and SE of ``"simple_regret"``, ``"avg_regret"`` or ``"best_f"``."""
        return {"simple_regret": self.simple_regret, "avg_regret": self.avg_regret, "best_f": self.best_f}[name]


def aggregate(
    store: RunStore,
    *,
    experiment: str | None = None,
    run_ids: Iterable[int] | None = None,
) -> list[GroupSummary]:
    """Group the finished runs of ``store`` and compute their summaries.

    Parameters
    ----------
    store : RunStore
    experiment : str, optional
        Only this experiment.
    run_ids : iterable of int, optional
        Only these runs.

    Returns
    -------
    list of GroupSummary
        Ordered by experiment, then problem and method in order of first appearance.
    """
    runs = store.list_runs(experiment=experiment, status="finished", ids=None if run_ids is None else list(run_ids))
    groups: dict[tuple[str, str, str, int], list[RunRecord]] = {}
    for run in runs:
        c = run.config
        groups.setdefault((c.experiment, c.problem_label, c.label, c.budget), []).append(run)
    out: list[GroupSummary] = []
    for (exp, plabel, label, budget), members in groups.items():
        c0 = members[0].config
        g = GroupSummary(exp, c0.problem, plabel, c0.method, label, budget)
        per_run: dict[str, list[NDArray[np.float64]]] = {"simple_regret": [], "avg_regret": [], "best_f": []}
        seconds: list[NDArray[np.float64]] = []
        for run in members:
            ev = store.load_evaluations(run.id)
            curves = run_curves(ev)
            for k, v in curves.items():
                padded = np.full(budget, np.nan)
                padded[: min(v.size, budget)] = v[:budget]
                per_run[k].append(padded)
            seconds.append(ev.ask_seconds + ev.eval_seconds)
            g.n_failed_evals += int(ev.failed.sum())
            g.run_ids.append(run.id)
        g.n_runs = len(members)
        g.curves = {k: np.vstack(v) for k, v in per_run.items()}
        g.simple_regret = mean_se(g.curves["simple_regret"][:, -1])
        g.avg_regret = mean_se(g.curves["avg_regret"][:, -1])
        g.best_f = mean_se(g.curves["best_f"][:, -1])
        allsec = np.concatenate(seconds) if seconds else np.array([])
        g.sec_per_eval = float(np.median(allsec)) if allsec.size else math.nan
        g.wall_seconds = float(np.mean([run.wall_seconds for run in members]))
        out.append(g)
    order = {e: i for i, e in enumerate(sorted({g.experiment for g in out}))}
    out.sort(key=lambda g: order[g.experiment])  # stable: keeps first-appearance order inside
    return out


# ---------------------------------------------------------------------------- markdown
_METRIC_TITLES = {"simple_regret": "simple regret S_T", "avg_regret": "R_T/T", "best_f": "best f"}


def _slug(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    return s or "x"


def _fmt_seconds(s: float) -> str:
    return "—" if not math.isfinite(s) else f"{s:.3g}"


def render_markdown(
    groups: Sequence[GroupSummary],
    *,
    title: str,
    source: str = "",
    descriptions: Mapping[str, str] | None = None,
    references: Mapping[str, Sequence[ReferenceValue]] | None = None,
    figures: Mapping[tuple[str, str, int], str] | None = None,
    notes: Sequence[str] = (),
) -> str:
    """Markdown text of a report (see :func:`write_report`)."""
    descriptions = descriptions or {}
    references = references or {}
    figures = figures or {}
    lines = [f"# {title}", ""]
    meta = f"Generated {time.strftime('%Y-%m-%d %H:%M')} by hdbo {hdbo_version()}"
    lines += [meta + (f" from `{source}`." if source else "."), ""]
    lines += [
        "Regret is `r_t = f* - f(x_t)` from the noise-free objective; simple regret `S_T = min_t r_t`; "
        "average regret `R_T/T`. Values are mean ± standard error over runs (seeds); failed "
        "evaluations count against the budget but not in these statistics. "
        "`s/eval` is the median time of one ask plus one objective evaluation.",
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
        by_problem: dict[tuple[str, int], list[GroupSummary]] = {}
        for g in exp_groups:
            by_problem.setdefault((g.problem_label, g.budget), []).append(g)
        for (plabel, budget), pgroups in by_problem.items():
            lines += [f"### {plabel} (T = {budget})", ""]
            lines += [
                "| method | runs | T | simple regret S_T | R_T/T | best f | s/eval | failed evals |",
                "|---|---:|---:|---:|---:|---:|---:|---:|",
            ]
            for g in pgroups:
                lines.append(
                    f"| {g.label} | {g.n_runs} | {g.budget} | {format_mean_se(*g.simple_regret)} | "
                    f"{format_mean_se(*g.avg_regret)} | {format_mean_se(*g.best_f)} | "
                    f"{_fmt_seconds(g.sec_per_eval)} | {g.n_failed_evals} |"
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
                    our = format_mean_se(*g.metric(r.metric)) if g else "not run"
                    lines.append(
                        f"| {r.method} | {_METRIC_TITLES[r.metric]} | {r.value:.4g} | "
                        f"{r.budget if r.budget is not None else '—'} | {our} | {g.budget if g else '—'} | "
                        f"{r.note.replace('|', '/')} |"
                    )
                lines.append("")
            fig = figures.get((exp, plabel, budget))
            if fig:
                lines += [f"![{exp}: {plabel}]({fig})", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------- plots
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
    fig.savefig(path, dpi=110)


def write_report(
    store: RunStore,
    out: str | Path,
    *,
    experiment: str | None = None,
    run_ids: Iterable[int] | None = None,
    title: str | None = None,
    descriptions: Mapping[str, str] | None = None,
    references: Mapping[str, Sequence[ReferenceValue]] | None = None,
    plots: bool = True,
) -> Path:
    """Write a markdown report of the finished runs, with one PNG per problem next to it.

    Parameters
    ----------
    store : RunStore
    out : str or Path
        Markdown file to write (parent folders are created). Figures are written beside
        it as ``<stem>-<experiment>-<problem>-T<budget>.png`` and linked relatively.
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
    plots : bool, default True
        Write PNG figures (skipped with a note when matplotlib is not installed).

    Returns
    -------
    Path
        The markdown file.
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    ids = None if run_ids is None else list(run_ids)
    groups = aggregate(store, experiment=experiment, run_ids=ids)
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
            by_problem: dict[tuple[str, str, int], list[GroupSummary]] = {}
            for g in groups:
                by_problem.setdefault((g.experiment, g.problem_label, g.budget), []).append(g)
            for key, pgroups in by_problem.items():
                exp, plabel, budget = key
                name = f"{_slug(out.stem)}-{_slug(exp)}-{_slug(plabel)}-T{budget}.png"
                _plot_problem(pgroups, out.parent / name, f"{exp}: {plabel}")
                figures[key] = name
    text = render_markdown(
        groups,
        title=title or "hdbo report",
        source=Path(store.path).name if store.path != ":memory:" else "",
        descriptions=descriptions,
        references=references,
        figures=figures,
        notes=notes,
    )
    out.write_text(text + "\n", encoding="utf-8")
    return out
