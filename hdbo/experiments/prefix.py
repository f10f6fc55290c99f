"""Prefix runs: a spec's run taken from the first evaluations of a longer run of another spec.

A spec with ``prefix_of = "OTHER"`` (see :mod:`hdbo.experiments.spec`, "Prefix runs") asks for
runs that another spec of the set also makes, only shorter: the same problem, method, parameters
and seed with a smaller budget. When the method's proposals do not depend on the budget
(``Method.budget_independent``), the shorter run is exactly the longer run's first ``budget``
evaluations (same seeds, same problem instance, same proposals), so ``hdbo reproduce`` copies
them instead of running the method again (li2016's T = 500 tables from its T = 1000 runs).

:func:`prefix_donors` pairs the runs of such specs with the longer runs they can come from;
:func:`derive_prefix_runs` copies the evaluations of the finished longer runs into the store as
finished runs of the shorter configs.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from ..methods.registry import get_method_class
from .spec import ExperimentSpec
from .store import ClaimLostError, Evaluation, RunConfig, RunStore, canonical_json

__all__ = ["derive_prefix_runs", "prefix_donors"]


def _donor_config(config: RunConfig, donor: ExperimentSpec) -> RunConfig | None:
    """The run of ``donor`` (at its scale) whose first ``config.budget`` evaluations are ``config``'s run."""
    if donor.budget < config.budget or config.seed not in donor.seeds:
        return None
    try:
        if not get_method_class(config.method).budget_independent:
            return None
    except ValueError:  # an unknown method: the run itself will say so
        return None
    problem = next((p for p in donor.problems if p.label == config.problem_label), None)
    method = next((m for m in donor.methods if m.label == config.label), None)
    if problem is None or method is None or problem.name != config.problem or method.name != config.method:
        return None
    if (canonical_json(problem.params) != canonical_json(config.problem_params)
            or canonical_json(method.params) != canonical_json(config.method_params)):
        return None
    return RunConfig(
        experiment=donor.name, problem=problem.name, method=method.name, seed=config.seed, budget=donor.budget,
        problem_params=dict(problem.params), method_params=dict(method.params), label=method.label,
        problem_label=problem.label,
    )


def prefix_donors(
    configs: Iterable[RunConfig], specs: Sequence[ExperimentSpec]
) -> list[tuple[RunConfig, RunConfig]]:
    """``(config, donor config)`` for every config that can be taken from a longer run.

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
        is not in ``specs`` or does not qualify (see :func:`_donor_config`) is left out.
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

    A config is skipped when its donor has no finished run in ``store`` with at least
    ``config.budget`` evaluations, when its own run is finished or owned by another live
    process, or when its own stored evaluations (of an earlier, interrupted attempt) are not
    the donor's first ones; otherwise the evaluations it lacks are appended (nothing is
    deleted) and the run is marked finished.

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
        n = config.budget
        ev = store.load_evaluations(rec.id)
        if len(ev) < n or not np.array_equal(ev.t[:n], np.arange(n)):
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
        seconds = float(np.nansum(ev.ask_seconds[:n]) + np.nansum(ev.eval_seconds[:n]))
        try:
            store.append_evaluations(run.id, evals, method_state={}, noise_rng_state=None, wall_seconds=seconds,
                                     owner=claim.owner)
        except ClaimLostError:  # taken over meanwhile: the new owner finishes it
            continue
        store.finish_run(run.id, diagnostics={"derived_from": f"{donor.experiment}, first {n} of {len(ev)} evaluations"},
                         wall_seconds=seconds)
        done.append(config)
    return done
