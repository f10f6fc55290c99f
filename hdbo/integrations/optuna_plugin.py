"""Plugin module: importing it registers hdbo through Optuna as the method ``"hdbo-optuna"``.

Load it where a method name is looked up::

    hdbo run --plugin hdbo.integrations.optuna_plugin --method hdbo-optuna --problem suite-levy --dim 20 --budget 50
    hdbo reproduce NAME --plugin hdbo.integrations.optuna_plugin ...

or from Python with ``import hdbo.integrations.optuna_plugin`` (or
:func:`hdbo.experiments.plugins.load_plugins`). The method is
:class:`hdbo.integrations.optuna.ThroughOptuna`; it needs Optuna (``pip install "hdbo[optuna]"``).

Registration is kept out of :mod:`hdbo.integrations.optuna` so that importing the sampler
never changes the method registry.
"""

from __future__ import annotations

from ..methods import register
from .optuna import ThroughOptuna

__all__ = ["ThroughOptuna"]

register(ThroughOptuna)
