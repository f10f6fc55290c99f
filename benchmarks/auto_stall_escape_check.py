"""Prototype (issue 19): ``auto`` with a stall escape, on one suite problem and instance.

Run:  python benchmarks/auto_stall_escape_check.py PROBLEM DIM INSTANCE BUDGET STALL [ARM [UCB_BETA]]

e.g. ``... suite-halfcheetah 102 0 150 20 ucb kandasamy2015``. After STALL model-based
proposals in a row that did not improve the best value, the next proposal uses ARM (an arm of
``auto``'s ``bandit_arms``: "ucb" or "uniform") instead of the bandit's choice; STALL = 0 is
``auto`` as it is. The escape is patched onto ``Auto._choose_arm`` here, not an option of
hdbo: it was tried and not adopted (``benchmarks/dev_sweep_2026-11-26c.md``). Development
instances only (not 1-5).
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

import hdbo
from hdbo import problems
from hdbo.methods import auto as A


def main(argv: list[str]) -> None:
    prob, dim, inst, budget, stall = argv[0], int(argv[1]), int(argv[2]), int(argv[3]), int(argv[4])
    if inst in (1, 2, 3, 4, 5):
        sys.exit("instances 1-5 are the suite's judging instances; use a development instance")
    escape = argv[5] if len(argv) > 5 else "ucb"
    opts = {"ucb_beta": argv[6]} if len(argv) > 6 else {}
    original = A.Auto._choose_arm

    def choose(self: A.Auto) -> int:
        recent = self._outcomes[-stall:] if stall > 0 else []
        if stall > 0 and len(recent) == stall and not any(improved for _, improved in recent):
            return A._ARMS.index(escape)
        return original(self)

    A.Auto._choose_arm = choose
    warnings.filterwarnings("ignore")
    kw = {} if prob in ("suite-halfcheetah", "suite-svm") else {"dim": dim}
    p = problems.get(prob, instance=inst, **kw)
    t0 = time.time()
    opt = hdbo.Optimizer(p.bounds, seed=inst, budget=budget, direction="maximize", **opts)
    best = -np.inf
    for _ in range(budget):
        x = opt.ask()
        y = p(x)
        opt.tell(x, y)
        best = max(best, y)
    print(prob, dim, inst, budget, "stall", stall, escape, argv[6:], "best (minimization)", round(-best, 4),
          f"{time.time() - t0:.0f}s", opt.method.diagnostics()["proposals"], flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
