"""The ``hdbo`` command line: run, reproduce, report, suite-report, reproductions-index, list.

Examples
--------
::

    hdbo run --problem branin --dim 20 --method gp-ucb --budget 60
    hdbo run --problem branin --dim 20 --method random --method gp-ei --seeds 5 --budget 100 --workers 2
    hdbo list methods
    hdbo reproduce example --scale quick
    hdbo report --store runs/example.db --out docs/report.md
    hdbo suite-report                  # docs/benchmarks.md from docs/benchmarks/*.csv.gz
    hdbo suite-report --from-store runs/highdim.db   # summaries from a store first
    hdbo reproductions-index           # docs/reproductions/README.md: table Z beside our runs

Exit codes: 0 success, 1 some runs failed, 2 bad input (one-line message on stderr,
nothing written: also a store path that is a folder, lies under a file or in a folder you
cannot write, a file that is not an hdbo store or is of a newer schema version, an output file
that cannot be written, a missing or malformed summary (``suite-report``), an integer above
2**63 - 1, or runs that cannot fit in memory, see
:mod:`hdbo.experiments.resources`),
3 some runs were interrupted because their worker process died (one line per run on stderr;
the other runs finished; rerun the same command to resume them), 130 interrupted by Ctrl-C
(rerun the same command to resume). Runs that another live process is
executing on the same store are left alone and listed as "running elsewhere" on stderr;
they do not change the exit code.

Progress goes to stderr, counted in evaluations (``--no-progress`` turns it off): a bar on
a terminal, one line per 10% otherwise (CI logs).

Problems and methods are registry names (``hdbo list``); nothing is imported because of a
name (``--problem module:attr`` is refused). Problems or methods of your own come from a
module of yours that registers them, named with ``--plugin MODULE`` (``run``, ``reproduce``,
``list``; repeatable); worker processes import it too (see :mod:`hdbo.experiments.plugins`).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

__all__ = ["main"]

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: Largest --budget, --seed, --dim, --runs: SQLite stores signed 64-bit integers.
MAX_INT = 2**63 - 1
#: Largest --seeds count (the seeds 0..N-1 are listed in memory; split larger sweeps).
MAX_SEEDS = 1_000_000


class UsageError(Exception):
    """Bad command-line input: printed as one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """ArgumentParser that raises instead of printing usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        command = self.prog.partition(" ")[2]  # "hdbo run" -> "run"
        raise UsageError(f"{command}: {message}" if command else message)


# ---------------------------------------------------------------------------- helpers
def parse_key_values(items: Sequence[str] | None, *, option: str) -> dict[str, Any]:
    """Parse ``KEY=VALUE`` options into a dict; values are JSON when they parse, else strings.

    Parameters
    ----------
    items : sequence of str or None
        E.g. ``["a=1", 'k="se"', "flag=true", "name=se"]``.
    option : str
        The option's name, for error messages (``"--param"``).

    Returns
    -------
    dict
        ``{"a": 1, "k": "se", "flag": True, "name": "se"}`` for the example above.

    Raises
    ------
    UsageError
        An item without ``=`` or with a key that is not a Python identifier.

    Examples
    --------
    >>> parse_key_values(["acq_budget=500", "kernel=se", "ard=false"], option="--param")
    {'acq_budget': 500, 'kernel': 'se', 'ard': False}
    """
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not _KEY.match(key):
            raise UsageError(f"{option} expects key=value with a Python identifier as key, got {item!r}")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        out[key] = value
    return out


def _method_label(name: str, params: dict[str, Any]) -> str:
    if not params:
        return name
    return name + "(" + ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(params.items())) + ")"


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join("{:<%d}" % w for w in widths)
    lines = [fmt.format(*header), fmt.format(*["-" * w for w in widths])]
    lines += [fmt.format(*r) for r in rows]
    return "\n".join(lines)


def _print_summary(store: Any, run_ids: list[int], summary_runs: Any = ()) -> None:
    from .experiments.report import aggregate, format_mean_se

    groups = aggregate(store, run_ids=run_ids, summary_runs=summary_runs)
    if not groups:
        print("no finished runs")
        return
    rows = []
    for g in groups:
        rows.append(
            [
                g.problem_label,
                g.label,
                str(g.n_runs),
                str(g.budget),
                format_mean_se(*g.simple_regret),
                format_mean_se(*g.best_f),
                "—" if not math.isfinite(g.wall_seconds) else f"{g.wall_seconds:.2f}",
            ]
        )
    print(
        _table(
            rows,
            ["problem", "method", "runs", "T", "simple regret (mean ± SE)", "best f (mean ± SE)", "seconds/run"],
        )
    )


def _load_plugins(args: argparse.Namespace) -> tuple[str, ...]:
    """Import the ``--plugin`` modules (they register problems and methods); their names."""
    from .experiments.plugins import load_plugins

    names = tuple(dict.fromkeys(getattr(args, "plugin", None) or []))
    try:
        load_plugins(names)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"--plugin: {exc}") from None
    return names


def _int_at_most(high: int, why: str) -> Any:
    """An argparse ``type``: an int no larger than ``high`` (the message says why)."""

    def parse(text: str) -> int:
        value = int(text)  # ValueError: argparse says "invalid int value"
        if value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high} ({why}), got {text}")
        return value

    parse.__name__ = "int"  # argparse names the type in its message
    return parse


_INT64 = _int_at_most(MAX_INT, "2**63 - 1, the largest integer a store holds")


def _open_store(path: str | Path, *, create: bool = True) -> Any:
    """A RunStore, or a one-line UsageError when the path cannot be used (nothing is written)."""
    import sqlite3

    from .experiments.store import RunStore, StoreError

    try:
        return RunStore(path, create=create)
    except FileNotFoundError:
        raise UsageError(f"store {str(path)!r} does not exist") from None
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    except (OSError, sqlite3.Error) as exc:
        raise UsageError(f"store {str(path)!r} cannot be used: {exc}") from None


def _write_output(what: str, out: str, write: Callable[[], Path],
                  refused: tuple[type[Exception], ...] = ()) -> int:
    """Run ``write()``, which writes ``--out``; say where ``what`` was written (exit code 0).

    An exception of a ``refused`` type (the input was refused) is a UsageError with its own
    message; any other OSError is one saying ``--out`` cannot be written.
    """
    try:
        path = write()
    except refused as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"--out {out!r} cannot be written: {exc}") from None
    print(f"{what} written to {path}")
    return 0


def _check_output(path: str | Path, option: str) -> Path:
    """Refuse an output file that cannot be written, before any work; nothing is created."""
    import tempfile

    out = Path(path)
    if out.is_dir():
        raise UsageError(f"{option} {str(out)!r} is a folder; give a file path")
    folder = out.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise UsageError(f"{option} {str(out)!r} cannot be written: {str(folder)!r} is a file, not a folder")
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
        if out.exists():
            with out.open("ab"):
                pass
    except OSError as exc:
        where = str(out) if out.exists() else f"folder {str(folder)!r}"
        raise UsageError(f"{option} {str(out)!r} cannot be written ({where}: {exc.strerror or exc})") from None
    return out


def _check_memory(configs: list[Any], workers: int) -> None:
    from .experiments.resources import check_memory

    try:
        check_memory(configs, workers=workers)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _check_dask(address: str | None) -> None:
    if address is None:
        return
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        raise UsageError("--dask needs dask.distributed: pip install 'hdbo[dask]'") from None


def _report_errors(summary: Any, store: Any) -> int:
    """Print the summary, failed, interrupted and elsewhere-running runs to stderr; the exit code."""
    import time

    from ._progress import format_seconds

    print(str(summary), file=sys.stderr)
    for config, err in summary.errors:
        first = err.strip().splitlines()[0] if err.strip() else "error"
        print(f"  failed: {config.problem_label} / {config.label} / seed {config.seed}: {first}", file=sys.stderr)
    for config, text in summary.interrupted:
        why = text.removeprefix("interrupted: ")
        print(f"  interrupted: {config.problem_label} / {config.label} / seed {config.seed}: {why}", file=sys.stderr)
    if summary.interrupted:
        print("  (their evaluations are stored; run the same command again to resume them)", file=sys.stderr)
    for result in summary.running_elsewhere:
        c = store.get_run(result.run_id).config
        owner = result.owner
        who = "another process" if owner is None else f"process {owner.pid} on {owner.host}"
        if owner is not None and owner.heartbeat_at is not None:
            who += f", last heartbeat {format_seconds(time.time() - owner.heartbeat_at)} ago"
        print(
            f"  running elsewhere: {c.problem_label} / {c.label} / seed {c.seed} "
            f"({who}; {result.n_evaluations} of {c.budget} evaluations stored)",
            file=sys.stderr,
        )
    if summary.running_elsewhere:
        print("  (left alone; run the same command again later to resume them if that process stops)",
              file=sys.stderr)
    return 1 if summary.errors else 3 if summary.interrupted else 0


# ---------------------------------------------------------------------------- commands
def _cmd_list(args: argparse.Namespace) -> int:
    from .methods import available_methods

    _load_plugins(args)
    what = args.what
    if what in (None, "methods"):
        if what is None:
            print("methods:")
        for name in available_methods():
            print(("  " if what is None else "") + name)
    if what in (None, "problems"):
        try:
            from .problems import available_problems
        except ImportError:
            raise UsageError("the problem registry (hdbo.problems) is not available in this installation") from None
        if what is None:
            print("problems:")
        for name in available_problems():
            print(("  " if what is None else "") + name)
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from .experiments.plugins import PLUGIN_HELP, check_registry_name
    from .experiments.runner import build_method, build_problem, run_many
    from .experiments.store import RunConfig
    from .methods import available_methods

    try:  # before anything else: a problem is a registry name, never code to import
        check_registry_name(args.problem, "problem")
    except (ValueError, TypeError) as exc:
        raise UsageError(f"--problem: {exc}") from None
    plugins = _load_plugins(args)
    if args.budget <= 0:
        raise UsageError(f"--budget must be > 0, got {args.budget}")
    _check_dask(args.dask)
    if args.workers < 1:
        raise UsageError(f"--workers must be >= 1, got {args.workers}")
    if args.seed is not None:
        seeds = list(dict.fromkeys(args.seed))
        if any(s < 0 for s in seeds):
            raise UsageError("--seed values must be >= 0")
    else:
        if args.seeds <= 0:
            raise UsageError(f"--seeds must be > 0, got {args.seeds}")
        seeds = list(range(args.seeds))
    known = available_methods()
    for m in args.method:
        if m not in known:
            raise UsageError(f"unknown method {m!r}; available methods: {', '.join(known)} ({PLUGIN_HELP})")
    method_params = parse_key_values(args.param, option="--param")
    for reserved in ("seed", "budget", "structure", "bounds"):
        if reserved in method_params:
            raise UsageError(f"--param {reserved}=... is set by the runner; use --seed/--seeds/--budget")
    problem_params = parse_key_values(args.problem_param, option="--problem-param")
    if args.dim is not None:
        problem_params["dim"] = args.dim
    if args.noise_std is not None:
        problem_params["noise_std"] = args.noise_std
    if args.domain is not None:
        problem_params["domain"] = args.domain

    configs = [
        RunConfig(
            experiment=args.experiment,
            problem=args.problem,
            method=m,
            seed=s,
            budget=args.budget,
            problem_params=problem_params,
            method_params=method_params,
            label=_method_label(m, method_params),
        )
        for m in args.method
        for s in seeds
    ]
    # Refuse runs that cannot fit in memory before the problem (its box) is allocated.
    _check_memory(configs, 1 if args.dask else args.workers)
    # Fail fast on bad names/parameters: build the problem and each method once.
    try:
        problem = build_problem(configs[0])
        for m in args.method:
            build_method(next(c for c in configs if c.method == m), problem)
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None

    with _open_store(args.store) as store:
        summary = run_many(
            store, configs, workers=args.workers, progress=not args.no_progress, dask_address=args.dask,
            plugins=plugins,
        )
        _print_summary(store, summary.run_ids)
        print(f"\nstore: {args.store} (experiment {args.experiment!r}); the same command resumes unfinished runs")
        return _report_errors(summary, store)


def _cmd_report(args: argparse.Namespace) -> int:
    from .experiments.report import write_report

    _check_output(args.out, "--out")
    with _open_store(args.store, create=False) as store:
        if args.experiment is not None and args.experiment not in store.experiments():
            have = ", ".join(store.experiments()) or "none"
            raise UsageError(f"no experiment {args.experiment!r} in {args.store} (experiments: {have})")
        title = f"hdbo report: {args.experiment}" if args.experiment else "hdbo report"
        return _write_output(
            "report", args.out,
            lambda: write_report(store, args.out, experiment=args.experiment, title=title, plots=not args.no_plots),
        )


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from .experiments.report import SpecScope, write_report
    from .experiments.spec import SpecError, find_specs, load_spec, validate_names
    from .experiments.summary import config_id, read_summary

    if args.workers < 1:
        raise UsageError(f"--workers must be >= 1, got {args.workers}")
    _check_dask(args.dask)
    if args.runs is not None and args.runs < 1:
        raise UsageError(f"--runs must be >= 1, got {args.runs}")
    if args.runs is not None and args.seed:
        raise UsageError("--runs and --seed cannot be used together")
    if args.summary and args.no_summary:
        raise UsageError("--summary and --no-summary cannot be used together")
    plugins = _load_plugins(args)
    try:
        paths = find_specs(args.name, args.specs_dir)
        specs = [load_spec(p).at_scale(args.scale) for p in paths]
        for spec in specs:
            validate_names(spec)
    except (SpecError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    names = [s.name for s in specs]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise UsageError(f"several specs of {args.name!r} use the experiment name {sorted(dup)[0]!r}")
    scopes = [SpecScope.from_spec(s) for s in specs]  # the whole set: the report says what it holds of it
    all_specs = list(specs)  # donors of prefix_of specs are looked up in the whole set
    for spec in all_specs:
        if spec.prefix_of is not None and spec.prefix_of not in names:
            raise UsageError(f"spec {spec.name!r}: prefix_of names {spec.prefix_of!r}, which is not a spec of "
                             f"{args.name!r} (specs: {', '.join(sorted(names))})")
    if args.only:
        keep = [
            (p, s) for p, s in zip(paths, specs)
            if any(fnmatch.fnmatchcase(s.name, pat) or fnmatch.fnmatchcase(Path(p).stem, pat) for pat in args.only)
        ]
        if not keep:
            have = ", ".join(sorted(names))
            raise UsageError(f"--only {' '.join(args.only)} matches no spec of {args.name!r} (specs: {have})")
        specs = [s for _, s in keep]

    store_path = Path(args.store) if args.store else Path("runs") / f"{args.name}.db"
    report_path = Path(args.report) if args.report else Path("docs") / "reproductions" / f"{args.name}.md"
    configs = [c for spec in specs for c in spec.run_configs()]
    if args.problem:
        configs = [c for c in configs if any(fnmatch.fnmatchcase(c.problem_label, pat) for pat in args.problem)]
        if not configs:
            raise UsageError(f"--problem {' '.join(args.problem)} matches no problem label of the selected specs")
    if args.method:
        configs = [
            c for c in configs
            if any(fnmatch.fnmatchcase(c.label, pat) or fnmatch.fnmatchcase(c.method, pat) for pat in args.method)
        ]
        if not configs:
            raise UsageError(f"--method {' '.join(args.method)} matches no method of the selected specs")
    if args.seed:
        configs = [c for c in configs if c.seed in args.seed]
        if not configs:
            raise UsageError(f"--seed {' '.join(map(str, args.seed))} matches no seed of the selected specs")
    configs = _seed_major(configs, args.runs)
    scale = args.scale if args.runs is None else f"{args.scale}, first {args.runs} seed(s)"
    if args.seed:
        scale = f"{args.scale}, seed(s) {', '.join(map(str, sorted(set(args.seed))))}"
    summary_path = None
    if not args.no_summary:
        summary_path = Path(args.summary) if args.summary else report_path.parent / "summaries" / (
            report_path.stem + ".csv.gz")
    committed: dict[str, Any] = {}  # config id -> finished run of the summary
    if summary_path is not None and summary_path.exists():
        try:
            committed = {r.config: r for r in read_summary(summary_path) if r.status == "finished" and r.config}
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    if args.no_run and not store_path.exists() and not committed:
        raise UsageError(f"--no-run: store {str(store_path)!r} does not exist")
    _check_output(report_path, "--report")
    if summary_path is not None:
        _check_output(summary_path, "--summary")
    ids = {config_id(c): c for c in configs}
    todo = [c for c in configs if config_id(c) not in committed]
    if not args.no_run:  # before the store is made (the runs shared with another spec still counted)
        _check_memory(todo, 1 if args.dask else args.workers)
    store = _open_store(":memory:" if args.no_run and not store_path.exists() else store_path)
    if committed and todo:  # runs shared with another spec whose run only the summary holds: copied there
        try:
            copied = _copy_in_summary(store, summary_path, todo, all_specs)
        except BaseException:
            store.close()
            raise
        if copied:
            committed = {r.config: r for r in read_summary(summary_path) if r.status == "finished" and r.config}
            todo = [c for c in configs if config_id(c) not in committed]
            print(f"{copied} run(s) copied in {summary_path} from the same runs of another spec (prefix_of)",
                  file=sys.stderr)
    print(
        f"{args.name} ({scale}): {len(specs)} spec(s), {len(configs)} runs -> {store_path}"
        + (f" ({len(configs) - len(todo)} already done in {summary_path})" if len(todo) < len(configs) else "")
        + (" (report only)" if args.no_run else ""),
        file=sys.stderr,
    )
    with store:
        if args.no_run:
            summary = None
            if store.path != ":memory:":  # runs shared with another spec's finished runs: copied, not run
                from .experiments.prefix import derive_prefix_runs, prefix_donors

                derived = derive_prefix_runs(store, prefix_donors(todo, all_specs))
                if derived:
                    print(f"{len(derived)} run(s) taken from the evaluations of another spec's runs (prefix_of)",
                          file=sys.stderr)
        else:
            summary = _run_with_prefixes(store, todo, all_specs, args, plugins)
        found = {cid: rec for cid, rec in ((cid, store.find_run(c)) for cid, c in ids.items()) if rec is not None}
        run_ids = [rec.id for rec in found.values()]
        finished_here = {cid for cid, rec in found.items() if rec.status == "finished"}
        from_summary = [r for cid, r in committed.items() if cid in ids and cid not in finished_here]
        if summary_path is not None and finished_here:
            _merge_into_summary(store, [found[cid].id for cid in finished_here], summary_path)
        write_report(
            store,
            report_path,
            run_ids=run_ids,
            summary_runs=from_summary,
            title=f"Reproduction: {args.name}",
            scopes=scopes,
            scale=scale,
            descriptions={s.name: s.description for s in specs},
            references={s.name: s.references for s in specs},
            claims={s.name: s.claims for s in specs},
            diagnostics={s.name: s.diagnostics for s in specs if s.diagnostics},
            paper=args.name,  # figures/<set>/ next to the report, shared by the set's quick and full reports
        )
        _print_summary(store, run_ids, from_summary)
        if summary_path is not None and finished_here:
            print(f"summary of the finished runs written to {summary_path}")
        print(f"\nreport written to {report_path}")
        return 0 if summary is None else _report_errors(summary, store)


def _copy_in_summary(store: Any, summary_path: Any, configs: list[Any], all_specs: list[Any]) -> int:
    """Copy in the summary the runs of ``configs`` that are runs of another spec it holds finished
    (``prefix_of``; see :mod:`hdbo.experiments.prefix`), except where the store can do it: a
    config with a run in the store (finished, or interrupted and to be completed there) or whose
    donor run the store holds finished is left to :func:`_run_with_prefixes`, which copies in the
    store (with the whole diagnostics and exact seconds). Returns how many were copied."""
    from .experiments.prefix import prefix_donors, summary_copies
    from .experiments.summary import copy_summary_runs

    def store_has(config: Any, finished: bool) -> bool:
        rec = store.find_run(config)
        return rec is not None and (rec.status == "finished" or not finished)

    pairs = [(c, d) for c, d in prefix_donors(configs, all_specs)
             if not store_has(c, finished=False) and not store_has(d, finished=True)]
    return len(copy_summary_runs(summary_path, summary_copies(pairs))) if pairs else 0


def _run_with_prefixes(store: Any, todo: list[Any], all_specs: list[Any], args: argparse.Namespace,
                       plugins: Any) -> Any:
    """``run_many`` on ``todo``, taking the runs of ``prefix_of`` specs from the runs they share.

    Runs whose donor run (the same run, or a longer one) is already finished are copied first;
    those whose donor is among ``todo`` wait for it and are copied after; any still without a
    finished donor are then run as usual (see "Prefix runs" in :mod:`hdbo.experiments.spec`).
    """
    from .experiments.prefix import derive_prefix_runs, prefix_donors
    from .experiments.runner import run_many
    from .experiments.summary import config_id

    def run(configs: list[Any]) -> Any:
        return run_many(store, configs, workers=args.workers, progress=not args.no_progress,
                        dask_address=args.dask, plugins=plugins)

    pairs = {config_id(c): (c, d) for c, d in prefix_donors(todo, all_specs)}
    prefixed = {s.name for s in all_specs if s.prefix_of is not None}
    n_alone = sum(c.experiment in prefixed for c in todo) - len(pairs)
    if n_alone:
        print(f"{n_alone} run(s) of prefix_of specs are not runs of the spec they name (another problem, method, "
              "parameters, seed or budget) and are run as usual", file=sys.stderr)
    derived = {config_id(c) for c in derive_prefix_runs(store, pairs.values())}
    todo_ids = {config_id(c) for c in todo}
    later = [c for c in todo if (cid := config_id(c)) in pairs and cid not in derived
             and config_id(pairs[cid][1]) in todo_ids]
    later_ids = {config_id(c) for c in later}
    summary = run([c for c in todo if config_id(c) not in derived and config_id(c) not in later_ids])
    if later:
        now = {config_id(c) for c in derive_prefix_runs(store, [pairs[config_id(c)] for c in later])}
        derived |= now
        rest = [c for c in later if config_id(c) not in now]
        if rest:
            more = run(rest)
            summary.results += more.results
            summary.errors += more.errors
            summary.interrupted += more.interrupted
            summary.wall_seconds += more.wall_seconds
    if derived:
        print(f"{len(derived)} run(s) taken from the evaluations of another spec's runs (prefix_of)", file=sys.stderr)
    return summary


def _merge_into_summary(store: Any, run_ids: list[int], summary_path: Path) -> None:
    """Merge the store's finished runs ``run_ids`` into the summary file (the store's copy wins)."""
    import tempfile

    from .experiments.summary import export_summary, merge_summaries

    if store.path == ":memory:":
        return
    summary_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=summary_path.parent) as tmp:
        fresh = Path(tmp) / "fresh.csv.gz"
        export_summary(store.path, fresh, run_ids=run_ids, noisy_values=False)  # reports use f and the regret
        merged = Path(tmp) / "merged.csv.gz"
        merge_summaries([summary_path, fresh] if summary_path.exists() else [fresh], merged)
        os.replace(merged, summary_path)


def _cmd_suite_report(args: argparse.Namespace) -> int:
    from .experiments.suite_report import write_suite_report

    default_folder = Path("docs/benchmarks")
    if args.from_store is not None:
        default_folder = _export_store(args)  # report from what was just written, wherever --out is
    paths = [Path(p) for p in args.summaries] or sorted(default_folder.glob("*.csv.gz"))
    if not paths:
        raise UsageError("no summaries given and none found in docs/benchmarks/*.csv.gz (run it from the "
                         "repository root or name the .csv.gz files)")
    for path in paths:
        if not path.is_file():
            raise UsageError(f"summary {str(path)!r} does not exist")
    _check_output(args.out, "--out")
    return _write_output("report", args.out, lambda: write_suite_report(paths, args.out), refused=(ValueError,))


def _cmd_reproductions_index(args: argparse.Namespace) -> int:
    """``hdbo reproductions-index``: the page of every table-Z result next to ours (hdbo.experiments.index)."""
    from .experiments.index import write_index
    from .experiments.spec import SpecError

    if args.summaries is not None and not Path(args.summaries).is_dir():
        raise UsageError(f"--summaries {args.summaries!r} is not a folder")
    _check_output(args.out, "--out")
    return _write_output("index", args.out,
                         lambda: write_index(args.out, specs_dir=args.specs_dir, summaries_dir=args.summaries),
                         refused=(FileNotFoundError, SpecError, ValueError))


def _export_store(args: argparse.Namespace) -> Path:
    """``suite-report --from-store``: every experiment of the store to ``<folder>/<experiment>.csv.gz``.

    Returns the folder (``benchmarks/`` next to ``--out``).
    """
    from .experiments.summary import export_summary

    folder = Path(args.out).parent / "benchmarks"
    with _open_store(args.from_store, create=False) as store:
        experiments = store.experiments()
    if not experiments:
        raise UsageError(f"--from-store {args.from_store!r} holds no experiment")
    folder.mkdir(parents=True, exist_ok=True)
    for name in experiments:
        out = folder / f"{name}.csv.gz"
        n = export_summary(args.from_store, out, experiments=[name])
        print(f"summary of {name}: {n} evaluations -> {out}")
    return folder


def _seed_major(configs: list[Any], runs: int | None) -> list[Any]:
    """Order runs seed by seed (all runs of a spec's first seed, then its second, ...).

    A run that is stopped part-way then leaves complete seeds behind: every method and
    problem has the same number of finished runs. ``runs`` keeps only each spec's first
    ``runs`` seeds (in the spec's order of seeds).
    """
    rank: dict[tuple[str, int], int] = {}
    for c in configs:
        rank.setdefault((c.experiment, c.seed), sum(1 for e, _ in rank if e == c.experiment))
    order = sorted(range(len(configs)), key=lambda i: (rank[configs[i].experiment, configs[i].seed], i))
    return [configs[i] for i in order if runs is None or rank[configs[i].experiment, configs[i].seed] < runs]


# ---------------------------------------------------------------------------- parser
def _add_plugin_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--plugin", action="append", metavar="MODULE",
        help="import this module first; it registers problems/methods of your own with "
        "hdbo.problems.register_problem or hdbo.methods.register (repeat for several; the module "
        "must be importable, e.g. PYTHONPATH=.)",
    )


def _add_parallel_options(parser: argparse.ArgumentParser) -> None:
    """``--workers`` and ``--dask`` of ``hdbo run`` and ``hdbo reproduce``."""
    parser.add_argument(
        "--workers", type=int, default=1,
        help="parallel worker processes on this machine (default 1); they send their evaluations back "
        "and only this process writes the store",
    )
    parser.add_argument(
        "--dask", metavar="ADDRESS",
        help="run on the dask.distributed scheduler at ADDRESS (e.g. tcp://HOST:8786): the workers execute "
        "the runs in chunks and send the evaluations back, only this process writes the store (no shared "
        "file system needed); hdbo and the --plugin modules must be installed on the workers",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``hdbo`` command.

    Returns
    -------
    argparse.ArgumentParser
        With the subcommands ``run``, ``list``, ``report``, ``reproduce`` and ``suite-report``; its
        ``error`` raises :class:`UsageError` instead of exiting.
    """
    parser = _Parser(prog="hdbo", description="High-dimensional Bayesian optimization: experiments and reports.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=_Parser)

    run = sub.add_parser("run", help="run methods on a problem and store every evaluation")
    run.add_argument("--problem", required=True, help="registered problem name (see 'hdbo list problems')")
    run.add_argument("--dim", type=_INT64, help="number of input dimensions of the problem")
    run.add_argument("--noise-std", type=float, help="standard deviation of the observation noise")
    run.add_argument("--domain", choices=("unit", "symmetric"), help="problem domain")
    run.add_argument(
        "--problem-param", action="append", metavar="KEY=VALUE", help="extra problem parameter (JSON value)"
    )
    run.add_argument("--method", action="append", required=True, help="method name; repeat for several methods")
    run.add_argument(
        "--param", action="append", metavar="KEY=VALUE", help="method parameter, JSON when it parses (acq_budget=500)"
    )
    seeds = run.add_mutually_exclusive_group()
    seeds.add_argument(
        "--seeds", type=_int_at_most(MAX_SEEDS, "split larger sweeps into several calls"), default=1,
        help=f"number of seeds 0..N-1 (default 1, at most {MAX_SEEDS})",
    )
    seeds.add_argument("--seed", type=_INT64, action="append", help="explicit seed; repeat for several")
    run.add_argument("--budget", type=_INT64, required=True, help="evaluations per run (at most 2**63 - 1)")
    run.add_argument("--store", default="runs.db", help="SQLite store (default runs.db)")
    run.add_argument("--experiment", default="run", help="experiment name in the store (default 'run')")
    _add_parallel_options(run)
    run.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    _add_plugin_option(run)
    run.set_defaults(func=_cmd_run)

    lst = sub.add_parser("list", help="list registered methods or problems")
    lst.add_argument("what", nargs="?", choices=("methods", "problems"))
    _add_plugin_option(lst)
    lst.set_defaults(func=_cmd_list)

    rep = sub.add_parser("report", help="markdown tables and regret plots from a store")
    rep.add_argument("--store", default="runs.db", help="SQLite store (default runs.db)")
    rep.add_argument("--experiment", help="only this experiment")
    rep.add_argument("--out", required=True, help="markdown file to write; figures go to figures/STEM/ next to it")
    rep.add_argument("--no-plots", action="store_true", help="tables only")
    rep.set_defaults(func=_cmd_report)

    rpr = sub.add_parser("reproduce", help="run the experiment specs of a paper and write the report")
    rpr.add_argument("name", help="spec set: experiments/NAME/*.toml or experiments/NAME.toml")
    rpr.add_argument("--scale", choices=("quick", "full"), default="quick", help="quick (default) or full")
    rpr.add_argument("--store", help="SQLite store (default runs/NAME.db)")
    rpr.add_argument("--report", help="markdown report (default docs/reproductions/NAME.md); "
                     "figures go to figures/NAME/ next to it")
    rpr.add_argument("--specs-dir", help="folder holding the specs (default ./experiments or the repository's)")
    _add_parallel_options(rpr)
    rpr.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    rpr.add_argument(
        "--only", action="append", metavar="PATTERN",
        help="run only the specs whose experiment name or file name (without .toml) matches this "
        "shell pattern; repeat for several (default: every spec)",
    )
    rpr.add_argument(
        "--problem", action="append", metavar="PATTERN",
        help="run only the problems whose label (as in the report, e.g. '(24,6,4)') matches this "
        "shell pattern; repeat for several (default: every problem)",
    )
    rpr.add_argument(
        "--method", action="append", metavar="PATTERN",
        help="run only the methods whose label (as in the report) or registered name matches this "
        "shell pattern, e.g. 'peer:*'; repeat for several (default: every method)",
    )
    rpr.add_argument(
        "--runs", type=_INT64, metavar="N",
        help="run only the first N seeds of each spec (the report states the runs it used); "
        "runs go seed by seed in any case, so an interrupted call leaves whole seeds",
    )
    rpr.add_argument(
        "--seed", action="append", type=_INT64, metavar="K",
        help="run only the spec seed K (repeat for several; in the high-dimensional suite the seed is the "
        "problem instance), e.g. to split a spec's runs between machines (default: every seed)",
    )
    rpr.add_argument(
        "--no-run", action="store_true",
        help="run nothing: write the report from the runs already in the store and the summary (runs "
             "that a prefix_of spec shares with another spec's finished runs are still copied, see "
             "experiments/README.md)",
    )
    rpr.add_argument(
        "--summary", metavar="PATH",
        help="compact summary of the finished runs (.csv.gz), the file to commit: a run in it counts as done "
        "(it is not run again) and goes into the report; the store's finished runs are merged into it "
        "(default: summaries/<report name>.csv.gz next to the report)",
    )
    rpr.add_argument("--no-summary", action="store_true", help="neither read nor write a summary")
    _add_plugin_option(rpr)
    rpr.set_defaults(func=_cmd_reproduce)

    srp = sub.add_parser("suite-report", help="the high-dimensional suite's report from committed summaries")
    srp.add_argument(
        "summaries", nargs="*", metavar="SUMMARY",
        help="summary files (.csv.gz) written by hdbo.experiments.export_summary (default: docs/benchmarks/*.csv.gz)",
    )
    srp.add_argument("--out", default="docs/benchmarks.md",
                     help="markdown file to write (default docs/benchmarks.md); figures go to benchmarks/ next to it")
    srp.add_argument(
        "--from-store", metavar="STORE",
        help="first write a summary of every experiment of this store to benchmarks/<experiment>.csv.gz "
        "next to --out (replacing it), then report from the summaries",
    )
    srp.set_defaults(func=_cmd_suite_report)

    rix = sub.add_parser("reproductions-index", help="the page of every result of SPEC.md's table Z next to ours")
    rix.add_argument("--out", default="docs/reproductions/README.md",
                     help="markdown file to write (default docs/reproductions/README.md); reports are linked next to it")
    rix.add_argument("--summaries", metavar="DIR",
                     help="folder of the run summaries (*.csv.gz; default: summaries/ next to --out)")
    rix.add_argument("--specs-dir", help="folder holding the specs and table_z.toml (default ./experiments or the repository's)")
    rix.set_defaults(func=_cmd_reproductions_index)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hdbo`` command.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name (default ``sys.argv[1:]``).

    Returns
    -------
    int
        0 success, 1 some runs failed, 2 bad input (one line on stderr), 3 some runs interrupted
        because their worker process died (the same command resumes them), 130 interrupted by
        Ctrl-C (the same command resumes).

    Examples
    --------
    >>> main(["list", "methods"])  # doctest: +ELLIPSIS
    add-gp-ucb
    ...
    0
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return int(args.func(args))
    except UsageError as exc:
        print(f"hdbo: error: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help / --version
        return int(exc.code or 0) if not isinstance(exc.code, str) else 2
    except KeyboardInterrupt:
        print("hdbo: interrupted; run the same command again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
