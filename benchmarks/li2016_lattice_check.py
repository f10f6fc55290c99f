"""Issue 20, li2016 Tables 1-2 diagnosis (docs/reproductions/li2016-diagnosis.md).

Why GP-UCB (and the d = 25 methods) land where they do on the projected-additive trimodal
function: DIRECT with min(5000, 100 D) evaluations in 50 or 100 dimensions never divides a
rectangle twice along most coordinates, so every query lies on the lattice of DIRECT's first
trisection, {1/6, 1/2, 5/6} of each side. A method whose queries stay there cannot get below the
best value of that lattice, whatever its model. This script computes that floor per problem
instance, under the spec's reading of the problem (x in [0, 1]^D, the Add-GP-UCB code's centres
mapped to [0, 1]) and under the other reading the paper leaves open (x in [-1, 1]^D, the centres
where that code puts them: centres="native"), with the true optimum and random search for scale.

Usage (OMP_NUM_THREADS=1):
  python benchmarks/li2016_lattice_check.py floor D SEEDS [STARTS]
      Per seed (comma-separated) and reading: f*, the best lattice value found by coordinate
      ascent on {1/6, 1/2, 5/6}^D from the box centre and STARTS random lattice points (default
      50), its regret, the regret of the best of 1000 and of 10 uniform points (median of 20
      repeats), and the regret at the box centre.
  python benchmarks/li2016_lattice_check.py readings [SUMMARY]
      From a summary (default docs/reproductions/summaries/li2016-full.csv.gz): S_T at T = 500
      per seed and mean +- SE of GP-UCB, ADD-5/10/25 and REMBO-12 under SPEC.md's mapped reading,
      with the authors' repeat rule (li2016-repeats-check) and under the native reading
      (li2016-domain-check), next to the paper's Table 1 and appendix numbers.
  python benchmarks/li2016_lattice_check.py runs STORE [EXPERIMENT]
      From a run store (default experiment li2016-D50-T1000): per finished run, the share of
      model-based query coordinates on DIRECT's grid (multiples of 1/36: its first two
      trisection levels), at the centre 1/2 and on a face of
      the box (0 or 1, where REMBO's clipping puts them), the median
      number of distinct values per coordinate, and S_T.
"""
from __future__ import annotations

import json
import sqlite3
import sys

import numpy as np

from hdbo.problems import projected_trimodal


def make(D: int, seed: int, reading: str):
    """(f on a (n, D) array, lower, upper, f*) for one instance and reading, as the runner builds it."""
    p = projected_trimodal(D, seed=seed, centres="mapped" if reading == "mapped (spec)" else "native")
    return (lambda X: p(np.atleast_2d(X))), float(p.bounds.lower[0]), float(p.bounds.upper[0]), float(p.optimum_value)


def lattice_floor(f, D, lo, hi, starts, rng):
    """Best value on {lo + (hi - lo) * (1/6, 1/2, 5/6)}^D by coordinate ascent from several starts."""
    levels = lo + (hi - lo) * np.array([1 / 6, 1 / 2, 5 / 6])
    best = -np.inf
    inits = [np.full(D, 1)] + [rng.integers(0, 3, D) for _ in range(starts)]
    for idx in inits:
        idx = idx.copy()
        val = float(f(levels[idx])[0])
        improved = True
        while improved:
            improved = False
            for j in rng.permutation(D):
                cand = np.repeat(levels[idx][None, :], 3, axis=0)
                cand[:, j] = levels
                v = f(cand)
                k = int(np.argmax(v))
                if v[k] > val + 1e-12:
                    val, idx[j], improved = float(v[k]), k, True
        best = max(best, val)
    return best


def cmd_floor(D: int, seeds: list[int], starts: int) -> None:
    print(f"D = {D}, coordinate ascent on DIRECT's first trisection lattice from the centre + {starts} random starts")
    print()
    print("| reading | seed | f* | lattice floor: regret | best of 1000 uniform: regret | best of 10 uniform: regret | box centre: regret |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for reading in ("mapped (spec)", "native"):
        for seed in seeds:
            f, lo, hi, fstar = make(D, seed, reading)
            rng = np.random.default_rng(1000 + seed)
            floor = lattice_floor(f, D, lo, hi, starts, rng)
            r1000 = np.median([fstar - f(rng.uniform(lo, hi, (1000, D))).max() for _ in range(20)])
            r10 = np.median([fstar - f(rng.uniform(lo, hi, (10, D))).max() for _ in range(20)])
            centre = fstar - float(f(np.full(D, (lo + hi) / 2))[0])
            print(f"| {reading} | {seed} | {fstar:.2f} | {fstar - floor:.1f} | {r1000:.1f} | {r10:.1f} | {centre:.1f} |")


def cmd_runs(store: str, experiment: str) -> None:
    c = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    rows = c.execute("select id, label, seed, problem_params from runs where experiment=? and status='finished' "
                     "order by problem_params, label, seed", (experiment,)).fetchall()
    print("| reading | method | seed | S_T | t of the best | coordinates on the DIRECT grid | coordinates at 1/2 | coordinates on a face | distinct values per coordinate (median) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for rid, label, seed, params in rows:
        reading = json.loads(params).get("centres", "mapped")
        ev = c.execute("select x, regret from evaluations where run_id=? order by t", (rid,)).fetchall()
        X = np.array([json.loads(x) for x, _ in ev])
        r = np.array([e[1] for e in ev], dtype=float)
        Xm = X[10:]  # the model-based queries (10 initial points)
        if reading == "native":
            Xm = (Xm + 1.0) / 2.0  # the same statistics in the box's unit coordinates
        frac = (Xm * 18) % 1
        grid = np.isclose(frac, 0.5, atol=1e-6) | np.isclose(frac, 0.0, atol=1e-6) | np.isclose(frac, 1.0, atol=1e-6)
        centre = np.isclose(Xm, 0.5, atol=1e-9)
        face = (Xm <= 1e-12) | (Xm >= 1 - 1e-12)
        nd = np.median([len(np.unique(np.round(Xm[:, j], 9))) for j in range(X.shape[1])])
        print(f"| {reading} | {label} | {seed} | {np.nanmin(r):.1f} | {int(np.nanargmin(r))} | {grid.mean():.2f} | {centre.mean():.2f} | {face.mean():.2f} | {nd:.0f} |")


PAPER_T500 = {"GP-UCB": "103.9 ± 1.9", "ADD-5": "180.3 ± 10.1", "ADD-10": "35.4 ± 2.2", "ADD-25": "164.5 ± 9.4",
              "REMBO-12": "76.6 (T not stated)"}


def cmd_readings(summary: str) -> None:
    from hdbo.experiments.summary import read_summary

    columns = [("li2016-domain-check", "D=50 mapped centres", "mapped centres, repeats as Table 1's specs"),
               ("li2016-repeats-check", "D=50", "mapped centres, the authors' repeat rule"),
               ("li2016-domain-check", "D=50 native centres", "native centres, repeats as Table 1's specs")]
    cells: dict = {}
    for run in read_summary(summary):
        key = (run.experiment, run.problem_label)
        if run.status != "finished" or key not in [c[:2] for c in columns]:
            continue
        cells.setdefault((key, run.label), []).append((run.seed, float(np.nanmin(np.asarray(run.regret)[:510]))))
    print("| method | paper (Table 1, T = 500) | " + " | ".join(c[2] for c in columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    for label in PAPER_T500:
        row = [label, PAPER_T500[label]]
        for c in columns:
            v = sorted(cells.get((c[:2], label), []))
            if not v:
                row.append("-")
                continue
            r = np.array([x[1] for x in v])
            se = r.std(ddof=1) / np.sqrt(r.size) if r.size > 1 else float("nan")
            row.append(f"{r.mean():.1f} ± {se:.1f} ({', '.join(f'{x:.1f}' for x in r)})")
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "floor":
        cmd_floor(int(sys.argv[2]), [int(s) for s in sys.argv[3].split(",")],
                  int(sys.argv[4]) if len(sys.argv) > 4 else 50)
    elif len(sys.argv) >= 2 and sys.argv[1] == "readings":
        cmd_readings(sys.argv[2] if len(sys.argv) > 2 else "docs/reproductions/summaries/li2016-full.csv.gz")
    elif len(sys.argv) >= 3 and sys.argv[1] == "runs":
        cmd_runs(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "li2016-D50-T1000")
    else:
        print(__doc__)
        sys.exit(2)
