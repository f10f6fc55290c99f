"""The method registry sits above the base class: ``hdbo.methods.base`` never imports it."""

import ast
import inspect

import numpy as np
import pytest

from hdbo.exceptions import StateError
from hdbo.methods import base, registry
from hdbo.methods.base import Method


def _imported(source: str, package: str) -> set[str]:
    """Every module an import statement of ``source`` names, at any depth (inside functions too), made absolute.

    ``package`` is the package the source lives in (what a relative import starts from); a
    ``from m import x`` counts as importing ``m`` and ``m.x``.
    """
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            parent = package.rsplit(".", node.level - 1)[0] if node.level else ""
            target = ".".join(p for p in (parent, node.module) if p)
            names.add(target)
            names.update(f"{target}.{alias.name}" for alias in node.names)
    return names


def _imports_registry(names: set[str]) -> bool:
    return any(n == "hdbo.methods.registry" or n.startswith("hdbo.methods.registry.") for n in names)


def test_the_parser_sees_lazy_and_relative_imports():
    # the check below would pass vacuously if imports inside functions were missed
    lazy = "def f():\n    if True:\n        from .registry import get_method_class\n"
    assert _imports_registry(_imported(lazy, "hdbo.methods"))
    assert _imports_registry(_imported("from . import registry\n", "hdbo.methods"))
    assert _imports_registry(_imported("from ..methods.registry import x\n", "hdbo.integrations"))
    assert not _imports_registry(_imported("from .base import Method\n", "hdbo.methods"))


def test_base_does_not_import_the_registry():
    imported = _imported(inspect.getsource(base), "hdbo.methods")
    assert "hdbo.methods.base" not in imported and "hdbo._validation" in imported  # parsed as a package member
    assert not _imports_registry(imported)
    assert "hdbo.methods" not in imported  # nor the package, which imports the registry


def test_option_names_is_one_function():
    assert registry.option_names is base.option_names


def test_from_state_on_method_finds_the_class_through_the_registry(monkeypatch):
    m = registry.make_method("random", [(0.0, 1.0)] * 3, seed=4)
    m.tell(m.ask(), 1.0)
    state = m.state_dict()
    restored = Method.from_state(state)
    assert type(restored) is type(m)
    assert np.array_equal(restored.ask(), m.ask())
    # the lookup reads the registry when called: a swapped-in table is the one used
    monkeypatch.setattr(registry, "_REGISTRY", {})
    with pytest.raises(StateError, match="names no registered method: 'random'; available: $"):
        Method.from_state(state)
