"""Small problems for the experiment tests, registered as ``toy-quadratic``, ``toy-flaky``, ...

A plugin module: importing it registers the problems (``--plugin _hdbo_test_problems`` on the
command line). ``conftest.py`` loads it with ``load_plugins``, so that worker processes
started with ``spawn`` import it too (the test folder is on ``sys.path``, which spawn copies).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from hdbo.experiments.store import RunConfig
from hdbo.problems import register_problem
from hdbo.problems.base import Problem
from hdbo.space import Box

QUAD = "toy-quadratic"
FLAKY = "toy-flaky"
SLOW = "toy-slow"
MALLOC_PROBE = "toy-malloc-probe"

# Set ``TRIGGER["countdown"] = k`` to make the k-th objective call (of any problem built
# below, in this process) raise KeyboardInterrupt. Reset to None afterwards.
TRIGGER: dict[str, Any] = {"countdown": None}


def _tick() -> None:
    if TRIGGER["countdown"] is None:
        return
    TRIGGER["countdown"] -= 1
    if TRIGGER["countdown"] <= 0:
        TRIGGER["countdown"] = None
        raise KeyboardInterrupt


def quadratic(*, dim: int = 3, noise_std: float = 0.0, seed: int = 0, known_optimum: bool = True) -> Problem:
    """``f(x) = -||x - c||^2`` on ``[0, 1]^dim``, centre ``c`` drawn from the seed; max 0."""
    center = np.random.default_rng(seed).uniform(0.2, 0.8, dim)

    def fun(X: np.ndarray) -> np.ndarray:
        _tick()
        return -np.sum((X - center) ** 2, axis=1)

    return Problem(
        fun,
        Box.unit(dim),
        name="quadratic",
        optimum_value=0.0 if known_optimum else None,
        optimizer=center,
        noise_std=noise_std,
        structure={"active_dims": list(range(dim))},
        params={"dim": dim, "noise_std": noise_std, "seed": seed},
    )


def flaky(*, dim: int = 3, noise_std: float = 0.0, seed: int = 0) -> Problem:
    """The quadratic, but raising ``ValueError`` where ``x[0] > 0.7`` and NaN where ``x[1] < 0.2``."""
    center = np.random.default_rng(seed).uniform(0.2, 0.8, dim)

    def fun(X: np.ndarray) -> np.ndarray:
        _tick()
        if np.any(X[:, 0] > 0.7):
            raise ValueError("simulator diverged")
        f = -np.sum((X - center) ** 2, axis=1)
        return np.where(X[:, 1] < 0.2, np.nan, f)

    return Problem(fun, Box.unit(dim), name="flaky", optimum_value=0.0, noise_std=noise_std)


def slow(*, dim: int = 2, delay: float = 0.05, seed: int = 0) -> Problem:
    """The quadratic, sleeping ``delay`` seconds per evaluation (for tests with two processes)."""
    inner = quadratic(dim=dim, seed=seed)

    def fun(X: np.ndarray) -> np.ndarray:
        time.sleep(delay)
        return inner(X)

    return Problem(fun, Box.unit(dim), name="slow", optimum_value=0.0, optimizer=inner.optimizer)


def malloc_probe(*, dim: int = 2, seed: int = 0) -> Problem:
    """1 where the evaluating process has tuned malloc (``hdbo._malloc``), else 0."""
    from hdbo import _malloc

    def fun(X: np.ndarray) -> np.ndarray:
        return np.full(X.shape[0], float(_malloc._done))

    return Problem(fun, Box.unit(dim), name="malloc-probe")


def not_a_problem(**kwargs: Any) -> str:
    """A factory returning the wrong type."""
    return "nope"


def make_config(**overrides: Any) -> RunConfig:
    """A small run of random search on the 3-D quadratic; keyword arguments override fields."""
    base: dict[str, Any] = dict(
        experiment="exp",
        problem=QUAD,
        method="random",
        seed=0,
        budget=8,
        problem_params={"dim": 3},
        method_params={},
    )
    base.update(overrides)
    return RunConfig(**base)


register_problem(QUAD, quadratic)
register_problem(FLAKY, flaky)
register_problem(SLOW, slow)
register_problem(MALLOC_PROBE, malloc_probe)
register_problem("toy-not-a-problem", not_a_problem)
