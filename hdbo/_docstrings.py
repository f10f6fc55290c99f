"""Shared docstring sections: write a parameter block once, use it in every function that takes it.

Several public functions take the same arguments with the same meaning (the suite problems'
``instance``/``seed``/``noise_std``, :func:`hdbo.minimize` and :func:`hdbo.maximize`, ...).
Their numpydoc sections must be complete where they are read (``help()``, the API reference),
but written once. A docstring line that holds only ``%(name)s`` is replaced by the block
``name``, indented like that line (the approach of SciPy's ``doccer``, restricted to whole
lines so that no other ``%`` in a docstring needs escaping)::

    _DOC = {"noise_std": '''
    noise_std : float, default 0.0
        Standard deviation of the observation noise.
    '''}

    @fill_doc(**_DOC)
    def f(noise_std=0.0):
        \"\"\"Do it.

        Parameters
        ----------
        %(noise_std)s
        \"\"\"
"""

from __future__ import annotations

import textwrap
from typing import Callable, TypeVar

__all__ = ["fill_doc", "fill_docstring"]

T = TypeVar("T")


def fill_docstring(doc: str | None, blocks: dict[str, str]) -> str | None:
    """``doc`` with each line that is only ``%(name)s`` replaced by ``blocks[name]``, re-indented.

    Parameters
    ----------
    doc : str or None
        A docstring (None is returned unchanged, e.g. under ``python -OO``).
    blocks : dict of str to str
        The sections by name; each is dedented and stripped of blank edge lines.

    Returns
    -------
    str or None

    Raises
    ------
    KeyError
        If a placeholder names no block (a typo would otherwise reach the documentation).
    """
    if doc is None:
        return None
    out: list[str] = []
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.startswith("%(") and stripped.endswith(")s") and len(stripped) > 4:
            name = stripped[2:-2]
            if name not in blocks:
                raise KeyError(f"docstring placeholder %({name})s names no block; known: {sorted(blocks)}")
            indent = line[: len(line) - len(line.lstrip())]
            block = textwrap.dedent(blocks[name]).strip("\n")
            out.extend(indent + b if b.strip() else "" for b in block.splitlines())
        else:
            out.append(line)
    return "\n".join(out) + ("\n" if doc.endswith("\n") else "")


def fill_doc(**blocks: str) -> Callable[[T], T]:
    """Decorator: fill the ``%(name)s`` lines of a function's or class's docstring (see the module).

    Parameters
    ----------
    **blocks : str
        The sections by name.

    Returns
    -------
    callable
        The decorator; it sets ``obj.__doc__`` and returns ``obj``.
    """

    def decorate(obj: T) -> T:
        obj.__doc__ = fill_docstring(obj.__doc__, blocks)
        return obj

    return decorate
