"""pytest's doctest collection of :mod:`hdbo.integrations` (``--doctest-modules`` imports every module).

* ``optuna_plugin.py`` registers a method when imported; collecting it would change the method
  registry for the whole test session (the registry tests compare it with lists made at
  collection), so it is not collected. ``tests/integrations`` tests it with the registry restored.
* ``optuna.py`` needs Optuna, an optional extra; without it the module is not collected.
"""

from __future__ import annotations

collect_ignore = ["optuna_plugin.py"]
try:
    import optuna  # noqa: F401
except ImportError:
    collect_ignore.append("optuna.py")
