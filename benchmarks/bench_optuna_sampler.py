"""What hdbo costs through Optuna: HDBOSampler's time per trial against hdbo's own ``ask`` (issue 24).

Run:  OMP_NUM_THREADS=1 python benchmarks/bench_optuna_sampler.py [--dims 10 50 100] [--ts 50 200]
                                                                  [--methods auto gp-ucb] [--trials 5]
                                                                  [--quality-runs 5] [--quality-budget 40]

Part 1, overhead. For each method, D and t, on the suite's Levy problem in D dimensions
(instance 1, the shifted box; its values are only data here), in one run and interleaved:

* **hdbo's own ask**: an :class:`hdbo.Optimizer` told t uniformly random points asks once (not
  timed: its first model fit), is told the value, and then ``--trials`` times asks (timed) and is
  told: a long-lived optimizer at t evaluations, which refits its GP on its schedule,
  warm-started, and updates the factorization in between.
* **through Optuna**: an Optuna study (in memory, and for D = 10 also an SQLite RDB file) holding
  the same t points as completed trials, with :class:`~hdbo.integrations.optuna.HDBOSampler`
  running the same method and seed; one trial is asked and told (not timed: it fills the
  sampler's cache, as in a running study), then ``--trials`` times ``study.ask()`` plus the
  ``suggest_float`` of every parameter (timed: all a user waits for) and ``study.tell``.
  ``HDBOSampler.timings`` splits each proposal into reading the trials, rebuilding the
  optimizer (telling the new trials, the state round trip of the pending points and the
  generator), and the method's ask.

The ratio is the mean seconds per trial through Optuna over the mean seconds of hdbo's own ask
(means, since refits are rare and long: a median hides them). Through Optuna the method's GP is
fitted from scratch at every trial (the sampler rebuilds it from the trials), which is most of
the difference.

Part 2, quality at small scale (``--quality-runs`` 0 skips it): hdbo's ``auto`` against ``auto``
through Optuna (the registered method ``hdbo-optuna``, :mod:`hdbo.integrations.optuna_plugin`),
the same seeds, on the suite's Levy and Ackley problems at D = 20 with budget
``--quality-budget``; best value per run (minimization convention, lower is better) and the
paired differences. This is a smoke check, not the suite: the suite's column "hdbo through
Optuna" comes from the specs (``docs/guide/optuna.md`` gives the command).

The output is a markdown report on stdout (``benchmarks/bench_optuna_sampler.out.md`` holds one run).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
import warnings

import numpy as np

import optuna
from optuna.distributions import FloatDistribution
from optuna.trial import create_trial

from hdbo import Optimizer, problems
from hdbo.integrations.optuna import HDBOSampler, IndependentSamplingWarning

#: Small acquisition budgets are not used: each method runs at its defaults, as users run it.
SEED = 0


def _problem(dim: int):
    return problems.get("suite-levy", dim=dim, instance=1)


def _values(problem, X: np.ndarray) -> np.ndarray:
    return -np.asarray(problem(X), dtype=float)  # the problems maximize; the study minimizes


def own_ask(method: str, problem, X: np.ndarray, n_trials: int) -> list[float]:
    """Seconds of ``n_trials`` asks of a long-lived optimizer told the points ``X`` first."""
    opt = Optimizer(problem.bounds, method=method, seed=SEED, direction="minimize")
    opt.tell(X, list(_values(problem, X)))
    x = opt.ask()  # the first fit: not timed
    opt.tell(x, float(_values(problem, x[None, :])[0]))
    out = []
    for _ in range(n_trials):
        t0 = time.perf_counter()
        x = opt.ask()
        out.append(time.perf_counter() - t0)
        opt.tell(x, float(_values(problem, x[None, :])[0]))
    return out


def through_optuna(method: str, problem, X: np.ndarray, n_trials: int, storage: str | None) -> dict[str, list[float]]:
    """Seconds per trial through Optuna (ask + suggest) and the sampler's split, for ``n_trials`` trials."""
    dim = problem.dim
    names = [f"x{i:03d}" for i in range(dim)]
    dists = {n: FloatDistribution(float(lo), float(hi)) for n, lo, hi in zip(names, problem.bounds.lower,
                                                                            problem.bounds.upper)}
    sampler = HDBOSampler(method, seed=SEED)
    study = optuna.create_study(direction="minimize", sampler=sampler, storage=storage)
    y = _values(problem, X)
    study.add_trials([create_trial(params=dict(zip(names, map(float, x))), distributions=dists, value=float(v))
                      for x, v in zip(X, y)])

    def one_trial() -> float:
        t0 = time.perf_counter()
        trial = study.ask()
        x = np.array([trial.suggest_float(n, d.low, d.high) for n, d in dists.items()])
        dt = time.perf_counter() - t0
        study.tell(trial, float(_values(problem, x[None, :])[0]))
        return dt

    one_trial()  # fills the sampler's cache: not timed
    total = [one_trial() for _ in range(n_trials)]
    timings = sampler.timings[-n_trials:]
    assert not any(t.fallback for t in timings) and all(t.cached for t in timings)
    return {"total": total, "read": [t.read_s for t in timings], "rebuild": [t.rebuild_s for t in timings],
            "ask": [t.ask_s for t in timings], "optuna": [a - t.total_s for a, t in zip(total, timings)]}


def overhead_table(args: argparse.Namespace) -> list[str]:
    lines = [
        "| method | D | t | storage | hdbo ask: mean s | hdbo ask: median s | through Optuna: mean s "
        "| through Optuna: median s | of which: read (median) | rebuild (median) | method's ask (median) "
        "| Optuna's trial and storage (median) | ratio of means | ratio of medians |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    tmp = tempfile.TemporaryDirectory()
    for dim in args.dims:
        problem = _problem(dim)
        for t in args.ts:
            X = problem.bounds.sample(t, np.random.default_rng(1000 + t))
            for method in args.methods:
                storages = [("memory", None)]
                if dim == min(args.dims):
                    storages.append(("sqlite", f"sqlite:///{os.path.join(tmp.name, f'{method}-{dim}-{t}.db')}"))
                for label, storage in storages:
                    own = own_ask(method, problem, X, args.trials)
                    thr = through_optuna(method, problem, X, args.trials, storage)
                    m_own, m_thr = statistics.fmean(own), statistics.fmean(thr["total"])
                    md_own, md_thr = statistics.median(own), statistics.median(thr["total"])
                    lines.append(
                        f"| {method} | {dim} | {t} | {label} | {m_own:.3f} | {md_own:.3f} | {m_thr:.3f} | {md_thr:.3f} "
                        f"| {statistics.median(thr['read']):.4f} | {statistics.median(thr['rebuild']):.4f} "
                        f"| {statistics.median(thr['ask']):.3f} | {statistics.median(thr['optuna']):.4f} "
                        f"| {m_thr / m_own:.1f} | {md_thr / md_own:.1f} |")
                    print(lines[-1], file=sys.stderr, flush=True)
    tmp.cleanup()
    return lines


def quality_table(args: argparse.Namespace) -> list[str]:
    import hdbo.integrations.optuna_plugin  # noqa: F401  (registers "hdbo-optuna")

    lines = ["| problem | run (seed) | hdbo auto: best | auto through Optuna: best | difference (Optuna - own) |",
             "|---|---:|---:|---:|---:|"]
    summary = []
    for name in ("suite-levy", "suite-ackley"):
        problem = problems.get(name, dim=20, instance=1)
        label = f"{name.removeprefix('suite-').capitalize()} D=20"
        own_best, thr_best = [], []
        for seed in range(args.quality_runs):
            best = {}
            for method in ("auto", "hdbo-optuna"):
                opt = Optimizer(problem.bounds, method=method, seed=seed, budget=args.quality_budget)
                for _ in range(args.quality_budget):
                    x = opt.ask()
                    opt.tell(x, float(_values(problem, x[None, :])[0]))
                best[method] = opt.best[1]
            own_best.append(best["auto"])
            thr_best.append(best["hdbo-optuna"])
            lines.append(f"| {label} | {seed} | {best['auto']:.4g} | {best['hdbo-optuna']:.4g} "
                         f"| {best['hdbo-optuna'] - best['auto']:+.3g} |")
            print(lines[-1], file=sys.stderr, flush=True)
        diff = np.array(thr_best) - np.array(own_best)
        spread = float(np.subtract(*np.percentile(own_best, [75, 25])))
        summary.append(f"| {label} | {args.quality_runs} | {np.median(own_best):.4g} | {np.median(thr_best):.4g} "
                       f"| {np.median(diff):+.3g} | {int(np.sum(diff < 0))} of {diff.size} | {spread:.3g} |")
    return lines + ["", "| problem | runs | hdbo auto: median best | through Optuna: median best "
                    "| median paired difference | runs where Optuna's is lower | hdbo auto: interquartile range |",
                    "|---|---:|---:|---:|---:|---|---:|", *summary]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dims", type=int, nargs="+", default=[10, 50, 100])
    ap.add_argument("--ts", type=int, nargs="+", default=[50, 200])
    ap.add_argument("--methods", nargs="+", default=["auto", "gp-ucb"])
    ap.add_argument("--trials", type=int, default=5, help="timed trials per configuration")
    ap.add_argument("--quality-runs", type=int, default=5)
    ap.add_argument("--quality-budget", type=int, default=40)
    args = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.simplefilter("ignore", IndependentSamplingWarning)
    t_start = time.perf_counter()
    print(f"# bench_optuna_sampler\n\nOptuna {optuna.__version__}, numpy {np.__version__}, Python "
          f"{platform.python_version()}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}; "
          f"{args.trials} timed trials per row; methods at their defaults; seed {SEED}.\n", flush=True)
    print("## Seconds per trial: hdbo's own ask against HDBOSampler\n", flush=True)
    lines = overhead_table(args)
    print("\n".join(lines) + "\n", flush=True)
    if args.quality_runs > 0:
        print(f"## Best values at small scale: auto against auto through Optuna (budget {args.quality_budget})\n",
              flush=True)
        print("\n".join(quality_table(args)) + "\n", flush=True)
    print(f"Total time: {time.perf_counter() - t_start:.0f} s.")


if __name__ == "__main__":
    main()
