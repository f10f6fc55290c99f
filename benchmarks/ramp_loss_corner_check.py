"""Issue 22, MS-UCB Figure 5 substitute (ramp-loss, D = 5000): where do the best points lie?

The objective of ``realworld-tranthe2020-fig5`` is F(w) = |w|^2 / 2 + C * L(w), with L(w) the
summed ramp loss over the 6000 examples (each example adds between 0 and 1) and w = x in
[-1, 1]^5000; hdbo maximizes f = -F. Which method wins depends on whether its best point can
reach the corners of the box: a point with many weights at +-1 pays more norm but can leave a
smaller loss, and the larger C, the more the loss counts.

For every finished run of the spec in the given local stores, this script takes the best
evaluation (largest f) and prints, per C and method, mean over runs of

* the share of the 5000 weights at the box's faces (|w_i| >= 1 - 1e-9),
* the norm term |w|^2 / 2,
* the summed ramp loss L(w) = (F - |w|^2 / 2) / C,

with the number of runs and the range over runs. It reads ``evaluations.x`` of the stores (the
committed summaries hold values, not points), so it needs the stores the runs were made in.

Usage:
  python benchmarks/ramp_loss_corner_check.py [STORE ...]
      default: runs/realworld-full.db runs/realworld-full-b.db
"""
from __future__ import annotations

import sys
from collections import defaultdict

import numpy as np

from hdbo.experiments.store import RunStore

SPEC = "realworld-tranthe2020-fig5"
DEFAULT_STORES = ("runs/realworld-full.db", "runs/realworld-full-b.db")


def best_points(store: str) -> list[tuple[float, str, int, float, np.ndarray]]:
    """(C, label, seed, best f, best x) of every finished run of the spec in ``store``."""
    out = []
    with RunStore(store, create=False) as runs:
        for run in runs.list_runs(experiment=SPEC, status="finished"):
            ev = runs.load_evaluations(run.id)
            if not np.isfinite(ev.f).any():
                continue
            i = int(np.nanargmax(ev.f))
            cfg = run.config
            out.append((float(cfg.problem_params["C"]), cfg.label, int(cfg.seed), float(ev.f[i]), ev.X[i]))
    return out


def main(argv: list[str]) -> None:
    stores = argv or list(DEFAULT_STORES)
    seen: dict[tuple[float, str, int], tuple[float, np.ndarray]] = {}
    for store in stores:
        for C, label, seed, f, x in best_points(store):
            seen.setdefault((C, label, seed), (f, x))  # a run present in two stores counts once
    table: dict[tuple[float, str], list[tuple[float, float, float, float]]] = defaultdict(list)
    for (C, label, _seed), (f, x) in seen.items():
        norm = 0.5 * float(x @ x)
        loss = (-f - norm) / C
        corner = float(np.mean(np.abs(x) >= 1.0 - 1e-9))
        table[(C, label)].append((f, corner, norm, loss))
    print(f"Best point of every finished run of {SPEC} in {', '.join(stores)}")
    print()
    print("| C | method | runs | best f (mean) | weights at +-1 (mean; range) | |w|^2/2 (mean; range) | summed ramp loss (mean; range) |")
    print("|---:|---|---:|---:|---|---|---|")

    def cell(values: np.ndarray, fmt: str) -> str:
        return f"{values.mean():{fmt}} ({values.min():{fmt}} to {values.max():{fmt}})"

    for C, label in sorted(table, key=lambda k: (k[0], -np.mean([r[0] for r in table[k]]))):
        a = np.array(table[(C, label)])
        print(
            f"| {C:g} | {label} | {len(a)} | {a[:, 0].mean():,.0f} | {cell(100 * a[:, 1], '.0f')} % | "
            f"{cell(a[:, 2], ',.0f')} | {cell(a[:, 3], ',.0f')} |"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
