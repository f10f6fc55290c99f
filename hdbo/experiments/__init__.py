"""Experiments: TOML specs, a resumable runner, a SQLite store and reports.

``store``   :class:`RunStore` (SQLite, several writers, run claims), :class:`RunConfig`
            (identity of a run), :class:`RunOwner` / :class:`RunClaim` (who executes a run).
``runner``  :func:`run_one` (execute or resume one run), :func:`run_many` (serial, process
            pool, Dask), with progress counted in evaluations.
``spec``    :func:`load_spec` / :func:`find_specs`: TOML experiment specs with quick/full
            scales, paper values and :class:`Claim` s.
``plugins`` :func:`load_plugins`: import the user's modules that register problems and methods
            (specs and command lines name registered ones only, never ``module:attr``).
``resources`` :func:`estimate_run_memory` / :func:`check_memory`: refuse runs that
            cannot fit.
``summary`` :func:`export_summary`: a point-free ``.csv.gz`` of a store, small enough for git;
            :func:`read_summary` reads one back, :func:`merge_summaries` combines several.
``suite_report`` :func:`write_suite_report`: the high-dimensional suite's report
            (``docs/benchmarks.md``) from summaries, no store needed.
``report``  :func:`aggregate`, :func:`check_claims`, :func:`write_report`: markdown tables,
            claim verdicts (:class:`ClaimCheck`) and regret plots.

Examples
--------
>>> from hdbo.experiments import RunConfig, RunStore, aggregate, run_many
>>> configs = [RunConfig(experiment="demo", problem="branin", method="random", seed=s, budget=5)
...            for s in range(2)]
>>> with RunStore(":memory:") as store:
...     summary = run_many(store, configs, progress=False)
...     [g.n_runs for g in aggregate(store)]
[2]
"""

from __future__ import annotations

from .plugins import load_plugins
from .index import write_index
from .report import (
    MIN_RUNS,
    ClaimCheck,
    Comparison,
    GroupSummary,
    SpecScope,
    aggregate,
    check_claims,
    claims_summary,
    render_markdown,
    write_report,
)
from .resources import check_memory, estimate_run_memory
from .runner import RunResult, RunSummary, run_many, run_one
from .suite_report import write_suite_report
from .summary import SummaryRun, config_id, export_summary, merge_summaries, read_summary
from .spec import Claim, ExperimentSpec, ReferenceValue, SpecError, find_specs, load_spec, parse_spec
from .store import (
    SCHEMA_VERSION,
    STALE_AFTER_SECONDS,
    ClaimLostError,
    Evaluation,
    EvaluationArrays,
    RunClaim,
    RunConfig,
    RunOwner,
    RunRecord,
    RunStore,
    StoreError,
)

__all__ = [
    # store (alphabetical)
    "ClaimLostError",
    "Evaluation",
    "EvaluationArrays",
    "RunClaim",
    "RunConfig",
    "RunOwner",
    "RunRecord",
    "RunStore",
    "SCHEMA_VERSION",
    "STALE_AFTER_SECONDS",
    "StoreError",
    # runner
    "run_one",
    "run_many",
    "RunResult",
    "RunSummary",
    # specs
    "ExperimentSpec",
    "Claim",
    "ReferenceValue",
    "SpecError",
    "load_spec",
    "parse_spec",
    "find_specs",
    # plugins and resources
    "load_plugins",
    "estimate_run_memory",
    "check_memory",
    "export_summary",
    "merge_summaries",
    "read_summary",
    "SummaryRun",
    "config_id",
    "write_suite_report",
    # reports
    "aggregate",
    "check_claims",
    "write_report",
    "render_markdown",
    "GroupSummary",
    "ClaimCheck",
    "Comparison",
    "claims_summary",
    "SpecScope",
    "MIN_RUNS",
    "write_index",
]
