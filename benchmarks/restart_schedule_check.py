"""ML-II restarts at every refit or only when the data have doubled: cost and fit quality.

The tranthe2020 specs refit the GP after every observation (the paper's protocol). With
``restart_schedule="every"`` each refit is a warm-started L-BFGS-B run plus ``n_restarts = 3``
random restarts; with ``"doubling"`` the restarts are made only at the first fit and whenever
the data have doubled since the last refit that made them. This script measures both sides of
that choice on a spec's own runs (full scale, the spec's method options):

* ``time``: the same run (problem, method, seed) with each schedule; wall seconds and the best
  value found (the trajectories differ, so one seed's best values say nothing about quality).
* ``gap``: one run with restarts at every refit; at each refit the warm start alone is fitted
  too, from the same previous hyperparameters, and the script reports how far its log marginal
  likelihood falls below the multi-start fit's (0 = the warm start found the same optimum).

Run (one process; the machine is shared, so compare within one run)::

    OMP_NUM_THREADS=1 python benchmarks/restart_schedule_check.py time --method GP-UCB --problem Levy --seed 0
    OMP_NUM_THREADS=1 python benchmarks/restart_schedule_check.py gap --method GP-UCB --problem Levy --seed 0

Options: ``--spec`` (default ``experiments/tranthe2020/fig1_d20.toml``), ``--budget`` (default
the spec's full-scale budget).
"""

from __future__ import annotations

import argparse
import copy
import time
from pathlib import Path

import numpy as np

from hdbo import problems
from hdbo.experiments.spec import load_spec
from hdbo.methods import gp_based, make_method

ROOT = Path(__file__).resolve().parents[1]


def _config(spec_path: str, method: str, problem: str, seed: int):
    spec = load_spec(ROOT / spec_path)
    for c in spec.run_configs("full"):
        if c.label == method and problem in str(c.problem_label) and c.seed == seed:
            return c
    raise SystemExit(f"no full-scale run {method!r} on {problem!r} with seed {seed} in {spec_path}")


def _run(cfg, budget: int, **overrides) -> tuple[float, float]:
    prob = problems.get(cfg.problem, **cfg.problem_params)
    params = {**cfg.method_params, **overrides}
    m = make_method(cfg.method, prob.bounds, seed=cfg.seed, budget=budget, structure=prob.structure, **params)
    rng = np.random.default_rng(cfg.seed)
    best, t0 = -np.inf, time.perf_counter()
    for _ in range(budget):
        x = m.ask()
        out = prob.evaluate(x, rng)
        y = float(out[0] if isinstance(out, tuple) else out)
        m.tell(x, y)
        best = max(best, y)
    return time.perf_counter() - t0, best


def time_table(cfg, budget: int) -> None:
    print(f"{cfg.label} on {cfg.problem_label}, seed {cfg.seed}, budget {budget}\n")
    print("| restart_schedule | seconds | best f |")
    print("|---|---:|---:|")
    for schedule in ("every", "doubling"):
        sec, best = _run(cfg, budget, restart_schedule=schedule)
        print(f"| {schedule} | {sec:.1f} | {best:.6g} |", flush=True)


def gap_table(cfg, budget: int) -> None:
    gaps: list[float] = []
    original = gp_based.GPMethod._refit

    def refit(self, X, y):
        warm_lml = None
        if self.gp_ is not None:
            warm = copy.deepcopy(self.gp_)
            warm.n_restarts = 0
            warm.fit(X, y, optimize=True, rng=np.random.default_rng(0))
            warm_lml = float(warm.log_marginal_likelihood())
        gp = original(self, X, y)
        if warm_lml is not None:
            gaps.append(float(gp.log_marginal_likelihood()) - warm_lml)
        return gp

    gp_based.GPMethod._refit = refit
    try:
        _run(cfg, budget, restart_schedule="every")
    finally:
        gp_based.GPMethod._refit = original
    g = np.asarray(gaps)
    print(f"{cfg.label} on {cfg.problem_label}, seed {cfg.seed}, budget {budget}: log marginal likelihood of "
          f"warm start + restarts minus warm start alone, over {g.size} refits\n")
    print("| refits | gap > 0.1 nats | gap > 1 nat | median gap | largest gap |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {g.size} | {int(np.sum(g > 0.1))} | {int(np.sum(g > 1))} | {np.median(g):.3g} | {g.max():.3g} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["time", "gap"])
    parser.add_argument("--spec", default="experiments/tranthe2020/fig1_d20.toml")
    parser.add_argument("--method", default="GP-UCB", help="method label in the spec")
    parser.add_argument("--problem", default="Levy", help="a part of the problem label")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=None)
    args = parser.parse_args()
    cfg = _config(args.spec, args.method, args.problem, args.seed)
    budget = args.budget or cfg.budget
    (time_table if args.mode == "time" else gap_table)(cfg, budget)


if __name__ == "__main__":
    main()
