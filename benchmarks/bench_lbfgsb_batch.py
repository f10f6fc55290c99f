"""Multi-start L-BFGS-B, one start at a time or all starts batched: cost and acquisition values.

The tranthe2020 specs maximize SRE's, REMBO's and HeSBO's acquisitions with 10 k L-BFGS-B
starts (k = 5 latent dimensions, so 50 starts) and 6000 evaluations. One run at a time calls
the acquisition once per step and start, about 210,000 single-point calls in a run of 320
evaluations, which was 90 % of a HeSBO run (0.3 s of 0.31 s per query). ``batched=True`` runs the
starts together (``maximize_lbfgsb``, step 3), one vectorized call per step.

This script measures both on the acquisitions of real runs: it runs a spec's method (full-scale
options, with ``batch_starts=False``) and at every ``--every``-th
query maximizes the same acquisition both ways from the same random state, recording the time
and the best acquisition value each reaches. It then times whole runs with each setting
(``batch_starts`` of the method). Acquisition values are in the GP's standardized units; the
gap is ``batched - sequential`` (positive: the batched search found a higher value).

Run (one process; the machine is shared, so compare within one run)::

    OMP_NUM_THREADS=1 python benchmarks/bench_lbfgsb_batch.py --method HeSBO --problem Levy
    OMP_NUM_THREADS=1 python benchmarks/bench_lbfgsb_batch.py --method SRE --problem Ackley --runs

Options: ``--spec`` (default ``experiments/tranthe2020/fig1_d20.toml``), ``--budget`` (default
the spec's full-scale budget), ``--seed``, ``--every`` (default 10), ``--runs`` (also time whole
runs with each setting).
"""

from __future__ import annotations

import argparse
import copy
import time

import numpy as np

from hdbo.acquisition import maximizers
from restart_schedule_check import _config, _run


def compare(cfg, budget: int, every: int) -> None:
    original = maximizers.MAXIMIZERS["lbfgsb"]
    rows: list[tuple[int, int, float, float, float, float]] = []
    calls = [0]

    def wrapped(fun, bounds, *, budget, rng, fun_and_grad=None, n_starts=10, **kw):
        calls[0] += 1
        kw.pop("batched", None)  # the run itself searches one start at a time
        if fun_and_grad is None or n_starts < 10 or calls[0] % every:
            return original(fun, bounds, budget=budget, rng=rng, fun_and_grad=fun_and_grad, n_starts=n_starts, **kw)
        rng_copy = copy.deepcopy(rng)
        t0 = time.perf_counter()
        res = original(fun, bounds, budget=budget, rng=rng, fun_and_grad=fun_and_grad, n_starts=n_starts, **kw)
        t_seq = time.perf_counter() - t0
        t0 = time.perf_counter()
        alt = original(fun, bounds, budget=budget, rng=rng_copy, fun_and_grad=fun_and_grad, n_starts=n_starts,
                       batched=True, **kw)
        t_bat = time.perf_counter() - t0
        rows.append((calls[0], res.n_starts, res.value, alt.value, t_seq, t_bat))
        return res

    maximizers.MAXIMIZERS["lbfgsb"] = wrapped
    try:
        _run(cfg, budget, batch_starts=False)
    finally:
        maximizers.MAXIMIZERS["lbfgsb"] = original
    print(f"{cfg.label} on {cfg.problem_label}, seed {cfg.seed}, budget {budget}: "
          f"every {every}th acquisition maximized both ways\n")
    print("| query | starts | sequential value | batched value | gap | sequential s | batched s |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for q, k, v_s, v_b, t_s, t_b in rows:
        print(f"| {q} | {k} | {v_s:.6g} | {v_b:.6g} | {v_b - v_s:+.2e} | {t_s:.3f} | {t_b:.3f} |")
    gaps = np.array([r[3] - r[2] for r in rows])
    scale = np.array([max(abs(r[2]), 1e-12) for r in rows])
    t_s, t_b = np.median([r[4] for r in rows]), np.median([r[5] for r in rows])
    print(f"\n{len(rows)} acquisitions: batched higher at {int(np.sum(gaps > 1e-9 * scale))}, "
          f"equal (within 1e-9 relative) at {int(np.sum(np.abs(gaps) <= 1e-9 * scale))}, "
          f"lower at {int(np.sum(gaps < -1e-9 * scale))}; median gap {np.median(gaps):+.2e}, "
          f"worst {gaps.min():+.2e} (relative {np.min(gaps / scale):+.2e}); "
          f"median time sequential {t_s:.3f} s, batched {t_b:.3f} s (ratio {t_s / t_b:.1f})\n")


def runs(cfg, budget: int) -> None:
    print("| batch_starts | seconds | best f |")
    print("|---|---:|---:|")
    for flag in (False, True):
        sec, best = _run(cfg, budget, batch_starts=flag)
        print(f"| {flag} | {sec:.1f} | {best:.6g} |", flush=True)
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default="experiments/tranthe2020/fig1_d20.toml")
    ap.add_argument("--method", default="HeSBO")
    ap.add_argument("--problem", default="Levy")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--budget", type=int, default=None)
    ap.add_argument("--every", type=int, default=10)
    ap.add_argument("--runs", action="store_true")
    args = ap.parse_args()
    cfg = _config(args.spec, args.method, args.problem, args.seed)
    budget = args.budget or cfg.budget
    compare(cfg, budget, args.every)
    if args.runs:
        runs(cfg, budget)


if __name__ == "__main__":
    main()
