"""Does the noise probe's switch hurt a smooth objective with measurement noise? (issue 19)

Run:  python benchmarks/noise_probe_noisy_sphere.py [--dim 10] [--budget 60] [--seeds 6]

``auto`` with its noise probe (``noise_probe=0.01``, the default) and without it
(``noise_probe=None``) minimizes ``sum((x - 0.3)**2)`` over ``[0, 1]^D`` observed with Gaussian
noise whose standard deviation is a fraction (0, 2, 10, 30 %) of the objective's spread over the
box (its standard deviation at uniform points). Printed per noise level, as medians over the
seeds: the true (noise-free) value at the point with the best observed value (what a user who
takes the best observation gets), the best true value among all evaluated points, and each
run's probe ratio (the change at the probe over the values' standard deviation; above 0.01 the
run switched to GP-UCB).
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import hdbo


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dim", type=int, default=10)
    ap.add_argument("--budget", type=int, default=60)
    ap.add_argument("--seeds", type=int, default=6)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")

    def f(x: np.ndarray) -> float:
        return float(np.sum((np.asarray(x) - 0.3) ** 2))

    spread = float(np.std([f(x) for x in np.random.default_rng(0).random((2000, args.dim))]))
    print(f"objective's standard deviation over the box: {spread:.3f}\n")
    print("| noise (of the spread) | probe: true value at best observed | probe: best true value | "
          "no probe: true value at best observed | no probe: best true value | probe ratios |")
    print("|---:|---:|---:|---:|---:|---|")
    for noise in (0.0, 0.02, 0.1, 0.3):
        cells, ratios = [], []
        for probe in (0.01, None):
            at_best, best = [], []
            for seed in range(args.seeds):
                rng = np.random.default_rng(1000 + seed)
                res = hdbo.minimize(lambda x: f(x) + noise * spread * rng.normal(), [(0.0, 1.0)] * args.dim,
                                    budget=args.budget, seed=seed, noise_probe=probe)
                true = np.array([f(x) for x in res.history.X])
                at_best.append(true[int(np.argmin(res.history.y))])
                best.append(true.min())
                if probe is not None:
                    ratios.append(res.method.diagnostics().get("noise_probe_ratio"))
            cells += [f"{np.median(at_best):.4f}", f"{np.median(best):.4f}"]
        print(f"| {noise:.0%} | " + " | ".join(cells) + " | " + " ".join(f"{r:.3g}" for r in ratios) + " |",
              flush=True)


if __name__ == "__main__":
    main()
