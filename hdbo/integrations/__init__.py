"""hdbo inside other tools (optional extras).

* :mod:`hdbo.integrations.optuna`: :class:`~hdbo.integrations.optuna.HDBOSampler`, an Optuna
  sampler backed by any hdbo method (``pip install "hdbo[optuna]"``). Importing that module
  also registers the method ``"hdbo-optuna"`` (hdbo through Optuna, for the experiment
  runner and the comparison suite).

Nothing here is imported by ``import hdbo``: each integration imports its tool when it is
imported itself, and a missing tool raises :class:`ModuleNotFoundError` naming the extra.
"""

from __future__ import annotations

__all__: list[str] = []
