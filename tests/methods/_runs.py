"""Run helpers of the method tests (drive: also test_si_bo.py and test_rpp_gp_ucb.py; the rest: tests/methods/test_{ms_ucb,line_bo,dropout_ucb,
embedding_methods,embedding_regret,rembo_regret}.py).

:func:`drive` is the ask/tell loop. The others run on Branin hidden in D = 50 for the "improves on
random search" tests: the box is ``[-1, 1]^50``, each problem seed draws Branin's 2 active
coordinates at random, every proposed point is checked to lie in the box, and the regret is the
simple regret ``f* - max_t f(x_t)``.
"""

from __future__ import annotations

import numpy as np

from hdbo import problems
from hdbo.methods import make_method


def drive(m, steps: int, f) -> np.ndarray:
    """Ask/tell ``steps`` points of the objective ``f`` (one point -> float); the points, shape (steps, D)."""
    xs = []
    for _ in range(steps):
        x = m.ask()
        xs.append(x)
        m.tell(x, f(x))
    return np.array(xs)


def simple_regret(name: str, problem_seed: int, budget: int, *, method_seed: int | None = None, **options) -> float:
    """Simple regret of one run of ``name`` (method seed = problem seed unless given)."""
    p = problems.get("branin", dim=50, domain="symmetric", seed=problem_seed)
    seed = problem_seed if method_seed is None else method_seed
    m = make_method(name, p.bounds, seed=seed, budget=budget, structure=p.structure, **options)
    best = -np.inf
    for _ in range(budget):
        x = m.ask()
        assert np.all(x >= p.bounds.lower) and np.all(x <= p.bounds.upper)
        y = p(x)
        m.tell(x, y)
        best = max(best, float(y))
    return float(p.optimum_value - best)


def regrets(name: str, seeds: range, budget: int, **options) -> np.ndarray:
    """Simple regrets of ``name`` on the problem seeds, shape (len(seeds),)."""
    return np.array([simple_regret(name, s, budget, **options) for s in seeds])


def random_regrets(seeds: range, budget: int, repeats: int = 5) -> np.ndarray:
    """Simple regrets of random search, ``repeats`` method seeds per problem seed: shape (len(seeds), repeats)."""
    return np.array([[simple_regret("random", s, budget, method_seed=100 + k) for k in range(repeats)]
                     for s in seeds])


def log10(r: np.ndarray) -> np.ndarray:
    """log10 of regrets, floored at 1e-12."""
    return np.log10(np.maximum(r, 1e-12))
