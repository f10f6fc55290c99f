"""The problems' docstrings are complete once imported: every shared section was filled in."""

from __future__ import annotations

import inspect

import pytest

import hdbo.problems as problems
from hdbo.problems import additive, gp_samples, ml_tasks, projected, science_tasks, subspace, suite, synthetic

MODULES = [additive, gp_samples, ml_tasks, projected, science_tasks, subspace, suite, synthetic]


def _public_functions(module):
    return [
        obj for name, obj in vars(module).items()
        if inspect.isfunction(obj) and obj.__module__ == module.__name__ and not name.startswith("_")
    ]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_no_placeholder_left(module) -> None:
    for fun in _public_functions(module):
        assert "%(" not in (fun.__doc__ or ""), f"{module.__name__}.{fun.__name__} has an unfilled %(...)s line"


@pytest.mark.parametrize("name", [n for n in problems.__all__ if n.startswith("suite_")])
def test_suite_factories_document_their_arguments(name: str) -> None:
    fun = getattr(problems, name)
    doc = fun.__doc__
    for section in ("Parameters\n", "Returns\n", "Raises\n"):
        assert section in doc, f"{name}: no {section.strip()} section"
    for arg in inspect.signature(fun).parameters:
        assert f"\n    {arg} : " in doc, f"{name}: argument {arg!r} is not documented"
