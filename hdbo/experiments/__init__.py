"""Experiments: TOML specs, a resumable runner, a SQLite store and reports.

``store``   :class:`RunStore` (SQLite, several writers), :class:`RunConfig` (identity of a run).
``runner``  :func:`run_one` (execute or resume one run), :func:`run_many` (serial, process pool, Dask).
``spec``    :func:`load_spec` / :func:`find_specs`: TOML experiment specs with quick/full scales.
``report``  :func:`aggregate`, :func:`write_report`: markdown tables and regret plots.
"""

from __future__ import annotations

from .report import GroupSummary, aggregate, write_report
from .runner import RunResult, RunSummary, run_many, run_one
from .spec import ExperimentSpec, SpecError, find_specs, load_spec
from .store import RunConfig, RunRecord, RunStore

__all__ = [
    "RunStore",
    "RunConfig",
    "RunRecord",
    "run_one",
    "run_many",
    "RunResult",
    "RunSummary",
    "ExperimentSpec",
    "SpecError",
    "load_spec",
    "find_specs",
    "aggregate",
    "write_report",
    "GroupSummary",
]
