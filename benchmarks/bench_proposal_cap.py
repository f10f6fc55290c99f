"""Longest single proposal of every hdbo method at D = 300 (issue 19: "no single proposal over 30 s").

Run:  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_proposal_cap.py
      [--methods rpp-gp-ucb ms-ucb ...] [--budget 300] [--dim 300] [--time-limit SECONDS]
      [--csv benchmarks/bench_proposal_cap.csv] [--table-only] [--force]

For every registered method that applies to a plain black box (the methods of
``experiments/highdim/b300.toml``: no ``peer:*``, no oracle ``exact-subspace-ucb`` or ``cws``,
no ``si-bo`` whose structure phase alone outlasts the budget; see that file's header), one
``hdbo.maximize`` run with the method's defaults (``hds`` with ``noise_variance = 0.01`` as in
the suite's specs) on ``suite-hartmann6-rotated`` (cheap to evaluate, so the time is the
method's) at ``--dim`` (development instance 0, run seed 0) for ``--budget`` evaluations. From
``history.ask_seconds`` (the wall time of each ``ask``, i.e. of each proposal, initial design
included) it records the median and the largest proposal time and the evaluation (1-based) at
which the largest occurred.

Runs are slow for some methods at budget 300 (many minutes), so the script works in parts:
each finished run appends one row to ``--csv``; a method with a row for the same problem,
dimension, budget and seed is skipped unless ``--force`` is given (the new row then replaces it, at
the end of the CSV); ``--methods`` picks a subset.
``--time-limit`` stops a run after that many seconds of wall time (the row then has fewer
evaluations than the budget; its maximum still counts). At the end the whole CSV is printed as
a Markdown table, flagging proposals over ``--cap`` seconds. Runs happen one at a time, in this
process; keep the machine's other load in mind when reading the seconds.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import time
from pathlib import Path

import numpy as np

import hdbo
from hdbo.methods import available_methods
from hdbo.problems import get as get_problem

HERE = Path(__file__).resolve().parent
# Excluded from the black-box comparison, as in experiments/highdim/b300.toml.
EXCLUDED = {"exact-subspace-ucb", "cws", "si-bo"}
# The suite specs' settings for methods whose defaults do not suit noise-free problems.
OPTIONS: dict[str, dict[str, float]] = {"hds": {"noise_variance": 0.01}}
# Most expensive first (so a partial run answers the question for them first).
AT_RISK = ["rpp-gp-ucb", "pp-gp-ucb", "add-gp-ucb", "ms-ucb", "dropout-ucb", "gp-ei", "gp-ucb", "auto"]
FIELDS = ["method", "problem", "dim", "budget", "seed", "evaluations", "median_s", "max_s", "max_at",
          "run_s", "best", "stopped", "date"]


def default_methods() -> list[str]:
    """Every applicable registered method, the ones most at risk first."""
    names = [m for m in available_methods() if not m.startswith("peer:") and m not in EXCLUDED]
    return [m for m in AT_RISK if m in names] + sorted(m for m in names if m not in AT_RISK)


def read_rows(path: Path) -> list[dict[str, str]]:
    """The rows of the CSV (empty if it does not exist)."""
    if not path.exists():
        return []
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def drop_row(path: Path, method: str, key: tuple[str, str, str, str]) -> None:
    """Remove the method's rows for this problem, dimension, budget and seed (a --force rerun replaces them)."""
    rows = [r for r in read_rows(path)
            if not (r["method"] == method and (r["problem"], r["dim"], r["budget"], r["seed"]) == key)]
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)


def append_row(path: Path, row: dict[str, object]) -> None:
    """Append one row, writing the header first if the file is new."""
    new = not path.exists()
    with path.open("a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS)
        if new:
            writer.writeheader()
        writer.writerow(row)


def run_one(method: str, problem: str, dim: int, budget: int, seed: int, time_limit: float | None
            ) -> dict[str, object]:
    """One ``hdbo.maximize`` run; the CSV row with its proposal times."""
    prob = get_problem(problem, dim=dim, instance=0)
    start = time.perf_counter()

    def stop(x: np.ndarray, y: float) -> bool:
        return time_limit is not None and time.perf_counter() - start > time_limit

    res = hdbo.maximize(prob, prob.bounds, method=method, budget=budget, seed=seed, callback=stop,
                        **OPTIONS.get(method, {}))
    run_s = time.perf_counter() - start
    ask = np.asarray(res.history.ask_seconds)
    i = int(np.argmax(ask))
    return {"method": method, "problem": problem, "dim": dim, "budget": budget, "seed": seed,
            "evaluations": ask.size, "median_s": f"{np.median(ask):.3f}", "max_s": f"{ask[i]:.2f}",
            "max_at": i + 1, "run_s": f"{run_s:.0f}", "best": f"{res.fun:.4f}", "stopped": int(res.status == 2),
            "date": datetime.date.today().isoformat()}


def print_table(rows: list[dict[str, str]], cap: float) -> None:
    """The rows as a Markdown table."""
    print(f"| method | problem | D | evaluations | median proposal (s) | max proposal (s) | max at evaluation "
          f"| run (s) | best | over {cap:g} s | date |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        evals = r["evaluations"] if r["evaluations"] == r["budget"] else f"{r['evaluations']} of {r['budget']} (stopped)"
        over = "**yes**" if float(r["max_s"]) > cap else "no"
        print(f"| {r['method']} | {r['problem']} | {r['dim']} | {evals} | {r['median_s']} | {r['max_s']} "
              f"| {r['max_at']} | {r['run_s']} | {r['best']} | {over} | {r['date']} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", default=None, help="default: every applicable method")
    parser.add_argument("--problem", default="suite-hartmann6-rotated")
    parser.add_argument("--dim", type=int, default=300)
    parser.add_argument("--budget", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=None, help="stop a run after this many seconds")
    parser.add_argument("--cap", type=float, default=30.0, help="proposal seconds flagged in the table")
    parser.add_argument("--csv", type=Path, default=HERE / "bench_proposal_cap.csv")
    parser.add_argument("--force", action="store_true", help="rerun methods that already have a row")
    parser.add_argument("--table-only", action="store_true", help="print the CSV's table and run nothing")
    args = parser.parse_args()

    methods = args.methods or default_methods()
    unknown = sorted(set(methods) - set(available_methods()))
    if unknown:
        parser.error(f"unknown methods {unknown}; valid: {available_methods()}")
    if not args.table_only:
        key = (args.problem, str(args.dim), str(args.budget), str(args.seed))
        done = {r["method"] for r in read_rows(args.csv) if (r["problem"], r["dim"], r["budget"], r["seed"]) == key}
        for m in methods:
            if m in done and not args.force:
                print(f"{m}: already in {args.csv.name}, skipped")
                continue
            row = run_one(m, args.problem, args.dim, args.budget, args.seed, args.time_limit)
            if m in done:
                drop_row(args.csv, m, key)
            append_row(args.csv, row)
            print(f"{m}: median {row['median_s']} s, max {row['max_s']} s at evaluation {row['max_at']} "
                  f"({row['evaluations']} evaluations, {row['run_s']} s)", flush=True)
    print()
    print_table(read_rows(args.csv), args.cap)


if __name__ == "__main__":
    main()
