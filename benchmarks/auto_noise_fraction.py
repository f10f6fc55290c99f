"""How much of the outputs' variance ``auto``'s GP puts in its noise term, per suite problem.

Run:  python benchmarks/auto_noise_fraction.py [INSTANCE] [BUDGET]

One ``auto`` run per problem of the suite (:data:`dev_sweep.PROBLEMS`) on a *development*
instance (default 0; the judging instances 1-5 are refused), printing at 30, 60 and the budget
(default 100) evaluations the fitted noise variance, the signal variance and the fraction
``noise / (signal + noise)``. This is the quantity option ``noisy_fraction`` of
:class:`hdbo.methods.auto.Auto` compares with its threshold (``benchmarks/dev_sweep_2026-11-26d.md``).
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

import hdbo
from hdbo import problems

sys.path.insert(0, os.path.dirname(__file__))
from dev_sweep import JUDGING, PROBLEMS  # noqa: E402


def main() -> None:
    inst = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    budget = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    if inst in JUDGING:
        raise SystemExit(f"instance {inst} judges the defaults in docs/benchmarks.md; use a development instance")
    warnings.simplefilter("ignore")
    print(f"instance {inst}, budget {budget}: noise variance / signal variance / noise fraction of auto's GP\n")
    print("| problem | " + " | ".join(f"t = {t}" for t in (30, 60, budget)) + " |")
    print("|---|" + "---:|" * 3)
    for name, dim in PROBLEMS:
        prob = problems.get(name, dim=dim, instance=inst)
        opt = hdbo.Optimizer(prob.bounds, method="auto", seed=inst, budget=budget, direction="maximize")
        cells = []
        for t in range(1, budget + 1):
            x = opt.ask()
            opt.tell(x, float(prob(np.asarray(x))))
            if t in (30, 60, budget):
                h = opt.method.diagnostics()["hyperparameters"]
                noise, var = h["noise_variance"], h["variance"]
                cells.append(f"{noise:.3g} / {var:.3g} / **{noise / (noise + var):.3g}**")
        print(f"| {name} D={dim} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
