"""Experiment specs: TOML files listing problems x methods x seeds x budget.

A spec describes one experiment (typically one figure or table of a paper). ``hdbo
reproduce NAME`` runs every spec in ``experiments/NAME/*.toml`` (or ``experiments/NAME.toml``).

Format
------
.. code-block:: toml

    name = "branin20"                  # required: experiment name in the store and reports
    description = "Branin in 20-D"     # optional (default "")
    budget = 100                       # required: evaluations per run (int > 0)
    seeds = 10                         # required: a count (seeds 0..9) or a list [0, 5, 7]
    diagnostics = ["n_selected"]       # optional: Method.diagnostics() keys the report tabulates
    prefix_of = "branin20-long"        # optional: see "Prefix runs" below

    [[problems]]                       # at least one
    name = "branin"                    # problem registry name (see "hdbo list problems")
    label = "Branin D=20"              # optional, default built from name and params
    params = { dim = 20, noise_std = 0.0 }   # optional keyword arguments of problems.get

    [[methods]]                        # at least one
    name = "gp-ucb"                    # method registry name
    label = "GP-UCB"                   # optional, default the name; unique within the spec
    params = { acq_budget = 500 }      # optional keyword arguments of the method

    [[methods]]
    name = "random"                    # label "random"

    [scale.quick]                      # optional; also [scale.full]
    seeds = 2                          # overrides seeds
    budget = 30                        # overrides budget
    [scale.quick.method_params."GP-UCB"]   # merged into that method's params (by label)
    acq_budget = 100
    [scale.quick.problem_params."Branin D=20"]  # merged into that problem's params (by label)
    noise_std = 0.01

    [[reference]]                      # optional: values the paper reports, shown in reports
    problem = "Branin D=20"            # a problem label of this spec
    method = "GP-UCB"                  # a method label of this spec
    metric = "simple_regret"           # a metric name (see below)
    value = 0.12
    budget = 100                       # optional: the T the value refers to
    at = 110                           # optional: compare with ours after this many evaluations
    note = "Fig. 2, read off the plot" # optional

    [[claim]]                          # optional: a statement of the paper, checked in reports
    text = "GP-UCB beats random"       # required: the claim in words
    kind = "better"                    # required: "better", "best", "close" or "trend"
    problems = ["Branin D=20"]         # required: problem labels; the claim must hold on each
    metric = "simple_regret"           # required: a metric name (see below)
    method = "GP-UCB"                  # required: the method label the claim is about
    than = ["random"]                  # method labels; required for "better" and "close", optional for "best"
    # within = 0.05                    # kind = "close" only, and required there: the tolerance
    # x = [10, 20, 40]                 # kind = "trend" only, and required there: one number per problem
    # shape = "log"                    # kind = "trend" only, and required there: "linear" or "log"
    source = "Section 5.1, Fig. 2"     # optional: where the paper says it
    higher_is_better = false           # optional for built-in metrics, required for "diag:" ones
    test = "welch"                     # optional: "2se" (default) or "welch" (t-test, 95%)
    significant = true                 # optional: the paper claims significance (needs test)

A claim is checked separately at every budget ``T`` present among the experiment's finished
runs (quick and full runs are never mixed), on the mean over runs of the metric at the final
evaluation: the regrets are better when lower, ``best_f`` when higher, ``diag:`` metrics as
the claim's ``higher_is_better`` says. It is *held* at ``T`` if, on every listed problem, the mean of
``method`` is strictly better than the mean of each method in ``than``; for ``kind = "best"``
without ``than``, than the mean of every other method of the spec with finished runs on that
problem at ``T``; for ``kind = "close"``, if on every listed problem the mean of ``method``
is worse than the mean of each method in ``than`` by at most ``within`` (a tolerance in the
metric's units that the spec states, e.g. "comes close to the oracle"). A required method or
problem without finished runs at ``T`` makes it *no data*, and fewer than
:data:`~hdbo.experiments.report.MIN_RUNS` (3) finished runs of a compared method makes it
*not testable*: neither verdict is counted in a report's summary line. Reports also say whether each difference is significant: by default when it
exceeds two standard errors of the difference (``test = "2se"``), with ``test = "welch"``
when Welch's two-sample t-test rejects equal means at the 5% level (two-sided, as the
papers' t-tests); a ``"close"`` claim counts as significant when the shortfall is within (held)
or beyond (not held) ``within`` by more than two standard errors of the difference, whatever
its ``test``. A held claim is *held significantly* when every comparison is significant and
*held in direction only* otherwise; a claim with ``significant = true`` (the paper claims
a significant difference, e.g. "win at 95%"; it must name its ``test``) is held only
significantly, a difference in its direction that is not significant being *not held*.
A ``"trend"`` claim is about one method across problems that differ in one setting (e.g.
"the samples grow like log D"): ``problems`` lists them, ``x`` gives the setting's value of
each (> 0), and ``shape`` says how the metric grows: linearly in ``x`` or in ``log x``. The
means of ``method`` on the problems are fitted by least squares by a line in ``x`` and by a
line in ``log x``; the claim is *held* when the claimed shape's slope is positive and that
shape fits the means at least as well as the other (a smaller residual sum of squares), and
*significant* when the slope exceeds two of its standard errors (propagated from the means'
standard errors). It takes no ``than``, ``test``, ``within`` or ``significant``, and needs
at least 3 problems with distinct ``x``.
See :func:`hdbo.experiments.report.check_claims`.

Metrics are ``simple_regret`` (``S_T``), ``avg_regret`` (``R_T/T``), ``best_f`` (best
noise-free value), ``log10_simple_regret`` (mean over runs of ``log10 S_T``, with ``S_T``
floored at 1e-12) and ``diag:KEY``: the scalar ``Method.diagnostics()[KEY]`` stored when a
run finishes (a number, or a bool counted as 0/1 so that the mean is a rate).

Unknown keys anywhere, missing required fields, wrong types, duplicate labels, and overrides,
references or claims naming a label that does not exist raise :class:`SpecError` (a
:class:`ValueError`) whose message names the file and the offending entry; so do a claim
with an unknown ``kind`` or ``metric``, a ``"better"`` or ``"close"`` claim without ``than``, a
``"close"`` claim without a ``within`` >= 0 (or another claim with one), a ``diag:``
claim without ``higher_is_better``, and a claim whose ``method`` is in its own ``than``. The method params ``seed``, ``budget``,
``structure`` and ``bounds`` are reserved (the runner sets them). A problem's ``params`` may
fix ``seed`` to use one problem instance for every run; otherwise the run seed also seeds
the problem instance.

Names, not code
---------------
A spec is data: problem and method names are registry names, and reading or running a spec
never imports or calls anything a name points to. A name of the form ``"module:attr"`` is
refused when the spec is parsed (:class:`SpecError`), and :func:`validate_names` refuses
names that are not registered. A problem or method of your own is registered from Python
(:func:`hdbo.problems.register_problem`, :func:`hdbo.methods.register`) in a module of yours,
which ``hdbo reproduce --plugin MODULE`` loads (see :mod:`hdbo.experiments.plugins`).

Prefix runs
-----------
``prefix_of = "OTHER"`` names a spec of the same set that makes some of this spec's runs too:
the same problem and method (registry names and parameters at the scale run; the labels may
differ) and seed, with the same budget or a larger one. ``hdbo reproduce`` then copies such a
run from the finished run of ``OTHER`` instead of running it again: with the same budget the
two are the same run, whatever the method (the run seed alone seeds the problem instance and
the method); with a larger budget, only when the method is budget-independent
(``Method.budget_independent``: its proposals do not depend on the budget), as its first
``budget`` evaluations. The copy's diagnostics hold ``derived_from``, and, for a copy of a whole
run, the run's own diagnostics too (those of a longer run belong to its end). The copy is made in
the store when the store holds the finished run, else in the summary when that does (a new
machine going on from git). A run with no such run in ``OTHER``, or whose run is not finished,
is run as usual; see ``experiments/README.md``.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from .._docstrings import fill_doc
from .plugins import PLUGIN_HELP, check_registry_name
from .store import RunConfig, default_problem_label

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = [
    "SCALES",
    "METRICS",
    "DIAG_PREFIX",
    "is_metric",
    "higher_is_better",
    "SpecError",
    "ProblemSpec",
    "MethodSpec",
    "ScaleSpec",
    "ReferenceValue",
    "CLAIM_KINDS",
    "TREND_SHAPES",
    "CLAIM_TESTS",
    "Claim",
    "ExperimentSpec",
    "load_spec",
    "parse_spec",
    "find_specs",
    "default_specs_dir",
    "validate_names",
]

SCALES = ("quick", "full")
METRICS = ("simple_regret", "avg_regret", "best_f", "log10_simple_regret")
DIAG_PREFIX = "diag:"
_HIGHER = {"simple_regret": False, "avg_regret": False, "best_f": True, "log10_simple_regret": False}


def is_metric(name: object) -> bool:
    """Whether ``name`` is a built-in metric or ``"diag:KEY"`` with a non-empty key."""
    return isinstance(name, str) and (name in METRICS or (name.startswith(DIAG_PREFIX) and len(name) > len(DIAG_PREFIX)))


def higher_is_better(metric: str) -> bool | None:
    """Direction of a built-in metric (None for ``diag:`` metrics, whose direction a claim states)."""
    return _HIGHER.get(metric)
CLAIM_KINDS = ("best", "better", "close", "trend")
#: Shapes of a ``"trend"`` claim: the metric grows linearly in ``x`` or in ``log x``.
TREND_SHAPES = ("linear", "log")
#: Significance rules of a claim's comparisons: two standard errors, or Welch's t-test at 95%.
CLAIM_TESTS = ("2se", "welch")
RESERVED_METHOD_PARAMS = ("seed", "budget", "structure", "bounds")


class SpecError(ValueError):
    """An experiment spec is malformed (the message names the file and the entry)."""


# The attributes ProblemSpec and MethodSpec share (they differ by the registry ``name`` is in).
_DOC = {
    "entry": """
    name : str
        Registry name.
    label : str
        Name in reports; unique within the spec.
    params : dict
        Keyword arguments of the registered problem or method.
    """,
}


@dataclass(frozen=True)
class _Entry:
    """A problem or method of a spec (the fields of :class:`ProblemSpec` and :class:`MethodSpec`)."""

    name: str
    label: str
    params: dict[str, Any] = field(default_factory=dict)


@fill_doc(**_DOC)
class ProblemSpec(_Entry):
    """One problem of a spec (``name`` in the problem registry).

    Attributes
    ----------
    %(entry)s
    """


@fill_doc(**_DOC)
class MethodSpec(_Entry):
    """One method of a spec (``name`` in the method registry).

    Attributes
    ----------
    %(entry)s
    """


@dataclass(frozen=True)
class ScaleSpec:
    """Overrides applied by ``--scale``.

    Attributes
    ----------
    seeds : list of int or None
        Replaces the spec's seeds (None: unchanged).
    budget : int or None
        Replaces the spec's budget (None: unchanged).
    problem_params, method_params : dict of str -> dict
        Merged into the params of the problem / method with that label.
    """

    seeds: list[int] | None = None
    budget: int | None = None
    problem_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    method_params: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class ReferenceValue:
    """A number the paper reports, printed next to ours in reports.

    Attributes
    ----------
    problem, method : str
        Problem and method labels of the spec.
    metric : str
        A metric name (:data:`METRICS` or ``"diag:KEY"``).
    value : float
    note : str
        Where the number comes from (may be empty).
    budget : int or None
        The ``T`` the value is for, if the paper says.
    at : int or None
        Compare with our metric after this many evaluations instead of at the end of our runs
        (e.g. the paper's T = 500 plus the initial points, read off runs of a larger budget).
    """

    problem: str
    method: str
    metric: str
    value: float
    note: str = ""
    budget: int | None = None
    at: int | None = None


@dataclass(frozen=True)
class Claim:
    """A qualitative statement of the paper, checked against our runs in reports.

    Attributes
    ----------
    text : str
        The claim in words.
    kind : {"best", "better", "close", "trend"}
        ``"better"``: ``method`` beats each method of ``than``. ``"best"``: ``method`` beats
        each method of ``than``, or when ``than`` is None every other method with runs.
        ``"close"``: ``method`` is worse than each method of ``than`` by at most ``within``.
        ``"trend"``: ``method``'s metric grows across ``problems`` as ``shape`` says in ``x``.
    problems : tuple of str
        Problem labels; the claim must hold on each.
    metric : str
        A metric name (:data:`METRICS` or ``"diag:KEY"``), compared at the final evaluation.
    method : str
        Method label the claim is about.
    than : tuple of str or None
        Method labels ``method`` must beat; None (only for ``"best"``) means every other
        method of the spec that has finished runs on the problem.
    source : str
        Where the paper says it (may be empty).
    others : tuple of str
        For ``"best"`` without ``than``: the other method labels of the spec, in spec order
        (set by :func:`parse_spec`; empty means every other label found among the runs).
    higher_is_better : bool or None
        Direction of the metric; None means the built-in direction of ``metric``.
    test : {"2se", "welch"}
        When a difference counts as significant: beyond two standard errors of the
        difference, or Welch's two-sided t-test at the 5% level.
    within : float or None
        For ``"close"``: the largest shortfall (in units of the metric) that still counts as
        close; None for the other kinds.
    significant : bool
        The paper claims a significant difference (e.g. "win at 95%"): the claim holds only
        when every comparison is significant by ``test``; a difference in the claimed
        direction that is not significant is "not held". Only for ``"better"`` and
        ``"best"``.
    x : tuple of float or None
        For ``"trend"``: the value of the varied setting on each problem (> 0), in the order
        of ``problems``; None for the other kinds.
    shape : {"linear", "log"} or None
        For ``"trend"``: the metric grows linearly in ``x`` or in ``log x``; None otherwise.
    """

    text: str
    kind: str
    problems: tuple[str, ...]
    metric: str
    method: str
    than: tuple[str, ...] | None = None
    source: str = ""
    others: tuple[str, ...] = ()
    higher_is_better: bool | None = None
    test: str = "2se"
    within: float | None = None
    significant: bool = False
    x: tuple[float, ...] | None = None
    shape: str | None = None

    @property
    def higher(self) -> bool:
        """Whether larger values of the metric are better for this claim."""
        if self.higher_is_better is not None:
            return self.higher_is_better
        built_in = higher_is_better(self.metric)
        if built_in is None:
            raise ValueError(f"claim {self.text!r}: metric {self.metric!r} needs higher_is_better")
        return built_in


@dataclass(frozen=True)
class ExperimentSpec:
    """A parsed, validated experiment spec.

    Attributes
    ----------
    name, description : str
    problems : list of ProblemSpec
    methods : list of MethodSpec
    seeds : list of int
    budget : int
    scales : dict of str -> ScaleSpec
    references : list of ReferenceValue
    claims : list of Claim
    diagnostics : tuple of str
        Diagnostic keys the report tabulates.
    path : Path or None
        File it was read from.
    scale : str or None
        The scale applied by :meth:`at_scale` (None for the base spec).
    prefix_of : str or None
        Name of the spec whose runs this spec's runs are prefixes of (see "Prefix runs").
    """

    name: str
    description: str
    problems: list[ProblemSpec]
    methods: list[MethodSpec]
    seeds: list[int]
    budget: int
    scales: dict[str, ScaleSpec] = field(default_factory=dict)
    references: list[ReferenceValue] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    diagnostics: tuple[str, ...] = ()
    path: Path | None = None
    scale: str | None = None
    prefix_of: str | None = None

    def at_scale(self, scale: str | None) -> "ExperimentSpec":
        """The spec with the overrides of ``scale`` applied.

        Parameters
        ----------
        scale : {"quick", "full"} or None
            None returns the spec unchanged. A spec without a table for ``scale`` runs at
            its base settings.

        Returns
        -------
        ExperimentSpec
            A new spec with ``scale`` set.

        Raises
        ------
        ValueError
            ``scale`` is not one of ``"quick"``, ``"full"``.
        """
        if scale is None:
            return self
        if scale not in SCALES:
            raise ValueError(f"scale must be one of {', '.join(SCALES)}, got {scale!r}")
        s = self.scales.get(scale, ScaleSpec())
        problems = [replace(p, params={**p.params, **s.problem_params.get(p.label, {})}) for p in self.problems]
        methods = [replace(m, params={**m.params, **s.method_params.get(m.label, {})}) for m in self.methods]
        return replace(
            self,
            problems=problems,
            methods=methods,
            seeds=list(s.seeds) if s.seeds is not None else list(self.seeds),
            budget=s.budget if s.budget is not None else self.budget,
            scale=scale,
        )

    def run_configs(self, scale: str | None = None) -> list[RunConfig]:
        """Every run of the spec at ``scale``.

        Parameters
        ----------
        scale : {"quick", "full"} or None, default None
            Passed to :meth:`at_scale`.

        Returns
        -------
        list of RunConfig
            Problems x methods x seeds, in that nesting order.

        Raises
        ------
        ValueError
            An unknown scale.
        """
        spec = self.at_scale(scale)
        return [
            RunConfig(
                experiment=spec.name,
                problem=p.name,
                method=m.name,
                seed=seed,
                budget=spec.budget,
                problem_params=dict(p.params),
                method_params=dict(m.params),
                label=m.label,
                problem_label=p.label,
            )
            for p in spec.problems
            for m in spec.methods
            for seed in spec.seeds
        ]


# ---------------------------------------------------------------------------- parsing
class _Ctx:
    """Builds error messages that name the file and the entry."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, where: str, msg: str) -> SpecError:
        loc = f"{self.source}: {where}: " if where else f"{self.source}: "
        return SpecError(loc + msg)

    def table(self, obj: Any, where: str) -> dict[str, Any]:
        if not isinstance(obj, dict):
            raise self.error(where, f"expected a table, got {_tname(obj)}")
        return obj

    def keys(self, obj: dict[str, Any], where: str, *, required: tuple[str, ...], optional: tuple[str, ...]) -> None:
        valid = required + optional
        unknown = [k for k in obj if k not in valid]
        if unknown:
            raise self.error(where, f"unknown key {unknown[0]!r} (valid keys: {', '.join(valid)})")
        missing = [k for k in required if k not in obj]
        if missing:
            raise self.error(where, f"missing required key {missing[0]!r}")

    def string(self, obj: Any, where: str, *, allow_empty: bool = False) -> str:
        if not isinstance(obj, str) or (not allow_empty and not obj.strip()):
            raise self.error(where, f"expected a non-empty string, got {_show(obj)}")
        return obj

    def positive_int(self, obj: Any, where: str) -> int:
        if isinstance(obj, bool) or not isinstance(obj, int) or obj <= 0:
            raise self.error(where, f"expected an integer > 0, got {_show(obj)}")
        return obj

    def seeds(self, obj: Any, where: str) -> list[int]:
        if isinstance(obj, int) and not isinstance(obj, bool):
            if obj <= 0:
                raise self.error(where, f"a seed count must be > 0, got {obj}")
            return list(range(obj))
        if isinstance(obj, list) and obj:
            if not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in obj):
                raise self.error(where, f"seeds must be non-negative integers, got {_show(obj)}")
            if len(set(obj)) != len(obj):
                raise self.error(where, f"seeds must be distinct, got {_show(obj)}")
            return list(obj)
        raise self.error(where, f"expected a seed count (int > 0) or a non-empty list of seeds, got {_show(obj)}")


def _tname(obj: Any) -> str:
    return {dict: "a table", list: "an array", str: "a string", bool: "a boolean"}.get(type(obj), type(obj).__name__)


def _show(obj: Any) -> str:
    text = json.dumps(obj, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_spec(data: dict[str, Any], *, source: str = "<spec>", path: Path | None = None) -> ExperimentSpec:
    """Validate a spec given as a dict (the parsed TOML) and build an :class:`ExperimentSpec`.

    Parameters
    ----------
    data : dict
        The parsed TOML document.
    source : str, default "<spec>"
        Name of the source in error messages (the file path).
    path : Path, optional
        Stored as ``ExperimentSpec.path``.

    Returns
    -------
    ExperimentSpec

    Raises
    ------
    SpecError
        Anything malformed; the message names ``source`` and the entry.
    """
    ctx = _Ctx(source)
    ctx.table(data, "")
    ctx.keys(
        data,
        "top level",
        required=("name", "budget", "seeds", "problems", "methods"),
        optional=("description", "scale", "reference", "claim", "diagnostics", "prefix_of"),
    )
    name = ctx.string(data["name"], "name")
    description = ctx.string(data.get("description", ""), "description", allow_empty=True)
    budget = ctx.positive_int(data["budget"], "budget")
    seeds = ctx.seeds(data["seeds"], "seeds")

    problems = [ProblemSpec(*entry) for entry in _entries(data, "problems", ctx)]
    methods = [MethodSpec(*entry) for entry in _entries(data, "methods", ctx)]

    problem_labels = {p.label for p in problems}
    method_labels = {m.label for m in methods}

    scales: dict[str, ScaleSpec] = {}
    for sname, table in ctx.table(data.get("scale", {}), "scale").items():
        where = f"scale.{sname}"
        if sname not in SCALES:
            raise ctx.error(where, f"unknown scale {sname!r} (valid scales: {', '.join(SCALES)})")
        ctx.table(table, where)
        ctx.keys(table, where, required=(), optional=("seeds", "budget", "problem_params", "method_params"))
        pp = _overrides(table.get("problem_params", {}), problem_labels, ctx, f"{where}.problem_params", "problem")
        mp = _overrides(table.get("method_params", {}), method_labels, ctx, f"{where}.method_params", "method")
        for label, params in mp.items():
            _no_reserved(params, ctx, f"{where}.method_params.{label}")
        scales[sname] = ScaleSpec(
            seeds=ctx.seeds(table["seeds"], f"{where}.seeds") if "seeds" in table else None,
            budget=ctx.positive_int(table["budget"], f"{where}.budget") if "budget" in table else None,
            problem_params=pp,
            method_params=mp,
        )

    references: list[ReferenceValue] = []
    refs = data.get("reference", [])
    if not isinstance(refs, list):
        raise ctx.error("reference", "expected [[reference]] entries (an array of tables)")
    for i, entry in enumerate(refs):
        where = f"reference[{i}]"
        ctx.table(entry, where)
        ctx.keys(entry, where, required=("problem", "method", "metric", "value"), optional=("note", "budget", "at"))
        if entry["problem"] not in problem_labels:
            labels = ", ".join(sorted(problem_labels))
            raise ctx.error(f"{where}.problem", f"no problem labelled {entry['problem']!r} (labels: {labels})")
        if entry["method"] not in method_labels:
            labels = ", ".join(sorted(method_labels))
            raise ctx.error(f"{where}.method", f"no method labelled {entry['method']!r} (labels: {labels})")
        if not is_metric(entry["metric"]):
            raise ctx.error(f"{where}.metric", _bad_metric(entry["metric"]))
        value = entry["value"]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ctx.error(f"{where}.value", f"expected a number, got {_show(value)}")
        references.append(
            ReferenceValue(
                problem=entry["problem"],
                method=entry["method"],
                metric=entry["metric"],
                value=float(value),
                note=ctx.string(entry.get("note", ""), f"{where}.note", allow_empty=True),
                budget=ctx.positive_int(entry["budget"], f"{where}.budget") if "budget" in entry else None,
                at=ctx.positive_int(entry["at"], f"{where}.at") if "at" in entry else None,
            )
        )

    claims_data = data.get("claim", [])
    if not isinstance(claims_data, list):
        raise ctx.error("claim", "expected [[claim]] entries (an array of tables)")
    claims = [
        _parse_claim(entry, ctx, f"claim[{i}]", problem_labels, [m.label for m in methods])
        for i, entry in enumerate(claims_data)
    ]

    diagnostics = data.get("diagnostics", [])
    if not isinstance(diagnostics, list) or not all(isinstance(k, str) and k for k in diagnostics):
        raise ctx.error("diagnostics", f"expected an array of diagnostic names, got {_show(diagnostics)}")

    prefix_of = None
    if "prefix_of" in data:
        prefix_of = ctx.string(data["prefix_of"], "prefix_of")
        if prefix_of == name:
            raise ctx.error("prefix_of", f"a spec cannot be a prefix of itself ({name!r})")

    return ExperimentSpec(
        name=name,
        description=description,
        problems=problems,
        methods=methods,
        seeds=seeds,
        budget=budget,
        scales=scales,
        references=references,
        claims=claims,
        diagnostics=tuple(diagnostics),
        path=path,
        prefix_of=prefix_of,
    )


def _parse_claim(entry: Any, ctx: _Ctx, where: str, problem_labels: set[str], method_order: list[str]) -> Claim:
    method_labels = set(method_order)
    ctx.table(entry, where)
    ctx.keys(entry, where, required=("text", "kind", "problems", "metric", "method"),
             optional=("than", "source", "higher_is_better", "test", "within", "significant", "x", "shape"))
    text = ctx.string(entry["text"], f"{where}.text")
    kind = entry["kind"]
    if kind not in CLAIM_KINDS:
        raise ctx.error(f"{where}.kind", f"unknown kind {kind!r} (valid: {', '.join(CLAIM_KINDS)})")
    metric = entry["metric"]
    if not is_metric(metric):
        raise ctx.error(f"{where}.metric", _bad_metric(metric))
    higher = entry.get("higher_is_better")
    if higher is not None and not isinstance(higher, bool):
        raise ctx.error(f"{where}.higher_is_better", f"expected true or false, got {_show(higher)}")
    if higher is None and higher_is_better(metric) is None and kind != "trend":
        raise ctx.error(where, f"metric {metric!r} needs higher_is_better = true or false")
    problems = _label_list(entry["problems"], ctx, f"{where}.problems", problem_labels, "problem")
    method = ctx.string(entry["method"], f"{where}.method")
    if method not in method_labels:
        labels = ", ".join(sorted(method_labels))
        raise ctx.error(f"{where}.method", f"no method labelled {method!r} (labels: {labels})")
    if kind == "trend":
        return _parse_trend(entry, ctx, where, text, problems, metric, method, higher)
    for key in ("x", "shape"):
        if key in entry:
            raise ctx.error(f"{where}.{key}", f'only kind = "trend" takes {key!r} (this claim is "{kind}")')
    than: tuple[str, ...] | None = None
    if "than" in entry:
        than = _label_list(entry["than"], ctx, f"{where}.than", method_labels, "method")
        if method in than:
            raise ctx.error(f"{where}.than", f"lists the claim's own method {method!r}; a method cannot beat itself")
    elif kind in ("better", "close"):
        what = "it beats" if kind == "better" else "it comes close to"
        raise ctx.error(where, f'kind = "{kind}" needs \'than\', the method labels {what}')
    within: float | None = None
    if kind == "close":
        if "within" not in entry:
            raise ctx.error(where, 'kind = "close" needs \'within\', the tolerance in units of the metric')
        raw = entry["within"]
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw) or raw < 0:
            raise ctx.error(f"{where}.within", f"expected a finite number >= 0, got {_show(raw)}")
        within = float(raw)
    elif "within" in entry:
        raise ctx.error(f"{where}.within", f'only kind = "close" takes a tolerance (this claim is "{kind}")')
    source = ctx.string(entry.get("source", ""), f"{where}.source", allow_empty=True)
    test = entry.get("test", "2se")
    if test not in CLAIM_TESTS:
        raise ctx.error(f"{where}.test", f"unknown test {test!r} (valid: {', '.join(CLAIM_TESTS)})")
    significant = entry.get("significant", False)
    if not isinstance(significant, bool):
        raise ctx.error(f"{where}.significant", f"expected true or false, got {_show(significant)}")
    if significant and kind == "close":
        raise ctx.error(f"{where}.significant", 'a "close" claim cannot claim a significant difference')
    if significant and "test" not in entry:
        raise ctx.error(where, 'significant = true needs the test the paper used: test = "welch" or "2se"')
    others = tuple(label for label in method_order if label != method) if than is None else ()
    return Claim(
        text=text, kind=kind, problems=problems, metric=metric, method=method, than=than, source=source, others=others,
        higher_is_better=higher, test=test, within=within, significant=significant,
    )


def _parse_trend(entry: Any, ctx: _Ctx, where: str, text: str, problems: tuple[str, ...], metric: str, method: str,
                 higher: bool | None) -> Claim:
    """The rest of a ``kind = "trend"`` claim (see the module docstring)."""
    for key in ("than", "test", "within", "significant"):
        if key in entry:
            raise ctx.error(f"{where}.{key}", f'a "trend" claim takes no {key!r} (it compares one method across problems)')
    for key in ("x", "shape"):
        if key not in entry:
            raise ctx.error(where, f'kind = "trend" needs {key!r}' + (
                ": one value of the varied setting per problem" if key == "x" else ': "linear" or "log"'))
    shape = entry["shape"]
    if shape not in TREND_SHAPES:
        raise ctx.error(f"{where}.shape", f"unknown shape {shape!r} (valid: {', '.join(TREND_SHAPES)})")
    raw = entry["x"]
    if not isinstance(raw, list) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0 for v in raw
    ):
        raise ctx.error(f"{where}.x", f"expected a list of finite numbers > 0, got {_show(raw)}")
    if len(raw) != len(problems):
        raise ctx.error(f"{where}.x", f"has {len(raw)} values for {len(problems)} problems (one per problem)")
    if len(set(raw)) < 3:
        raise ctx.error(f"{where}.x", "needs at least 3 distinct values (a trend needs 3 points)")
    source = ctx.string(entry.get("source", ""), f"{where}.source", allow_empty=True)
    return Claim(text=text, kind="trend", problems=problems, metric=metric, method=method, source=source,
                 higher_is_better=higher, x=tuple(float(v) for v in raw), shape=shape)


def _registry_name(obj: Any, ctx: _Ctx, where: str, what: str) -> str:
    """A problem or method name: a non-empty string that is not ``module:attr`` (nothing is imported)."""
    name = ctx.string(obj, where)
    try:
        check_registry_name(name, what)
    except ValueError as exc:
        raise ctx.error(where, str(exc)) from None
    return name


def _bad_metric(metric: Any) -> str:
    return f"unknown metric {metric!r} (valid: {', '.join(METRICS)} or {DIAG_PREFIX}KEY)"


def _label_list(obj: Any, ctx: _Ctx, where: str, labels: set[str], what: str) -> tuple[str, ...]:
    """A non-empty array of distinct, known labels."""
    if not isinstance(obj, list) or not obj:
        raise ctx.error(where, f"expected a non-empty array of {what} labels, got {_show(obj)}")
    for item in obj:
        if not isinstance(item, str) or item not in labels:
            raise ctx.error(where, f"no {what} labelled {item!r} (labels: {', '.join(sorted(labels))})")
    if len(set(obj)) != len(obj):
        raise ctx.error(where, f"{what} labels must be distinct, got {_show(obj)}")
    return tuple(obj)


def _entries(data: dict[str, Any], key: str, ctx: _Ctx) -> list[tuple[str, str, dict[str, Any]]]:
    """The ``[[problems]]`` or ``[[methods]]`` tables (``key``) as ``(name, label, params)``, labels unique.

    A problem's default label is :func:`default_problem_label`, a method's its name; a method's
    params may not set what the runner sets (:data:`RESERVED_METHOD_PARAMS`).
    """
    kind = key[:-1]
    if not isinstance(data[key], list) or not data[key]:
        raise ctx.error(key, f"expected at least one [[{key}]] entry")
    out = []
    for i, entry in enumerate(data[key]):
        where = f"{key}[{i}]"
        ctx.table(entry, where)
        ctx.keys(entry, where, required=("name",), optional=("label", "params"))
        name = _registry_name(entry["name"], ctx, f"{where}.name", kind)
        params = dict(ctx.table(entry.get("params", {}), f"{where}.params"))
        if kind == "method":
            _no_reserved(params, ctx, f"{where}.params")
        default = default_problem_label(name, params) if kind == "problem" else name
        out.append((name, ctx.string(entry.get("label", default), f"{where}.label"), params))
    _unique([label for _, label, _ in out], ctx, key, f"{kind} label")
    return out


def _unique(labels: list[str], ctx: _Ctx, where: str, what: str) -> None:
    seen: set[str] = set()
    for label in labels:
        if label in seen:
            raise ctx.error(where, f"duplicate {what} {label!r}; give each entry a distinct label")
        seen.add(label)


def _no_reserved(params: dict[str, Any], ctx: _Ctx, where: str) -> None:
    for key in RESERVED_METHOD_PARAMS:
        if key in params:
            raise ctx.error(where, f"{key!r} is set by the runner and cannot be a method parameter")


def _overrides(obj: Any, labels: set[str], ctx: _Ctx, where: str, what: str) -> dict[str, dict[str, Any]]:
    ctx.table(obj, where)
    out: dict[str, dict[str, Any]] = {}
    for label, params in obj.items():
        if label not in labels:
            raise ctx.error(where, f"no {what} labelled {label!r} (labels: {', '.join(sorted(labels))})")
        out[label] = dict(ctx.table(params, f"{where}.{label}"))
    return out


def load_spec(path: str | Path) -> ExperimentSpec:
    """Read and validate a TOML spec file.

    Parameters
    ----------
    path : str or Path
        The ``.toml`` file.

    Returns
    -------
    ExperimentSpec
        With ``path`` set.

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    SpecError
        The file is not valid TOML or not a valid spec.
    """
    path = Path(path)
    return parse_spec(_read_toml(path), source=str(path), path=path)


def _read_toml(path: Path, error: type[ValueError] = SpecError) -> dict[str, Any]:
    """The contents of a TOML file; invalid TOML raises ``error`` naming the file.

    Parameters
    ----------
    path : Path
        The file.
    error : type, default SpecError
        The ValueError subclass to raise for invalid TOML.

    Returns
    -------
    dict

    Raises
    ------
    FileNotFoundError
        The file does not exist.
    ValueError
        ``error``, if the file is not valid TOML.
    """
    with path.open("rb") as fh:
        try:
            return tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise error(f"{path}: invalid TOML: {exc}") from None


def default_specs_dir() -> Path:
    """Where :func:`find_specs` looks by default.

    Returns
    -------
    Path
        ``./experiments`` if it exists, else the ``experiments/`` folder of the hdbo repository.
    """
    local = Path("experiments")
    if local.is_dir():
        return local
    return Path(__file__).resolve().parents[2] / "experiments"


def find_specs(name: str, specs_dir: str | Path | None = None) -> list[Path]:
    """Spec files of an experiment set.

    Parameters
    ----------
    name : str
        A plain name (no path separators).
    specs_dir : str or Path, optional
        Folder to look in (default :func:`default_specs_dir`).

    Returns
    -------
    list of Path
        ``DIR/name/*.toml`` (sorted) or ``[DIR/name.toml]``.

    Raises
    ------
    ValueError
        Nothing by that name (the message lists what exists).
    """
    root = Path(specs_dir) if specs_dir is not None else default_specs_dir()
    if not isinstance(name, str) or not name or Path(name).name != name:
        raise ValueError(f"experiment set name must be a plain name, got {name!r}")
    folder = root / name
    if folder.is_dir():
        files = sorted(folder.glob("*.toml"))
        if files:
            return files
    single = root / f"{name}.toml"
    if single.is_file() and single.name not in NOT_SPECS:
        return [single]
    available = available_spec_sets(root)
    hint = f"; available: {', '.join(available)}" if available else ""
    raise ValueError(f"no experiment spec {name!r} in {root}{hint}")


#: TOML files in the specs folder that are not specs: table Z of the reproduction index
#: (:mod:`hdbo.experiments.index`).
NOT_SPECS = frozenset({"table_z.toml"})


def available_spec_sets(specs_dir: str | Path | None = None) -> list[str]:
    """Names accepted by :func:`find_specs`.

    Parameters
    ----------
    specs_dir : str or Path, optional
        Folder to look in (default :func:`default_specs_dir`).

    Returns
    -------
    list of str
        Sorted; empty when the folder does not exist.
    """
    root = Path(specs_dir) if specs_dir is not None else default_specs_dir()
    if not root.is_dir():
        return []
    names = {p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*.toml"))}
    names |= {p.stem for p in root.glob("*.toml") if p.name not in NOT_SPECS}
    return sorted(names)


def validate_names(spec: ExperimentSpec) -> None:
    """Check that every method and problem name of ``spec`` is registered.

    Load the plugin modules that register custom names first
    (:func:`hdbo.experiments.plugins.load_plugins`). Problem names are only checked when the
    problem registry is available.

    Parameters
    ----------
    spec : ExperimentSpec

    Raises
    ------
    SpecError
        An unknown name (the message lists the valid ones).
    """
    from ..methods import available_methods

    source = str(spec.path) if spec.path else spec.name
    registries: list[tuple[str, Sequence[_Entry], Callable[[], list[str]]]] = [
        ("method", spec.methods, available_methods)
    ]
    try:
        from ..problems import available_problems
    except ImportError:
        pass
    else:
        registries.append(("problem", spec.problems, available_problems))
    for kind, entries, available in registries:
        names = available()
        for entry in entries:
            if entry.name not in names:
                raise SpecError(
                    f"{source}: {kind} {entry.name!r} is not registered (available {kind}s: {', '.join(names)}; "
                    f"{PLUGIN_HELP})"
                )
