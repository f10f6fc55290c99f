"""Plugins: your own problems and methods, registered from Python, never from a spec.

Specs and ``hdbo run --problem`` name *registered* problems and methods only; a name is
looked up in the registries and nothing is imported or called because of a string in a
spec. A problem or method of your own lives in a module of yours that registers it::

    # my_problems.py
    from hdbo.problems import register_problem

    def wave(*, dim, seed=0, freq=3.0):
        ...                                     # returns a hdbo.problems.Problem

    register_problem("wave", wave)              # any dimension: hdbo passes dim=...

(a method: decorate a :class:`~hdbo.methods.base.Method` subclass with
:func:`hdbo.methods.register`). Load the module explicitly:

* on the command line with ``--plugin my_problems`` (repeatable) on ``hdbo run``,
  ``hdbo reproduce`` and ``hdbo list``; the module must be importable (installed, or on
  ``PYTHONPATH``: ``PYTHONPATH=. hdbo run --plugin my_problems --problem wave ...``);
* from Python with :func:`load_plugins` (or simply ``import my_problems``) before
  :func:`~hdbo.experiments.runner.run_many`.

hdbo does not scan entry points or import anything that was not named on the command line
or in your Python code: which code runs is the user's decision, made where code is written.

Worker processes
----------------
:func:`~hdbo.experiments.runner.run_many` passes the modules loaded by :func:`load_plugins`
(or its ``plugins`` argument) to every worker, which imports them before its first run.
This holds for the local process pool, whatever the start method (with ``fork`` the
registries are inherited anyway; with ``spawn`` each child re-imports the modules, and its
``sys.path`` is the parent's) and for Dask workers, where the modules must be importable on
every worker machine (installed there, or sent with ``client.upload_file``).
"""

from __future__ import annotations

import importlib
import re
from types import ModuleType
from typing import Iterable

from .._docstrings import fill_doc

__all__ = ["PLUGIN_HELP", "load_plugins", "loaded_plugins", "import_plugins", "check_registry_name"]

#: How to make a custom problem or method available (appended to "unknown name" messages).
PLUGIN_HELP = (
    "a problem or method of your own is registered from Python: call hdbo.problems.register_problem "
    "(or decorate a Method subclass with hdbo.methods.register) in a module of yours and load it "
    "with --plugin MODULE (hdbo run/reproduce/list) or hdbo.experiments.plugins.load_plugins"
)

_MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_LOADED: list[str] = []


# Sections shared by the docstrings of import_plugins and load_plugins.
_DOC = {
    "imported": """
    list of module
        The imported modules, in order.
    """,
}


def _check_module_name(name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"plugin must be a module name (str), got {type(name).__name__}")
    if not _MODULE_NAME.match(name):
        raise ValueError(
            f"plugin must be an absolute module name such as 'my_problems' or 'mypkg.problems' "
            f"(not a file path or 'module:attr'), got {name!r}"
        )
    return name


@fill_doc(**_DOC)
def import_plugins(modules: Iterable[str]) -> list[ModuleType]:
    """Import plugin modules (without recording them; used by worker processes).

    Parameters
    ----------
    modules : iterable of str
        Absolute module names.

    Returns
    -------
    %(imported)s

    Raises
    ------
    TypeError
        A name is not a string.
    ValueError
        A name is not a dotted module name, or the module cannot be imported (the message
        gives the reason and how to make it importable).
    """
    out = []
    for name in modules:
        _check_module_name(name)
        try:
            out.append(importlib.import_module(name))
        except ImportError as exc:
            raise ValueError(
                f"plugin module {name!r} cannot be imported ({exc}); install it or add its folder to "
                f"PYTHONPATH (e.g. PYTHONPATH=. hdbo ...)"
            ) from None
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the plugin's own code failed
            where = ""
            tb = exc.__traceback__
            while tb is not None:  # the innermost frame, to point at the plugin's line
                where = f" at {tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"
                tb = tb.tb_next
            raise ValueError(
                f"plugin module {name!r} failed while being imported: {type(exc).__name__}: {exc}{where}"
            ) from None
    return out


@fill_doc(**_DOC)
def load_plugins(modules: Iterable[str]) -> list[ModuleType]:
    """Import plugin modules (which register problems or methods) and remember them.

    The modules are imported in this process and recorded, so that
    :func:`~hdbo.experiments.runner.run_many` imports them in its worker processes too.
    Loading a module twice imports it once.

    Parameters
    ----------
    modules : iterable of str
        Absolute module names, e.g. ``["my_problems"]``.

    Returns
    -------
    %(imported)s

    Raises
    ------
    TypeError, ValueError
        As :func:`import_plugins` (nothing is recorded then).

    Examples
    --------
    >>> [m.__name__ for m in load_plugins(["hdbo.problems"])]
    ['hdbo.problems']
    >>> "hdbo.problems" in loaded_plugins()
    True
    """
    names = [_check_module_name(m) for m in modules]
    out = import_plugins(names)
    for name in names:
        if name not in _LOADED:
            _LOADED.append(name)
    return out


def loaded_plugins() -> tuple[str, ...]:
    """Names of the modules loaded by :func:`load_plugins` in this process, in loading order.

    Returns
    -------
    tuple of str
    """
    return tuple(_LOADED)


def check_registry_name(name: object, what: str) -> str:
    """Refuse a problem or method name that is not a plain registry name (no ``module:attr``).

    Nothing is imported or looked up: this only checks the form of ``name``.

    Parameters
    ----------
    name : object
        The name to check.
    what : {"problem", "method"}
        For the message.

    Returns
    -------
    str
        ``name``.

    Raises
    ------
    TypeError
        ``name`` is not a non-empty string.
    ValueError
        ``name`` contains ``":"`` (an import path); the message says how to register a
        problem or method of your own. A method named ``peer:NAME`` (the registered peers,
        ``peer:botorch`` ...) is the one exception: a method is only looked up in the
        registry, so such a name imports nothing.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"{what} must be a non-empty string, got {name!r}")
    if ":" in name and not (what == "method" and name.startswith("peer:") and ":" not in name[5:]):
        raise ValueError(
            f"{what} {name!r} looks like 'module:attr'; a {what} is named by its registry name only "
            f"and nothing is imported from a name ({PLUGIN_HELP})"
        )
    return name
