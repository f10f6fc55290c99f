"""The index of the reproductions: every reported result of the five papers next to ours.

``experiments/table_z.toml`` lists the rows of SPEC.md's table Z (every number and claim the
five papers report) and, for each, the spec ``[[reference]]`` s and ``[[claim]]`` s that cover
it, or a status saying why no experiment of ours can (a theorem, a real-world task, ...).
:func:`write_index` reads that table, the specs and the committed run summaries
(``docs/reproductions/summaries/*.csv.gz``) and writes one markdown page
(``docs/reproductions/README.md``; ``hdbo reproductions-index``) with, per paper, every row of
table Z beside our number, the scale it was run at, a verdict and a link to the report.

Only summary runs whose ``config`` id equals the id of a run the spec asks for now
(:func:`~hdbo.experiments.summary.config_id` of :meth:`ExperimentSpec.run_configs`) count;
runs of an older version of a spec are listed as stale and left out. For each reference or
claim the full scale is used when it has runs of every problem and method involved, else the
quick scale when that does, else whichever has any runs (full first); the page says which.

Verdicts
--------
*Numbers* (a ``[[reference]]``): ours is the mean ± standard error over our finished runs of
the reference's metric, at the reference's ``at`` evaluation when it has one, else at the end
of the runs. It is **consistent** with the paper's value ``p`` when
``|ours - p| <= max(2 sqrt(se_ours^2 + se_paper^2), 0.1 |p|)`` (``se_paper`` only where the
paper states a standard error, from ``paper_se`` in the table), else ours is **higher/lower
by X %** (relative to ``p``; the absolute difference when ``p = 0``). With fewer than
:data:`~hdbo.experiments.report.MIN_RUNS` runs it is **not testable**; with runs shorter than
the spec's full-scale budget (the paper's setting) it is **not compared**.

*Claims*: the verdict of :func:`~hdbo.experiments.report.check_claims` (held significantly /
in direction only, not held, not testable below 3 runs, no data); a verdict from runs
shorter than the full-scale budget is shown but counted apart, as indicative only.

*Rows*: a row **agrees** when every part of it has a verdict and all agree (consistent or
held), **disagrees** when some part has a verdict that does not, is **partly checked** when
the parts with a verdict agree and others have none yet; otherwise it takes the first of
"only at a reduced budget", "not testable", "no data", "not run" that one of its parts has.
A row with a ``status`` gets that status. The summary table also counts, among the rows that
agree, those with a claim held in direction only (the right sign, not significant).
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from .report import MIN_RUNS, ClaimCheck, GroupSummary, aggregate, check_claims, format_mean_se, trend_numbers
from .spec import (
    DIAG_PREFIX, Claim, ExperimentSpec, ReferenceValue, default_specs_dir, find_specs, load_spec, _read_toml,
)
from .summary import SummaryRun, config_id, read_summary

__all__ = [
    "PAPERS",
    "STATUSES",
    "REL_TOLERANCE",
    "RefItem",
    "ClaimItem",
    "ZRow",
    "load_table",
    "load_paper_specs",
    "resolve_table",
    "number_verdict",
    "build_index",
    "write_index",
]

#: The spec sets of table Z's papers, in table order: name -> (SPEC.md label, title).
#: Spec sets that check the papers' results on other tasks (the real-world substitutes of
#: issue 22): their specs are loaded with the papers' so table Z can name them and their runs
#: in the committed summaries count (they are not stale).
EXTRA_SETS: tuple[str, ...] = ("realworld",)

PAPERS: dict[str, tuple[str, str]] = {
    "djolonga2013": ("P1 SI-BO", "Djolonga, Krause, Cevher (NIPS 2013): SI-BO"),
    "chen2012": ("P2 HDS", "Chen, Castro, Krause (ICML 2012): HDS"),
    "tranthe2020": ("P3 MS-UCB", "Tran-The, Gupta, Rana, Venkatesh (AAAI 2020): MS-UCB"),
    "li2016": ("P4 RPP", "Li, Kandasamy, Poczos, Schneider (AISTATS 2016): RPP-GP-UCB"),
    "kandasamy2015": ("P5 Add", "Kandasamy, Schneider, Poczos (ICML 2015): Add-GP-UCB"),
}
#: Statuses of rows no experiment of ours covers -> the summary column they are counted in.
STATUSES: dict[str, str] = {
    "theory": "not an experiment",
    "no number": "not an experiment",
    "real-world task": "no spec yet",
    "not in a spec": "no spec yet",
}
#: Relative tolerance of the number verdict (10 % of the paper's value).
REL_TOLERANCE = 0.1
SCALE_ORDER = ("full", "quick")

# Row categories, in the order of the summary table's columns.
AGREE, DISAGREE, PARTLY = "agrees", "disagrees", "partly checked"
REDUCED, UNTESTABLE, NO_DATA, NOT_RUN = "only at a reduced budget", "not testable", "no data", "not run"
_NO_VERDICT_ORDER = (REDUCED, UNTESTABLE, NO_DATA, NOT_RUN)


# ---------------------------------------------------------------------------- the table
@dataclass(frozen=True)
class RefItem:
    """A spec ``[[reference]]`` named by table Z.

    Attributes
    ----------
    experiment, problem, method, metric : str
        Experiment (spec) name, problem and method labels and metric, as in the spec.
    budget : int or None
        The paper's ``T`` (the reference's ``budget``); None matches a reference without one
        or the only reference of that problem, method and metric.
    paper_se : float or None
        The paper's standard error, where the paper states one.
    fallback : RefItem or None
        Another reference of the same number, used when this one has no runs at any scale.
    """

    experiment: str
    problem: str
    method: str
    metric: str
    budget: int | None = None
    paper_se: float | None = None
    fallback: "RefItem | None" = None


@dataclass(frozen=True)
class ClaimItem:
    """A spec ``[[claim]]`` named by table Z (experiment name and the claim's text)."""

    experiment: str
    text: str


@dataclass(frozen=True)
class ZRow:
    """One row of table Z and how our experiments cover it.

    Attributes
    ----------
    z : int
        Position in table Z (1-based).
    paper : str
        A key of :data:`PAPERS`.
    what, reported : str
        What the row is about and what the paper reports.
    references : tuple of RefItem
    claims : tuple of ClaimItem
    uncovered : str
        Parts of the row that no reference or claim checks ("" if none).
    status, reason : str
        For a row no experiment covers: a key of :data:`STATUSES` and why ("" otherwise).
    """

    z: int
    paper: str
    what: str
    reported: str
    references: tuple[RefItem, ...] = ()
    claims: tuple[ClaimItem, ...] = ()
    uncovered: str = ""
    status: str = ""
    reason: str = ""


def _text(entry: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> str:
    value = entry.get(key, None if required else "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise ValueError(f"{where}: {key!r} must be a non-empty string, got {value!r}")
    return value


def _keys(entry: Any, where: str, allowed: tuple[str, ...]) -> Mapping[str, Any]:
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: expected a table, got {type(entry).__name__}")
    unknown = [k for k in entry if k not in allowed]
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r} (valid keys: {', '.join(allowed)})")
    return entry


def _ref_item(entry: Any, where: str) -> RefItem:
    entry = _keys(entry, where, ("experiment", "problem", "method", "metric", "budget", "paper_se", "fallback"))
    budget = entry.get("budget")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0):
        raise ValueError(f"{where}: 'budget' must be an integer > 0, got {budget!r}")
    se = entry.get("paper_se")
    if se is not None and (isinstance(se, bool) or not isinstance(se, (int, float)) or not se >= 0):
        raise ValueError(f"{where}: 'paper_se' must be a number >= 0, got {se!r}")
    fallback = _ref_item(entry["fallback"], f"{where}.fallback") if "fallback" in entry else None
    return RefItem(
        experiment=_text(entry, "experiment", where), problem=_text(entry, "problem", where),
        method=_text(entry, "method", where), metric=_text(entry, "metric", where), budget=budget,
        paper_se=None if se is None else float(se), fallback=fallback,
    )


def load_table(path: str | Path) -> list[ZRow]:
    """Read ``table_z.toml``.

    Parameters
    ----------
    path : str or Path
        The table file.

    Returns
    -------
    list of ZRow
        In table order.

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist.
    ValueError
        Not valid TOML, or an entry is malformed: an unknown key or paper, ``z`` not 1, 2, ...
        in order, a row with both a status and references/claims or with neither, an unknown
        status (the message names the file and the row).
    """
    path = Path(path)
    data = _read_toml(path, ValueError)
    _keys(data, str(path), ("row",))
    entries = data.get("row", [])
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{path}: expected [[row]] entries")
    rows: list[ZRow] = []
    for i, entry in enumerate(entries):
        where = f"{path}: row[{i}]"
        entry = _keys(entry, where, ("z", "paper", "what", "reported", "references", "claims", "uncovered",
                                     "status", "reason"))
        if entry.get("z") != i + 1:
            raise ValueError(f"{where}: 'z' must be {i + 1} (rows in table order), got {entry.get('z')!r}")
        paper = _text(entry, "paper", where)
        if paper not in PAPERS:
            raise ValueError(f"{where}: unknown paper {paper!r} (valid: {', '.join(PAPERS)})")
        refs = entry.get("references", [])
        claims = entry.get("claims", [])
        if not isinstance(refs, list) or not isinstance(claims, list):
            raise ValueError(f"{where}: 'references' and 'claims' must be arrays of tables")
        status = _text(entry, "status", where, required=False)
        reason = _text(entry, "reason", where, required=False)
        if status:
            if status not in STATUSES:
                raise ValueError(f"{where}: unknown status {status!r} (valid: {', '.join(STATUSES)})")
            if refs or claims:
                raise ValueError(f"{where}: a row with a status has no references or claims")
            if not reason.strip():
                raise ValueError(f"{where}: a row with a status needs a 'reason'")
        elif not refs and not claims:
            raise ValueError(f"{where}: give references and/or claims, or a status with a reason")
        rows.append(ZRow(
            z=i + 1, paper=paper, what=_text(entry, "what", where), reported=_text(entry, "reported", where),
            references=tuple(_ref_item(r, f"{where}.references[{j}]") for j, r in enumerate(refs)),
            claims=tuple(
                ClaimItem(_text(_keys(c, f"{where}.claims[{j}]", ("experiment", "text")), "experiment", where),
                          _text(c, "text", where))
                for j, c in enumerate(claims)
            ),
            uncovered=_text(entry, "uncovered", where, required=False), status=status, reason=reason,
        ))
    return rows


def load_paper_specs(specs_dir: str | Path | None = None) -> dict[str, ExperimentSpec]:
    """Every spec of the papers of :data:`PAPERS` and of :data:`EXTRA_SETS`, by experiment name.

    Parameters
    ----------
    specs_dir : str or Path, optional
        Folder of the spec sets (default :func:`~hdbo.experiments.spec.default_specs_dir`).
        A paper without specs there is skipped.

    Returns
    -------
    dict of str -> ExperimentSpec
        The base specs (no scale applied).

    Raises
    ------
    SpecError
        A spec does not parse.
    ValueError
        Two specs use the same experiment name.
    """
    out: dict[str, ExperimentSpec] = {}
    for paper in (*PAPERS, *EXTRA_SETS):
        try:
            paths = find_specs(paper, specs_dir)
        except ValueError:
            continue
        for path in paths:
            spec = load_spec(path)
            if spec.name in out:
                raise ValueError(f"experiment name {spec.name!r} is used by {out[spec.name].path} and {path}")
            out[spec.name] = spec
    return out


def _find_reference(item: RefItem, specs: Mapping[str, ExperimentSpec]) -> ReferenceValue:
    spec = specs.get(item.experiment)
    if spec is None:
        raise ValueError(f"no spec named {item.experiment!r} (specs: {', '.join(sorted(specs))})")
    found = [
        r for r in spec.references
        if (r.problem, r.method, r.metric) == (item.problem, item.method, item.metric)
        and (item.budget is None or r.budget == item.budget)
    ]
    what = f"{item.experiment}: [[reference]] problem {item.problem!r}, method {item.method!r}, metric {item.metric!r}"
    what += f", budget {item.budget}" if item.budget is not None else ""
    if not found:
        raise ValueError(f"{what}: no such reference in {spec.path or spec.name}")
    if len(found) > 1 and item.budget is None:  # no budget named: the reference without one
        found = [r for r in found if r.budget is None] or found
    if len(found) > 1:
        raise ValueError(f"{what}: {len(found)} references match; give the 'budget' that tells them apart")
    return found[0]


def _find_claim(item: ClaimItem, specs: Mapping[str, ExperimentSpec]) -> Claim:
    spec = specs.get(item.experiment)
    if spec is None:
        raise ValueError(f"no spec named {item.experiment!r} (specs: {', '.join(sorted(specs))})")
    found = [c for c in spec.claims if c.text == item.text]
    if len(found) != 1:
        what = "no claim" if not found else f"{len(found)} claims"
        raise ValueError(f"{item.experiment}: {what} with the text {item.text!r} in {spec.path or spec.name}")
    return found[0]


def resolve_table(rows: Sequence[ZRow], specs: Mapping[str, ExperimentSpec]) -> None:
    """Check that every reference and claim the table names exists in the specs.

    Parameters
    ----------
    rows : sequence of ZRow
        From :func:`load_table`.
    specs : mapping of str -> ExperimentSpec
        From :func:`load_paper_specs`.

    Raises
    ------
    ValueError
        A named spec, reference or claim does not exist (or a reference is ambiguous), or an
        item names a spec of another paper; the message names the row.
    """
    for row in rows:
        items: list[RefItem | ClaimItem] = []
        for ref in row.references:
            items += [ref] + ([ref.fallback] if ref.fallback else [])
        items += list(row.claims)
        for item in items:
            try:
                if isinstance(item, RefItem):
                    _find_reference(item, specs)
                else:
                    _find_claim(item, specs)
                spec = specs[item.experiment]
                own = spec.path is None or row.paper in (spec.path.parent.name, spec.path.stem)
                # a set of EXTRA_SETS checks several papers: its spec names the paper it checks
                extra = spec.path is not None and spec.path.parent.name in EXTRA_SETS and row.paper in spec.name
                if not (own or extra):
                    raise ValueError(f"{item.experiment} is a spec of {spec.path.parent.name}, not of {row.paper}")
            except ValueError as exc:
                raise ValueError(f"table Z row {row.z}: {exc}") from None


# ---------------------------------------------------------------------------- runs
@dataclass
class _SourceFile:
    """What one summary file held."""

    name: str
    sha256: str
    runs: int = 0
    finished: int = 0
    matched: dict[tuple[str, str], int] = field(default_factory=dict)  # (experiment, scale) -> runs
    duplicates: int = 0
    stale: int = 0


class _RunPool:
    """Finished summary runs by spec and scale, matched by config id."""

    def __init__(self, specs: Mapping[str, ExperimentSpec], summaries: Sequence[Path]) -> None:
        self.specs = specs
        self.ids: dict[tuple[str, str], set[str]] = {}
        for name, spec in specs.items():
            for scale in SCALE_ORDER:
                self.ids[(name, scale)] = {config_id(c) for c in spec.run_configs(scale)}
        wanted = {cid: key for key, ids in self.ids.items() for cid in ids}
        self.by_config: dict[str, SummaryRun] = {}
        self.sources: list[_SourceFile] = []
        for path in summaries:
            data = path.read_bytes()
            src = _SourceFile(path.name, hashlib.sha256(data).hexdigest()[:12])
            for run in read_summary(path):
                src.runs += 1
                src.finished += run.status == "finished"
                if not run.config or run.config not in wanted:
                    src.stale += 1
                    continue
                for key, ids in self.ids.items():
                    if run.config in ids:
                        src.matched[key] = src.matched.get(key, 0) + 1
                old = self.by_config.get(run.config)
                if old is not None:
                    src.duplicates += 1
                    if old.status == "finished" or run.status != "finished":
                        continue  # the first finished copy counts
                self.by_config[run.config] = run
            self.sources.append(src)
        self._groups: dict[tuple[str, str], dict[tuple[str, str], GroupSummary]] = {}

    def groups(self, experiment: str, scale: str) -> dict[tuple[str, str], GroupSummary]:
        """(problem label, method label) -> group of the spec's runs at ``scale``."""
        key = (experiment, scale)
        if key not in self._groups:
            runs = [r for cid, r in self.by_config.items() if cid in self.ids.get(key, set())]
            self._groups[key] = {(g.problem_label, g.label): g for g in aggregate(None, summary_runs=runs)}
        return self._groups[key]


@dataclass(frozen=True)
class _ScaleUse:
    """Which runs an item was judged on."""

    scale: str
    experiment: str
    runs: tuple[int, int]  # fewest and most finished runs of a needed (problem, method)
    seeds: int  # runs per (problem, method) the spec asks for at the scale
    budget: int  # T at the scale
    full_budget: int  # T of the full scale (the paper's setting)
    pairs: tuple[int, int]  # needed (problem, method) pairs with runs, of all needed
    other: str = ""  # what the other scale holds, when not used

    def text(self) -> str:
        lo, hi = self.runs
        runs = f"{lo}" if lo == hi else f"{lo}–{hi}"
        out = f"{self.scale} ({self.experiment}): {runs} of {self.seeds} runs, T = {self.budget}"
        if self.pairs[0] < self.pairs[1]:
            out += f", {self.pairs[0]} of {self.pairs[1]} problem/method pairs run"
        if self.budget < self.full_budget:
            out += f", below the paper's T = {self.full_budget}"
        if self.other:
            out += f" ({self.other})"
        return out


def _choose_scale(pool: _RunPool, experiment: str, need: Sequence[tuple[str, str]]) -> _ScaleUse | None:
    """The scale to judge an item on: full if it has runs of every needed pair, else quick if
    that does, else whichever has any (full first); None without runs."""
    spec = pool.specs[experiment]
    have = {s: [k for k in need if k in pool.groups(experiment, s)] for s in SCALE_ORDER}
    complete = [s for s in SCALE_ORDER if have[s] and len(have[s]) == len(need)]
    partial = [s for s in SCALE_ORDER if have[s]]
    chosen = (complete or partial or [None])[0]
    if chosen is None:
        return None
    groups = pool.groups(experiment, chosen)
    counts = [groups[k].n_runs for k in have[chosen]]
    # the other scale's runs, when it has some that are not runs of the chosen scale as well (a quick
    # scale that only takes fewer seeds asks for a subset of the full scale's runs)
    other = [s for s in partial if s != chosen and not pool.ids[(experiment, s)] <= pool.ids[(experiment, chosen)]]
    note = ""
    if other:
        o = other[0]
        note = f"the {o} scale has runs too: {len(have[o])} of {len(need)} pairs"
    at = spec.at_scale(chosen)
    return _ScaleUse(chosen, experiment, (min(counts), max(counts)), len(at.seeds), at.budget,
                     spec.at_scale("full").budget, (len(have[chosen]), len(need)), note)


# ---------------------------------------------------------------------------- verdicts
_SHORT = {"simple_regret": "S_T", "avg_regret": "R_T/T", "best_f": "best f", "log10_simple_regret": "log10 S_T"}


def _short(metric: str) -> str:
    return _SHORT.get(metric, metric[len(DIAG_PREFIX):] if metric.startswith(DIAG_PREFIX) else metric)


def number_verdict(ours: float, se: float, paper: float, paper_se: float | None = None) -> tuple[bool, str]:
    """Whether our mean agrees with the paper's number, by the rule of the index.

    Parameters
    ----------
    ours, se : float
        Our mean and its standard error (NaN standard error counts as 0).
    paper : float
        The paper's value.
    paper_se : float, optional
        The paper's standard error, where the paper states one.

    Returns
    -------
    (bool, str)
        ``(True, "consistent")`` when ``|ours - paper| <= max(2 sqrt(se^2 + paper_se^2),
        0.1 |paper|)``, else ``(False, "ours higher by 25%")`` (relative to ``paper``; the
        absolute difference when ``paper`` is 0).

    Raises
    ------
    ValueError
        ``ours`` or ``paper`` is not finite.

    Examples
    --------
    >>> number_verdict(105.0, 2.0, 103.9, 1.9)
    (True, 'consistent')
    >>> number_verdict(150.0, 5.0, 100.0)
    (False, 'ours higher by 50%')
    """
    if not (math.isfinite(ours) and math.isfinite(paper)):
        raise ValueError(f"ours and paper must be finite, got ours={ours!r}, paper={paper!r}")
    se = se if math.isfinite(se) else 0.0
    pse = paper_se or 0.0
    diff = ours - paper
    if abs(diff) <= max(2.0 * math.sqrt(se**2 + pse**2), REL_TOLERANCE * abs(paper)):
        return True, "consistent"
    way = "higher" if diff > 0 else "lower"
    if paper == 0:
        return False, f"ours {way} by {abs(diff):.3g} (paper 0)"
    return False, f"ours {way} by {100 * abs(diff) / abs(paper):.0f}%"


@dataclass(frozen=True)
class _ItemResult:
    label: str
    ours: str
    category: str  # AGREE / DISAGREE / REDUCED / UNTESTABLE / NO_DATA / NOT_RUN
    verdict: str
    use: _ScaleUse | None


def _ref_label(item: RefItem) -> str:
    return f"{item.method} on {item.problem}, {_short(item.metric)}" + (
        f", T = {item.budget}" if item.budget is not None else "")


def _judge_reference(item: RefItem, pool: _RunPool, *, _primary: RefItem | None = None) -> _ItemResult:
    """Our number against one reference (``_primary``: the reference ``item`` is the fallback of)."""
    ref = _find_reference(item, pool.specs)
    label = _ref_label(_primary if _primary is not None else item)
    paper = f"{ref.value:g}" + (f" ± {item.paper_se:g}" if item.paper_se is not None else "")
    use = _choose_scale(pool, item.experiment, [(item.problem, item.method)])
    if use is None:
        if item.fallback is not None:
            return _judge_reference(item.fallback, pool, _primary=item)
        return _ItemResult(label, f"paper {paper}", NOT_RUN, "not run", None)
    group = pool.groups(item.experiment, use.scale)[(item.problem, item.method)]
    reduced = use.budget < use.full_budget
    if ref.at is not None and ref.at <= use.budget:
        mean, se = group.metric_at(ref.metric, ref.at)
        reduced = False
        where = f" at t = {ref.at}"
    else:
        mean, se = group.metric(ref.metric)
        where = ""
    if _primary is not None:
        where += f" ({item.experiment})"
    ours = f"paper {paper}; ours {format_mean_se(mean, se)}{where}"
    if group.n_runs < MIN_RUNS:
        return _ItemResult(label, ours, UNTESTABLE, f"not testable ({group.n_runs} run"
                           f"{'s' if group.n_runs != 1 else ''}, fewer than {MIN_RUNS})", use)
    if not math.isfinite(mean):
        return _ItemResult(label, ours, NO_DATA, "no data (metric unknown)", use)
    if reduced:
        return _ItemResult(label, ours, REDUCED,
                           f"not compared: T = {use.budget} is below the paper's T = {use.full_budget}", use)
    ok, text = number_verdict(mean, se, ref.value, item.paper_se)
    return _ItemResult(label, ours, AGREE if ok else DISAGREE, text, use)


def _claim_needs(claim: Claim) -> list[tuple[str, str]]:
    others = list(claim.than) if claim.than is not None else list(claim.others)
    return [(p, m) for p in claim.problems for m in [claim.method, *others]]


def _claim_numbers(check: ClaimCheck) -> str:
    """``S_T: A 1.2 ± 0.1 vs B 3.4 ± 0.2 (sig.)``, per problem when there are several."""
    if check.claim.kind == "trend":
        return trend_numbers(check, sep="; ")
    parts = []
    for problem in check.claim.problems:
        comps = [c for c in check.comparisons if c.problem == problem]
        if not comps:
            continue
        versus = ", ".join(
            f"{c.other} {format_mean_se(c.other_mean, c.other_se)} "
            f"({'no SE' if not math.isfinite(c.se_diff) else 'sig.' if c.significant else 'n.s.'})"
            for c in comps
        )
        head = f"{problem}: " if len(check.claim.problems) > 1 else ""
        parts.append(f"{head}{comps[0].method} {format_mean_se(comps[0].mean, comps[0].se)} vs {versus}")
    if check.missing:
        parts.append("missing: " + ", ".join(check.missing))
    return f"{_short(check.claim.metric)}: " + "; ".join(parts)


def _judge_claim(item: ClaimItem, pool: _RunPool) -> _ItemResult:
    claim = _find_claim(item, pool.specs)
    label = f"“{claim.text}” ({item.experiment})"
    use = _choose_scale(pool, item.experiment, _claim_needs(claim))
    if use is None:
        return _ItemResult(label, "", NOT_RUN, "not run", None)
    groups = list(pool.groups(item.experiment, use.scale).values())
    checks = check_claims(groups, [claim], experiment=item.experiment)
    check = checks[0]  # the runs of one scale have one budget
    numbers = _claim_numbers(check)
    if check.result == "no data":
        if any("unknown" not in m for m in check.missing):  # a compared method has no runs at this scale
            return _ItemResult(label, f"{use.pairs[0]} of {use.pairs[1]} problem/method pairs have runs",
                               NOT_RUN, "not run", use)
        return _ItemResult(label, numbers, NO_DATA, "no data", use)
    if check.result == "not testable":
        return _ItemResult(label, numbers, UNTESTABLE, f"not testable (fewer than {MIN_RUNS} runs)", use)
    if use.budget < use.full_budget:
        return _ItemResult(label, numbers, REDUCED,
                           f"{check.verdict} at T = {use.budget}, below the paper's T = {use.full_budget} "
                           "(indicative only)", use)
    return _ItemResult(label, numbers, AGREE if check.result == "held" else DISAGREE, check.verdict, use)


def _row_category(items: Sequence[_ItemResult]) -> str:
    cats = [i.category for i in items]
    if all(c == AGREE for c in cats):
        return AGREE
    if DISAGREE in cats:
        return DISAGREE
    if AGREE in cats:
        return PARTLY
    return next(c for c in _NO_VERDICT_ORDER if c in cats)


def _row_verdict(category: str, items: Sequence[_ItemResult]) -> str:
    """The verdict cell: the row's category, then the item's verdict or the count of each item verdict."""
    if len(items) == 1:
        detail = items[0].verdict
        if detail.startswith(category):  # "not testable (2 runs, fewer than 3)" -> "2 runs, fewer than 3"
            detail = detail[len(category):].strip()
            if detail.startswith("(") and detail.endswith(")"):
                detail = detail[1:-1]
    else:
        counts: dict[str, int] = {}
        for i in items:
            counts[i.category] = counts.get(i.category, 0) + 1
        words = {AGREE: "agree", DISAGREE: "disagree"}
        detail = "" if len(counts) == 1 else f"{len(items)} parts: " + ", ".join(
            f"{k} {words.get(c, c)}" for c, k in counts.items())
    return f"**{category}**" + (f": {_cell(detail)}" if detail else "")


# ---------------------------------------------------------------------------- markdown
def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _anchor(heading: str) -> str:
    """GitHub's anchor of a markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


#: Column of the summary table: rows that agree with at least one claim held in direction only.
_DIRECTION_ONLY = "of which a claim only in direction"

_COLUMNS = ("Z rows", "with a verdict", AGREE, _DIRECTION_ONLY, DISAGREE, PARTLY, REDUCED, UNTESTABLE, NO_DATA, NOT_RUN,
            "no spec yet", "not an experiment")


def build_index(
    rows: Sequence[ZRow],
    specs: Mapping[str, ExperimentSpec],
    summaries: Sequence[str | Path],
    *,
    reports_dir: str | Path | None = None,
    summaries_label: str = "summaries",
) -> str:
    """The markdown text of the index page.

    Parameters
    ----------
    rows : sequence of ZRow
        Table Z (:func:`load_table`).
    specs : mapping of str -> ExperimentSpec
        The papers' specs by experiment name (:func:`load_paper_specs`).
    summaries : sequence of str or Path
        Summary files (``.csv.gz``) to read, in that order (the first finished copy of a run
        counts).
    reports_dir : str or Path, optional
        Folder of the reports ``<paper>.md`` (quick) and ``<paper>-full.md`` (full) to link
        (relative links; a report that does not exist there is not linked).
    summaries_label : str, default "summaries"
        How the page names the folder of the summaries.

    Returns
    -------
    str
        The page (ends with a newline). It holds no time stamp, so equal inputs give an equal
        page.

    Raises
    ------
    ValueError
        The table names something the specs do not have, or a summary is malformed.
    """
    resolve_table(rows, specs)
    pool = _RunPool(specs, [Path(p) for p in summaries])
    reports = Path(reports_dir) if reports_dir is not None else None

    per_paper: dict[str, list[tuple[ZRow, str, list[_ItemResult]]]] = {p: [] for p in PAPERS}
    for row in rows:
        if row.status:
            per_paper[row.paper].append((row, STATUSES[row.status], []))
            continue
        items = [_judge_reference(r, pool) for r in row.references] + [_judge_claim(c, pool) for c in row.claims]
        per_paper[row.paper].append((row, _row_category(items), items))

    lines = [
        "# Reproductions: every reported result of the five papers, next to ours",
        "",
        "Generated by `hdbo reproductions-index` (`hdbo/experiments/index.py`) from `experiments/table_z.toml` "
        "(one entry per row of SPEC.md's table Z, in table order), the specs in `experiments/<paper>/` and the "
        f"run summaries listed under *Built from*. Do not edit this page: edit those and run the command again.",
        "",
        "## Summary",
        "",
        "Rows of table Z per paper, by verdict (definitions below). *With a verdict* = agrees + disagrees. "
        "*Of which a claim only in direction*: rows that agree, with at least one claim held in direction "
        "only (the right sign, not significant); the others agree on numbers and significant claims.",
        "",
        "| paper | " + " | ".join(_COLUMNS) + " |",
        "|---|" + "---:|" * len(_COLUMNS),
    ]
    totals = dict.fromkeys(_COLUMNS, 0)
    for paper, entries in per_paper.items():
        counts = dict.fromkeys(_COLUMNS, 0)
        counts["Z rows"] = len(entries)
        for _, cat, items in entries:
            counts[cat] += 1
            if cat == AGREE and any(i.verdict.startswith("held in direction only") for i in items):
                counts[_DIRECTION_ONLY] += 1
        counts["with a verdict"] = counts[AGREE] + counts[DISAGREE]
        for k in _COLUMNS:
            totals[k] += counts[k]
        lines.append(f"| [{PAPERS[paper][0]}](#{_anchor(_paper_heading(paper))}) | "
                     + " | ".join(str(counts[k]) for k in _COLUMNS) + " |")
    lines.append("| **all** | " + " | ".join(f"**{totals[k]}**" for k in _COLUMNS) + " |")
    lines += ["", *_diagnosis_lines(reports), *_rules_lines(), "", *_sources_lines(pool, summaries_label), ""]

    for paper, entries in per_paper.items():
        lines += [f"## {_paper_heading(paper)}", ""]
        lines += [
            "| Z | what the paper reports | paper | ours | scale | verdict | report |",
            "|---:|---|---|---|---|---|---|",
        ]
        for row, cat, items in entries:
            lines.append(_row_line(row, cat, items, reports, paper))
        if not entries:
            lines = lines[:-2] + ["No row of table Z."]
        lines.append("")
    lines += _outside_lines(rows, specs)
    return "\n".join(lines).rstrip("\n") + "\n"


def _diagnosis_lines(reports: Path | None) -> list[str]:
    """A section linking the diagnosis pages (``*-diagnosis.md``) next to the reports, if any."""
    pages = sorted(reports.glob("*-diagnosis.md")) if reports is not None and reports.is_dir() else []
    if not pages:
        return []
    lines = [
        "## Why results diverge",
        "",
        "Where a claim or number disagrees, these pages give the cause and the evidence (targeted runs, exact "
        "computations):",
        "",
    ]
    for page in pages:
        first = page.read_text(encoding="utf-8").split("\n", 1)[0]
        title = first[2:].strip() if first.startswith("# ") else page.stem
        lines.append(f"* [{title}]({page.name})")
    return lines + [""]


def _paper_heading(paper: str) -> str:
    label, title = PAPERS[paper]
    return f"{label}: {title.split(': ')[0]} ({paper})"


def _rules_lines() -> list[str]:
    return [
        "## How to read it",
        "",
        "* **ours**: mean ± standard error over our finished runs. Only runs of a committed summary whose "
        "config id equals that of a run the spec asks for now count (runs of an older spec are stale). "
        "Each number or claim is judged at the **full** scale when it has runs of every problem and method "
        "involved, else at the **quick** scale when that does, else at whichever has any runs (full first); "
        "the *scale* column says which, with the fewest–most finished runs of a problem/method against the "
        "runs the spec asks for, and T.",
        "* **numbers**: *consistent* when |ours − paper| ≤ max(2·√(SE_ours² + SE_paper²), 10 % of |paper|), "
        "SE_paper only where the paper gives a standard error (li2016's tables; chen2012's ± is undefined and "
        "not used); otherwise *ours higher/lower by X %* (relative to the paper's value; the absolute "
        f"difference when it is 0). *Not testable* with fewer than {MIN_RUNS} runs; *not compared* when our runs "
        "are shorter than the spec's full-scale T (the paper's setting), unless the spec reads the number at "
        "an evaluation they reach.",
        f"* **claims**: the report's verdict (`check_claims`): *held significantly* / *held in direction only* "
        f"/ *not held* / *not testable* (fewer than {MIN_RUNS} runs of a compared method) / *no data* (a "
        "compared method has no runs). A verdict from runs shorter than the full-scale T is shown as "
        "*indicative only* and counted under *only at a reduced budget*.",
        "* **rows**: *agrees* when every part has a verdict and all are consistent or held; *disagrees* when "
        "some part is not; *partly checked* when the parts with a verdict agree and the others have none yet; "
        "else the first of *only at a reduced budget*, *not testable*, *no data*, *not run* that a part has. "
        "*No spec yet*: a real-world task (waits for the offline substitutes) or an experiment no spec "
        "holds; *not an experiment*: a theorem, or nothing to compare with. *Not checked* in the first column "
        "names the parts of a row that no reference or claim covers.",
    ]


def _sources_lines(pool: _RunPool, label: str) -> list[str]:
    lines = ["## Built from", ""]
    if not pool.sources:
        return lines + [f"No summaries in `{label}/`: every row that needs runs says *not run*."]
    lines += [
        f"Summaries in `{label}/` (sha256 prefix; runs in the file; runs matching a current spec, by "
        "spec and scale, a run that both scales ask for counted under both; stale runs, which match no current "
        "spec and are left out):",
        "",
    ]
    for src in pool.sources:
        matched = ", ".join(f"{exp} {scale} {n}" for (exp, scale), n in sorted(src.matched.items())) or "none"
        extra = f"; {src.duplicates} duplicates of runs in earlier files" if src.duplicates else ""
        lines.append(f"* `{src.name}` ({src.sha256}): {src.runs} runs ({src.finished} finished); "
                     f"matching: {matched}; stale: {src.stale}{extra}.")
    return lines


def _row_line(row: ZRow, cat: str, items: Sequence[_ItemResult], reports: Path | None, paper: str) -> str:
    what = row.what + (f" — *not checked*: {row.uncovered}" if row.uncovered else "")
    if row.status:
        return (f"| {row.z} | {_cell(what)} | {_cell(row.reported)} | — | — | "
                f"**{_cell(row.status)}**: {_cell(row.reason)} | — |")
    ours = [f"{i.label}: {i.ours} → {i.verdict}" for i in items if i.category != NOT_RUN]
    idle = [i.label + (f": {i.ours}" if i.ours else "") for i in items if i.category == NOT_RUN]
    if idle:
        head = "not run: " if len(idle) == len(items) else f"{len(idle)} of {len(items)} parts not run: "
        ours.append(head + "; ".join(idle))
    scales = list(dict.fromkeys(i.use.text() for i in items if i.use is not None))
    if not scales:
        scales = ["not run at full or quick scale"]
    links = []
    for i in items:
        if i.use is None or reports is None:
            continue
        # a spec of an extra set (e.g. realworld-...) is reported under its set's name
        base = next((x for x in EXTRA_SETS if i.use.experiment.startswith(f"{x}-")), paper)
        name = base if i.use.scale == "quick" else f"{base}-full"
        page = reports / f"{name}.md"
        if page.is_file():
            # link the spec's section only when the report has one (a report of other seeds may not)
            has = f"\n## {i.use.experiment}\n" in page.read_text(encoding="utf-8")
            links.append(f"[{name}]({name}.md" + (f"#{_anchor(i.use.experiment)})" if has else ")"))
    return (f"| {row.z} | {_cell(what)} | {_cell(row.reported)} | " + "<br>".join(_cell(o) for o in ours)
            + " | " + "<br>".join(_cell(s) for s in scales) + f" | {_row_verdict(cat, items)} | "
            + ("<br>".join(dict.fromkeys(links)) or "—") + " |")


def _outside_lines(rows: Sequence[ZRow], specs: Mapping[str, ExperimentSpec]) -> list[str]:
    """The spec references and claims that no row of table Z names (listed, not judged here)."""
    named_refs = set()
    named_claims = set()
    for row in rows:
        for ref in row.references:
            for r in (ref, ref.fallback):
                if r is not None:
                    named_refs.add((r.experiment, id(_find_reference(r, specs))))
        for c in row.claims:
            named_claims.add((c.experiment, c.text))
    lines = ["## In the specs but in no row of table Z", "",
             "Checked in the reports, not here (the paper states them in its text, or they are ours):", ""]
    n = 0
    for name, spec in specs.items():
        extra = [f"reference {r.method} on {r.problem}, {_short(r.metric)} = {r.value:g}"
                 + (f" (T = {r.budget})" if r.budget else "")
                 for r in spec.references if (name, id(r)) not in named_refs]
        extra += [f"claim “{c.text}”" for c in spec.claims if (name, c.text) not in named_claims]
        for text in extra:
            lines.append(f"* {name}: {_cell(text)}")
            n += 1
    if not n:
        lines.append("None.")
    return lines + [""]


def write_index(
    out: str | Path,
    *,
    table: str | Path | None = None,
    specs_dir: str | Path | None = None,
    summaries_dir: str | Path | None = None,
) -> Path:
    """Write the index page of the reproductions.

    Parameters
    ----------
    out : str or Path
        The markdown file to write (e.g. ``docs/reproductions/README.md``); the reports it
        links are looked for next to it.
    table : str or Path, optional
        Table Z (default ``<specs_dir>/table_z.toml``).
    specs_dir : str or Path, optional
        Folder of the spec sets (default :func:`~hdbo.experiments.spec.default_specs_dir`).
    summaries_dir : str or Path, optional
        Folder of the summaries; every ``*.csv.gz`` in it is read, in name order (default
        ``summaries/`` next to ``out``). A missing folder means no runs.

    Returns
    -------
    Path
        ``out``.

    Raises
    ------
    FileNotFoundError
        The table does not exist.
    ValueError
        The table is malformed or names what the specs do not have; a summary is malformed.
    """
    out = Path(out)
    root = Path(specs_dir) if specs_dir is not None else default_specs_dir()
    rows = load_table(Path(table) if table is not None else root / "table_z.toml")
    specs = load_paper_specs(root)
    folder = Path(summaries_dir) if summaries_dir is not None else out.parent / "summaries"
    files = sorted(folder.glob("*.csv.gz")) if folder.is_dir() else []
    try:
        label = folder.resolve().relative_to(out.parent.resolve()).as_posix()
    except ValueError:
        label = str(folder)
    text = build_index(rows, specs, files, reports_dir=out.parent, summaries_label=label)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return out
