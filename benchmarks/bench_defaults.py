"""hdbo's GP defaults before and after issue 19: what a fit and a proposal cost, what they find.

Run:  python benchmarks/bench_defaults.py [--dims 20 100 300] [--points 50 100] [--repeats 3]
                                           [--sphere-seeds 0 1 2 3] [--no-sphere]

*before* is the papers' setting, still available by option and pinned in the reproduction
specs: ``gp_prior="none"`` (bare ML-II, 3 random restarts, length-scales in [0.05, 20]) and
``maximizer="direct"`` (DIRECT over the box plus a 10% L-BFGS-B polish). *after* is hdbo's
default: MAP under the dimension-scaled prior with a learned constant mean (a warm start plus,
when the data have doubled, a restart from the prior's location) and the local acquisition
search (:func:`hdbo.acquisition.maximize_local`).

Table 1 (cost), for gp-ucb on ``t`` random points of ``[0, 1]^D`` with a smooth test function
of a random 6-D projection of the inputs: the seconds of one hyperparameter fit (as the method
makes its first one, with its restarts) and of one proposal on the fitted model (the
acquisition search alone), median over ``--repeats`` repeats, and the ratio after / before
measured in the same run.

Table 2 (what they find): the 10-D sphere ``sum((x - 0.3)**2)`` over ``[0, 1]^10`` with 40
evaluations (issue 19), median best over the seeds for gp-ucb, gp-ei, add-gp-ucb, rpp-gp-ucb and
auto in both settings, and random search.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np

import hdbo
from hdbo.methods import make_method
from hdbo.methods.gp_based import PAPER_SETTINGS

SETTINGS = {"before": dict(PAPER_SETTINGS), "after": {}}


def _data(dim: int, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    W = np.linalg.qr(rng.standard_normal((dim, 6)))[0]
    X = rng.random((n, dim))
    Z = (X - 0.5) @ W
    y = -np.sum(Z**2, axis=1) + np.sin(3.0 * Z[:, 0])
    return X, y


def _costs(dim: int, n: int, setting: dict, seed: int) -> tuple[float, float]:
    """(fit seconds, proposal seconds) for gp-ucb with ``setting`` on ``n`` points in ``dim`` dimensions."""
    X, y = _data(dim, n, seed)
    m = make_method("gp-ucb", [(0.0, 1.0)] * dim, seed=seed, n_init=1, **setting)
    for x, v in zip(X, y):
        m.tell(x, float(v))
    t0 = time.perf_counter()
    gp = m._sync_gp()  # the first fit, with the method's restarts
    t1 = time.perf_counter()
    m._acquire(gp)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1


def cost_table(dims: list[int], points: list[int], repeats: int) -> None:
    print("Table 1: seconds per hyperparameter fit and per proposal (gp-ucb), median of", repeats)
    print()
    print("| D | t | fit before | fit after | ratio | proposal before | proposal after | ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for dim in dims:
        for n in points:
            res = {name: [_costs(dim, n, s, seed) for seed in range(repeats)] for name, s in SETTINGS.items()}
            fb, fa = (statistics.median(r[0] for r in res[k]) for k in ("before", "after"))
            pb, pa = (statistics.median(r[1] for r in res[k]) for k in ("before", "after"))
            print(f"| {dim} | {n} | {fb:.3f} | {fa:.3f} | {fa / fb:.2f} | {pb:.3f} | {pa:.3f} | {pa / pb:.2f} |",
                  flush=True)
    print()


def sphere_table(seeds: list[int]) -> None:
    def sphere(x: np.ndarray) -> float:
        return float(np.sum((np.asarray(x) - 0.3) ** 2))

    print("Table 2: 10-D sphere, 40 evaluations, median best over seeds", seeds)
    print()
    print("| method | before | after |")
    print("|---|---|---|")
    for method in ("auto", "gp-ucb", "gp-ei", "add-gp-ucb", "rpp-gp-ucb"):
        row = []
        for s in SETTINGS.values():
            best = [hdbo.minimize(sphere, [(0.0, 1.0)] * 10, method=method, budget=40, seed=seed, **s).fun
                    for seed in seeds]
            row.append(statistics.median(best))
        print(f"| {method} | {row[0]:.4f} | {row[1]:.4f} |", flush=True)
    rnd = statistics.median(hdbo.minimize(sphere, [(0.0, 1.0)] * 10, method="random", budget=40, seed=seed).fun
                            for seed in seeds)
    print(f"| random | {rnd:.4f} | {rnd:.4f} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[20, 100, 300])
    parser.add_argument("--points", type=int, nargs="+", default=[50, 100])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sphere-seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--no-sphere", action="store_true")
    args = parser.parse_args()
    warnings.simplefilter("ignore", RuntimeWarning)
    cost_table(args.dims, args.points, args.repeats)
    if not args.no_sphere:
        sphere_table(args.sphere_seeds)


if __name__ == "__main__":
    main()
