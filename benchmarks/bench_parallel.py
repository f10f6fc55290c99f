"""The price and the gain of evaluations in flight: regret and wall time for k = 1, 2, 4, 8 (issue 21).

Run:  OMP_NUM_THREADS=1 python benchmarks/bench_parallel.py [--seeds 5] [--budget 60]
                                                             [--eval-seconds 0.4] [--ks 1 2 4 8]

For GP-UCB and Add-GP-UCB (hdbo's defaults) on two of the papers' problems, Branin hidden in
D = 20 (Chen et al. 2012, Djolonga et al. 2013; the run seed draws the 2 active coordinates)
and the additive trimodal function (10, 3, 3) of Kandasamy et al. (2015), each run makes
``--budget`` evaluations with :func:`hdbo.minimize` and ``n_workers = k`` (the default thread
pool). Every evaluation sleeps a duration drawn uniformly from [0.5, 1.5] x ``--eval-seconds``
(seeded by the run seed and the point, so completions arrive out of order as with a real
simulator) and then returns the problem's value. The table gives, per problem, method and k, the
medians over the seeds of:

- ``wall s``: the run's wall time (proposals included);
- ``speed-up``: the median wall time at k = 1 over this one;
- ``S_T``: the simple regret after the budget (``f* - best``; the price of batching shows as a
  larger S_T at the same number of evaluations);
- ``ask s``: the median seconds of a proposal (a batch's time shared among its points).

Rows are appended to ``benchmarks/bench_parallel.csv`` as each run finishes, and runs already
in that file are skipped, so an interrupted benchmark resumes; ``--fresh`` starts over. The
table of the last complete run is in ``benchmarks/bench_parallel.out.md``.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import time
import warnings
import zlib

import numpy as np

from hdbo import minimize, problems

PROBLEMS = {
    "Branin hidden D=20": ("branin", {"dim": 20}),
    "additive trimodal (10,3,3)": ("additive-trimodal", {"dim": 10, "d": 3, "M": 3}),
}
METHODS = ["gp-ucb", "add-gp-ucb"]
FIELDS = ["problem", "method", "k", "seed", "budget", "eval_seconds", "wall_s", "regret", "ask_s_median"]
HERE = os.path.dirname(os.path.abspath(__file__))


class SlowObjective:
    """The problem (negated: minimized) after a sleep that depends on the seed and the point."""

    def __init__(self, problem, seed: int, eval_seconds: float) -> None:
        self.problem, self.seed, self.eval_seconds = problem, seed, eval_seconds

    def __call__(self, x: np.ndarray) -> float:
        key = zlib.crc32(np.asarray(x, dtype=float).tobytes()) ^ (self.seed * 2654435761 % 2**32)
        time.sleep(self.eval_seconds * (0.5 + np.random.default_rng(key).random()))
        return -float(self.problem(np.asarray(x)[None, :])[0])


def one_run(label: str, method: str, k: int, seed: int, budget: int, eval_seconds: float) -> dict:
    name, params = PROBLEMS[label]
    problem = problems.get(name, seed=seed, **params)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = minimize(SlowObjective(problem, seed, eval_seconds), problem.bounds, method=method, seed=seed,
                       budget=budget, n_workers=k)
    wall = time.perf_counter() - t0
    return {"problem": label, "method": method, "k": k, "seed": seed, "budget": budget,
            "eval_seconds": eval_seconds, "wall_s": round(wall, 3),
            "regret": float(problem.optimum_value + res.fun),
            "ask_s_median": round(float(np.median(res.history.ask_seconds)), 4)}


def table(rows: list[dict], ks: list[int]) -> str:
    out = ["| problem | method | k | runs | wall s | speed-up | S_T | ask s |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    for label in PROBLEMS:
        for method in METHODS:
            base = [float(r["wall_s"]) for r in rows if r["problem"] == label and r["method"] == method
                    and int(r["k"]) == 1]
            for k in ks:
                sel = [r for r in rows if r["problem"] == label and r["method"] == method and int(r["k"]) == k]
                if not sel:
                    continue
                wall = statistics.median(float(r["wall_s"]) for r in sel)
                speed = f"{statistics.median(base) / wall:.2f}" if base else "-"
                regret = statistics.median(float(r["regret"]) for r in sel)
                ask = statistics.median(float(r["ask_s_median"]) for r in sel)
                out.append(f"| {label} | {method} | {k} | {len(sel)} | {wall:.1f} | {speed} | {regret:.4g} | "
                           f"{ask:.3f} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--budget", type=int, default=60)
    ap.add_argument("--eval-seconds", type=float, default=0.4)
    ap.add_argument("--ks", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--csv", default=os.path.join(HERE, "bench_parallel.csv"))
    ap.add_argument("--fresh", action="store_true", help="ignore the runs already in --csv")
    args = ap.parse_args()
    rows: list[dict] = []
    if os.path.exists(args.csv) and not args.fresh:
        with open(args.csv, newline="") as fh:
            rows = [r for r in csv.DictReader(fh) if int(r["budget"]) == args.budget
                    and float(r["eval_seconds"]) == args.eval_seconds]
    done = {(r["problem"], r["method"], int(r["k"]), int(r["seed"])) for r in rows}
    new_file = args.fresh or not os.path.exists(args.csv)
    with open(args.csv, "w" if new_file else "a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        if new_file:
            writer.writeheader()
        for seed in range(args.seeds):  # seeds outermost: a stopped run still covers every cell
            for label in PROBLEMS:
                for method in METHODS:
                    for k in args.ks:
                        if (label, method, k, seed) in done:
                            continue
                        row = one_run(label, method, k, seed, args.budget, args.eval_seconds)
                        writer.writerow(row)
                        fh.flush()
                        rows.append(row)
                        print(f"{label} {method} k={k} seed={seed}: wall {row['wall_s']:.1f} s, "
                              f"S_T {row['regret']:.4g}", flush=True)
    print(f"\n{args.budget} evaluations per run, each sleeping U[0.5, 1.5] x {args.eval_seconds} s; "
          f"medians over {args.seeds} seeds\n")
    print(table(rows, args.ks))


if __name__ == "__main__":
    main()
