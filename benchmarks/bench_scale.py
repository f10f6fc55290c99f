"""Does the objective's unit change what hdbo finds? (issue 17: the GP must be scale-free)

Run:  python benchmarks/bench_scale.py [--dim 5] [--budget 40] [--seeds 0 1 2 3]
                                        [--methods gp-ucb gp-ei random]

Minimizes ``f(x) = sum((x - 0.3)**2)`` on ``[0, 1]^dim`` (the optimum is off the box's centre)
seen as ``f``, ``1e-12 f``, ``1e12 f`` and ``f + 1e12``, and prints, per method and version,
the best value found in the units of ``f`` (the scale divided out, the shift subtracted):
the median and mean over the seeds, and for how many evaluations the proposals stay those made
for ``f`` itself (to 1e-3; median over the seeds). A scale-free method has the same row four
times, up to rounding: a near-tie in the acquisition late in a run can go either way (the
runs then differ but are equally good), and ``f + 1e12`` holds ``f`` only to about 1e-4.
"""

from __future__ import annotations

import argparse
import statistics
import warnings

import numpy as np

import hdbo

VERSIONS = {
    "f": (1.0, 0.0),
    "1e-12 f": (1e-12, 0.0),
    "1e12 f": (1e12, 0.0),
    "f + 1e12": (1.0, 1e12),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dim", type=int, default=5)
    parser.add_argument("--budget", type=int, default=40)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--methods", nargs="+", default=["gp-ucb", "gp-ei", "random"])
    args = parser.parse_args()
    bounds = [(0.0, 1.0)] * args.dim

    print(f"D = {args.dim}, budget = {args.budget}, seeds = {args.seeds}; best f in the units of f\n")
    print("| method | version | median best | mean best | same points as for f (median) |")
    print("|---|---|---|---|---|")
    for method in args.methods:
        reference: dict[int, np.ndarray] = {}
        for version, (scale, shift) in VERSIONS.items():
            bests, same = [], []
            for seed in args.seeds:
                def fun(x: np.ndarray) -> float:
                    return scale * float(np.sum((x - 0.3) ** 2)) + shift

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    res = hdbo.minimize(fun, bounds, method=method, budget=args.budget, seed=seed)
                bests.append((res.fun - shift) / scale)
                if version == "f":
                    reference[seed] = res.history.X
                n = min(len(res.history.X), len(reference[seed]))
                differs = np.max(np.abs(res.history.X[:n] - reference[seed][:n]), axis=1) > 1e-3
                same.append(int(np.argmax(differs)) if differs.any() else n)
            print(f"| {method} | {version} | {statistics.median(bests):.4g} | {statistics.mean(bests):.4g} "
                  f"| {statistics.median(same):g} of {args.budget} |", flush=True)


if __name__ == "__main__":
    main()
