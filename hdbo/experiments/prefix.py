"""Runs taken from another spec's runs: a run that a spec shares with another spec is made once.

A spec with ``prefix_of = "OTHER"`` (see :mod:`hdbo.experiments.spec`, "Prefix runs") asks for
runs that another spec of the set also makes: the same problem, method, parameters and seed
(the labels may differ), with the same budget or a smaller one.

* With the same budget the two are the same run (the run seed alone seeds the problem
  instance and the method, :mod:`hdbo.experiments.runner`), whatever the method: li2016's
  Table 5 shares its ADD-d and RPP-d (delta = 0.1) runs with Table 1, tranthe2020's Figures 2
  and 3 share MS-UCB (N0 = 1, alpha = 0, d = 5) with Figure 1.
* With a smaller budget, when the method's proposals do not depend on the budget
  (``Method.budget_independent``), the shorter run is exactly the longer run's first
  ``budget`` evaluations (li2016's T = 500 tables from its T = 1000 runs).

``hdbo reproduce`` then copies the evaluations instead of running the method again.
:func:`prefix_donors` pairs the runs of such specs with the runs they can come from;
:func:`derive_prefix_runs` copies the evaluations of finished runs of the store into it as
finished runs of the other configs, and :func:`summary_copies` names the copies to make in a
summary (:func:`hdbo.experiments.summary.copy_summary_runs`) when only the summary holds the run
(a new machine going on from git). A copy's diagnostics say where it came from
(``derived_from``); a copy of a whole run also keeps the run's own diagnostics, a shorter copy
does not (they belong to the end of the longer run).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

from ..methods.registry import get_method_class
from .spec import ExperimentSpec
from .store import ClaimLostError, Evaluation, RunConfig, RunStore, canonical_json

__all__ = ["derive_prefix_runs", "derived_from", "prefix_donors", "summary_copies"]


def _same(entries: Sequence[Any], label: str, name: str, params: dict[str, Any]) -> Any:
    """The entry (a spec's problem or method) with this registry name and these parameters, the
    one with this label if several have them; None if none has."""
    text = canonical_json(params)
    hits = [e for e in entries if e.name == name and canonical_json(e.params) == text]
    return next((e for e in hits if e.label == label), hits[0] if hits else None)


def _donor_config(config: RunConfig, donor: ExperimentSpec) -> RunConfig | None:
    """The run of ``donor`` (at its scale) whose first ``config.budget`` evaluations are ``config``'s run."""
    if donor.budget < config.budget or config.seed not in donor.seeds:
        return None
    if donor.budget > config.budget:  # a shorter run is a prefix only if the budget changes nothing
        try:
            if not get_method_class(config.method).budget_independent:
                return None
        except ValueError:  # an unknown method: the run itself will say so
            return None
    problem = _same(donor.problems, config.problem_label, config.problem, config.problem_params)
    method = _same(donor.methods, config.label, config.method, config.method_params)
    if problem is None or method is None:
        return None
    return RunConfig(
        experiment=donor.name, problem=problem.name, method=method.name, seed=config.seed, budget=donor.budget,
        problem_params=dict(problem.params), method_params=dict(method.params), label=method.label,
        problem_label=problem.label,
    )


def prefix_donors(
    configs: Iterable[RunConfig], specs: Sequence[ExperimentSpec]
) -> list[tuple[RunConfig, RunConfig]]:
    """``(config, donor config)`` for every config that can be taken from a run of its ``prefix_of`` spec.

    The donor run has the config's seed and the same problem and method (registry names and
    parameters; the labels may differ, the donor spec's entry with the same label is preferred)
    and a budget at least as large; a larger one only for a budget-independent method.

    Parameters
    ----------
    configs : iterable of RunConfig
        Runs to make.
    specs : sequence of ExperimentSpec
        Every spec of the set, at the scale run (the donors are looked up by name among them).

    Returns
    -------
    list of (RunConfig, RunConfig)
        In the order of ``configs``; a config whose spec has no ``prefix_of``, whose donor spec
        is not in ``specs`` or that has no such run there is left out.
    """
    by_name = {s.name: s for s in specs}
    pairs = []
    for c in configs:
        spec = by_name.get(c.experiment)
        if spec is None or spec.prefix_of is None or spec.prefix_of not in by_name:
            continue
        d = _donor_config(c, by_name[spec.prefix_of])
        if d is not None:
            pairs.append((c, d))
    return pairs


def derive_prefix_runs(store: RunStore, pairs: Iterable[tuple[RunConfig, RunConfig]]) -> list[RunConfig]:
    """Store each config's run as the first evaluations of its donor's finished run.

    A config is skipped when its donor has no finished run in ``store`` (with at least
    ``config.budget`` evaluations when the donor's budget is larger), when its own run is finished or owned by another live
    process, or when its own stored evaluations (of an earlier, interrupted attempt) are not
    the donor's first ones; otherwise the evaluations it lacks are appended (nothing is
    deleted) and the run is marked finished, with the diagnostics of the module docstring.

    Parameters
    ----------
    store : RunStore
    pairs : iterable of (RunConfig, RunConfig)
        From :func:`prefix_donors`.

    Returns
    -------
    list of RunConfig
        The configs whose runs were derived.
    """
    done = []
    for config, donor in pairs:
        rec = store.find_run(donor)
        if rec is None or rec.status != "finished":
            continue
        ev = store.load_evaluations(rec.id)
        whole = config.budget == donor.budget  # the same run: all of it, also if it ended early
        n = len(ev) if whole else config.budget
        if n == 0 or len(ev) < n or not np.array_equal(ev.t[:n], np.arange(n)):
            continue
        own = store.find_run(config)
        if own is not None and own.status == "finished":
            continue
        run = store.get_or_create_run(config)
        claim = store.claim_run(run.id)
        if not claim.acquired:  # another live process is making it
            continue
        have = store.load_evaluations(run.id) if claim.record.n_evaluations else None
        k = 0 if have is None else len(have)
        if k and (k > n or not np.array_equal(have.X, ev.X[:k])):
            store.fail_run(run.id, "interrupted: its stored evaluations differ from the longer run's; "
                           "run it again", owner=claim.owner)
            continue

        def num(v: float) -> float | None:
            return None if np.isnan(v) else float(v)

        evals = [
            Evaluation(t=i, x=ev.X[i], y=None if ev.failed[i] else num(ev.y[i]), f=num(ev.f[i]),
                       regret=num(ev.regret[i]), failed=bool(ev.failed[i]), error=ev.errors[i],
                       ask_seconds=float(ev.ask_seconds[i]), eval_seconds=float(ev.eval_seconds[i]))
            for i in range(k, n)
        ]
        seconds = (float(rec.wall_seconds) if whole
                   else float(np.nansum(ev.ask_seconds[:n]) + np.nansum(ev.eval_seconds[:n])))
        try:
            store.append_evaluations(run.id, evals, method_state={}, noise_rng_state=None, wall_seconds=seconds,
                                     owner=claim.owner)
        except ClaimLostError:  # taken over meanwhile: the new owner finishes it
            continue
        diagnostics = {"derived_from": derived_from(config, donor)}
        if whole:  # the same run: its diagnostics are this run's
            diagnostics = {**(rec.diagnostics or {}), **diagnostics}
        store.finish_run(run.id, diagnostics=diagnostics, wall_seconds=seconds)
        done.append(config)
    return done


def derived_from(config: RunConfig, donor: RunConfig) -> str:
    """The ``derived_from`` diagnostic of ``config``'s copy of ``donor``'s run: the donor's
    experiment, its label where it differs, and how much of it was copied."""
    where = donor.experiment if donor.label == config.label else f"{donor.experiment} ({donor.label})"
    if config.budget == donor.budget:
        return f"{where}, the same run"
    return f"{where}, first {config.budget} of {donor.budget} evaluations"


def summary_copies(pairs: Iterable[tuple[RunConfig, RunConfig]]) -> list[tuple[RunConfig, RunConfig, str]]:
    """The pairs of :func:`prefix_donors` as :func:`hdbo.experiments.summary.copy_summary_runs`
    takes them: ``(config, donor, derived_from text)``.

    Parameters
    ----------
    pairs : iterable of (RunConfig, RunConfig)

    Returns
    -------
    list of (RunConfig, RunConfig, str)
    """
    return [(c, d, derived_from(c, d)) for c, d in pairs]
