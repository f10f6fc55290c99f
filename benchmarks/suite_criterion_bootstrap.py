"""How firmly does hdbo auto hold issue 19's "best median against every peer" criterion?

Run:  python benchmarks/suite_criterion_bootstrap.py [--budget 100] [--resamples 20000]

Reads the suite's committed summaries (``docs/benchmarks/*.csv.gz`` of this repository). For each
problem at the given budget it takes the instances hdbo auto and every peer finished (the report
ranks on the instances every method of the cell finished; today these are the same) and
resamples them with replacement (a bootstrap over problem instances, the same draw for every
method of the cell, independent between cells). In each resample it asks whether hdbo auto's
median best value is strictly better than every peer's (a tie, equal within 1e-12 relative,
is not a win, as in ``docs/benchmarks.md``). The table gives that frequency per cell; the last
lines give the distribution of the number of cells won, which is what the criterion counts
(at least 8 of 10). A cell near 0.5 turns on which instances were drawn; a cell near 0 needs a
better method, not another draw. With 3 instances there are only 10 distinct resamples, so a
cell won on all 3 always shows 1.00: the shares overstate how firm a small cell is, and the mean
count is the resamples' mean, not a prediction for new instances.
"""

from __future__ import annotations

import argparse
import glob
import math
from pathlib import Path

import numpy as np

from hdbo.experiments.suite_report import TIE_RTOL
from hdbo.experiments.summary import read_summary

AUTO = "auto"
SUMMARIES = Path(__file__).resolve().parent.parent / "docs" / "benchmarks"


def _tied(a, b):  # the report's tie rule (suite_report._tied), on arrays
    return np.abs(a - b) <= TIE_RTOL * np.maximum(np.abs(a), np.abs(b))


def _cells(budget: int) -> dict[str, dict[str, dict[int, float]]]:
    """problem label -> method -> seed -> best value (minimization convention), finished runs."""
    out: dict[str, dict[str, dict[int, float]]] = {}
    paths = sorted(glob.glob(str(SUMMARIES / "*.csv.gz")))
    if not paths:
        raise SystemExit(f"no summaries in {SUMMARIES}")
    for path in paths:
        for r in read_summary(path):
            if r.status != "finished" or r.budget != budget:
                continue
            if r.method != AUTO and not r.method.startswith("peer:"):
                continue
            ok = np.isfinite(r.f)
            best = float(-np.max(r.f[ok])) if ok.any() else math.inf
            out.setdefault(r.problem_label, {}).setdefault(r.method, {})[r.seed] = best
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=int, default=100)
    ap.add_argument("--resamples", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    cells = _cells(args.budget)
    won = np.zeros(args.resamples, dtype=int)
    rows = []
    for label, by_method in sorted(cells.items()):
        peers = sorted(m for m in by_method if m.startswith("peer:"))
        if AUTO not in by_method or not peers:
            continue
        seeds = sorted(set.intersection(*(set(by_method[m]) for m in [AUTO, *peers])))
        if not seeds:
            continue
        auto = np.array([by_method[AUTO][s] for s in seeds])
        peer = np.array([[by_method[m][s] for s in seeds] for m in peers])
        idx = rng.integers(0, len(seeds), size=(args.resamples, len(seeds)))
        a_med = np.median(auto[idx], axis=1)
        p_med = np.median(peer[:, idx], axis=2)
        win = ((a_med < p_med) & ~_tied(a_med, p_med)).all(axis=0)
        won += win
        a0, p0 = np.median(auto), np.median(peer, axis=1)
        now = (a0 < p0) & ~_tied(a0, p0)
        rows.append((label, len(seeds), bool(now.all()), float(win.mean())))
    print(f"Budget {args.budget}: hdbo auto against every peer, {args.resamples} bootstrap resamples of the "
          f"instances (seed {args.seed})\n")
    print("| problem | instances | best median now | share of resamples with the best median |")
    print("|---|---:|---|---:|")
    for label, n, now, share in rows:
        print(f"| {label} | {n} | {'yes' if now else 'no'} | {share:.2f} |")
    counts = np.bincount(won, minlength=len(rows) + 1)
    print(f"\nCells won over the {len(rows)} cells: mean {won.mean():.2f}, median {np.median(won):.0f}; "
          + ", ".join(f"P(>= {k}) = {(won >= k).mean():.3f}" for k in (6, 7, 8)))
    print("Distribution: " + ", ".join(f"{k}: {c / args.resamples:.3f}" for k, c in enumerate(counts) if c))


if __name__ == "__main__":
    main()
