"""Time gp-ucb's ask/tell and the GP's incremental update against a full refit.

Run:  python benchmarks/bench_gp.py [--dims 20 100] [--ts 100 250 500 1000] [--repeats 5]

Prints two tables (medians over ``--repeats``; the machine is shared, so medians, not means):

1. gp-ucb at dimension D with t observations: one ``ask()`` with a DIRECT budget of
   ``--acq-budget`` acquisition evaluations and no hyperparameter refit (the GP is brought up
   to date by an O(t^2) update), and one ``tell()``.
2. GaussianProcess with t observations: ``update`` (append one point, O(t^2)) against
   ``refactorize`` (Cholesky from scratch, O(t^3), same hyperparameters) and against ``fit``
   with hyperparameter optimization (``--fit-restarts`` restarts), with the ratios measured
   in the same run.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from hdbo.gp import GaussianProcess, make_kernel
from hdbo.methods import make_method


def objective(U: np.ndarray) -> np.ndarray:
    """A smooth test function on the unit cube that depends on all coordinates."""
    U = np.atleast_2d(U)
    return -np.sum((U - 0.3) ** 2, axis=1) + 0.3 * np.sin(5 * U[:, 0]) * np.cos(3 * U[:, 1])


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench_ask_tell(D: int, t: int, acq_budget: int, repeats: int, rng: np.random.Generator) -> tuple[float, float]:
    bounds = np.column_stack([np.zeros(D), np.ones(D)])
    m = make_method("gp-ucb", bounds, seed=0, acq_budget=acq_budget, refit_every=10**9, refit_growth=None)
    X = rng.random((t, D))
    for x, y in zip(X, objective(X)):
        m.tell(x, float(y))
    # Fit once with fixed, plausible hyperparameters (the refit is not what is timed here).
    m.gp_ = m._make_gp().fit(m.X_obs, m.y_obs, optimize=False)
    m._n_at_refit = t
    asks, tells = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        x = m.ask()
        t1 = time.perf_counter()
        m.tell(x, float(objective(x)[0]))
        t2 = time.perf_counter()
        asks.append(t1 - t0)
        tells.append(t2 - t1)
    return statistics.median(asks), statistics.median(tells)


def bench_update(D: int, t: int, repeats: int, fit_restarts: int, rng: np.random.Generator) -> tuple[float, float, float]:
    X = rng.random((t + repeats, D))
    y = objective(X)
    gp = GaussianProcess(make_kernel("matern52", D, ard=True, lengthscale=0.5), n_restarts=fit_restarts)
    gp.fit(X[:t], y[:t], optimize=False)
    updates = []
    for i in range(repeats):
        t0 = time.perf_counter()
        gp.update(X[t + i], y[t + i])
        updates.append(time.perf_counter() - t0)
    refactor = median_time(gp.refactorize, repeats)
    fit = median_time(lambda: gp.fit(X[:t], y[:t], optimize=True, rng=np.random.default_rng(0)), 1)
    return statistics.median(updates), refactor, fit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[20, 100])
    parser.add_argument("--ts", type=int, nargs="+", default=[100, 250, 500, 1000])
    parser.add_argument("--acq-budget", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--fit-restarts", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(0)

    print(f"gp-ucb ask/tell (DIRECT budget {args.acq_budget}, no hyperparameter refit; median of {args.repeats})")
    print(f"{'D':>5} {'t':>6} {'ask [s]':>9} {'tell [ms]':>10}")
    for D in args.dims:
        for t in args.ts:
            ask, tell = bench_ask_tell(D, t, args.acq_budget, args.repeats, rng)
            print(f"{D:>5} {t:>6} {ask:>9.3f} {tell * 1e3:>10.3f}")

    print()
    print(f"GaussianProcess: update vs refactorize vs fit (Matern-5/2 ARD, fit with {args.fit_restarts} restarts)")
    print(f"{'D':>5} {'t':>6} {'update [ms]':>12} {'refactor [ms]':>14} {'fit [s]':>9} {'refactor/update':>16} {'fit/update':>11}")
    for D in args.dims:
        for t in args.ts:
            up, ref, fit = bench_update(D, t, args.repeats, args.fit_restarts, rng)
            print(f"{D:>5} {t:>6} {up * 1e3:>12.3f} {ref * 1e3:>14.3f} {fit:>9.2f} {ref / up:>16.1f} {fit / up:>11.0f}")


if __name__ == "__main__":
    main()
