"""Time one DIRECT acquisition maximization: the cached posterior path against ``predict``.

Run:  python benchmarks/bench_acquisition.py [--ts 100 250 500] [--repeats 5]

DIRECT (``scipy.optimize.direct``) evaluates the acquisition one point at a time, so the
per-call overhead of the posterior dominates. Two cases, each with the same DIRECT budget
and the same GP, in the same run (the ratio is what to read; the machine is shared, so the
times are medians over ``--repeats``):

1. Add-GP-UCB's group-wise maximization, (D, d', M') = (10, 3, 3): three 3-dimensional
   DIRECT searches of 0.9 * min(5000, 100 D) / 3 = 300 evaluations each, with the group
   posterior from ``GaussianProcess.predict_group`` (checked, general) against
   ``GaussianProcess.posterior_fn(j)`` (cached kernel pieces and inverse factor).
2. GP-UCB in D = 20 with an ARD Matern-5/2 kernel, one DIRECT search of 2000 evaluations,
   ``predict`` against ``posterior_fn()``.

Both paths return the same point (checked).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np

from hdbo.acquisition.maximizers import maximize_direct
from hdbo.gp import GaussianProcess
from hdbo.gp.kernels import Additive, Matern, SquaredExponential


def median_time(fn, repeats: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def additive_case(t: int, repeats: int, rng: np.random.Generator) -> tuple[float, float]:
    groups = [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    X = rng.random((t, 10))
    y = np.sin(3 * X[:, :9]).sum(1) + 0.01 * rng.standard_normal(t)
    gp = GaussianProcess(Additive(SquaredExponential(lengthscale=0.3), groups, shared=True), noise_variance=1e-4)
    gp.fit(X, y, optimize=False)
    root_beta = math.sqrt(0.2 * 3 * math.log(2 * t))
    box = np.array([[0.0, 1.0]] * 3)

    def run(fast: bool) -> np.ndarray:
        parts = []
        for j in range(3):
            if fast:
                post = gp.posterior_fn(j)
                acq = lambda Z, post=post: (lambda m, s: m + root_beta * s)(*post(Z))  # noqa: E731
            else:
                acq = lambda Z, j=j: (lambda m, s: m + root_beta * s)(*gp.predict_group(j, Z))  # noqa: E731
            parts.append(maximize_direct(acq, box, budget=300, rng=rng).x)
        return np.concatenate(parts)

    slow_t, x_slow = median_time(lambda: run(False), repeats)
    fast_t, x_fast = median_time(lambda: run(True), repeats)
    assert np.allclose(x_slow, x_fast), "the two paths chose different points"
    return slow_t, fast_t


def full_case(t: int, repeats: int, rng: np.random.Generator) -> tuple[float, float]:
    D = 20
    X = rng.random((t, D))
    y = -np.sum((X - 0.3) ** 2, axis=1)
    gp = GaussianProcess(Matern(dim=D, ard=True, lengthscale=0.5), noise_variance=1e-4).fit(X, y, optimize=False)
    box = np.array([[0.0, 1.0]] * D)

    def run(fast: bool) -> np.ndarray:
        if fast:
            acq = lambda Z: (lambda m, s: m + 2.0 * s)(*gp.posterior_fn()(Z))  # noqa: E731
        else:
            acq = lambda Z: (lambda m, s: m + 2.0 * s)(*gp.predict(Z))  # noqa: E731
        return maximize_direct(acq, box, budget=2000, rng=rng).x

    slow_t, x_slow = median_time(lambda: run(False), repeats)
    fast_t, x_fast = median_time(lambda: run(True), repeats)
    assert np.allclose(x_slow, x_fast), "the two paths chose different points"
    return slow_t, fast_t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ts", type=int, nargs="+", default=[100, 250, 500], help="numbers of observations")
    parser.add_argument("--repeats", type=int, default=5, help="repetitions (the median is printed)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("case                          t   predict (s)  posterior_fn (s)  speed-up")
    for t in args.ts:
        for name, case in (("add-gp-ucb (10,3,3), 3x300", additive_case), ("gp-ucb D=20 ARD, 2000", full_case)):
            slow, fast = case(t, args.repeats, rng)
            print(f"{name:<28} {t:>4}  {slow:>11.3f}  {fast:>16.3f}  {slow / fast:>7.2f}x")


if __name__ == "__main__":
    main()
