"""Could RPP-GP-UCB's W learning stop earlier? The penalized likelihood at each L-BFGS-B iteration.

Run:  OMP_NUM_THREADS=1 python benchmarks/rpp_w_iterations_check.py [D_GROUP] [BUDGET] [SEED]

(defaults 10 410 0). One RPP-d run (li2016's settings: delta = 0.1, ``w_iters = 200``, DIRECT,
``gp_prior="none"``, the spec's number of random decompositions) on li2016's projected-additive
trimodal problem at D = 50. Each W re-learning (every 25 observations after the exploration
phase) is one L-BFGS-B run of :func:`hdbo.structure.learn_projection`; this script records the
penalized negative log marginal likelihood after each of its iterations (through a callback on
``scipy.optimize.minimize``, which the run does not otherwise use) and prints, per re-learning,
the value at the start and after 25, 50, 100 and all iterations, and the seconds it took. The
run itself is unchanged (the callback only reads). W learning is most of an RPP run's cost at
T = 1000 (``benchmarks/bench_rpp_cost.out.md``): if the objective stopped improving after a few
dozen iterations, ``w_iters`` could be lowered without changing what RPP learns.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import hdbo.structure.projection as proj
from hdbo.methods import make_method
from hdbo.problems import get as get_problem

N_DECOMPOSITIONS = {5: 10, 10: 5, 25: 2}  # experiments/li2016/table1_T1000.toml


def main(argv: list[str]) -> None:
    d = int(argv[0]) if argv else 10
    budget = int(argv[1]) if len(argv) > 1 else 410
    seed = int(argv[2]) if len(argv) > 2 else 0
    records: list[tuple[int, float, list[float], float]] = []
    original = proj.minimize

    def recorded(fun, x0, **kwargs):
        trace: list[float] = []
        start = time.perf_counter()
        res = original(fun, x0, callback=lambda xk: trace.append(float(fun(xk)[0])), **kwargs)
        records.append((len(trace), float(fun(x0)[0]), trace, time.perf_counter() - start))
        return res

    proj.minimize = recorded
    problem = get_problem("projected-trimodal", dim=50, seed=seed)
    method = make_method("rpp-gp-ucb", problem.bounds, seed=seed, d=d, delta=0.1,
                         n_decompositions=N_DECOMPOSITIONS.get(d, 2), gp_prior="none", maximizer="direct")
    n_obs = []
    for _ in range(budget):
        x = method.ask()  # a re-learning happens here, on the observations told so far
        if len(records) > len(n_obs):
            n_obs.append(len(method.y_obs))
        method.tell(x, float(problem(x)))
    print(f"RPP-{d}, li2016 D = 50, budget {budget}, seed {seed}: penalized -log marginal likelihood "
          f"(lower is better) during each W re-learning; final alpha {method.alpha_:.6f}\n")
    print("| n | iterations | start | after 25 | after 50 | after 100 | end | end - after 50 | seconds |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, (nit, f0, trace, sec) in zip(n_obs, records):
        def at(k: int) -> float:
            return trace[min(k, len(trace)) - 1] if trace else f0
        print(f"| {n} | {nit} | {f0:.1f} | {at(25):.1f} | {at(50):.1f} | {at(100):.1f} | {at(len(trace) or 1):.1f} "
              f"| {at(len(trace) or 1) - at(50):.1f} | {sec:.1f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
