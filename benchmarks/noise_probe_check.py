"""How much does each suite problem change 1e-8, 1e-6 and 1e-4 of the box away from a point? (issue 19)

Run:  python benchmarks/noise_probe_check.py [--instances 0 6 7]

The measurement behind ``auto``'s option ``noise_probe``: for each suite problem and development
instance, 10 uniform points of the box are evaluated, the best one is moved by ``eps`` times the
box's width in every coordinate (inwards at the upper face), and the table gives the change of
the value over the standard deviation of the 10 values (what ``auto`` compares with
``noise_probe``). A smooth objective changes in proportion to ``eps``; a noisy or chaotic one by a
fraction of its spread at every ``eps``. HalfCheetah needs ``gymnasium[mujoco]`` (the suite
extra). Development instances only (not 1-5).
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from hdbo import problems

PROBLEMS = [("suite-hartmann6-hidden", 300), ("suite-hartmann6-rotated", 300), ("suite-hartmann6-rotated", 100),
            ("suite-branin-rotated", 100), ("suite-levy", 100), ("suite-ackley", 100),
            ("suite-styblinski-tang", 100), ("suite-rosenbrock", 60), ("suite-halfcheetah", 102), ("suite-svm", 32)]
EPS = (1e-8, 1e-6, 1e-4)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, nargs="*", default=[0, 6, 7])
    args = ap.parse_args()
    if set(args.instances) & {1, 2, 3, 4, 5}:
        ap.error("instances 1-5 are the suite's judging instances; use development instances")
    warnings.filterwarnings("ignore")
    print("| problem | instance | " + " | ".join(f"change at {e:g}" for e in EPS) + " |")
    print("|---|---:|" + "---:|" * len(EPS))
    for name, dim in PROBLEMS:
        for inst in args.instances:
            p = problems.get(name, dim=dim, instance=inst)
            lo, hi = np.asarray(p.bounds.lower, float), np.asarray(p.bounds.upper, float)
            rng = np.random.default_rng(100 + inst)
            X = lo + (hi - lo) * rng.random((10, p.dim))

            def f(x: np.ndarray) -> float:
                return float(p.evaluate(x, np.random.default_rng(0))[0])

            y = np.array([f(x) for x in X])
            b, spread = int(np.argmax(y)), float(np.std(y))
            ratios = []
            for e in EPS:
                step = e * (hi - lo)
                moved = np.where(X[b] + step <= hi, X[b] + step, X[b] - step)
                ratios.append(abs(f(moved) - y[b]) / spread)
            print(f"| {name} D={dim} | {inst} | " + " | ".join(f"{r:.2g}" for r in ratios) + " |", flush=True)


if __name__ == "__main__":
    main()
