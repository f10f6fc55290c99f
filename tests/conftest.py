"""Shared pytest fixtures."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    """A fixed-seed generator, fresh for every test."""
    return np.random.default_rng(20261122)


class _FakeTTY(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def fake_tty() -> type[io.StringIO]:
    """``fake_tty()``: a new text stream that says it is a terminal (progress display tests)."""
    return _FakeTTY


@pytest.fixture
def no_tqdm(monkeypatch):
    """As if tqdm were not installed."""
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)


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


@pytest.fixture
def write_plugin(tmp_path, monkeypatch):
    """``write_plugin(prefix, source) -> module name``: a plugin module in tmp_path.

    ``source`` registers its problem under ``"{name}-..."``; ``{name}`` is replaced by the
    module's (unique per test) name. The folder is put on ``sys.path``; the problem registry
    and the list of loaded plugins are restored after the test, and the module forgotten.
    """
    import sys

    from hdbo.experiments import plugins
    from hdbo.problems import registry

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(plugins, "_LOADED", list(plugins._LOADED))
    folder = tmp_path / "plugins"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    names = []

    def write(prefix: str, source: str) -> str:
        name = f"{prefix}_{tmp_path.name.replace('-', '_')}"
        (folder / f"{name}.py").write_text(source.replace("{name}", name))
        names.append(name)
        return name

    yield write
    for name in names:
        sys.modules.pop(name, None)
