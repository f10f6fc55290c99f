"""Compare ``auto`` runs in stores with the committed suite runs, instance by instance (issue 19).

Run:  python benchmarks/judge_auto.py STORE [STORE ...] [--method auto]

How a candidate default is judged: a copy of the package with the candidate made the default is
run on the suite's judging instances into a new store, e.g.

    PYTHONPATH=/tmp/candidate hdbo reproduce highdim --scale full --only 'highdim-b100*' \\
        --method 'hdbo auto*' --store runs/candidate-b100.db --no-summary

and this script prints, per (budget, problem), the new and the committed median best (minimization
convention) and the per-instance values of both, then on how many runs the candidate is better, worse
or the same (within 1e-8 relative) than the committed ``docs/benchmarks/*.csv.gz`` runs of the same
method, budget, problem and instance.
"""

from __future__ import annotations

import argparse
import glob
import os
import tempfile

import numpy as np

from hdbo.experiments.summary import export_summary, read_summary

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _bests(runs, method):
    return {(r.budget, r.problem_label, r.seed): -float(np.nanmax(r.f))
            for r in runs if r.method == method and r.status == "finished"}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stores", nargs="+")
    ap.add_argument("--method", default="auto")
    args = ap.parse_args(argv)
    base: dict = {}
    for f in sorted(glob.glob(os.path.join(ROOT, "docs", "benchmarks", "*.csv.gz"))):
        base.update(_bests(read_summary(f), args.method))
    new: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, store in enumerate(args.stores):
            out = os.path.join(tmp, f"{i}.csv.gz")
            export_summary(store, out)
            new.update(_bests(read_summary(out), args.method))
    better = worse = same = 0
    print("| budget | problem | new median | committed median | new per instance | committed per instance |")
    print("|---:|---|---:|---:|---|---|")
    for budget, problem in sorted({k[:2] for k in new}):
        keys = sorted(k for k in new if k[:2] == (budget, problem) and k in base)
        if not keys:
            continue
        a, b = [new[k] for k in keys], [base[k] for k in keys]
        for x, y in zip(a, b):
            tol = 1e-8 * max(abs(x), abs(y))
            better += x < y - tol
            worse += x > y + tol
            same += abs(x - y) <= tol
        print(f"| {budget} | {problem} | {np.median(a):.6g} | {np.median(b):.6g} | "
              + " ".join(f"{v:.5g}" for v in a) + " | " + " ".join(f"{v:.5g}" for v in b) + " |")
    print(f"\nAgainst the committed runs: better {better}, worse {worse}, same {same}.")


if __name__ == "__main__":
    main()
