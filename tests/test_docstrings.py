from __future__ import annotations

import pytest

from hdbo._docstrings import fill_doc, fill_docstring

BLOCKS = {"noise": """
noise_std : float, default 0.0
    Standard deviation of the observation noise.
"""}


def test_placeholder_lines_are_replaced_and_indented():
    @fill_doc(**BLOCKS)
    def f(noise_std=0.0):
        """Do it, at 5% of the cost.

        Parameters
        ----------
        %(noise)s
        """

    lines = f.__doc__.splitlines()
    i = lines.index("        noise_std : float, default 0.0")
    assert lines[i + 1] == "            Standard deviation of the observation noise."
    assert "5% of the cost" in f.__doc__  # no other % is touched
    assert "%(noise)s" not in f.__doc__


def test_unknown_placeholder_and_none():
    with pytest.raises(KeyError, match="nois"):
        fill_docstring("x\n    %(nois)s\n", BLOCKS)
    assert fill_docstring(None, BLOCKS) is None
    assert fill_docstring("a %(noise)s inside a line", BLOCKS) == "a %(noise)s inside a line"


def test_no_public_docstring_keeps_a_placeholder():
    """Every %(name)s line of the package is filled (a missing @fill_doc shows the raw line)."""
    import importlib
    import inspect
    import pkgutil

    import hdbo

    left = []
    for info in pkgutil.walk_packages(hdbo.__path__, "hdbo."):
        if info.name.startswith("hdbo.integrations"):
            continue  # optional dependencies; their modules hold no placeholders either
        module = importlib.import_module(info.name)
        objects = [module] + [v for _, v in inspect.getmembers(module) if getattr(v, "__module__", None) == info.name]
        for obj in list(objects):
            if inspect.isclass(obj):
                objects += [m for _, m in inspect.getmembers(obj) if inspect.isfunction(m) or inspect.ismethod(m)]
        for obj in objects:
            doc = getattr(obj, "__doc__", None) or ""
            if obj is not hdbo._docstrings and any(
                line.strip().startswith("%(") and line.strip().endswith(")s") for line in doc.splitlines()
            ):
                left.append(f"{info.name}: {getattr(obj, '__qualname__', obj)}")
    assert not left, left
