"""Where an RPP-GP-UCB run spends its time, and the cost of one W-learning evaluation.

Run:  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_rpp_cost.py
      [--budgets 110 310] [--ns 300 600 1000] [--repeats 9]

Prints two tables (the machine is shared, so medians):

1. A cProfile of one short run per budget of RPP-10 (``d = 10``, 5 random decompositions, the paper's
   other defaults, seed 0) on li2016's projected-additive trimodal problem at D = 50 with
   ``--budget`` evaluations (10 initial + T): cumulative seconds of the main parts (acquisition
   by DIRECT in z-space, W learning, the alpha grid, the hyperparameter fits) and their shares.
2. One evaluation of ``projected_log_marginal_likelihood(..., eval_gradient=True)`` (what each
   L-BFGS-B step of :func:`hdbo.structure.learn_projection` costs) at n observations, D = 50,
   5 groups: ``K^{-1}`` from the Cholesky factor by two triangular solves against the identity
   (``cho_solve((L, True), I)``, before) against one triangular inversion and a product
   (``dtrtri``, after), both timed in this process, and the largest difference of the
   log-likelihood and of its gradients between the two (rounding only).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import numpy as np
from scipy.linalg import cho_solve

import hdbo.structure.projection as proj
from hdbo.gp import Additive, SquaredExponential
from hdbo.methods import make_method
from hdbo.problems import get as get_problem

PARTS = [
    ("whole run (ask + tell)", "bench_rpp_cost.py", "run_once"),
    ("acquisition (DIRECT, group by group)", "acquisition/_direct.py", "direct_minimize_many"),
    ("W learning (learn_projection)", "structure/projection.py", "learn_projection"),
    ("likelihood evaluations (W learning + alpha grid)", "structure/projection.py", "projected_log_marginal_likelihood"),
    ("alpha grid (choose_alpha)", "structure/projection.py", "choose_alpha"),
    ("GP hyperparameter fits", "gp/regression.py", "optimize_hyperparameters"),
]


def run_once(budget: int) -> float:
    p = get_problem("projected-trimodal", dim=50, seed=0)
    m = make_method("rpp-gp-ucb", p.bounds, seed=0, d=10, n_decompositions=5, gp_prior="none", maximizer="direct")
    best = -np.inf
    for _ in range(budget):
        x = m.ask()
        y = float(p(x))
        m.tell(x, y)
        best = max(best, y)
    return best


def profile_table(budget: int) -> None:
    prof = cProfile.Profile()
    prof.enable()
    best = run_once(budget)
    prof.disable()
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    cum: dict[str, float] = {}
    for label, file, func in PARTS:
        cum[label] = sum(v[3] for (f, _, fn), v in stats.items() if f.endswith(file) and fn == func)
    total = cum[PARTS[0][0]]
    print(f"Profile of one RPP-10 run, li2016 D = 50, budget {budget} (T = {budget - 10}), seed 0; "
          f"best f = {best:.2f}\n")
    print("| part | cumulative s | share |")
    print("|---|---:|---:|")
    for label, _, _ in PARTS:
        print(f"| {label} | {cum[label]:.2f} | {cum[label] / total:.0%} |")
    print()


def _old_inverse(L: np.ndarray) -> np.ndarray:
    return cho_solve((L, True), np.eye(L.shape[0]))


def median_time(f, repeats: int) -> float:
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


def evaluation_table(ns: list[int], repeats: int) -> None:
    D = 50
    groups = [list(range(i, i + 10)) for i in range(0, D, 10)]
    k = Additive(SquaredExponential(lengthscale=0.8, variance=1.0), groups)
    print(f"One likelihood + gradient evaluation of W learning, D = {D}, 5 groups of 10 (median of {repeats})\n")
    print("| n | before: cho_solve(L, I) | after: dtrtri | ratio | max abs diff lml | max rel diff grad W |")
    print("|---:|---:|---:|---:|---:|---:|")
    new_inverse = proj._inverse_from_cholesky
    for n in ns:
        rng = np.random.default_rng(n)
        X = rng.random((n, D))
        W = np.eye(D) + 0.05 * rng.normal(size=(D, D))
        z = rng.normal(size=n)

        def ev() -> tuple:
            return proj.projected_log_marginal_likelihood(W, X, z, k, 1e-4, eval_gradient=True)

        t_old, t_new = [], []
        try:  # before and after alternate, so both see the same load on the shared machine
            for _ in range(repeats):
                proj._inverse_from_cholesky = _old_inverse
                t_old.append(median_time(ev, 1))
                proj._inverse_from_cholesky = new_inverse
                t_new.append(median_time(ev, 1))
            proj._inverse_from_cholesky = _old_inverse
            l_old, g_old, th_old = ev()
        finally:
            proj._inverse_from_cholesky = new_inverse
        l_new, g_new, th_new = ev()
        t_old, t_new = float(np.median(t_old)), float(np.median(t_new))  # type: ignore[assignment]
        dl = abs(l_new - l_old)
        dg = float(np.abs(g_new - g_old).max() / np.abs(g_old).max())
        print(f"| {n} | {t_old * 1e3:.1f} ms | {t_new * 1e3:.1f} ms | {t_old / t_new:.2f} | {dl:.1e} | {dg:.1e} |")
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budgets", type=int, nargs="+", default=[110, 310])
    ap.add_argument("--ns", type=int, nargs="+", default=[300, 600, 1000])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--skip-profile", action="store_true")
    a = ap.parse_args()
    if not a.skip_profile:
        for b in a.budgets:
            profile_table(b)
    evaluation_table(a.ns, a.repeats)


if __name__ == "__main__":
    main()
