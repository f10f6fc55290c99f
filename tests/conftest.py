"""Shared pytest fixtures."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    """A fixed-seed generator, fresh for every test."""
    return np.random.default_rng(20261122)


def run_method(method: str, problem, budget: int, seed: int, **options):
    """Run ``method`` on ``problem`` for ``budget`` evaluations through ask/tell.

    Returns the simple regret ``f* - max y`` (on the problem's possibly noisy values)
    and the method object.
    """
    from hdbo.methods import make_method

    m = make_method(method, problem.bounds, seed=seed, budget=budget, structure=problem.structure, **options)
    best = -np.inf
    for _ in range(budget):
        x = m.ask()
        y = problem(x)
        m.tell(x, y)
        best = max(best, float(y))
    return problem.optimum_value - best, m


@pytest.fixture
def run() -> "callable":
    """The :func:`run_method` loop, as a fixture for method tests."""
    return run_method
