"""DIRECT backends compared: hdbo's batched original DIRECT against ``scipy.optimize.direct``.

Run:  python benchmarks/bench_direct.py [--repeats 5]

Two tables, both measured in one run (read the ratios; the machine is shared, so times are
medians over ``--repeats``):

1. Search quality on test functions (minimization on the unit cube, same budget): the best
   value each backend reaches. The backends break ties differently, so their points differ.
2. Time of one UCB acquisition maximization with a fitted GP (the cached posterior of
   ``GaussianProcess.posterior_fn``), as GP-UCB and Add-GP-UCB run it: a 2- and 3-dimensional
   group search of 300 points with t = 500 observations, and a 20- and 40-dimensional search
   of 2000 points with t = 100 and 500. SciPy's DIRECT stops on its volume tolerance after
   about 120 points in 20 or more dimensions, so the table gives the points each evaluated
   and compares time per point.
3. Add-GP-UCB's acquisition: every group's UCB maximized with 0.9 min(5000, 100 D) / M DIRECT
   points, by one search per group (``maximize_direct`` in a loop) and by the searches in
   lockstep (``maximize_direct_many``, what Add-GP-UCB runs). Both sample the same points;
   the table checks that and gives the ratio.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np

from hdbo.acquisition.maximizers import maximize_direct, maximize_direct_many
from hdbo.gp import GaussianProcess
from hdbo.gp.kernels import Additive, Matern, SquaredExponential


def branin(U: np.ndarray) -> np.ndarray:
    x, y = 15 * U[:, 0] - 5, 15 * U[:, 1]
    return (y - 5.1 / (4 * np.pi**2) * x**2 + 5 / np.pi * x - 6) ** 2 + 10 * (1 - 1 / (8 * np.pi)) * np.cos(x) + 10


def hartmann6(U: np.ndarray) -> np.ndarray:
    A = np.array([[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14], [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]])
    P = 1e-4 * np.array(
        [[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
         [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]]
    )
    alpha = np.array([1.0, 1.2, 3.0, 3.2])
    return -(alpha * np.exp(-((U[:, None, :] - P) ** 2 * A).sum(-1))).sum(-1)


def rastrigin(U: np.ndarray) -> np.ndarray:
    Z = 10.24 * U - 5.12 + 0.3  # optimum moved off the centre
    return 10 * U.shape[1] + (Z**2 - 10 * np.cos(2 * np.pi * Z)).sum(1)


def quality_table() -> None:
    rng = np.random.default_rng(0)
    print("Best value reached (minimization, unit cube)")
    print(f"{'function':14s} {'budget':>7s} {'batched':>12s} {'scipy':>12s}")
    for name, f, d in [("branin", branin, 2), ("hartmann6", hartmann6, 6), ("rastrigin-5", rastrigin, 5),
                       ("rastrigin-40", rastrigin, 40)]:
        box = np.array([[0.0, 1.0]] * d)
        for budget in (100, 500, 2000):
            out = [-maximize_direct(lambda U: -f(U), box, budget=budget, rng=rng, backend=b).value
                   for b in ("batched", "scipy")]
            print(f"{name:14s} {budget:7d} {out[0]:12.6g} {out[1]:12.6g}")


def median_time(fn, repeats: int) -> tuple[float, int]:
    """Median seconds of ``fn()`` and the ``nfev`` of its result."""
    times, nfev = [], 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        nfev = fn().nfev
        times.append(time.perf_counter() - t0)
    return statistics.median(times), nfev


def timing_table(repeats: int) -> None:
    print("\nOne UCB maximization with DIRECT (median seconds)")
    print("(SciPy stops early on its volume tolerance in 20+ dimensions: compare time per point)")
    print(f"{'dim':>4s} {'t':>5s} {'budget':>7s} {'scipy s':>9s} {'(points)':>9s} {'batched s':>10s} {'(points)':>9s}"
          f" {'per-point speed-up':>19s}")
    rng = np.random.default_rng(1)
    for d, t, budget in [(2, 500, 300), (3, 500, 300), (20, 100, 2000), (20, 500, 2000), (40, 500, 2000)]:
        X = rng.random((t, d))
        y = np.sin(3 * X).sum(1) + 0.01 * rng.standard_normal(t)
        gp = GaussianProcess(Matern(nu=2.5, lengthscale=0.3 * math.sqrt(d)), noise_variance=1e-4)
        gp.fit(X, y, optimize=False)
        post = gp.posterior_fn()
        root_beta = math.sqrt(0.2 * d * math.log(2 * t))

        def acq(Z: np.ndarray) -> np.ndarray:
            m, s = post(Z)
            return m + root_beta * s

        box = np.array([[0.0, 1.0]] * d)
        ts = {b: median_time(lambda b=b: maximize_direct(acq, box, budget=budget, rng=rng, backend=b), repeats)
              for b in ("scipy", "batched")}
        (s_t, s_n), (b_t, b_n) = ts["scipy"], ts["batched"]
        print(f"{d:4d} {t:5d} {budget:7d} {s_t:9.4f} {s_n:9d} {b_t:10.4f} {b_n:9d} {(s_t / s_n) / (b_t / b_n):18.1f}x")


def groups_table(repeats: int) -> None:
    print("\nAdd-GP-UCB acquisition: all groups' DIRECT searches (median seconds)")
    print(f"{'D':>4s} {'groups':>8s} {'t':>5s} {'points/group':>13s} {'one by one s':>13s} {'lockstep s':>11s}"
          f" {'speed-up':>9s} {'same points':>12s}")
    rng = np.random.default_rng(2)
    for D, d, t in [(10, 3, 100), (24, 6, 300), (24, 3, 300), (40, 3, 100), (40, 3, 500), (40, 5, 500)]:
        groups = [list(range(i, min(i + d, D))) for i in range(0, D, d)]
        X = rng.random((t, D))
        y = np.sin(3 * X).sum(1) + 0.01 * rng.standard_normal(t)
        gp = GaussianProcess(Additive(SquaredExponential(lengthscale=0.2), groups), noise_variance=1e-4)
        gp.fit(X, y, optimize=False)
        root_beta = math.sqrt(0.2 * d * math.log(2 * t))
        acqs = [lambda Z, post=gp.posterior_fn(j): (lambda m, s: m + root_beta * s)(*post(Z)) for j in range(len(groups))]
        boxes = [np.array([[0.0, 1.0]] * len(g)) for g in groups]
        per_group = int(0.9 * min(5000, 100 * D)) // len(groups)

        def one_by_one() -> list:
            return [maximize_direct(f, b, budget=per_group, rng=rng) for f, b in zip(acqs, boxes)]

        def lockstep() -> list:
            return maximize_direct_many(acqs, boxes, budgets=[per_group] * len(acqs), rng=rng)

        times = {}
        for name, fn in (("one", one_by_one), ("lockstep", lockstep)):
            runs = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                out = fn()
                runs.append(time.perf_counter() - t0)
            times[name] = (statistics.median(runs), out)
        same = all(np.array_equal(a.x, b.x) and a.nfev == b.nfev for a, b in zip(times["one"][1], times["lockstep"][1]))
        (o_t, _), (l_t, _) = times["one"], times["lockstep"]
        print(f"{D:4d} {len(groups):4d} x {d:<2d} {t:5d} {per_group:13d} {o_t:13.4f} {l_t:11.4f} {o_t / l_t:8.2f}x"
              f" {str(same):>12s}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    quality_table()
    timing_table(args.repeats)
    groups_table(args.repeats)


if __name__ == "__main__":
    main()
