"""What ``auto``'s kernel selection costs (issue 19): one refit, and a whole run.

Run:  python benchmarks/bench_kernel_selection.py [--dims 100 300] [--points 50 100] [--repeats 3]
                                                   [--run-problems suite-hartmann6-hidden:300 suite-ackley:100]

``kernel_selection="none"`` refits one GP (the ARD kernel); ``"loo"`` (the default since
2026-11-27) refits an isotropic GP as well and scores both by their leave-one-out log predictive
density. Table 1: seconds of one refit as ``auto`` makes it (warm start from the previous fit,
no restart: the refits between the doublings of the data), median over ``--repeats``, on ``t``
random points of ``[0, 1]^D`` with a smooth function of a random 6-D projection. Table 2:
seconds of a whole budget-100 run of ``auto`` on suite problems, development instance 0,
median over ``--repeats``. The two settings are measured alternately in the same run, so the
ratios hold even on a shared machine whose absolute seconds drift.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np

import hdbo
from hdbo import problems
from hdbo.methods import make_method

SETTINGS = ("none", "loo")


def _data(dim: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    A = np.linalg.qr(rng.normal(size=(dim, 6)))[0]
    X = rng.uniform(size=(n, dim))
    Z = (X - 0.5) @ A
    return X, np.sin(3 * Z[:, 0]) + np.sum(Z[:, 1:] ** 2, axis=1)


def refit_seconds(dim: int, n: int, setting: str, seed: int) -> float:
    """One warm-started refit (no restart) after 10% more data, as ``auto`` schedules it."""
    X, y = _data(dim, n, seed)
    m = make_method("auto", [(0.0, 1.0)] * dim, seed=seed, kernel_selection=setting)
    first = int(0.9 * n)
    for i in range(first):
        m.tell(X[i], y[i])
    m._sync_gp()  # first fit (with its restart)
    for i in range(first, n):
        m.tell(X[i], y[i])
    t0 = time.perf_counter()
    m._refit(*m._gp_data())
    return time.perf_counter() - t0


def run_seconds(name: str, dim: int, setting: str, budget: int = 100) -> tuple[float, float]:
    kw = {} if name in ("suite-halfcheetah", "suite-svm") else {"dim": dim}
    p = problems.get(name, instance=0, **kw)
    t0 = time.perf_counter()
    res = hdbo.minimize(lambda x: -p(x), p.bounds, budget=budget, seed=0, kernel_selection=setting)
    return time.perf_counter() - t0, res.fun


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dims", type=int, nargs="*", default=[100, 300])
    ap.add_argument("--points", type=int, nargs="*", default=[50, 100])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--run-problems", nargs="*", default=["suite-hartmann6-hidden:300", "suite-ackley:100"])
    args = ap.parse_args()
    warnings.filterwarnings("ignore")

    print("Table 1: seconds of one warm-started refit of auto, median of", args.repeats)
    print()
    print("| D | t | none | loo | ratio loo / none |")
    print("|---:|---:|---:|---:|---:|")
    for dim in args.dims:
        for n in args.points:
            times: dict[str, list[float]] = {s: [] for s in SETTINGS}
            for r in range(args.repeats):
                for s in SETTINGS:
                    times[s].append(refit_seconds(dim, n, s, r))
            med = {s: statistics.median(v) for s, v in times.items()}
            ratio = med["loo"] / med["none"]
            print(f"| {dim} | {n} | {med['none']:.3f} | {med['loo']:.3f} | {ratio:.2f} |", flush=True)
    print()
    print("Table 2: seconds of a whole budget-100 run of auto (development instance 0), median of", args.repeats)
    print()
    print("| problem | D | none | loo | ratio loo / none | best none | best loo |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for spec in args.run_problems:
        name, dim = spec.split(":")
        secs: dict[str, list[float]] = {s: [] for s in SETTINGS}
        best: dict[str, float] = {}
        for _ in range(args.repeats):
            for s in SETTINGS:
                sec, best[s] = run_seconds(name, int(dim), s)
                secs[s].append(sec)
        med = {s: statistics.median(v) for s, v in secs.items()}
        print(f"| {name} | {dim} | {med['none']:.1f} | {med['loo']:.1f} | {med['loo'] / med['none']:.2f} "
              f"| {best['none']:.4g} | {best['loo']:.4g} |", flush=True)


if __name__ == "__main__":
    main()
