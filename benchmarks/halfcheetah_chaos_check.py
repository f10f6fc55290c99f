"""How noisy is the suite's HalfCheetah objective at small scales? (issue 19 diagnosis)

Run:  python benchmarks/halfcheetah_chaos_check.py [--instance 0] [--points 3] [--repeats 4]

The episode is deterministic (fixed reset seed), but the return of a linear policy is a chaotic
function of its weights: for a few uniform random policies of the instance's box, the table
gives the return at the point and the mean and standard deviation of the return over
``--repeats`` Gaussian perturbations of the weights with standard deviation ``eps`` times the
box's width. A GP sees the spread at the smallest ``eps`` as observation noise. Needs
``gymnasium[mujoco]`` (the suite extra). Development instances only (not 1-5).
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from hdbo import problems

EPS = (1e-4, 1e-3, 1e-2, 3e-2, 1e-1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instance", type=int, default=0)
    ap.add_argument("--points", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=4)
    args = ap.parse_args()
    if args.instance in (1, 2, 3, 4, 5):
        ap.error("instances 1-5 are the suite's judging instances; use a development instance")
    warnings.filterwarnings("ignore")
    p = problems.get("suite-halfcheetah", instance=args.instance)
    lo, hi = np.asarray(p.bounds.lower), np.asarray(p.bounds.upper)
    rng = np.random.default_rng(1)
    print("| point | return | " + " | ".join(f"eps={e:g}: mean (sd)" for e in EPS) + " |")
    print("|---:|---:|" + "---:|" * len(EPS))
    for k in range(args.points):
        x = lo + (hi - lo) * rng.random(p.dim)
        cells = []
        for eps in EPS:
            v = [p(np.clip(x + eps * (hi - lo) * rng.standard_normal(p.dim), lo, hi)) for _ in range(args.repeats)]
            cells.append(f"{np.mean(v):.0f} ({np.std(v):.0f})")
        print(f"| {k} | {p(x):.0f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
