"""Checks behind ``benchmarks/dev_sweep_2026-11-27b.md`` (issue 19), on development instances.

Run:  python benchmarks/auto_model_checks.py moves PROBLEM DIM [INSTANCE]
      python benchmarks/auto_model_checks.py loo [INSTANCE]

``moves``: two ``auto`` runs (budget 100), ARD kernel only (``kernel_selection="none"``) and
isotropic (``ard=False``); for the proposals of t = 11-40, 41-70 and 71-100, the median number of
coordinates (unit cube) that differ from the incumbent's by more than 1e-3, the median and largest
move, and the quantiles of the fitted length-scales.

``loo``: one default ``auto`` run per suite problem (budget 100); at 30, 60 and
100 evaluations, the leave-one-out log predictive density of the observed values, in their own
units, of GPs fitted to the run's data: ARD (A) and isotropic (I), each without and with the
Yeo-Johnson warp of option ``output_warping`` (``w``; its log-Jacobian added), and at 100 an
additive GP with one group per coordinate and shared hyperparameters (Add), the warp's lambda.
The judging instances 1-5 are refused.
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

import hdbo
from hdbo import problems
from hdbo.gp import Additive
from hdbo.gp.kernels import make_kernel
from hdbo.methods.auto import _apply_warp, _fit_yeo_johnson

sys.path.insert(0, os.path.dirname(__file__))
from dev_sweep import JUDGING, PROBLEMS  # noqa: E402

BUDGET = 100


def _run(name, dim, inst, options):
    """Yield (t, method, x) before evaluation t of an ``auto`` run (x: the proposal), then
    (budget + 1, method, None) at the end."""
    prob = problems.get(name, dim=dim, instance=inst)
    opt = hdbo.Optimizer(prob.bounds, method="auto", seed=inst, budget=BUDGET, direction="maximize", **options)
    for t in range(1, BUDGET + 1):
        x = opt.ask()
        yield t, opt.method, np.asarray(x)
        opt.tell(x, float(prob(np.asarray(x))))
    yield BUDGET + 1, opt.method, None


def moves(name, dim, inst):
    print(f"{name} D={dim}, instance {inst}\n")
    print("| kernel | t | coordinates moved > 1e-3 | median move | largest move | length-scales p10 / p50 / p90 |")
    print("|---|---|---:|---:|---:|---|")
    for label, options in (("ARD", {"kernel_selection": "none"}), ("isotropic", {"ard": False})):
        rows, best = [], None
        for t, m, x in _run(name, dim, inst, options):
            if x is None:
                best = -float(np.max(m.y_obs))
            elif t > m.n_init:
                d = np.abs(x - m.X_obs[int(np.argmax(m.y_obs))])  # the suite's boxes are the unit cube
                ls = np.broadcast_to(np.asarray(m.gp_.kernel.lengthscale, float), (dim,))
                rows.append((t, np.sum(d > 1e-3), np.median(d), np.max(d), *np.percentile(ls, [10, 50, 90])))
        r = np.array(rows)
        for lo, hi in ((11, 40), (41, 70), (71, 100)):
            w = r[(r[:, 0] >= lo) & (r[:, 0] <= hi)]
            q = np.median(w[:, 4:], axis=0)
            print(f"| {label} | {lo}-{hi} | {np.median(w[:, 1]):.0f} of {dim} | {np.median(w[:, 2]):.3g} | "
                  f"{np.median(w[:, 3]):.3g} | {q[0]:.2f} / {q[1]:.2f} / {q[2]:.2f} |")
        print(f"| {label} | best | {best:.4g} | | | |")


def _loo(m, X, y, kernel=None, ard=True, warp=False):
    """LOO log density of y (own units) of a GP like auto's, optionally warped or with ``kernel``."""
    if warp:
        w = _fit_yeo_johnson(y)
        z = _apply_warp(y, w)
        s = (y - w[0]) / w[1]
        jac = np.where(s >= 0, w[2] - 1, 1 - w[2]) * np.log1p(np.abs(s)) - np.log(w[1])
    else:
        z, jac = y, np.zeros_like(y)
    gp = m._make_gp(ard=ard)
    if kernel is not None:
        gp = type(gp)(kernel, noise_variance=1e-4, noise_bounds=(1e-6, 1.0), n_restarts=2)
    gp.fit(X, z, optimize=True, rng=np.random.default_rng(0))
    return gp.loo_log_density() + float(np.sum(jac - np.log(gp.y_scale_)))


def loo(inst):
    print(f"instance {inst}: leave-one-out log predictive density of the observed values\n")
    for name, dim in PROBLEMS:
        cells = []
        for t, m, x in _run(name, dim, inst, {}):
            if t - 1 in (30, 60, BUDGET) and t > 1:
                X, y = m.X_obs, m.y_obs
                lam = _fit_yeo_johnson(y)[2]
                vals = [_loo(m, X, y, ard=a, warp=w) for a in (True, False) for w in (False, True)]
                cell = (f"t={t - 1}: lambda {lam:.2f}, A {vals[0]:.0f}, Aw {vals[1]:.0f}, "
                        f"I {vals[2]:.0f}, Iw {vals[3]:.0f}")
                if t - 1 == BUDGET:
                    add = Additive(make_kernel("matern52", None, ard=False, lengthscale=0.5), [[i] for i in range(dim)])
                    cell += f", Add {_loo(m, X, y, kernel=add):.0f}"
                cells.append(cell)
        print(f"- {name} D={dim}: " + "; ".join(cells), flush=True)


def main(argv):
    warnings.simplefilter("ignore")
    if not argv or argv[0] not in ("moves", "loo"):
        raise SystemExit(__doc__)
    if argv[0] == "moves":
        inst = int(argv[3]) if len(argv) > 3 else 0
    else:
        inst = int(argv[1]) if len(argv) > 1 else 0
    if inst in JUDGING:
        raise SystemExit(f"instance {inst} judges the defaults in docs/benchmarks.md; use a development instance")
    if argv[0] == "moves":
        moves(argv[1], int(argv[2]), inst)
    else:
        loo(inst)


if __name__ == "__main__":
    main(sys.argv[1:])
