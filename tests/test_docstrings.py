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
