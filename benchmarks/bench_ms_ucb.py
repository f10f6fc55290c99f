"""Cost of one MS-UCB acquisition step as the subspace set Z_t grows.

Run:  OPENBLAS_NUM_THREADS=1 python benchmarks/bench_ms_ucb.py [--dims 20 100] [--ts 1 10 100 300]
      [--n-obs 200] [--repeats 5]
      OPENBLAS_NUM_THREADS=1 python benchmarks/bench_ms_ucb.py --runs-only [--run-dim 300] [--run-budget 100]

Prints up to three tables (medians over ``--repeats``; the machine is shared, so medians, not means):

1. ``MSUCB._acquire`` (screening + stacked L-BFGS-B, the default ``acq_budget = 300 D``
   evaluations and ``10 D`` starts) on a GP with ``--n-obs`` observations, at iterations t
   where ``|Z_t| = N0 sum_{j<=t} j^alpha`` with N0 = 10, alpha = 2 (up to ~10^8 subspaces):
   the cost is set by the budget, not by ``|Z_t|`` (subspaces are generated on demand from a
   counter-based generator; only the ones screened are materialized).
2. Screening 10 random y on each of 1000 subspaces: one vectorized acquisition call over all
   10 000 points (in chunks of 4096) against a Python loop with one call per subspace.
3. Whole runs with the method's defaults (``hdbo.maximize``, seed 0) on the suite's Hartmann-6
   problems at ``--run-dim`` (development instance 0): median and largest proposal time over
   the model-based iterations (``history.ask_seconds`` after the ``n_init = 20`` initial
   points), the best value and the wall time. This is the "proposal time" of
   ``docs/benchmarks.md``; to compare two versions of the code, run the script with each on
   ``PYTHONPATH``, one process at a time.
4. ``--ramp-only``: the setting of ``realworld-tranthe2020-fig5`` at full scale (``ramp-loss``,
   D = 5000, C = 1; d = 10, N0 = 1, alpha = 1, ``acq_budget = 1 500 000``): the GP is given
   ``t - 2`` uniform points past the 20 initial ones, one proposal is made and told (so that
   whatever an iteration keeps for the next is in place), then the next ``--repeats`` proposals
   are timed (iterations t .. t + repeats - 1; median). To compare versions, run it with each
   on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import hdbo

from hdbo.acquisition import UCB
from hdbo.methods import make_method
from hdbo.methods.ms_ucb import subspace_count
from hdbo.problems import get as get_problem

from bench_gp import median_time, objective  # a smooth function of every coordinate; medians


def acquisition_table(dims: list[int], ts: list[int], n_obs: int, repeats: int) -> None:
    N0, alpha = 10, 2
    print(f"MS-UCB acquisition step, GP on {n_obs} points, N0 = {N0}, alpha = {alpha}, "
          f"acq_budget = 300 D, n_starts = 10 D (median of {repeats})\n")
    print("| D | t | |Z_t| | subspaces screened | starts | acq. evaluations | time per iteration |")
    print("|---|---|---|---|---|---|---|")
    for D in dims:
        rng = np.random.default_rng(0)
        X = rng.uniform(-1, 1, (n_obs, D))
        y = objective(X)
        for t in ts:
            if t > n_obs:
                continue
            # iteration = n_told - n_init + 1, so n_init = n_obs + 1 - t puts the method at iteration t
            m = make_method("ms-ucb", [(-1, 1)] * D, seed=0, N0=N0, alpha=alpha, n_init=n_obs + 1 - t,
                            n_restarts=0)
            for xi, yi in zip(X, y):
                m.tell(xi, float(yi))
            gp = m._sync_gp()  # one hyperparameter fit, outside the timing
            assert m.iteration == t
            state = m.rng.bit_generator.state
            diag: dict = {}

            def step() -> None:
                m.rng.bit_generator.state = state
                m._acquire(gp)
                diag.update(m.diagnostics())

            sec = median_time(step, repeats)
            assert diag["n_subspaces"] == subspace_count(t, N0, alpha)
            print(f"| {D} | {t} | {diag['n_subspaces']:,} | {diag['screened_subspaces']:,} | {diag['n_starts']} "
                  f"| {diag['acq_nfev']:,} | {sec:.2f} s |")


def screening_table(dims: list[int], n_obs: int, repeats: int) -> None:
    print(f"\nScreening 10 random y on each of 1000 subspaces (10 000 UCB values, GP on {n_obs} points)\n")
    print("| D | one vectorized pass | loop, one call per subspace | speed-up |")
    print("|---|---|---|---|")
    for D in dims:
        rng = np.random.default_rng(1)
        X = rng.uniform(-1, 1, (n_obs, D))
        m = make_method("ms-ucb", [(-1, 1)] * D, seed=0, n_init=n_obs, n_restarts=0)
        for xi, yi in zip(X, objective(X)):
            m.tell(xi, float(yi))
        acq = UCB(m._sync_gp(), 10.0)
        sub = np.repeat(np.arange(1000), 10)
        Z = m.subspaces(sub)
        Y = rng.uniform(-1, 1, (sub.size, m.d))
        P = m._assemble(Z, Y)

        def batched() -> None:
            for lo in range(0, P.shape[0], 4096):
                acq(P[lo:lo + 4096])

        def looped() -> None:
            for i in range(1000):
                acq(P[10 * i:10 * i + 10])

        tb, tl = median_time(batched, repeats), median_time(looped, repeats)
        print(f"| {D} | {1000 * tb:.0f} ms | {1000 * tl:.0f} ms | {tl / tb:.1f}x |")


def run_table(dim: int, budget: int, problems: list[str]) -> None:
    print(f"\nWhole ms-ucb runs, defaults, D = {dim}, budget {budget}, seed 0, instance 0 "
          f"(hdbo from {hdbo.__file__})\n")
    print("| problem | median proposal | max proposal | best | run |")
    print("|---|---|---|---|---|")
    for name in problems:
        prob = get_problem(name, dim=dim, instance=0)
        t0 = time.perf_counter()
        res = hdbo.maximize(prob, prob.bounds, method="ms-ucb", budget=budget, seed=0)
        wall = time.perf_counter() - t0
        ask = res.history.ask_seconds[res.method.n_init:]
        print(f"| {name} | {np.median(ask):.2f} s | {np.max(ask):.2f} s | {res.fun:.4f} | {wall:.0f} s |")


def ramp_table(ts: list[int], repeats: int) -> None:
    D = 5000
    prob = get_problem("ramp-loss", dim=D, C=1)
    print(f"\nMS-UCB on ramp-loss D = {D} (realworld-tranthe2020-fig5, full scale), "
          f"median of {repeats} consecutive proposals (hdbo from {hdbo.__file__})\n")
    print("| t | |Z_t| | median proposal | max proposal |")
    print("|---|---|---|---|")
    for t in ts:
        m = make_method("ms-ucb", [(-1, 1)] * D, seed=0, d=10, N0=1, alpha=1, n_init=20, acq_budget=1_500_000,
                        gp_prior="none")
        rng = np.random.default_rng(0)
        for x in rng.uniform(-1, 1, (20 + t - 2, D)):
            m.tell(x, float(prob.evaluate(x, rng)[0]))
        times = []
        for k in range(repeats + 1):
            t0 = time.perf_counter()
            x = m.ask()
            if k:
                times.append(time.perf_counter() - t0)
            m.tell(x, float(prob.evaluate(x, rng)[0]))
        print(f"| {t} | {subspace_count(t, 1, 1)} | {np.median(times):.2f} s | {np.max(times):.2f} s |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[20, 100])
    parser.add_argument("--ts", type=int, nargs="+", default=[1, 10, 100, 200])
    parser.add_argument("--n-obs", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--run-dim", type=int, default=300)
    parser.add_argument("--run-budget", type=int, default=100, help="0 skips the whole-run table")
    parser.add_argument("--run-problems", nargs="+", default=["suite-hartmann6-rotated", "suite-hartmann6-hidden"])
    parser.add_argument("--runs-only", action="store_true", help="only the whole-run table")
    parser.add_argument("--ramp-only", action="store_true", help="only the ramp-loss D = 5000 table")
    parser.add_argument("--ramp-ts", type=int, nargs="+", default=[150, 300])
    args = parser.parse_args()
    if args.ramp_only:
        ramp_table(args.ramp_ts, args.repeats)
        return
    if not args.runs_only:
        acquisition_table(args.dims, args.ts, args.n_obs, args.repeats)
        screening_table(args.dims, args.n_obs, args.repeats)
    if args.run_budget > 0:
        run_table(args.run_dim, args.run_budget, args.run_problems)


if __name__ == "__main__":
    main()
